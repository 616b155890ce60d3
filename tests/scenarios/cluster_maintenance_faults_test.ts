// Faulty SMIGRATED delivery to RedisClusterClient through the ClusterMaintenanceSimulator (real
// 3-primary cluster): a duplicate, a lost, a reordered and a malformed SMIGRATED, under 16
// workers. The client heals through MOVED and topology refreshes with no failed command.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RedisClient } from "../../mod.ts";
import { smigratedFrame } from "../../src/testing/_notifications.ts";
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

const WORKERS = 16;

function ownersOf(entries: { destination: string; slots: string }[]): Map<number, string> {
  const m = new Map<number, string>();
  for (const e of entries) for (const s of slotsOf(e.slots)) m.set(s, e.destination);
  return m;
}

describe("scenario: faulty SMIGRATED delivery", () => {
  const sim = simulatorPerSuite({ primaries: 3 });

  /** Every moved slot answered by its destination (a GET per slot), and the table agrees. */
  async function assertRoutedTo(
    client: ReturnType<typeof clusterClient>["client"],
    owner: Map<number, string>,
  ): Promise<void> {
    await Promise.all([...owner.keys()].map((s) => client.get(slotKey(s, "probe"))));
    for (const [s, dst] of owner) assert.equal(client.nodeForSlot(s), dst, `slot ${s}`);
  }

  it("a duplicate SMIGRATED is applied once", async () => {
    const prefix = "dup";
    const { client, seen } = clusterClient(sim);
    await client.connect();
    const load = startLoad(client as unknown as RedisClient, WORKERS, prefix);
    await sleep(200);
    const r = await sim.slotMigrate({
      effect: "slot-shuffle",
      slots: loadSlots(prefix, WORKERS),
      smigratedCopies: 2,
    });
    await waitFor(() => seen.applied.length > 0, 5000, "the delta applied");
    await sleep(300);
    const stats = await load.stop();
    assert.deepEqual(stats.errors, []);
    await assertCounters(client as unknown as RedisClient, stats, prefix);
    assert.deepEqual(seen.applied.map((a) => a.seq), [r.smigratedSeq]);
    await assertRoutedTo(client, ownersOf(r.entries));
    assert.ok(client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined));
    await client.close();
    await assertNoLeaks();
  });

  it("a lost SMIGRATED: MOVED and the refresh heal, the backstop ends the window", async () => {
    const prefix = "lost";
    const { client, seen } = clusterClient(sim, {
      maintenanceNotifications: { relaxedWindowMaxDuration: 1500 },
    });
    await client.connect();
    const load = startLoad(client as unknown as RedisClient, WORKERS, prefix);
    await sleep(200);
    const r = await sim.slotMigrate({
      effect: "slot-shuffle",
      slots: loadSlots(prefix, WORKERS),
      smigratedCopies: 0,
    });
    await sleep(300);
    assert.ok(
      client.maintenanceState()!.connections.some((c) => c.relaxedUntil !== undefined),
      "relaxed while the window waits for its end",
    );
    await waitFor(
      () => seen.closedWindows.some((w) => w.seq === r.smigratingSeq && w.reason === "expired"),
      5000,
      "the backstop to close the window",
    );
    const stats = await load.stop();
    assert.deepEqual(stats.errors, []);
    await assertCounters(client as unknown as RedisClient, stats, prefix);
    assert.deepEqual(seen.applied, []);
    assert.ok(client.stats().moved + client.stats().ask > 0, "healed through redirects");
    await assertRoutedTo(client, ownersOf(r.entries));
    assert.ok(client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined));
    await client.close();
    await assertNoLeaks();
  });

  it("a reordered SMIGRATED: the older delta arriving last does not undo the newer one", async () => {
    const prefix = "late";
    const { client, seen } = clusterClient(sim);
    await client.connect();
    const load = startLoad(client as unknown as RedisClient, WORKERS, prefix);
    await sleep(200);
    const slots = loadSlots(prefix, WORKERS);
    // The first move's SMIGRATED is held back; the same slots move on again; then it arrives.
    const first = await sim.slotMigrate({ effect: "slot-shuffle", slots, smigratedCopies: 0 });
    const second = await sim.slotMigrate({ effect: "slot-shuffle", slots });
    await waitFor(
      () => seen.applied.some((a) => a.seq === second.smigratedSeq),
      5000,
      "the newer delta applied",
    );
    const late = smigratedFrame(first.smigratedSeq, first.entries, "reference");
    assert.ok(sim.inject(late) > 0);
    await sleep(300);
    const stats = await load.stop();
    assert.deepEqual(stats.errors, []);
    await assertCounters(client as unknown as RedisClient, stats, prefix);
    // Its slots all moved again since: nothing of it is applied.
    assert.ok(!seen.applied.some((a) => a.seq === first.smigratedSeq));
    await assertRoutedTo(client, ownersOf(second.entries));
    const since = Date.now();
    await Promise.all(slots.map((s) => client.get(slotKey(s, "again"))));
    assert.deepEqual(sim.redirects({ since, slots }), []);
    assert.ok(client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined));
    await client.close();
    await assertNoLeaks();
  });

  it("a malformed SMIGRATED is dropped with a warning, closes its window and refreshes", async () => {
    const prefix = "bad";
    const { client, seen } = clusterClient(sim);
    await client.connect();
    const load = startLoad(client as unknown as RedisClient, WORKERS, prefix);
    await sleep(200);
    const r = await sim.slotMigrate({
      effect: "slot-shuffle",
      slots: loadSlots(prefix, WORKERS),
      smigratedCopies: 0,
    });
    const e = r.entries[0]!;
    const bad =
      `>3\r\n+SMIGRATED\r\n:${r.smigratedSeq}\r\n*1\r\n*3\r\n+${e.source}\r\n+${e.destination}\r\n+abc\r\n`;
    assert.ok(sim.inject(bad) > 0);
    await waitFor(
      () => seen.closedWindows.some((w) => w.seq === r.smigratingSeq && w.reason === "end"),
      3000,
      "the window closed by the malformed SMIGRATED",
    );
    await sleep(300);
    const stats = await load.stop();
    assert.deepEqual(stats.errors, []);
    await assertCounters(client as unknown as RedisClient, stats, prefix);
    assert.equal(
      seen.warnings.filter((w) => /malformed SMIGRATED/.test(w)).length,
      1,
      `one warning for every copy: ${seen.warnings.join("; ")}`,
    );
    assert.deepEqual(seen.applied, []);
    await assertRoutedTo(client, ownersOf(r.entries));
    assert.ok(client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined));
    await client.close();
    await assertNoLeaks();
  });

  it("standalone notifications on a cluster connection are logged at warn and ignored", async () => {
    const { client, seen } = clusterClient(sim);
    await client.connect();
    const before = client.nodes().map((n) => n.address).sort();
    assert.ok(sim.inject(">4\r\n+MOVING\r\n:900\r\n:15\r\n+127.0.0.1:1\r\n") > 0);
    assert.ok(sim.inject('>4\r\n+MIGRATING\r\n:901\r\n:10\r\n+["1"]\r\n') > 0);
    await waitFor(() => seen.warnings.length >= 6, 3000, "a warning per connection and frame");
    assert.ok(seen.warnings.every((w) => /ignoring a (MOVING|MIGRATING) notification/.test(w)));
    assert.equal(await client.set("standalone", "1"), "OK");
    assert.deepEqual(client.nodes().map((n) => n.address).sort(), before);
    assert.ok(client.maintenanceState()!.connections.every((c) => c.relaxedUntil === undefined));
    await client.close();
    await assertNoLeaks();
  });
});

