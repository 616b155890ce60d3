// Shard subscriptions on the manual clock, over fake node executors: opened ahead on the node
// importing their slot and taken over when the slot lands there, or ended when the move is
// called off (shard migration); muted copies on replicas held, confirmed and taking over on a
// failover or a lost primary (failover shadows).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { keySlot } from "../../../src/cluster/slot.ts";
import { SHADOW_TAKEOVER_GRACE } from "../../../src/cluster/_failover_shadows.ts";
import { RETIRE_TIMEOUT } from "../../../src/cluster/_pubsub.ts";
import { flush, keyIn, parts, reply } from "./_parts.ts";

const A = "127.0.0.1:7000";
const B = "127.0.0.1:7001";
const C = "127.0.0.1:7002";
const R = "127.0.0.1:7100"; // A's replica
const channel = keyIn(0, 5460, keySlot); // served by A
const slot = keySlot(channel);

/** The model cluster moves `slot` from shard 0 (A) to shard `to`. */
function moveInModel(p: ReturnType<typeof parts>, to: number): void {
  const shards = p.cluster.shards;
  shards[0]!.ranges = [[0, slot - 1], [slot + 1, 5460]];
  shards[to]!.ranges.push([slot, slot]);
  p.cluster.epoch++;
}

/** The model cluster fails A over to its replica R. */
function failOverInModel(p: ReturnType<typeof parts>): void {
  const s = p.cluster.shards[0]!;
  p.cluster.shards[0] = { primary: s.replicas[0]!, replicas: [s.primary], ranges: s.ranges };
  p.cluster.epoch++;
}

async function subscribed(options: Parameters<typeof parts>[1] = {}) {
  const p = parts(undefined, options);
  await p.holder.discover();
  await flush();
  const got: string[] = [];
  await p.pubsub.subscribe("shard", channel, (message: string) => void got.push(message));
  await flush();
  const node = (a: string) => p.cluster.nodes.get(a)!;
  /** The live subscription on `a` (the last one made there). */
  const subOn = (a: string) => node(a).subs.filter((s) => s.active).at(-1)!;
  return { ...p, got, node, subOn };
}

describe("Shard migration", () => {
  it("opens the subscription ahead behind ASKING and takes it over when the slot lands", async () => {
    const p = await subscribed();
    assert.equal(p.pubsub.current.get(channel)!.node, A);
    p.pubsub.migration.migrating(slot, B);
    await flush();
    assert.equal(p.ctx.stats.subscribedAhead, 1);
    const ahead = p.subOn(B);
    assert.equal(ahead.asking, true, "ASKING + SSUBSCRIBE on the importing node");
    // Both deliver during the move: a message is published on one node only.
    ahead.listener("on B", channel);
    p.subOn(A).listener("on A", channel);
    assert.deepEqual(p.got, ["on B", "on A"]);
    // The slot lands on B: the subscription opened ahead is the subscription now.
    moveInModel(p, 1);
    p.holder.patch(slot, { host: "127.0.0.1", port: 7001 });
    await p.pubsub.moveSlot(slot);
    assert.equal(p.pubsub.current.get(channel)!.node, B);
    assert.equal(p.pubsub.current.get(channel)!.sub as unknown, ahead);
    assert.equal(p.cluster.count("SSUBSCRIBE", B), 1, "no second SSUBSCRIBE on B");
    // The old one retires until A ends it.
    assert.ok(p.clock.delays().includes(RETIRE_TIMEOUT));
    p.pubsub.shardEnded(A, channel);
    assert.ok(p.node(A).forgotten.includes(channel));
    assert.ok(!p.clock.delays().includes(RETIRE_TIMEOUT));
  });

  it("a migration check finds the move (ASK) and ends the copy when the slot stays", async () => {
    const p = await subscribed();
    let migrating = true;
    p.cluster.script = (node, args) =>
      args[0] === "EXISTS" && node === A ? (migrating ? reply(`ASK ${slot} ${B}`) : 0) : undefined;
    await p.pubsub.migration.probe();
    await flush();
    const ahead = p.subOn(B);
    assert.equal(ahead.asking, true);
    assert.equal(p.pubsub.migration.get(channel)?.node, B);
    // The move is called off: the next check sees the slot stay on A.
    migrating = false;
    await p.pubsub.migration.probe();
    await flush();
    assert.equal(p.pubsub.migration.get(channel), undefined);
    assert.equal(ahead.active, false, "the subscription opened ahead is ended");
    assert.equal(p.pubsub.current.get(channel)!.node, A);
  });

  it("forgets the subscription opened ahead when the importing node ends it", async () => {
    const p = await subscribed();
    p.pubsub.migration.migrating(slot, B);
    await flush();
    p.pubsub.shardEnded(B, channel);
    assert.equal(p.pubsub.migration.get(channel), undefined);
    assert.ok(p.node(B).forgotten.includes(channel));
    assert.equal(p.pubsub.current.get(channel)!.node, A, "the subscription stays");
  });

  it("checks on the injected clock, every shardMigrationProbeInterval", async () => {
    const p = await subscribed({ shardMigrationProbeInterval: 250 });
    assert.deepEqual(p.clock.delays().filter((d) => d === 250), [250]);
    const before = p.cluster.count("EXISTS");
    await p.clock.advance(250);
    assert.equal(p.cluster.count("EXISTS"), before + 1);
  });
});

