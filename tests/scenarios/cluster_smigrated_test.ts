// SMIGRATING / SMIGRATED applied in place by RedisClusterClient, through the
// ClusterMaintenanceSimulator (a real 3-primary redis cluster behind per-node proxies), under 16
// and 64 workers of mixed commands, for every effect: no failed command, exact counters, no
// MOVED/ASK for the moved slots once the delta is applied, emptied nodes let go, shard
// subscriptions carried across the move.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type RedisClient, RedisClient as RedisClientClass } from "../../mod.ts";
import type { SlotMigrateEffect, SlotMigrateResult } from "../../src/testing/mod.ts";
import { slotKey } from "../_helpers/cluster.ts";
import { assertCounters, startLoad, waitFor } from "../_helpers/load.ts";
import { assertNoLeaks, sleep } from "../_helpers/leaks.ts";
import {
  assertInOrder,
  clusterClient,
  loadSlots,
  shardTraffic,
  simulatorPerSuite,
  slotsOf,
} from "./cluster_maintenance_helpers.ts";

const PLAN: { effect: SlotMigrateEffect; explicit: boolean }[] = [
  { effect: "slot-shuffle", explicit: true },
  { effect: "add", explicit: true },
  { effect: "remove", explicit: false },
  { effect: "remove-add", explicit: false },
];

for (const { effect, explicit } of PLAN) {
  describe(`scenario: SMIGRATED applied in place, ${effect}`, () => {
    const sim = simulatorPerSuite({ primaries: 3 });

    for (const workers of [16, 64]) {
      it(`${workers} workers: no failed command, exact counters, no redirect after the delta`, async () => {
        const prefix = `${effect}${workers}`;
        const { client, seen } = clusterClient(sim);
        await client.connect();
        // The shard channel lives in a slot that moves.
        let channelSlot: number;
        let slots: number[] | undefined;
        if (explicit) {
          slots = loadSlots(prefix, workers);
          channelSlot = slots[0]!;
        } else {
          const owners = sim.nodes().filter((n) => n.slots !== "");
          channelSlot = slotsOf(owners[owners.length - 1]!.slots)[7]!;
        }
        const channel = slotKey(channelSlot, `ch.${prefix}`);
        const shard = await shardTraffic(client, channel);
        // The same slot, published by another client: the subscriber learns of the move only
        // from SMIGRATING and the owner's ASK, and must be subscribed on the destination before
        // the source ends its subscription.
        const other = clusterClient(sim).client;
        const shardOther = await shardTraffic(client, slotKey(channelSlot, `och.${prefix}`), other);
        const load = startLoad(client as unknown as RedisClient, workers, prefix);
        await sleep(300);
        const r: SlotMigrateResult = await sim.slotMigrate({ effect, slots });
        await waitFor(
          () => seen.applied.some((a) => a.seq === r.smigratedSeq),
          5000,
          "the delta applied",
        );
        await sleep(500);
        const stats = await load.stop();
        const pubsub = await shard.stop();
        const pubsubOther = await shardOther.stop();
        await other.close();

        assert.deepEqual(stats.errors, []);
        assert.equal(stats.failed, 0);
        assert.ok(stats.ok > workers, `only ${stats.ok} commands completed`);
        await assertCounters(client as unknown as RedisClient, stats, prefix);
        assertInOrder(pubsub);
        assertInOrder(pubsubOther);
        // Both channels of the moving slot were subscribed on its destination during the move.
        assert.ok(
          client.stats().subscribedAhead >= 2,
          `${client.stats().subscribedAhead} subscriptions opened ahead`,
        );

        const moved = r.entries.flatMap((e) => slotsOf(e.slots));
        assert.ok(moved.includes(channelSlot));
        // Routing follows the delta: every moved slot goes to its destination.
        for (const e of r.entries) {
          for (const s of slotsOf(e.slots)) assert.equal(client.nodeForSlot(s), e.destination);
        }
        // Commands written once the delta is applied meet no redirect for the moved slots
        // (100 ms for replies already on their way).
        const appliedAt = seen.applied.find((a) => a.seq === r.smigratedSeq)!.at;
        assert.deepEqual(sim.redirects({ since: appliedAt + 100, slots: moved }), []);
        // Timeouts back to normal: the window closed and the delta is applied.
        assert.ok(
          client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined),
        );
        if (r.added !== null) {
          assert.ok(client.nodes().some((n) => n.address === r.added));
        }
        // Every connection to an emptied node is closed, by the client and at the proxy.
        for (const gone of r.emptied) {
          assert.ok(
            !client.maintenanceState()!.connections.some((c) =>
              c.connection.startsWith(`${gone} `)
            ),
            `the client still has a connection to ${gone}`,
          );
          await waitFor(
            () => !sim.connections().some((c) => c.endpoint === gone),
            5000,
            `the proxy of ${gone} to see its connections closed`,
          );
        }
        assert.deepEqual(seen.warnings, []);
        await client.close();
        await assertNoLeaks();
      });
    }
  });
}

