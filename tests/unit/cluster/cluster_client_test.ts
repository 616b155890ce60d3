// The cluster client's redirect and retry rules against a scripted in-memory cluster (no
// network): MOVED budgets, ASK groups, TRYAGAIN pauses, commands never sent twice, fan-out,
// epoch-guarded refreshes.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClosedError, ConnectionError, ReplyError } from "../../../src/errors.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import { keySlot, RedisClusterClient } from "../../../src/cluster/mod.ts";
import { MemoryRedis, type MemorySocket } from "../../_helpers/memory_redis.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";

const A = 7000;
const B = 7001;

/** A two-node cluster: A serves slots 0-8191, B 8192-16383, unless the test changes it. */
class FakeCluster {
  readonly server = new MemoryRedis();
  owner = new Map<number, number>();
  epoch = 1;
  /** Commands by node port, data commands only. */
  readonly seen: { port: number; cmd: string[] }[] = [];
  /** A test's answer to a data command, tried first. */
  script: ((port: number, cmd: string[], s: MemorySocket) => RespValue[] | undefined) | undefined;
  readonly data = new Map<number, Map<string, string>>([[A, new Map()], [B, new Map()]]);

  constructor() {
    this.server.handler = (cmd, s) => this.#answer(cmd, s);
  }

  ownerOf(slot: number): number {
    return this.owner.get(slot) ?? (slot < 8192 ? A : B);
  }

  shards(): RespValue {
    const ranges = new Map<number, number[]>([[A, []], [B, []]]);
    let start = 0;
    for (let s = 1; s <= 16384; s++) {
      if (s === 16384 || this.ownerOf(s) !== this.ownerOf(start)) {
        ranges.get(this.ownerOf(start))!.push(start, s - 1);
        start = s;
      }
    }
    return [A, B].map((port) => [
      "slots",
      ranges.get(port)!,
      "nodes",
      [[
        "id",
        `n${port}`,
        "port",
        port,
        "ip",
        "127.0.0.1",
        "endpoint",
        "127.0.0.1",
        "role",
        "master",
        "replication-offset",
        1,
        "health",
        "online",
      ]],
    ]);
  }

  #answer(cmd: string[], s: MemorySocket): RespValue[] | undefined {
    const name = cmd[0]!.toUpperCase();
    const port = s.remotePort;
    if (name === "CLUSTER" && cmd[1]?.toUpperCase() === "SHARDS") return [this.shards()];
    if (name === "CLUSTER" && cmd[1]?.toUpperCase() === "INFO") {
      return [`cluster_state:ok\r\ncluster_current_epoch:${this.epoch}\r\n`];
    }
    if (name === "HELLO" || name === "CLIENT" || name === "PING" || name === "READONLY") {
      return undefined;
    }
    if (name === "ASKING") {
      this.seen.push({ port, cmd });
      return ["OK"];
    }
    this.seen.push({ port, cmd });
    const custom = this.script?.(port, cmd, s);
    if (custom !== undefined) return custom;
    if (name === "DBSIZE") return [this.data.get(port)!.size];
    if (name === "SSUBSCRIBE" || name === "SUNSUBSCRIBE") {
      const slot = keySlot(cmd[1]!);
      if (this.ownerOf(slot) !== port) {
        // An error reply, not a push (the memory server pushes what subscribe commands get).
        s.send(new ReplyError(`MOVED ${slot} 127.0.0.1:${this.ownerOf(slot)}`));
        return [];
      }
      return undefined;
    }
    // MOD.AT2: a command unknown to the key table, with its key at index 2.
    const key = name === "MOD.AT2" ? cmd[2]! : cmd[1]!;
    const slot = keySlot(key);
    const owner = this.ownerOf(slot);
    if (owner !== port) return [new ReplyError(`MOVED ${slot} 127.0.0.1:${owner}`)];
    const data = this.data.get(port)!;
    const keys = name === "MSET"
      ? cmd.filter((_, i) => i % 2 === 1)
      : name === "MGET"
      ? cmd.slice(1)
      : [key];
    if (keys.some((k) => keySlot(k) !== slot)) {
      return [new ReplyError("CROSSSLOT Keys in request don't hash to the same slot")];
    }
    if (name === "MSET") {
      for (let i = 1; i < cmd.length; i += 2) data.set(cmd[i]!, cmd[i + 1]!);
      return ["OK"];
    }
    if (name === "MGET") return [keys.map((k) => data.get(k) ?? null)];
    if (name === "SET") {
      data.set(key, cmd[2]!);
      return ["OK"];
    }
    if (name === "GET" || name === "MOD.GET" || name === "MOD.AT2") return [data.get(key) ?? null];
    if (name === "INCR") {
      const n = Number(data.get(key) ?? 0) + 1;
      data.set(key, String(n));
      return [n];
    }
    return [new ReplyError(`ERR unknown command '${cmd[0]}'`)];
  }

  client(options: Partial<ConstructorParameters<typeof RedisClusterClient>[0]> = {}) {
    return new RedisClusterClient({
      nodes: [`redis://127.0.0.1:${A}`],
      connector: this.server.connector,
      topologyRefreshInterval: 0,
      ...options,
    });
  }

  count(name: string, port?: number): number {
    return this.seen.filter((x) =>
      x.cmd[0]!.toUpperCase() === name && (port === undefined || x.port === port)
    ).length;
  }
}

