// The cluster and sentinel test helpers start real topologies and drive them: slots covered,
// replicas attached, a live slot migration answering ASK then MOVED, failovers switching roles.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { ReplyError } from "../../src/errors.ts";
import { type RedisCluster, SLOT_COUNT, startCluster } from "../_helpers/cluster.ts";
import { type SentinelGroup, startSentinelGroup } from "../_helpers/sentinel.ts";

async function replyError(p: Promise<unknown>): Promise<string> {
  try {
    const v = await p;
    assert.fail(`expected an error reply, got ${String(v)}`);
  } catch (e) {
    assert.ok(e instanceof ReplyError, `expected a ReplyError, got ${String(e)}`);
    return e.message;
  }
}

describe("startCluster", () => {
  let cluster: RedisCluster;
  let startMs = 0;

  before(async () => {
    const t = Date.now();
    cluster = await startCluster({ primaries: 3, replicasPerPrimary: 1 });
    startMs = Date.now() - t;
  });
  after(async () => {
    await cluster?.stop();
  });

  it("starts 3 primaries with one connected replica each, covering every slot", async () => {
    assert.ok(startMs < 10_000, `startup took ${startMs} ms`);
    assert.equal(cluster.nodes.length, 6);
    assert.equal(cluster.primaries().length, 3);
    assert.equal(cluster.replicas().length, 3);
    assert.equal(cluster.seeds.length, 6);
    let covered = 0;
    for (const p of cluster.primaries()) {
      covered += cluster.slotsOf(p).length;
      const reps = cluster.replicasOf(p);
      assert.equal(reps.length, 1);
      const role = await reps[0]!.command(["ROLE"]) as unknown[];
      assert.equal(role[0], "slave");
      assert.equal(role[2], p.port);
      assert.equal(role[3], "connected");
    }
    assert.equal(covered, SLOT_COUNT);
    for (const n of cluster.nodes) {
      const info = String(await n.command(["CLUSTER", "INFO"]));
      assert.match(info, /cluster_state:ok/);
      assert.match(info, /cluster_slots_assigned:16384/);
      assert.match(info, /cluster_known_nodes:6/);
    }
  });

  it("makes keys for a slot that the server hashes to that slot", async () => {
    for (const slot of [0, 1, 5460, 5461, 12182, 16383]) {
      const key = cluster.keyForSlot(slot, "x");
      assert.equal(await cluster.keySlot(key), slot, key);
    }
    assert.throws(() => cluster.keyForSlot(SLOT_COUNT), RangeError);
  });

  it("routes by the slot map: the owner stores, the others answer MOVED", async () => {
    const slot = 777;
    const key = cluster.keyForSlot(slot);
    const owner = cluster.nodeForSlot(slot);
    assert.equal(await owner.command(["SET", key, "1"]), "OK");
    const other = cluster.primaries().find((p) => p !== owner)!;
    assert.equal(
      await replyError(other.command(["GET", key])),
      `MOVED ${slot} ${owner.host}:${owner.port}`,
    );
  });

  it("migrates a slot live: ASK while it moves, MOVED after, every key on the target", async () => {
    const slot = 4242;
    const source = cluster.nodeForSlot(slot);
    const target = cluster.primaries().find((p) => p !== source)!;
    const keys = Array.from({ length: 25 }, (_, i) => cluster.keyForSlot(slot, `m${i}:`));
    for (const k of keys) await source.command(["SET", k, k]);
    let during = "";
    let importingRead: unknown;
    const r = await cluster.migrateSlot(slot, target.id, {
      keysPerBatch: 10,
      beforeFinalize: async () => {
        during = await replyError(source.command(["GET", keys[0]!]));
        const c = await target.command(["GET", keys[0]!]).catch((e) => e);
        importingRead = c;
      },
    });
    assert.deepEqual(r.slots, [slot]);
    assert.equal(r.keys, keys.length);
    assert.equal(r.sources.get(slot), source.id);
    assert.equal(during, `ASK ${slot} ${target.host}:${target.port}`);
    // Without ASKING the importing node redirects back to the owner of record.
    assert.ok(importingRead instanceof ReplyError && importingRead.prefix === "MOVED");
    assert.equal(cluster.nodeForSlot(slot), target);
    assert.equal(
      await replyError(source.command(["GET", keys[0]!])),
      `MOVED ${slot} ${target.host}:${target.port}`,
    );
    for (const k of keys) assert.equal(await target.command(["GET", k]), k);
    assert.equal(await source.command(["CLUSTER", "COUNTKEYSINSLOT", String(slot)]), 0);
    // Every primary agrees on the new owner.
    for (const p of cluster.primaries()) {
      const v = await p.command(["GET", keys[1]!]).catch((e: ReplyError) => e.message);
      assert.ok(v === keys[1] || v === `MOVED ${slot} ${target.host}:${target.port}`, String(v));
    }
  });

  it("fails a primary over to its replica and switches the roles", async () => {
    const primary = cluster.primaries()[0]!;
    const replica = cluster.replicasOf(primary)[0]!;
    const slots = cluster.slotsOf(primary);
    const promoted = await cluster.failover(primary);
    assert.equal(promoted, replica);
    assert.equal(replica.role, "primary");
    assert.equal(primary.role, "replica");
    assert.equal(primary.primaryId, replica.id);
    assert.deepEqual(cluster.slotsOf(replica), slots);
    assert.equal((await replica.command(["ROLE"]) as unknown[])[0], "master");
    assert.equal((await primary.command(["ROLE"]) as unknown[])[0], "slave");
  });

  it("a killed primary is replaced by its replica and rejoins as a replica after restart", async () => {
    const primary = cluster.primaries()[1]!;
    const replica = cluster.replicasOf(primary)[0]!;
    const slots = cluster.slotsOf(primary);
    const t = Date.now();
    await primary.kill();
    assert.equal(primary.running, false);
    await cluster.waitStable();
    const tookMs = Date.now() - t;
    assert.equal(replica.role, "primary", `promoted after ${tookMs} ms`);
    assert.deepEqual(cluster.slotsOf(replica), slots);
    assert.equal(cluster.nodeForSlot(slots[0]!), replica);
    await primary.restart();
    await cluster.waitStable();
    assert.equal(primary.role, "replica");
    assert.equal(primary.primaryId, replica.id);
    const role = await primary.command(["ROLE"]) as unknown[];
    assert.equal(role[0], "slave");
    assert.equal(role[3], "connected");
  });

  it("adds an empty primary, gives it a slot, and removes it again", async () => {
    const added = await cluster.addNode();
    assert.equal(added.role, "primary");
    assert.equal(cluster.nodes.length, 7);
    assert.deepEqual(cluster.slotsOf(added), []);
    const key = cluster.keyForSlot(9000);
    await cluster.nodeForSlot(9000).command(["SET", key, "v"]);
    await cluster.migrateSlots([9000, 9001], added.id);
    assert.equal(await added.command(["GET", key]), "v");
    const id = added.id;
    await cluster.removeNode(id);
    assert.equal(cluster.nodes.length, 6);
    assert.equal(added.running, false);
    assert.notEqual(cluster.nodeForSlot(9000).id, id);
    assert.equal(await cluster.nodeForSlot(9000).command(["GET", key]), "v");
    for (const n of cluster.nodes) {
      assert.ok(!String(await n.command(["CLUSTER", "NODES"])).includes(id), n.url);
    }
  });

  it("stops every process", async () => {
    const procs = cluster.nodes;
    await cluster.stop();
    for (const n of procs) {
      assert.equal(n.running, false);
      assert.throws(() => process.kill(n.pid, 0), `pid ${n.pid} still runs`);
    }
  });
});

