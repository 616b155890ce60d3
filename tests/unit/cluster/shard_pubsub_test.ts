// Shard subscriptions on the manual clock, over fake node executors: opened ahead on the node
// importing their slot and taken over when the slot lands there, or ended when the move is
// called off (shard migration); muted copies on replicas held, confirmed and taking over on a
// failover or a lost primary (failover shadows).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { keySlot } from "../../../src/cluster/slot.ts";
import {
  firstUnseen,
  messageMark,
  RECENT_BYTES,
  RECENT_MESSAGES,
  SHADOW_TAKEOVER_GRACE,
} from "../../../src/cluster/_failover_shadows.ts";
import { RETIRE_TIMEOUT, SWITCH_GUARD_MS } from "../../../src/cluster/_pubsub.ts";
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

/**
 * The other primaries (B, C) answer the next SSUBSCRIBE of the channel with `MOVED` to R, each
 * when its function in the returned list is called.
 */
function heldConfirmations(p: ReturnType<typeof parts>): (() => void)[] {
  const release: (() => void)[] = [];
  p.cluster.script = (node, args) =>
    args[0] === "SSUBSCRIBE" && (node === B || node === C)
      ? new Promise((resolve) => release.push(() => resolve(reply(`MOVED ${slot} ${R}`))))
      : undefined;
  return release;
}