describe("Failover shadows", () => {
  it("keeps a muted copy on the primary's replica", async () => {
    const p = await subscribed();
    const copies = p.pubsub.shadows.of(channel)!;
    assert.deepEqual([...copies.keys()], [R]);
    p.subOn(R).listener("muted", channel);
    assert.deepEqual(p.got, [], "a copy delivers nothing before it takes over");
  });

  it("holds the copy's messages, confirms a failover with the primaries, then takes over", async () => {
    const p = await subscribed();
    const release: (() => void)[] = [];
    p.cluster.script = (node, args) =>
      args[0] === "SSUBSCRIBE" && (node === B || node === C)
        ? new Promise((resolve) => release.push(() => resolve(reply(`MOVED ${slot} ${R}`))))
        : undefined;
    failOverInModel(p);
    p.pubsub.shardEnded(A, channel);
    await flush();
    assert.equal(release.length, 2, "the other primaries are asked in one round");
    p.subOn(R).listener("during", channel);
    assert.deepEqual(p.got, [], "held while the client decides");
    for (const r of release) r();
    await flush();
    await flush();
    assert.deepEqual(p.got, ["during"], "what was held is delivered");
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    assert.equal(p.ctx.stats.shadowTakeovers, 1);
    assert.equal(p.holder.ownerOf(slot), R, "the promoted replica serves the slot");
    p.subOn(R).listener("after", channel);
    assert.deepEqual(p.got, ["during", "after"]);
  });

  it("drops what the copy held when another shard confirms (a slot move, not a failover)", async () => {
    const p = await subscribed();
    p.cluster.script = (node, args) =>
      args[0] === "SSUBSCRIBE" && node === C ? reply(`MOVED ${slot} ${B}`) : undefined;
    moveInModel(p, 1);
    p.pubsub.shardEnded(A, channel);
    await flush();
    await flush();
    assert.equal(p.pubsub.current.get(channel)!.node, B);
    assert.equal(p.ctx.stats.shadowTakeovers, 0);
  });

  it("takes over a lost primary's subscription after the grace period", async () => {
    const p = await subscribed();
    p.node(A).lost();
    await p.clock.advance(SHADOW_TAKEOVER_GRACE - 1);
    assert.equal(p.pubsub.current.get(channel)!.node, A);
    await p.clock.advance(1);
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    assert.equal(p.ctx.stats.shadowTakeovers, 1);
    assert.ok(p.node(A).forgotten.includes(channel));
    p.subOn(R).listener("from the replica", channel);
    assert.deepEqual(p.got, ["from the replica"]);
  });

  it("does not take over when the primary is back within the grace period", async () => {
    const p = await subscribed();
    p.node(A).lost();
    await p.clock.advance(SHADOW_TAKEOVER_GRACE / 2);
    p.node(A).ready();
    await p.clock.advance(SHADOW_TAKEOVER_GRACE);
    assert.equal(p.pubsub.current.get(channel)!.node, A);
    assert.equal(p.ctx.stats.shadowTakeovers, 0);
  });

  it("keeps no copy with failoverShadows: false", async () => {
    const p = await subscribed({ failoverShadows: false });
    assert.equal(p.pubsub.shadows.of(channel), undefined);
  });
});
