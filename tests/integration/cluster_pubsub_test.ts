// Pub/sub on a cluster: channels and patterns on one node, shard channels on the owner of
// their slot, and shard subscriptions carried across a live slot move.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { waitFor } from "../_helpers/load.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("cluster pub/sub", () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startCluster({ replicasPerPrimary: 0 });
  });
  after(async () => {
    await cluster?.stop();
  });
  beforeEach(markLeakBaseline);

  it("delivers channel, pattern and shard messages published through any node", async () => {
    const client = new RedisClusterClient({ nodes: cluster.seeds });
    const got: string[] = [];
    const a = await client.subscribe("news", (m, ch) => got.push(`${ch}:${m}`));
    const b = await client.psubscribe("ev.*", (m, ch) => got.push(`${ch}:${m}`));
    // Shard channels of the three primaries.
    const shards = ["s1", "s2", "s3", "s4", "s5", "s6"];
    assert.equal(new Set(shards.map((s) => cluster.nodeForSlot(keySlot(s)).id)).size, 3);
    const c = await client.ssubscribe(shards, (m, ch) => got.push(`${ch}:${m}`));
    // Publish through each node directly: PUBLISH is forwarded over the cluster bus.
    for (const p of cluster.primaries()) await p.command(["PUBLISH", "news", String(p.port)]);
    await client.publish("ev.x", "1");
    for (const s of shards) assert.equal(await client.spublish(s, "m"), 1);
    await waitFor(() => got.length === 3 + 1 + shards.length, 3000, "every message");
    assert.deepEqual(
      got.filter((g) => g.startsWith("s")).sort(),
      shards.map((s) => `${s}:m`).sort(),
    );
    await Promise.all([a.unsubscribe(), b.unsubscribe(), c.unsubscribe()]);
    for (const s of shards) assert.equal(await client.spublish(s, "m"), 0);
    await client.close();
    await assertNoLeaks();
  });

  for (const publisherKind of ["the same client", "another client"] as const) {
    it(`carries a shard subscription across a slot move, published by ${publisherKind}`, async () => {
      const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
      const publisher = publisherKind === "the same client"
        ? client
        : new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
      const channel = `orders.${publisherKind.length}`;
      const received: number[] = [];
      const sub = await client.ssubscribe(channel, (m) => received.push(Number(m)));
      let sent = 0;
      let stop = false;
      const pub = (async () => {
        while (!stop) {
          await publisher.spublish(channel, String(sent));
          sent++;
          if (sent % 20 === 0) await sleep(1);
        }
      })();
      try {
        await sleep(100);
        const slot = keySlot(channel);
        const from = cluster.nodeForSlot(slot);
        const to = cluster.primaries().find((p) => p.id !== from.id)!;
        await cluster.migrateSlot(slot, to.id, { beforeFinalize: () => sleep(50) });
        await sleep(200);
        stop = true;
        await pub;
        await waitFor(
          () => received.length >= sent,
          3000,
          `${sent} messages (got ${received.length})`,
        ).catch(() => {});
        const dupes = received.length - new Set(received).size;
        const missing = sent - new Set(received).size;
        console.log(
          `shard pub/sub across a slot move (${publisherKind}): ${sent} published, ${received.length} received, ${missing} missing, ${dupes} duplicates`,
        );
        assert.equal(client.nodeForSlot(slot), `127.0.0.1:${to.port}`);
        assert.equal(dupes, 0, "no message twice");
        assert.deepEqual(received, [...received].sort((a, b) => a - b), "in order");
        if (publisherKind === "the same client") {
          // The client's own MOVED for SPUBLISH moves the subscription before the publish is
          // sent again: nothing can fall between the two subscriptions.
          assert.equal(missing, 0, "every message arrives");
        } else {
          // Another publisher may reach the new owner in the one round trip between the old
          // owner ending the subscription and the client subscribing again there.
          assert.ok(missing <= Math.max(5, sent / 100), `${missing} of ${sent} missing`);
        }
        // The subscription now lives on the new owner only.
        assert.deepEqual(await to.command(["PUBSUB", "SHARDNUMSUB", channel]), [channel, 1]);
      } finally {
        stop = true;
        await pub;
        await sub.unsubscribe();
        if (publisher !== client) await publisher.close();
        await client.close();
      }
      await assertNoLeaks();
    });
  }
});