/** Subscribed to `channel` on A; `setup` runs before the subscription (e.g. a script). */
async function subscribed(
  options: Parameters<typeof parts>[1] = {},
  setup?: (p: ReturnType<typeof parts>) => void,
) {
  const p = parts(undefined, options);
  await p.holder.discover();
  await flush();
  setup?.(p);
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

describe("Switch guard", () => {
  it("after a switch, drops what another copy delivered already; the current copy's stream passes", async () => {
    const p = await subscribed();
    p.pubsub.migration.migrating(slot, B);
    await flush();
    const ahead = p.subOn(B);
    const old = p.subOn(A);
    old.listener("before", channel);
    moveInModel(p, 1);
    p.holder.patch(slot, { host: "127.0.0.1", port: 7001 });
    await p.pubsub.moveSlot(slot);
    assert.equal(p.pubsub.current.get(channel)!.sub as unknown, ahead);
    assert.equal(old.active, true, "the old copy retires, still listening");
    ahead.listener("m1", channel);
    // The old owner's copy carries a message the current copy delivered: a copy of it.
    old.listener("m1", channel);
    old.listener("before", channel);
    // What only the old copy received is delivered (a message is published on one shard only).
    old.listener("a-new", channel);
    // The current copy's own stream passes, repeats included.
    ahead.listener("m1", channel);
    ahead.listener("before", channel);
    assert.deepEqual(p.got, ["before", "m1", "a-new", "m1", "before"]);
    // The guard ends after SWITCH_GUARD_MS.
    await p.clock.advance(SWITCH_GUARD_MS + 1);
    old.listener("m1", channel);
    assert.deepEqual(p.got.at(-1), "m1");
    assert.equal(p.got.length, 6);
  });
});

describe("Switch guard through a failover", () => {
  it("drops, once, a late copy the promoted replica receives of what its old primary delivered", async () => {
    const p = await subscribed();
    p.subOn(A).listener("1", channel);
    p.subOn(A).listener("2", channel);
    const release = heldConfirmations(p);
    failOverInModel(p);
    p.pubsub.shardEnded(A, channel);
    await flush();
    for (const r of release) r();
    await flush();
    await flush();
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    // The old primary's "2" reaches the promoted replica over the cluster bus, after its own "3".
    p.subOn(R).listener("3", channel);
    p.subOn(R).listener("2", channel);
    assert.deepEqual(p.got, ["1", "2", "3"], "the late copy is dropped");
    // Once dropped, the same content is a new message.
    p.subOn(R).listener("2", channel);
    assert.deepEqual(p.got, ["1", "2", "3", "2"]);
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
    const release = heldConfirmations(p);
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

  it("holds a copy its replica has not confirmed yet when the primary ends the channel: nothing the promoted replica publishes is lost", async () => {
    // The replica confirms the copy late (a loaded machine, a connection still opening).
    let confirmCopy: (() => void) | undefined;
    const p = await subscribed({}, (p) => {
      p.cluster.script = (node, args) =>
        args[0] === "SSUBSCRIBE" && node === R && confirmCopy === undefined
          ? new Promise((resolve) => confirmCopy = () => resolve("OK"))
          : undefined;
    });
    assert.ok(confirmCopy, "the copy waits for its confirmation");
    const release = heldConfirmations(p);
    failOverInModel(p);
    p.pubsub.shardEnded(A, channel);
    await flush();
    confirmCopy!();
    await flush();
    // Published on the promoted replica while the client decides: the copy holds it.
    p.node(R).publish(channel, "1");
    for (const f of release) f();
    for (let i = 0; i < 4; i++) await flush();
    p.node(R).publish(channel, "2");
    await flush();
    assert.deepEqual(p.got, ["1", "2"], "every message once, in order");
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    assert.equal(p.ctx.stats.shadowTakeovers, 1);
    assert.equal(p.cluster.count("SSUBSCRIBE", R), 1, "the copy is the subscription");
  });

  it("takes over through the copy when the view already names the promoted replica: nothing held is lost", async () => {
    const p = await subscribed();
    const release = heldConfirmations(p);
    // The client read the new view (R the primary, A its replica) before A ended the channel.
    failOverInModel(p);
    await p.holder.refresh();
    await flush();
    p.node(A).publish(channel, "1");
    p.node(R).publish(channel, "1"); // the same message, through replication
    p.pubsub.shardEnded(A, channel);
    // R publishes what it is sent now: the copy holds it while the client decides.
    p.node(R).publish(channel, "2");
    await flush();
    p.node(R).publish(channel, "3");
    for (const r of release) r();
    await flush();
    await flush();
    p.node(R).publish(channel, "4");
    assert.deepEqual(p.got, ["1", "2", "3", "4"], "every message once, in order");
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    assert.equal(p.ctx.stats.shadowTakeovers, 1);
    assert.equal(
      p.cluster.count("SSUBSCRIBE", R),
      1,
      "the copy is the subscription: no second one",
    );
  });

  it("a view naming the promoted replica before the primary ends the channel moves nothing: one copy delivers", async () => {
    const p = await subscribed();
    p.cluster.script = (node, args) =>
      args[0] === "SSUBSCRIBE" && (node === B || node === C)
        ? reply(`MOVED ${slot} ${R}`)
        : undefined;
    // A transitional view: R serves the slot, A is still seen as a primary (of no slot).
    const s = p.cluster.shards[0]!;
    p.cluster.shards[0] = { primary: s.replicas[0]!, replicas: [], ranges: s.ranges };
    p.cluster.shards.push({ primary: s.primary, replicas: [], ranges: [] });
    p.cluster.epoch++;
    await p.holder.refresh();
    await flush();
    await flush();
    // A still delivers its last messages, R (its replica until now) the same ones.
    p.node(A).publish(channel, "1");
    p.node(R).publish(channel, "1");
    // A ends the channel; from now on R alone carries it.
    p.pubsub.shardEnded(A, channel);
    p.node(R).publish(channel, "2");
    await flush();
    await flush();
    p.node(R).publish(channel, "3");
    // A, a replica of R now, receives R's messages too.
    p.node(A).publish(channel, "3");
    assert.deepEqual(p.got, ["1", "2", "3"], "every message once, in order");
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    assert.ok(!p.clock.delays().includes(RETIRE_TIMEOUT), "nothing retires on A");
  });

  it("delivers through one copy per shard: another subscription in the current one's shard is muted", async () => {
    const p = await subscribed();
    // A second subscription on A (as a re-subscribe round could make), one on its replica R,
    // and one on another shard's primary.
    await p.pubsub.subscribeShard(A, channel);
    await p.pubsub.subscribeShard(R, channel);
    await p.pubsub.subscribeShard(B, channel);
    p.node(A).publish(channel, "1");
    p.node(R).publish(channel, "1");
    // A message published on another shard is that shard's alone.
    p.node(B).publish(channel, "2");
    assert.deepEqual(p.got, ["1", "2"]);
  });

  it("delivers what the promoted replica sent before the old primary's end of the channel was read", async () => {
    const p = await subscribed();
    p.cluster.script = (node, args) =>
      args[0] === "SSUBSCRIBE" && (node === B || node === C)
        ? reply(`MOVED ${slot} ${R}`)
        : undefined;
    p.node(A).publish(channel, "1");
    p.node(R).publish(channel, "1");
    failOverInModel(p);
    // Two sockets, no order between them: R's first message is read before A's end.
    p.node(R).publish(channel, "2");
    p.pubsub.shardEnded(A, channel);
    p.node(R).publish(channel, "3");
    await flush();
    await flush();
    p.node(R).publish(channel, "4");
    assert.deepEqual(p.got, ["1", "2", "3", "4"], "every message once, in order");
    assert.equal(p.ctx.stats.shadowTakeovers, 1);
  });

  it("a lost primary's copy delivers what the replica received and the primary's socket did not", async () => {
    const p = await subscribed();
    p.node(A).publish(channel, "1");
    p.node(R).publish(channel, "1");
    // A acknowledged "2" and "3" and replicated them, then died before its socket delivered them.
    p.node(R).publish(channel, "2");
    p.node(R).publish(channel, "3");
    p.node(A).lost();
    await p.clock.advance(SHADOW_TAKEOVER_GRACE);
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    p.node(R).publish(channel, "4");
    assert.deepEqual(p.got, ["1", "2", "3", "4"]);
  });

  it("a lost primary's lagging replica delivers nothing twice: its copy takes over after what was delivered", async () => {
    const p = await subscribed();
    // A delivered 1..100; its replica received only 1..50 before A was killed.
    for (let i = 1; i <= 100; i++) {
      p.node(A).publish(channel, String(i));
      if (i <= 50) p.node(R).publish(channel, String(i));
    }
    p.node(A).lost();
    await p.clock.advance(SHADOW_TAKEOVER_GRACE);
    assert.equal(p.pubsub.current.get(channel)!.node, R);
    p.node(R).publish(channel, "101");
    assert.deepEqual(p.got, Array.from({ length: 101 }, (_, i) => String(i + 1)));
  });

  it("a copy made current after the one it replaces ended delivers nothing already delivered", async () => {
    const p = await subscribed();
    const before = p.pubsub.current.get(channel)!;
    // A second subscription on A, muted while the first delivers, holds what it receives.
    const second = await p.pubsub.subscribeShard(A, channel);
    p.node(A).publish(channel, "1");
    p.node(A).publish(channel, "2");
    before.sub.unsubscribe();
    p.pubsub.current.set(channel, { node: A, sub: second });
    p.node(A).publish(channel, "3");
    assert.deepEqual(p.got, ["1", "2", "3"]);
  });

  it("a copy keeps at most 1 024 muted messages and 1 MiB of them", async () => {
    const p = await subscribed();
    const live = p.pubsub.shadows.of(channel)!.get(R)!.live;
    for (let i = 0; i < 5000; i++) p.node(R).publish(channel, String(i));
    assert.ok(live.recent.length <= 2 * RECENT_MESSAGES, `${live.recent.length} kept`);
    assert.equal(live.recent.at(-1)![0] as unknown, "4999", "the newest are kept");
    const big = "x".repeat(100_000);
    for (let i = 0; i < 100; i++) p.node(R).publish(channel, big);
    assert.ok(live.recentBytes <= RECENT_BYTES, `${live.recentBytes} bytes kept`);
    assert.equal(live.recentBytes, live.recent.reduce((n, [m]) => n + m.length, 0));
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

describe("firstUnseen", () => {
  const b = (t: string) => new TextEncoder().encode(t);
  const msgs = (...t: string[]) => t.map((x) => [b(x), channel] as const);
  const marks = (...t: string[]) => t.map((x) => messageMark(b(x)));

  it("starts after the last message delivered", () => {
    assert.equal(firstUnseen(msgs("5", "6", "7", "8"), marks("4", "5", "6"), "all"), 2);
    assert.equal(firstUnseen(msgs("5", "6", "7", "8"), marks("4", "5", "6"), "none"), 2);
  });

  it("when nothing received was delivered: all new, or none (a lagging copy)", () => {
    assert.equal(firstUnseen(msgs("7", "8"), marks("5", "6"), "all"), 0);
    assert.equal(firstUnseen(msgs("7", "8"), marks("5", "6"), "none"), 2);
    assert.equal(firstUnseen(msgs("7"), [], "none"), 0, "nothing delivered yet: all new");
  });

  it("takes a message equal to a delivered one for it (at most once)", () => {
    assert.equal(firstUnseen(msgs("x", "x", "x"), marks("x"), "all"), 3);
  });

  it("marks a message by its length and its first and last 32 bytes", () => {
    const long = (mid: string) => b(`${"a".repeat(40)}${mid}${"z".repeat(40)}`);
    assert.equal(messageMark(long("1")), messageMark(long("1")));
    assert.notEqual(messageMark(b("1")), messageMark(b("2")));
    assert.equal(messageMark(long("1")), messageMark(long("2")), "the middle is not read");
    assert.equal(messageMark("abc"), messageMark(b("abc")));
  });
});