/** A key of slot range A (below 8192) and one of B. */
const keyA = (() => {
  for (let i = 0;; i++) if (keySlot(`a${i}`) < 8192) return `a${i}`;
})();
const keyB = (() => {
  for (let i = 0;; i++) if (keySlot(`b${i}`) >= 8192) return `b${i}`;
})();

describe("RedisClusterClient redirects and retries", () => {
  let cluster: FakeCluster;
  beforeEach(() => {
    markLeakBaseline();
    cluster = new FakeCluster();
  });

  it("routes by slot and follows a MOVED at once, patching the slot", async () => {
    const client = cluster.client();
    assert.equal(await client.set(keyA, "1"), "OK");
    assert.equal(cluster.seen.at(-1)!.port, A);
    assert.equal(await client.set(keyB, "2"), "OK");
    assert.equal(cluster.seen.at(-1)!.port, B);
    // keyA's slot moves to B (with its key).
    cluster.owner.set(keySlot(keyA), B);
    cluster.data.get(B)!.set(keyA, "1");
    assert.equal(await client.get(keyA), "1");
    assert.deepEqual(cluster.seen.slice(-2).map((x) => x.port), [A, B]);
    assert.equal(client.nodeForSlot(keySlot(keyA)), `127.0.0.1:${B}`);
    assert.equal(client.stats().moved, 1);
    assert.equal(await client.get(keyA), "1");
    assert.equal(cluster.seen.at(-1)!.port, B, "no second MOVED");
    await client.close();
    await assertNoLeaks();
  });

  it("gives up after maxAttempts when nodes keep redirecting", async () => {
    const client = cluster.client({ maxAttempts: 4 });
    await client.connect();
    const slot = keySlot(keyA);
    cluster.script = (port, cmd) =>
      cmd[0] === "GET"
        ? [new ReplyError(`MOVED ${slot} 127.0.0.1:${port === A ? B : A}`)]
        : undefined;
    await assert.rejects(
      client.get(keyA),
      (e: Error) => e instanceof ReplyError && e.prefix === "MOVED",
    );
    assert.equal(cluster.count("GET"), 4);
    await client.close();
    await assertNoLeaks();
  });

  it("sends ASKING and the command together to the ASK target, leaving the table alone", async () => {
    const client = cluster.client();
    await client.connect();
    const slot = keySlot(keyA);
    cluster.data.get(B)!.set(keyA, "migrated");
    cluster.script = (port, cmd, s) => {
      if (cmd[0] === "GET" && port === A) return [new ReplyError(`ASK ${slot} 127.0.0.1:${B}`)];
      if (cmd[0] === "GET" && port === B) {
        // Right after ASKING on the same socket.
        const i = s.commands.length - 1;
        assert.equal(s.commands[i - 1]![0], "ASKING");
        return [cluster.data.get(B)!.get(cmd[1]!)!];
      }
      return undefined;
    };
    assert.equal(await client.get(keyA), "migrated");
    assert.equal(client.nodeForSlot(slot), `127.0.0.1:${A}`);
    assert.equal(client.stats().ask, 1);
    assert.equal(cluster.count("ASKING", B), 1);
    await client.close();
    await assertNoLeaks();
  });

  it("retries TRYAGAIN after a pause, and gives up within maxTotalRetriesDuration", async () => {
    const client = cluster.client({ maxAttempts: 1000, maxTotalRetriesDuration: 400 });
    await client.connect();
    let refusals = 2;
    cluster.script = (_port, cmd) =>
      cmd[0] === "GET" && refusals-- > 0
        ? [new ReplyError("TRYAGAIN Multiple keys request during rehashing of slot")]
        : undefined;
    assert.equal(await client.get(keyA), null);
    assert.equal(client.stats().refused, 2);
    cluster.script = (_port, cmd) =>
      cmd[0] === "GET"
        ? [new ReplyError("TRYAGAIN Multiple keys request during rehashing of slot")]
        : undefined;
    const t0 = Date.now();
    await assert.rejects(client.get(keyA), /TRYAGAIN/);
    const took = Date.now() - t0;
    assert.ok(took >= 300 && took < 2000, `gave up after ${took} ms`);
    await client.close();
    await assertNoLeaks();
  });

  it("never sends a written command twice when its connection is lost", async () => {
    const client = cluster.client();
    await client.connect();
    cluster.script = (_port, cmd, s) => {
      if (cmd[0] === "INCR") {
        s.close();
        return [];
      }
      return undefined;
    };
    await assert.rejects(client.incr(keyA), (e: Error) => {
      assert.ok(e instanceof ConnectionError, String(e));
      assert.equal(e.written, true);
      return true;
    });
    assert.equal(cluster.count("INCR"), 1);
    await client.close();
    await assertNoLeaks();
  });

  it("sums DBSIZE over the primaries and splits MGET per slot", async () => {
    const client = cluster.client();
    await client.mset({ [keyA]: "1", [keyB]: "2" });
    assert.deepEqual(
      cluster.seen.filter((x) => x.cmd[0] === "MSET").map((x) => [x.port, x.cmd.length]).sort(),
      [[A, 3], [B, 3]],
      "one MSET per slot",
    );
    assert.deepEqual(await client.mget(keyB, "nope", keyA), ["2", null, "1"]);
    assert.equal(await client.dbsize(), 2);
    assert.deepEqual(cluster.seen.filter((x) => x.cmd[0] === "DBSIZE").map((x) => x.port).sort(), [
      A,
      B,
    ]);
    await client.close();
    await assertNoLeaks();
  });

  it("re-subscribes a shard channel a reconnecting node refuses to restore, where its slot went", async () => {
    const client = cluster.client();
    const got: string[] = [];
    await client.ssubscribe(keyA, (m) => got.push(m));
    assert.equal(cluster.count("SSUBSCRIBE", A), 1);
    // The slot moves while the connection to A is down: no SUNSUBSCRIBE reaches the client, and
    // A answers the restore on the new socket with MOVED.
    cluster.owner.set(keySlot(keyA), B);
    for (const s of [...cluster.server.sockets]) if (s.remotePort === A) s.close();
    const end = Date.now() + 3000;
    while (cluster.count("SSUBSCRIBE", B) === 0) {
      if (Date.now() > end) throw new Error("never subscribed on B");
      await new Promise((r) => setTimeout(r, 10));
    }
    // A's connection came back (its handshake did not fail) and serves its other slots.
    let other = "";
    for (let i = 0; !other; i++) {
      if (keySlot(`o${i}`) < 8192 && keySlot(`o${i}`) !== keySlot(keyA)) other = `o${i}`;
    }
    assert.equal(await client.set(other, "1"), "OK");
    const b = [...cluster.server.sockets].find((s) =>
      s.remotePort === B && s.commands.some((c) => c[0] === "SSUBSCRIBE")
    )!;
    b.send(["smessage", keyA, "hi"], true);
    const end2 = Date.now() + 1000;
    while (got.length === 0 && Date.now() < end2) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(got, ["hi"]);
    await client.close();
    await assertNoLeaks();
  });

  it("routes commands the key table does not know by their first argument, corrected by MOVED", async () => {
    const client = cluster.client();
    await client.set(keyB, "b");
    const before = cluster.seen.length;
    assert.equal(await client.sendCommand(["MOD.GET", keyB]), "b");
    assert.deepEqual(cluster.seen.slice(before).map((x) => x.port), [B]);
    // The key is elsewhere: the node's MOVED names the slot to use.
    const a = cluster.seen.length;
    assert.equal(await client.sendCommand(["MOD.AT2", keyA, keyB]), "b");
    assert.deepEqual(cluster.seen.slice(a).map((x) => x.port), [A, B]);
    await client.close();
    await assertNoLeaks();
  });

  it("destroy() rejects what is in flight at once; close() refuses new commands", async () => {
    const client = cluster.client();
    await client.connect();
    assert.ok(client.maintenanceState() !== undefined);
    cluster.script = (_port, cmd) => (cmd[0] === "GET" ? [] : undefined); // never answered
    const pending = client.get(keyA);
    await new Promise((r) => setTimeout(r, 10));
    await client.destroy();
    await assert.rejects(pending, ClosedError);
    await assert.rejects(client.get(keyA), ClosedError);
    await assertNoLeaks();
  });

  it("does not adopt a view older than the one it has", async () => {
    cluster.epoch = 5;
    const client = cluster.client();
    await client.connect();
    const slot = keySlot(keyA);
    // A stale node answers with an older epoch and another owner for the slot.
    cluster.epoch = 4;
    cluster.owner.set(slot, B);
    await client.refreshTopology();
    assert.equal(client.nodeForSlot(slot), `127.0.0.1:${A}`);
    cluster.epoch = 6;
    await client.refreshTopology();
    assert.equal(client.nodeForSlot(slot), `127.0.0.1:${B}`);
    await client.close();
    await assertNoLeaks();
  });
});
