// Live resharding under load: real SETSLOT IMPORTING/MIGRATING, MIGRATE and SETSLOT NODE while
// 16 and 64 workers run mixed commands through the cluster client.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RedisClient } from "../../mod.ts";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { assertCounters, startLoad } from "../_helpers/load.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

/** The slots of the keys startLoad uses. */
function loadSlots(prefix: string, workers: number): number[] {
  const slots = new Set<number>();
  for (let w = 0; w < workers; w++) {
    for (const k of [`${prefix}:ctr:${w}`, `${prefix}:k:${w}`, `${prefix}:h:${w}`]) {
      slots.add(keySlot(k));
    }
  }
  return [...slots];
}

describe("cluster resharding under load", () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startCluster({ replicasPerPrimary: 0 });
  });
  after(async () => {
    await cluster?.stop();
  });
  beforeEach(markLeakBaseline);

  it("runs a transaction again, whole, on the new owner when its slot moved before EXEC", async () => {
    const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
    try {
      await client.set("{txmove}n", "1");
      const slot = keySlot("{txmove}n");
      const from = cluster.nodeForSlot(slot);
      const to = cluster.primaries().find((p) => p.id !== from.id)!;
      await cluster.migrateSlot(slot, to.id);
      // The client's table still names the old owner: the queued commands meet MOVED.
      assert.equal(client.nodeForSlot(slot), `127.0.0.1:${from.port}`);
      assert.deepEqual(await client.multi().incr("{txmove}n").incr("{txmove}n").exec(), [2, 3]);
      assert.equal(client.nodeForSlot(slot), `127.0.0.1:${to.port}`);
      assert.ok(client.stats().moved >= 1);
      assert.equal(await to.command(["GET", "{txmove}n"]), "3");
      // WATCH follows a moved slot too.
      await cluster.migrateSlot(slot, from.id);
      const session = await client.watch("{txmove}n");
      assert.deepEqual(await session.multi().incr("{txmove}n").exec(), [4]);
      assert.equal(client.nodeForSlot(slot), `127.0.0.1:${from.port}`);
    } finally {
      await client.close();
    }
    await assertNoLeaks();
  });

  it("retries a multi-key command refused with TRYAGAIN until the slot has moved", async () => {
    const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
    try {
      await client.mset({ "{tryagain}a": "1", "{tryagain}b": "2" });
      const slot = keySlot("{tryagain}a");
      const from = cluster.nodeForSlot(slot);
      const to = cluster.primaries().find((p) => p.id !== from.id)!;
      // One key per MIGRATE and a long pause after each: for a while one key has moved and the
      // other has not, and the source answers a command on both with TRYAGAIN.
      const migration = cluster.migrateSlot(slot, to.id, {
        keysPerBatch: 1,
        pauseBetweenKeysMs: 800,
      });
      const end = Date.now() + 5000;
      while (Number(await from.command(["CLUSTER", "COUNTKEYSINSLOT", slot])) !== 1) {
        if (Date.now() > end) throw new Error("the migration did not start");
        await sleep(10);
      }
      const reply = await client.mget("{tryagain}a", "{tryagain}b");
      await migration;
      assert.deepEqual(reply, ["1", "2"]);
      assert.ok(client.stats().refused >= 1, JSON.stringify(client.stats()));
    } finally {
      await client.close();
    }
    await assertNoLeaks();
  });

  for (const workers of [16, 64]) {
    it(`moves the slots of ${workers} workers' keys with zero failed commands and exact counters`, async () => {
      const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
      const prefix = `reshard${workers}`;
      const load = startLoad(client as unknown as RedisClient, workers, prefix);
      try {
        await sleep(300);
        const slots = loadSlots(prefix, workers);
        const primaries = cluster.primaries();
        // Every primary hands its slots of the workload to the next one, keys one at a time
        // with a pause in the ASK window before each slot is finalised.
        let moved = 0;
        for (const [i, p] of primaries.entries()) {
          const mine = slots.filter((s) => cluster.nodeForSlot(s).id === p.id);
          const to = primaries[(i + 1) % primaries.length]!;
          const r = await cluster.migrateSlots(mine, to.id, {
            keysPerBatch: 1,
            pauseBetweenKeysMs: 2,
            beforeFinalize: () => sleep(100),
          });
          moved += r.slots.length;
          await sleep(50);
        }
        assert.ok(moved > 0, "some slots moved");
        await sleep(200);
      } finally {
        const stats = await load.stop();
        assert.deepEqual(stats.errors, [], `failed: ${stats.failed}`);
        assert.equal(stats.failed, 0);
        assert.ok(stats.ok > 0);
        await assertCounters(client as unknown as RedisClient, stats, prefix);
        const s = client.stats();
        console.log(
          `resharding, ${workers} workers: ${stats.ok} commands, 0 failed, ${s.moved} MOVED, ${s.ask} ASK, ${s.refused} retried refusals, ${s.refreshes} refreshes`,
        );
        assert.ok(s.moved > 0, "MOVED was met");
        assert.ok(s.ask > 0, "ASK was met");
        // Every slot of the workload is routed to its new owner.
        for (const slot of loadSlots(prefix, workers)) {
          assert.equal(client.nodeForSlot(slot), `127.0.0.1:${cluster.nodeForSlot(slot).port}`);
        }
        await client.close();
      }
      await assertNoLeaks();
    });
  }
});
