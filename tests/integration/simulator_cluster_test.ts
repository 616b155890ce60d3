// ClusterMaintenanceSimulator: a real cluster behind per-node proxies, SMIGRATING / SMIGRATED
// around real slot migrations, MOVED / ASK counted per connection. Raw sockets and our codec.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { readdirSync, readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { ClusterMaintenanceSimulator } from "../../src/testing/mod.ts";
import type { ClusterNodeInfo, Endpoint } from "../../src/testing/mod.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { ReplyError } from "../../src/errors.ts";
import { RawClient } from "../_helpers/raw_client.ts";
import { slotKey } from "../_helpers/cluster.ts";

const HELLO3 = ["HELLO", "3"];
const OPT_IN = ["CLIENT", "MAINT_NOTIFICATIONS", "ON"];

function errText(v: RespValue): string {
  assert.ok(v instanceof ReplyError, `expected an error reply, got ${String(v)}`);
  return v.message;
}

function pushes(c: RawClient, type?: string): RespValue[][] {
  return c.items.filter((i) => i.kind === "push").map((i) => i.value as RespValue[])
    .filter((v) => type === undefined || v[0] === type);
}

function addr(e: Endpoint): string {
  return `${e.host}:${e.port}`;
}

describe("ClusterMaintenanceSimulator", () => {
  let sim: ClusterMaintenanceSimulator;
  let base: string;
  const clients: RawClient[] = [];
  const connect = async (e: Endpoint): Promise<RawClient> => {
    const c = await RawClient.connect(e.port, e.host);
    clients.push(c);
    return c;
  };
  /** An opted-in RESP3 connection to the node at `e`. */
  const optedIn = async (e: Endpoint): Promise<RawClient> => {
    const c = await connect(e);
    c.send(HELLO3, OPT_IN);
    const [hello, ok] = await c.take(2);
    assert.ok(hello!.value instanceof Map);
    assert.equal(ok!.value, "OK");
    return c;
  };
  const nodeAt = (port: number): ClusterNodeInfo =>
    sim.nodes().find((n) => n.endpoint.port === port)!;
  /** The proxy owning `slot` per CLUSTER SHARDS-free lookup: nodes() slot ranges. */
  const ownerOf = (slot: number): ClusterNodeInfo => {
    for (const n of sim.nodes()) {
      for (const r of n.slots.split(",").filter(Boolean)) {
        const [a, b] = r.split("-").map(Number);
        if (slot >= a! && slot <= (b ?? a)!) return n;
      }
    }
    throw new Error(`no owner for ${slot}`);
  };
  before(async () => {
    sim = await ClusterMaintenanceSimulator.start({ primaries: 3, http: "127.0.0.1:0" });
    base = `http://${sim.http!.host}:${sim.http!.port}`;
  });
  after(async () => {
    for (const c of clients) await c.close();
    await sim.close();
  });

  it("runs a 3-primary cluster whose nodes announce the proxies", async () => {
    const nodes = sim.nodes();
    assert.equal(nodes.length, 3);
    assert.deepEqual(nodes.map((n) => n.slots), ["0-5460", "5461-10921", "10922-16383"]);
    assert.deepEqual(sim.seeds, nodes.map((n) => `redis://${addr(n.endpoint)}`));
    for (const n of nodes) assert.notEqual(n.endpoint.port, n.upstream.port);
    const c = await connect(nodes[0]!.endpoint);
    const slots = await c.call("CLUSTER", "SLOTS") as RespValue[][];
    const announced = slots.map((s) => (s[2] as RespValue[])[1]).sort();
    assert.deepEqual(announced, nodes.map((n) => n.endpoint.port).sort());
    // A key of another node's slot: MOVED names that node's proxy, and the proxy counts it.
    const slot = 6000;
    const key = slotKey(slot, "moved:");
    assert.equal(Number(await c.call("CLUSTER", "KEYSLOT", key)), slot);
    assert.equal(errText(await c.call("GET", key)), `MOVED ${slot} ${addr(nodes[1]!.endpoint)}`);
    const info = sim.connections().find((x) => x.endpoint === addr(nodes[0]!.endpoint))!;
    assert.equal(info.moved, 1);
    assert.equal(info.ask, 0);
    assert.equal(sim.redirects({ slots: [slot] }).length, 1);
    // The maintenance handshake is answered by the proxy (redis 7.0 would reject it).
    await optedIn(nodes[1]!.endpoint);
    const opted = sim.connections().filter((x) => x.endpoint === addr(nodes[1]!.endpoint));
    assert.equal(opted.length, 1);
    assert.equal(opted[0]!.optedIn, true);
    assert.equal(opted[0]!.protocol, 3);
  });

  it("slot-shuffle: SMIGRATING then SMIGRATED with the same seqs on every node, keys moved", async () => {
    const nodes = sim.nodes();
    const watchers = await Promise.all(nodes.map((n) => optedIn(n.endpoint)));
    const resp2 = await connect(nodes[0]!.endpoint); // not opted in: gets nothing
    const notOpted = await connect(nodes[0]!.endpoint);
    notOpted.send(HELLO3);
    await notOpted.take(1);
    // Keys in slots 0-9 (owned by node 0) before the move.
    const keys: string[] = [];
    for (const slot of [0, 5, 9]) {
      const k = slotKey(slot, "shuffle:");
      assert.equal(await resp2.call("SET", k, `v${slot}`), "OK");
      keys.push(k);
    }
    const before = sim.events().length;
    const r = await sim.slotMigrate({ effect: "slot-shuffle", slots: "0-9" });
    assert.equal(r.smigratedSeq, r.smigratingSeq + 1);
    assert.deepEqual(r.entries, [{
      source: addr(nodes[0]!.endpoint),
      destination: addr(nodes[1]!.endpoint),
      slots: "0-9",
    }]);
    assert.equal(r.keys, 3);
    assert.equal(r.added, null);
    assert.deepEqual(r.emptied, []);
    assert.ok(r.notified >= watchers.length);
    for (const w of watchers) {
      await w.until(() => pushes(w, "SMIGRATED").length === 1, 5_000, "SMIGRATED");
      assert.deepEqual(pushes(w), [
        ["SMIGRATING", r.smigratingSeq, "0-9"],
        ["SMIGRATED", r.smigratedSeq, [[
          addr(nodes[0]!.endpoint),
          addr(nodes[1]!.endpoint),
          "0-9",
        ]]],
      ]);
    }
    // Byte-exact frames (reference style: simple strings).
    const text = new TextDecoder().decode(watchers[2]!.bytes());
    assert.ok(text.includes(`>3\r\n+SMIGRATING\r\n:${r.smigratingSeq}\r\n+0-9\r\n`), text);
    assert.ok(
      text.includes(
        `>3\r\n+SMIGRATED\r\n:${r.smigratedSeq}\r\n*1\r\n*3\r\n+${addr(nodes[0]!.endpoint)}\r\n+${
          addr(nodes[1]!.endpoint)
        }\r\n+0-9\r\n`,
      ),
      text,
    );
    assert.equal(pushes(resp2).length, 0);
    assert.equal(pushes(notOpted).length, 0);
    const ev = sim.events().slice(before);
    assert.deepEqual(ev.map((e) => [e.type, e.seq]), [
      ["SMIGRATING", r.smigratingSeq],
      ["SMIGRATED", r.smigratedSeq],
    ]);
    assert.deepEqual(ev[1]!.entries, r.entries);
    assert.equal(sim.nodes()[0]!.slots, "10-5460");
    assert.equal(sim.nodes()[1]!.slots, "0-9,5461-10921");
    // The data moved: the destination serves it, the source redirects.
    const dst = await connect(nodes[1]!.endpoint);
    for (const k of keys) assert.match(String(await dst.call("GET", k)), /^v\d$/);
    assert.match(errText(await resp2.call("GET", keys[0]!)), new RegExp(`^MOVED 0 `));
  });

  it("counts the ASK replies during the migration and the MOVED replies after it", async () => {
    const slot = 20;
    const src = ownerOf(slot);
    const c = await connect(src.endpoint);
    const key = slotKey(slot, "ask:");
    assert.equal(await c.call("SET", key, "1"), "OK");
    const moving = sim.slotMigrate({
      effect: "slot-shuffle",
      slots: [slot],
      finalizeDelayMs: 1_500,
    });
    // Once the key has moved and before SETSLOT NODE, the source answers ASK.
    let reply: RespValue = "";
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      reply = await c.call("GET", key);
      if (reply instanceof ReplyError) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const r0 = sim.events().at(-1)!;
    assert.equal(r0.type, "SMIGRATING");
    const dstNode = nodeAt(Number(errText(reply).split(":").at(-1)));
    assert.equal(errText(reply), `ASK ${slot} ${addr(dstNode.endpoint)}`);
    const r = await moving;
    const doneAt = sim.events().find((e) => e.seq === r.smigratedSeq)!.at;
    // A client that applied SMIGRATED goes to the destination: no redirect after SMIGRATED.
    const dst = await connect(dstNode.endpoint);
    assert.equal(await dst.call("GET", key), "1");
    assert.deepEqual(sim.redirects({ since: doneAt, slots: [slot] }), []);
    // One that did not meets MOVED, and the count says so.
    assert.equal(
      errText(await c.call("GET", key)),
      `MOVED ${slot} ${addr(dstNode.endpoint)}`,
    );
    const late = sim.redirects({ since: doneAt, slots: [slot] });
    assert.equal(late.length, 1);
    assert.equal(late[0]!.kind, "MOVED");
    const info = sim.connections().find((x) => x.id === late[0]!.connection)!;
    assert.equal(info.ask, 1);
    assert.equal(info.moved, 1);
    // The log keeps the redirects of connections closed since.
    await c.close();
    const gone = Date.now() + 5_000;
    while (sim.connections().some((x) => x.id === late[0]!.connection) && Date.now() < gone) {
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(sim.connections().some((x) => x.id === late[0]!.connection), false);
    assert.deepEqual(sim.redirects({ since: doneAt, slots: [slot] }), late);
  });

  it("notify: involved skips the other nodes; entryShape: pairs writes [dst, slots]", async () => {
    const nodes = sim.nodes();
    const watchers = await Promise.all(nodes.map((n) => optedIn(n.endpoint)));
    const r = await sim.slotMigrate({
      effect: "slot-shuffle",
      slots: "5461-5470",
      target: 2,
      notify: "involved",
      entryShape: "pairs",
    });
    assert.deepEqual(r.entries, [{
      source: addr(nodes[1]!.endpoint),
      destination: addr(nodes[2]!.endpoint),
      slots: "5461-5470",
    }]);
    for (const i of [1, 2]) {
      const w = watchers[i]!;
      await w.until(() => pushes(w, "SMIGRATED").length === 1, 5_000, "SMIGRATED");
      assert.deepEqual(pushes(w, "SMIGRATED")[0], [
        "SMIGRATED",
        r.smigratedSeq,
        [[addr(nodes[2]!.endpoint), "5461-5470"]],
      ]);
    }
    await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(pushes(watchers[0]!), []);
  });

  it("rejects an unknown effect and slots out of range", async () => {
    await assert.rejects(
      sim.slotMigrate({ effect: "explode" as "add" }),
      (e: Error) => e instanceof RangeError && /unknown effect "explode"/.test(e.message),
    );
    await assert.rejects(sim.slotMigrate({ slots: "16380-16390" }), RangeError);
    await assert.rejects(sim.slotMigrate({ slots: [-1] }), RangeError);
    await assert.rejects(sim.slotMigrate({ effect: "slot-shuffle", target: 99 }), RangeError);
  });

  it("remove: spreads a primary's slots over the others and leaves it an empty master", async () => {
    const nodes = sim.nodes();
    const last = nodes[2]!;
    const w = await optedIn(nodes[0]!.endpoint);
    const r = await sim.slotMigrate({ effect: "remove" });
    assert.deepEqual(r.emptied, [addr(last.endpoint)]);
    assert.equal(r.entries.length, 2);
    assert.ok(r.entries.every((e) => e.source === addr(last.endpoint)));
    assert.deepEqual(
      r.entries.map((e) => e.destination).sort(),
      [addr(nodes[0]!.endpoint), addr(nodes[1]!.endpoint)].sort(),
    );
    assert.equal(sim.nodes()[2]!.slots, "");
    await w.until(() => pushes(w, "SMIGRATED").length === 1, 5_000, "SMIGRATED");
    // Still a master (cluster-allow-replica-migration no), still reachable through its proxy.
    const c = await connect(last.endpoint);
    assert.equal((await c.call("ROLE") as RespValue[])[0], "master");
  });

  it("add: a fourth node joins and takes a share of every primary's slots", async () => {
    const w = await optedIn(sim.nodes()[0]!.endpoint);
    const r = await sim.slotMigrate({ effect: "add", keysPerBatch: 10 });
    assert.ok(r.added !== null);
    const nodes = sim.nodes();
    assert.equal(nodes.length, 4);
    assert.equal(addr(nodes[3]!.endpoint), r.added);
    assert.equal(r.entries.length, 2, JSON.stringify(r.entries)); // the two non-empty primaries
    assert.ok(r.entries.every((e) => e.destination === r.added));
    assert.notEqual(nodes[3]!.slots, "");
    await w.until(() => pushes(w, "SMIGRATED").length === 1, 5_000, "SMIGRATED");
    const smigrated = pushes(w, "SMIGRATED")[0]!;
    assert.equal((smigrated[2] as RespValue[]).length, 2);
    const c = await connect(nodes[0]!.endpoint);
    const shards = await c.call("CLUSTER", "SHARDS") as RespValue[];
    assert.equal(shards.length, 4);
    assert.ok(sim.seeds.includes(`redis://${r.added}`));
  });

  it("slot_migrate over HTTP: remove-add moves a primary's slots to a new node", async () => {
    const victim = sim.nodes()[0]!;
    const res = await fetch(`${base}/action`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        type: "slot_migrate",
        parameters: { effect: "remove-add", slots: victim.slots },
      }),
    });
    assert.equal(res.status, 200);
    const { action_id } = await res.json() as { action_id: string };
    let status: { status: string; output: unknown; error: string | null } = {
      status: "pending",
      output: null,
      error: null,
    };
    const end = Date.now() + 15_000;
    while (Date.now() < end) {
      status = await (await fetch(`${base}/action/${action_id}`)).json();
      if (status.status === "success" || status.status === "failed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status.status, "success", String(status.error));
    const out = status.output as {
      entries: { source: string }[];
      added: string;
      emptied: string[];
    };
    assert.deepEqual(out.emptied, [addr(victim.endpoint)]);
    assert.ok(out.entries.every((e) => e.source === addr(victim.endpoint)));
    const nodes = await (await fetch(`${base}/nodes`)).json() as ClusterNodeInfo[];
    assert.equal(nodes.length, 5);
    assert.equal(nodes.find((n) => addr(n.endpoint) === out.added)!.slots, victim.slots);
    const bad = await fetch(`${base}/action`, {
      method: "POST",
      body: JSON.stringify({ type: "slot_migrate", parameters: { effect: "nope" } }),
    });
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    const redirects = await (await fetch(`${base}/redirects`)).json() as unknown[];
    assert.ok(Array.isArray(redirects) && redirects.length >= 2);
    // Sequence numbers are shared by every event: 0, 1, 2, ... with no reuse.
    const seqs = sim.events().map((e) => e.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i));
  });

  it("close stops every node process and proxy", async () => {
    const nodes = sim.nodes();
    for (const c of clients.splice(0)) await c.close();
    await sim.close();
    assert.deepEqual(sim.connections(), []);
    for (const n of nodes) {
      assert.throws(() => process.kill(n.pid, 0), `pid ${n.pid} still runs`);
      await assert.rejects(RawClient.connect(n.endpoint.port, n.endpoint.host));
    }
  });
});

