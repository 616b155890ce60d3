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