describe("scenario: slots no command touched during the move", () => {
  const sim = simulatorPerSuite({ primaries: 3 });

  for (const on of [true, false]) {
    it(
      on
        ? "are routed by the delta alone: no MOVED once it is applied"
        : "control: with notifications off, each of them costs a MOVED",
      async () => {
        const { client, seen } = clusterClient(sim, {
          topologyRefreshInterval: 0,
          maintenanceNotifications: { mode: on ? "auto" : "disabled" },
        });
        await client.connect();
        const owners = sim.nodes().filter((n) => n.slots !== "");
        const slots = owners.flatMap((n) => slotsOf(n.slots).slice(-50));
        const movedBefore = client.stats().moved;
        const r = await sim.slotMigrate({ effect: "slot-shuffle", slots });
        if (on) {
          await waitFor(
            () => seen.applied.some((a) => a.seq === r.smigratedSeq),
            5000,
            "the delta applied",
          );
        } else await sleep(200);
        const since = Date.now();
        await Promise.all(slots.map((s) => client.get(slotKey(s, "probe"))));
        const redirects = sim.redirects({ since, slots });
        if (on) {
          assert.deepEqual(redirects, []);
          assert.equal(client.stats().moved, movedBefore);
          for (const e of r.entries) {
            for (const s of slotsOf(e.slots)) assert.equal(client.nodeForSlot(s), e.destination);
          }
        } else {
          assert.ok(redirects.length > 0, "expected MOVED replies without the notifications");
        }
        await client.close();
        await assertNoLeaks();
      },
    );
  }
});

describe("scenario: SMIGRATING relaxes every connection of the client", () => {
  const sim = simulatorPerSuite({
    primaries: 3,
    args: ["--enable-debug-command", "yes"],
  });

  it("a node no notification reached, and a connection opened during the window, wait out a stall", async () => {
    const { client, seen } = clusterClient(sim, { commandTimeout: 300, connectTimeout: 300 });
    await client.connect();
    const nodes = sim.nodes().filter((n) => n.slots !== "");
    const [a, b, other] = [nodes[0]!, nodes[1]!, nodes[2]!];
    const otherKey = slotKey(slotsOf(other.slots)[0]!, "stall");
    const sleeper = new RedisClientClass({ ...other.upstream, commandTimeout: 5000 });
    const stall = () => sleeper.sendCommand(["DEBUG", "SLEEP", "0.9"]);
    // Only the two nodes involved hear SMIGRATING; the window stays open for 2.5 s.
    const migration = sim.slotMigrate({
      effect: "slot-shuffle",
      slots: [slotsOf(a.slots)[0]!],
      target: b.index,
      notify: "involved",
      delayMs: 2500,
    });
    await sim.waitForEvent("SMIGRATING");
    await waitFor(
      () => client.maintenanceState()!.connections.every((c) => c.relaxedUntil !== undefined),
      2000,
      "every connection relaxed",
    );
    // A stall of 900 ms on the third node: its commands (timeout 300 ms) wait for it.
    let s = stall();
    await sleep(50);
    assert.equal(await client.set(otherKey, "1"), "OK");
    await s;
    // A new (exclusive) connection to that node handshakes during another stall.
    const retries = client.stats().unwrittenRetries;
    s = stall();
    await sleep(50);
    assert.equal(await client.blpop(otherKey + "list", 0.05), null);
    await s;
    assert.equal(client.stats().unwrittenRetries, retries, "the handshake did not time out");
    const r = await migration;
    await waitFor(
      () => seen.applied.some((x) => x.seq === r.smigratedSeq),
      5000,
      "the delta applied",
    );
    assert.ok(client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined));
    // Control: outside the window the same stall times the command out.
    s = stall();
    await sleep(50);
    await assert.rejects(client.get(otherKey), (e: Error) => e.name === "TimeoutError");
    await s;
    await sleeper.close();
    await client.close();
    await assertNoLeaks();
  });
});