/** redis-server processes that are children of this process (Linux /proc). */
function childRedisPids(): number[] {
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      if (Number(fields[1]) === process.pid && stat.includes("redis-server") && fields[0] !== "Z") {
        out.push(Number(e));
      }
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe("ClusterMaintenanceSimulator closed during a migration", () => {
  it("stops the cluster, the joining node included, and fails the migration", async () => {
    const before = new Set(childRedisPids());
    const sim = await ClusterMaintenanceSimulator.start({ primaries: 3 });
    const mine = childRedisPids().filter((p) => !before.has(p));
    assert.equal(mine.length, 3);
    const moving = sim.slotMigrate({ effect: "add" });
    const failed = moving.then(() => null, (e: Error) => e);
    await new Promise((r) => setTimeout(r, 150)); // the fourth node is starting or joining
    await sim.close();
    const e = await failed;
    assert.ok(e instanceof Error, "the migration fails");
    assert.deepEqual(childRedisPids().filter((p) => !before.has(p)), []);
    await assert.rejects(sim.slotMigrate({ effect: "slot-shuffle" }), /closed/);
  });
});

describe("ClusterMaintenanceSimulator command line", () => {
  it("--cluster 3 prints the seeds as one JSON line, serves slot_migrate, stops on stdin close", async () => {
    const isBun = (globalThis as { Bun?: unknown }).Bun !== undefined;
    const script = new URL("../../src/testing/cli.ts", import.meta.url).pathname;
    const args = [
      ...(isBun ? [] : ["run", "-A"]),
      script,
      "--cluster",
      "3",
      "--http",
      "127.0.0.1:0",
      "--stdin",
    ];
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buf = "";
        const t = setTimeout(() => reject(new Error(`no output: ${buf}`)), 20_000);
        child.stdout!.on("data", (d: Uint8Array) => {
          buf += new TextDecoder().decode(d);
          const nl = buf.indexOf("\n");
          if (nl >= 0) {
            clearTimeout(t);
            resolve(buf.slice(0, nl));
          }
        });
      });
      const info = JSON.parse(line) as { seeds: string[]; http: string };
      assert.equal(info.seeds.length, 3);
      const port = Number(info.seeds[0]!.split(":")[1]);
      const c = await RawClient.connect(port);
      assert.match(String(await c.call("CLUSTER", "INFO")), /cluster_state:ok/);
      const res = await fetch(`http://${info.http}/action`, {
        method: "POST",
        body: JSON.stringify({ type: "slot_migrate", parameters: { slots: "0-4" } }),
      });
      const { action_id } = await res.json() as { action_id: string };
      let status = "";
      const end = Date.now() + 15_000;
      while (Date.now() < end && status !== "success" && status !== "failed") {
        await new Promise((r) => setTimeout(r, 50));
        status = (await (await fetch(`http://${info.http}/action/${action_id}`)).json()).status;
      }
      assert.equal(status, "success");
      child.stdin!.end();
      assert.equal(await exited, 0, "a clean exit");
      await c.waitClosed();
      await c.close();
      for (const s of info.seeds) {
        const [h, p] = s.split(":");
        await assert.rejects(RawClient.connect(Number(p), h));
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    }
  });
});

