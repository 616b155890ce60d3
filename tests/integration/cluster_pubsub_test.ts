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

  it("ends a subscription opened ahead when the move is called off, or on unsubscribe", async () => {
    const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
    const channel = "called-off";
    const slot = keySlot(channel);
    const from = cluster.nodeForSlot(slot);
    const to = cluster.primaries().find((p) => p.id !== from.id)!;
    const onImporter = async () =>
      ((await to.command(["PUBSUB", "SHARDNUMSUB", channel])) as [string, number])[1];
    const until = async (n: number, what: string) => {
      const end = Date.now() + 3000;
      while (await onImporter() !== n) {
        if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
        await sleep(10);
      }
    };
    const setslot = (node: typeof from, ...rest: string[]) =>
      node.command(["CLUSTER", "SETSLOT", String(slot), ...rest]);
    const received: string[] = [];
    let sub = await client.ssubscribe(channel, (m) => received.push(m));
    try {
      // A move that is called off: the owner stops answering ASK, the one opened ahead ends.
      await setslot(to, "IMPORTING", from.id);
      await setslot(from, "MIGRATING", to.id);
      await until(1, "the subscription opened ahead on the importing node");
      await setslot(from, "STABLE");
      await until(0, "the subscription opened ahead to end");
      await setslot(to, "STABLE");
      assert.equal(await from.command(["SPUBLISH", channel, "after-abort"]), 1);
      await waitFor(() => received.length === 1, 3000, "the message on the owner");
      assert.deepEqual(received, ["after-abort"]);
      assert.equal(client.nodeForSlot(slot), `127.0.0.1:${from.port}`);
      assert.equal(client.stats().subscribedAhead, 1);

      // Unsubscribed while the slot migrates: both subscriptions end.
      await setslot(to, "IMPORTING", from.id);
      await setslot(from, "MIGRATING", to.id);
      await until(1, "the subscription opened ahead again");
      await sub.unsubscribe();
      await until(0, "the subscription opened ahead to end on unsubscribe");
      assert.deepEqual(await from.command(["PUBSUB", "SHARDNUMSUB", channel]), [channel, 0]);
      await setslot(from, "STABLE");
      await setslot(to, "STABLE");
      // Subscribing again works, on the owner.
      sub = await client.ssubscribe(channel, (m) => received.push(m));
      assert.equal(await client.spublish(channel, "again"), 1);
      await waitFor(() => received.length === 2, 3000, "the second message");
    } finally {
      await setslot(from, "STABLE").catch(() => {});
      await setslot(to, "STABLE").catch(() => {});
      await sub.unsubscribe();
      await client.close();
    }
    await assertNoLeaks();
  });

  it("warns once when a node refuses the migration check, and keeps delivering", async () => {
    const user = ["ACL", "SETUSER", "noexists", "on", ">pw", "~*", "&*", "+@all", "-exists"];
    for (const p of cluster.primaries()) await p.command(user);
    const warnings: string[] = [];
    const client = new RedisClusterClient({
      nodes: cluster.seeds,
      username: "noexists",
      password: "pw",
      topologyRefreshInterval: 0,
      logger: { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} },
    });
    try {
      const got: string[] = [];
      const sub = await client.ssubscribe(["acl.a", "acl.b"], (m) => got.push(m));
      await waitFor(() => warnings.length > 0, 3000, "the warning");
      await sleep(300); // three more checks
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0]!, /refused EXISTS/);
      assert.doesNotMatch(warnings[0]!, /pw/);
      assert.equal(await client.spublish("acl.a", "x"), 1);
      await waitFor(() => got.length === 1, 3000, "the message");
      await sub.unsubscribe();
    } finally {
      await client.close();
      for (const p of cluster.primaries()) await p.command(["ACL", "DELUSER", "noexists"]);
    }
    await assertNoLeaks();
  });

  it("a subscription refused for one channel ends the channels that did subscribe", async () => {
    const user = ["ACL", "SETUSER", "onechannel", "on", ">pw", "~*", "resetchannels", "&acl.ok"];
    for (const p of cluster.primaries()) await p.command([...user, "+@all"]);
    const client = new RedisClusterClient({
      nodes: cluster.seeds,
      username: "onechannel",
      password: "pw",
      topologyRefreshInterval: 0,
    });
    try {
      await assert.rejects(client.ssubscribe(["acl.ok", "acl.no"], () => {}), /NOPERM/);
      const owner = cluster.nodeForSlot(keySlot("acl.ok"));
      const end = Date.now() + 3000;
      let n = 1;
      while (Date.now() < end) {
        n = ((await owner.command(["PUBSUB", "SHARDNUMSUB", "acl.ok"])) as [string, number])[1];
        if (n === 0) break;
        await sleep(10);
      }
      assert.equal(n, 0, "acl.ok is not left subscribed on its node");
      // The client subscribes again normally.
      const got: string[] = [];
      const sub = await client.ssubscribe("acl.ok", (m) => got.push(m));
      assert.equal(await client.spublish("acl.ok", "x"), 1);
      await waitFor(() => got.length === 1, 3000, "the message");
      await sub.unsubscribe();
    } finally {
      await client.close();
      for (const p of cluster.primaries()) await p.command(["ACL", "DELUSER", "onechannel"]);
    }
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
        let aheadOnImporter = 0;
        await cluster.migrateSlot(slot, to.id, {
          beforeFinalize: async () => {
            // While the slot migrates, the client's migration check (every 100 ms by default)
            // meets ASK and subscribes on the importing node too, before the owner ends its own.
            const end = Date.now() + 3000;
            while (Date.now() < end) {
              const n = await to.command(["PUBSUB", "SHARDNUMSUB", channel]) as [string, number];
              aheadOnImporter = n[1];
              if (aheadOnImporter === 1) break;
              await sleep(10);
            }
            await sleep(50);
          },
        });
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
        // Subscribed on the new owner before the old one ended its subscription: whoever
        // publishes, nothing falls between the two.
        assert.equal(aheadOnImporter, 1, "subscribed on the importing node during the move");
        assert.equal(client.stats().subscribedAhead, 1);
        assert.equal(missing, 0, "every message arrives");
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