describe("scenario: SMIGRATED during a topology refresh", () => {
  const sim = simulatorPerSuite({ primaries: 3 });

  it("waits for the refresh and is applied right after it", async () => {
    const { client } = clusterClient(sim);
    await client.connect();
    const order: string[] = [];
    client.addEventListener("maintenance", (e) => {
      if (e.detail.type === "slot-delta") order.push(`slot-delta ${String(e.detail.phase)}`);
    });
    const owners = sim.nodes().filter((n) => n.slots !== "");
    const slots = slotsOf(owners[0]!.slots).slice(0, 20);
    const r = await sim.slotMigrate({ effect: "slot-shuffle", slots, smigratedCopies: 0 });
    const refresh = client.refreshTopology().then(() => order.push("refresh done"));
    // The notification reaches the client before the nodes' answers to the refresh.
    sim.inject(smigratedFrame(r.smigratedSeq, r.entries, "reference"));
    await refresh;
    await waitFor(() => order.includes("slot-delta applied"), 3000, "the delta applied");
    assert.deepEqual(order.slice(0, 3), [
      "slot-delta deferred",
      "slot-delta applied",
      "refresh done",
    ]);
    for (const [s, dst] of ownersOf(r.entries)) assert.equal(client.nodeForSlot(s), dst);
    await client.close();
    await assertNoLeaks();
  });
});

describe("scenario: an SMIGRATED ahead of the move", () => {
  const sim = simulatorPerSuite({ primaries: 3 });

  it("keeps the old owner's shard subscription until that node ends it: no message lost", async () => {
    // The subscriber applies an SMIGRATED that arrives before the slot really moved; the
    // publisher (another client, notifications off) still publishes on the old owner, which
    // serves the slot until it is finalized there.
    const { client } = clusterClient(sim, { topologyRefreshInterval: 0 });
    const { client: other } = clusterClient(sim, {
      topologyRefreshInterval: 0,
      maintenanceNotifications: { mode: "disabled" },
    });
    await Promise.all([client.connect(), other.connect()]);
    const owners = sim.nodes().filter((n) => n.role === "primary" && n.slots !== "");
    const slot = slotsOf(owners[0]!.slots)[3]!;
    const address = (n: (typeof owners)[number]) => `${n.endpoint.host}:${n.endpoint.port}`;
    const source = address(owners[0]!);
    const destination = address(owners[1]!);
    assert.equal(client.nodeForSlot(slot), source);
    const shard = await shardTraffic(client, slotKey(slot, "early"), other);
    const migration = sim.slotMigrate({
      effect: "slot-shuffle",
      slots: [slot],
      target: destination,
      finalizeDelayMs: 1500,
    });
    try {
      await waitFor(() => client.stats().subscribedAhead === 1, 3000, "the subscription ahead");
      sim.inject(
        smigratedFrame(100_000, [{ source, destination, slots: String(slot) }], "reference"),
      );
      await waitFor(() => client.nodeForSlot(slot) === destination, 3000, "the early delta");
      await sleep(400);
    } finally {
      await migration;
    }
    await sleep(200);
    const r = await shard.stop();
    assertInOrder(r);
    assert.ok(r.sent > 100, `only ${r.sent} published`);
    await Promise.all([client.close(), other.close()]);
    await assertNoLeaks();
  });
});