describe("ClusterMaintenanceSimulator under load", () => {
  it("16 workers following MOVED/ASK through a live reshard: counters exact, redirects counted", async () => {
    const sim = await ClusterMaintenanceSimulator.start({ primaries: 3 });
    const all: RawClient[] = [];
    try {
      const owner = new Map<number, string>();
      for (const n of sim.nodes()) {
        for (const r of n.slots.split(",")) {
          const [a, b] = r.split("-").map(Number);
          for (let i = a!; i <= (b ?? a)!; i++) owner.set(i, addr(n.endpoint));
        }
      }
      const keys = Array.from({ length: 100 }, (_, i) => slotKey(i, `load${i}:`));
      const acked = new Map<string, number>();
      let moved = 0;
      let ask = 0;
      let stop = false;
      const worker = async (): Promise<void> => {
        const mine = new Map<string, RawClient>();
        const conn = async (a: string): Promise<RawClient> => {
          let c = mine.get(a);
          if (c === undefined) {
            const [h, p] = a.split(":");
            c = await RawClient.connect(Number(p), h);
            all.push(c);
            mine.set(a, c);
          }
          return c;
        };
        while (!stop) {
          const i = Math.floor(Math.random() * keys.length);
          const k = keys[i]!;
          let at = owner.get(i)!;
          let asking = false;
          for (let attempt = 0;; attempt++) {
            assert.ok(attempt < 5, `too many redirects for ${k}`);
            const c = await conn(at);
            let v: RespValue;
            if (asking) {
              c.send(["ASKING"], ["INCR", k]);
              v = (await c.take(2))[1]!.value;
            } else v = await c.call("INCR", k);
            if (!(v instanceof ReplyError)) {
              acked.set(k, (acked.get(k) ?? 0) + 1);
              break;
            }
            const [kind, , to] = v.message.split(" ");
            if (kind === "MOVED") {
              moved++;
              owner.set(i, to!);
              asking = false;
            } else if (kind === "ASK") {
              ask++;
              asking = true;
            } else throw v;
            at = to!;
          }
        }
      };
      const workers = Array.from({ length: 16 }, () => worker());
      await new Promise((r) => setTimeout(r, 200));
      const r = await sim.slotMigrate({
        effect: "slot-shuffle",
        slots: "0-99",
        keysPerBatch: 1,
        pauseBetweenKeysMs: 5,
      });
      await new Promise((res) => setTimeout(res, 200));
      stop = true;
      await Promise.all(workers);
      assert.equal(r.keys, 100);
      assert.ok(moved > 0 && ask > 0, `moved ${moved}, ask ${ask}`);
      const check = await RawClient.connect(sim.endpoints()[1]!.port);
      all.push(check);
      for (const k of keys) assert.equal(Number(await check.call("GET", k)), acked.get(k) ?? 0, k);
      const seen = sim.redirects();
      assert.equal(seen.filter((x) => x.kind === "MOVED").length, moved);
      assert.equal(seen.filter((x) => x.kind === "ASK").length, ask);
      const counted = sim.connections().reduce((n, c) => n + c.moved + c.ask, 0);
      assert.equal(counted, moved + ask);
    } finally {
      for (const c of all) await c.close();
      await sim.close();
    }
  });
});

