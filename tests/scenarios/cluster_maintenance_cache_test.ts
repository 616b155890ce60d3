// Client-side caching on RedisClusterClient over a real 3-primary cluster (behind the
// ClusterMaintenanceSimulator's proxies): one cache for the client, tracking on every node,
// invalidation by another client's writes, and on SMIGRATED only the moved slots dropped.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { slotKey } from "../_helpers/cluster.ts";
import { waitFor } from "../_helpers/load.ts";
import { assertNoLeaks } from "../_helpers/leaks.ts";
import { clusterClient, simulatorPerSuite, slotsOf } from "./cluster_maintenance_helpers.ts";

describe("RedisClusterClient with clientSideCache", () => {
  const sim = simulatorPerSuite({ primaries: 3 });

  it("caches reads of every node and drops them on another client's write", async () => {
    const { client } = clusterClient(sim, { clientSideCache: clientSideCache() });
    const writer = new RedisClusterClient({ nodes: sim.seeds });
    const keys = sim.nodes().filter((n) => n.slots !== "").map((n) =>
      slotKey(slotsOf(n.slots)[3]!, "csc")
    );
    for (const k of keys) await writer.set(k, "v1");
    for (const k of keys) assert.equal(await client.get(k), "v1");
    for (const k of keys) assert.equal(await client.get(k), "v1");
    assert.equal(new Set(keys.map((k) => client.nodeForSlot(keySlot(k)))).size, 3);
    const s1 = client.cacheStats()!;
    assert.equal(s1.hits, keys.length);
    assert.equal(s1.entries, keys.length);
    for (const k of keys) await writer.set(k, "v2");
    await waitFor(
      () => client.cacheStats()!.entries === 0,
      3000,
      "every node's invalidation",
    );
    for (const k of keys) assert.equal(await client.get(k), "v2");
    assert.ok(client.cacheStats()!.invalidations >= keys.length);
    await writer.close();
    await client.close();
    await assertNoLeaks();
  });

  it("SMIGRATED drops the cached replies of the moved slots, only those", async () => {
    const { client, seen } = clusterClient(sim, { clientSideCache: clientSideCache() });
    const writer = new RedisClusterClient({ nodes: sim.seeds });
    await client.connect();
    const owners = sim.nodes().filter((n) => n.slots !== "");
    const movingSlot = slotsOf(owners[0]!.slots)[11]!;
    // A key that does not exist: no MIGRATE (so no invalidation from the old owner) covers it.
    const missing = slotKey(movingSlot, "absent");
    const present = slotKey(movingSlot, "present");
    const stays = slotKey(slotsOf(owners[1]!.slots)[11]!, "stays");
    await writer.set(present, "p1");
    await writer.set(stays, "s1");
    for (let i = 0; i < 2; i++) {
      assert.equal(await client.get(missing), null);
      assert.equal(await client.get(present), "p1");
      assert.equal(await client.get(stays), "s1");
    }
    const before = client.cacheStats()!;
    assert.equal(before.entries, 3);
    const r = await sim.slotMigrate({ effect: "slot-shuffle", slots: [movingSlot] });
    await waitFor(
      () => seen.applied.some((a) => a.seq === r.smigratedSeq),
      5000,
      "the delta applied",
    );
    const after = client.cacheStats()!;
    assert.equal(after.entries, 1, "only the reply of the slot that stayed is kept");
    assert.equal(after.flushes, before.flushes, "no whole-cache flush");
    // The new owner never saw this client read the missing key: without the drop its cached
    // null would be served forever.
    await writer.set(missing, "now");
    assert.equal(await client.get(missing), "now");
    assert.equal(await client.get(present), "p1");
    const h = client.cacheStats()!.hits;
    assert.equal(await client.get(stays), "s1");
    assert.equal(client.cacheStats()!.hits, h + 1, "the key of the other slot is still cached");
    // The new owner tracks what was read from it since.
    await writer.set(present, "p2");
    await waitFor(() => client.cacheStats()!.entries <= 2, 3000, "the new owner's invalidation");
    assert.equal(await client.get(present), "p2");
    await writer.close();
    await client.close();
    await assertNoLeaks();
  });
  it("with notifications off, a topology refresh that moves a slot drops its cached replies", async () => {
    const { client } = clusterClient(sim, {
      clientSideCache: clientSideCache(),
      maintenanceNotifications: { mode: "disabled" },
    });
    const writer = new RedisClusterClient({ nodes: sim.seeds });
    await client.connect();
    const owners = sim.nodes().filter((n) => n.slots !== "");
    const movingSlot = slotsOf(owners[1]!.slots)[13]!;
    const missing = slotKey(movingSlot, "absent2");
    const stays = slotKey(slotsOf(owners[2]!.slots)[13]!, "stays2");
    await writer.set(stays, "s");
    for (let i = 0; i < 2; i++) {
      assert.equal(await client.get(missing), null);
      assert.equal(await client.get(stays), "s");
    }
    assert.equal(client.cacheStats()!.entries, 2);
    await sim.slotMigrate({ effect: "slot-shuffle", slots: [movingSlot] });
    await client.refreshTopology();
    assert.equal(client.cacheStats()!.entries, 1);
    await writer.set(missing, "now");
    assert.equal(await client.get(missing), "now");
    await writer.close();
    await client.close();
    await assertNoLeaks();
  });
});
