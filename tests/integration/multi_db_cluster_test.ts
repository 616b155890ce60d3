// A cluster database in a MultiDbClient: served through RedisClusterClient, failed over from
// when its nodes die.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { MultiDbClient, type SwitchEventDetail } from "../../src/multi_db/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";
import { waitFor } from "../_helpers/load.ts";

describe("MultiDbClient with a cluster database", () => {
  let cluster: RedisCluster;
  let standby: RedisServer;
  before(async () => {
    [cluster, standby] = await Promise.all([
      startCluster({ primaries: 3, replicasPerPrimary: 0 }),
      startRedis(),
    ]);
  });
  after(async () => {
    await Promise.all([cluster.stop(), standby.stop()]);
  });
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it("routes keys of every slot through the cluster, then fails over when its nodes die", async () => {
    const client = new MultiDbClient({
      databases: [
        { nodes: cluster.seeds, weight: 2, name: "cluster" },
        { url: standby.url, weight: 1, name: "standby" },
      ],
      commandTimeout: 500,
      connectTimeout: 300,
      reconnect: { baseDelay: 20, maxDelay: 100 },
      healthCheck: { interval: 150, timeout: 400, probes: 1 },
      gracePeriod: 60_000,
    });
    const seen: SwitchEventDetail[] = [];
    client.addEventListener("switch", (e) => seen.push(e.detail));
    await client.connect();
    assert.equal(client.activeDatabase, "cluster");
    const keys = Array.from({ length: 30 }, (_, i) => `user:${i}`);
    for (const k of keys) await client.set(k, k);
    assert.deepEqual(await client.mget(...keys), keys, "a cross-slot MGET is split and merged");
    // The keys landed on several primaries.
    const slots = new Set(await Promise.all(keys.map((k) => cluster.keySlot(k))));
    const owners = new Set([...slots].map((s) => cluster.nodeForSlot(s).id));
    assert.ok(owners.size > 1);
    assert.deepEqual(await client.pipeline().incr("{n}a").incr("{n}a").exec(), [1, 2]);
    assert.deepEqual(await client.multi().incr("{n}b").get("{n}b").exec(), [1, "1"]);
    await Promise.all(cluster.primaries().map((n) => n.kill()));
    await waitFor(() => seen.length === 1, 5000, "the failover");
    assert.deepEqual(seen[0], { from: "cluster", to: "standby", reason: "HEALTH_CHECK" });
    assert.equal(await client.set("after", "1"), "OK");
    assert.equal(await client.dbsize(), 1, "the standby serves now");
    await client.close();
  });
});