describe("ClusterMaintenanceSimulator with replicas", () => {
  it("replicates through the proxies; replicas serve READONLY reads, also after a migration", async () => {
    const sim = await ClusterMaintenanceSimulator.start({ primaries: 3, replicasPerPrimary: 1 });
    const all: RawClient[] = [];
    const connect = async (e: Endpoint): Promise<RawClient> => {
      const c = await RawClient.connect(e.port, e.host);
      all.push(c);
      return c;
    };
    try {
      const nodes = sim.nodes();
      assert.equal(nodes.length, 6);
      assert.deepEqual(nodes.map((n) => n.role), [
        "primary",
        "primary",
        "primary",
        "replica",
        "replica",
        "replica",
      ]);
      const primary = nodes[0]!;
      const replica = nodes.find((n) => n.primaryId === primary.id)!;
      const p = await connect(primary.endpoint);
      const key = slotKey(100, "rep:");
      assert.equal(await p.call("SET", key, "v1"), "OK");
      assert.equal(await p.call("WAIT", "1", "5000"), 1);
      const r = await connect(replica.endpoint);
      assert.equal(await r.call("READONLY"), "OK");
      assert.equal(await r.call("GET", key), "v1");
      // CLUSTER SHARDS names every node by its proxy, all of them online.
      const shards = await p.call("CLUSTER", "SHARDS") as RespValue[][];
      const ports: number[] = [];
      for (const s of shards) {
        for (const n of s[3] as RespValue[][]) {
          ports.push(Number(n[n.indexOf("port") + 1]));
          assert.equal(n[n.indexOf("health") + 1], "online");
        }
      }
      assert.deepEqual(ports.sort(), nodes.map((n) => n.endpoint.port).sort());
      // Move slot 100 to the second primary: its replica serves the key.
      const res = await sim.slotMigrate({ effect: "slot-shuffle", slots: [100], target: 1 });
      assert.equal(res.keys, 1);
      const dstReplica = sim.nodes().find((n) => n.primaryId === nodes[1]!.id)!;
      const d = await connect(nodes[1]!.endpoint);
      assert.equal(await d.call("WAIT", "1", "5000"), 1);
      const dr = await connect(dstReplica.endpoint);
      assert.equal(await dr.call("READONLY"), "OK");
      assert.equal(await dr.call("GET", key), "v1");
      assert.match(errText(await r.call("GET", key)), /^MOVED 100 /);
    } finally {
      for (const c of all) await c.close();
      await sim.close();
    }
  });
});