describe("startSentinelGroup", () => {
  let group: SentinelGroup;

  before(async () => {
    group = await startSentinelGroup({ replicas: 2, sentinels: 3, password: "s3cret" });
  });
  after(async () => {
    await group?.stop();
  });

  it("starts a master, two replicas and three sentinels that know each other", async () => {
    assert.equal(group.servers.length, 3);
    assert.equal(group.replicas.length, 2);
    assert.deepEqual(await group.masterAddress(), {
      host: group.master.host,
      port: group.master.port,
    });
    for (const s of group.sentinels) {
      const reps = await group.sentinelCommand(s, ["SENTINEL", "REPLICAS", "mymaster"]);
      const sens = await group.sentinelCommand(s, ["SENTINEL", "SENTINELS", "mymaster"]);
      assert.equal((reps as unknown[]).length, 2);
      assert.equal((sens as unknown[]).length, 2);
    }
    // The data nodes require the password.
    const m = group.master;
    assert.match(await replyError(group.sentinelCommand(m, ["GET", "x"])), /NOAUTH/);
  });

  it("fails over: the sentinels report a new master address", async () => {
    const old = group.master;
    await group.command(old, ["SET", "sentinel:key", "v"]);
    await group.command(old, ["WAIT", "2", "2000"]);
    const next = await group.failover();
    assert.notEqual(next.port, old.port);
    assert.deepEqual(await group.masterAddress(), { host: next.host, port: next.port });
    assert.equal(group.master, next);
    assert.equal(await group.command(next, ["GET", "sentinel:key"]), "v");
    assert.equal((await group.command(next, ["ROLE"]) as unknown[])[0], "master");
  });

  it("a killed master is replaced: waitForNewMaster reports the promoted replica", async () => {
    const old = group.master;
    await old.kill();
    const next = await group.waitForNewMaster({ host: old.host, port: old.port });
    assert.notEqual(next, old);
    assert.deepEqual(await group.masterAddress(), { host: next.host, port: next.port });
    await old.restart(); // comes back; the sentinels will turn it into a replica
    assert.equal(old.running, true);
  });
});
