// Topology changes the client finds by itself: a node added and a node removed (picked up by
// the periodic refresh), and a seed list whose first node is dead.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { keySlot, RedisClusterClient, type TopologyEventDetail } from "../../src/cluster/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { freePort } from "../_helpers/redis_server.ts";
import { waitFor } from "../_helpers/load.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("cluster topology changes", () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startCluster({ replicasPerPrimary: 0 });
  });
  after(async () => {
    await cluster?.stop();
  });
  beforeEach(markLeakBaseline);

  it("starts from a seed list whose first node is dead", async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const client = new RedisClusterClient({
      nodes: [dead, ...cluster.seeds],
      connectTimeout: 1000,
    });
    const t0 = Date.now();
    assert.equal(await client.set("seed:k", "v"), "OK");
    assert.ok(Date.now() - t0 < 1000, "the dead seed did not delay discovery");
    assert.equal(client.nodes().length, 3);
    await client.close();
    await assertNoLeaks();
  });

  it("picks up a node added and a node removed through the periodic refresh", async () => {
    const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 200 });
    const added: string[] = [];
    const removed: string[] = [];
    const changes: TopologyEventDetail[] = [];
    client.addEventListener("node-added", (e) => added.push(e.detail.address));
    client.addEventListener("node-removed", (e) => removed.push(e.detail.address));
    client.addEventListener("topology", (e) => changes.push(e.detail));
    try {
      await client.set("member:k", "v");
      assert.equal(added.length, 3, "the first view adds every node");
      added.length = 0;

      const node = await cluster.addNode();
      const address = `127.0.0.1:${node.port}`;
      // Give it a slot nobody writes to, so only the refresh can tell the client.
      const slot = keySlot("member:moved");
      await cluster.migrateSlot(slot, node.id);
      await waitFor(
        () => client.nodeForSlot(slot) === address,
        5000,
        "the refresh to see the slot move",
      );
      assert.deepEqual(added, [address]);
      assert.ok(changes.some((c) => c.reason === "refresh" && c.added.includes(address)));
      assert.equal(await client.set("member:moved", "x"), "OK");
      assert.equal(client.stats().moved, 0, "routed by the refreshed table, no MOVED");
      assert.equal(await node.command(["GET", "member:moved"]), "x");

      await cluster.removeNode(node.id);
      await waitFor(() => removed.includes(address), 5000, "the refresh to see the node leave");
      assert.equal(client.nodes().some((n) => n.address === address), false);
      assert.notEqual(client.nodeForSlot(slot), address);
      assert.equal(await client.get("member:moved"), "x");
    } finally {
      await client.close();
    }
    await assertNoLeaks();
  });
});
