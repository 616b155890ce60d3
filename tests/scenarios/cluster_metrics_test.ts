// OpenTelemetry metrics of RedisClusterClient through the ClusterMaintenanceSimulator (a real
// 3-primary cluster behind per-node proxies), read back with the real SDK (test-only): SMIGRATED
// applied (slots moved, time to apply), notifications, topology changes, MOVED redirections,
// connections per node.
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClusterClient } from "../../src/cluster/mod.ts";
import { otelMetrics } from "../../src/observability/mod.ts";
import { slotKey } from "../_helpers/cluster.ts";
import { waitFor } from "../_helpers/load.ts";
import { assertNoLeaks } from "../_helpers/leaks.ts";
import { type MetricsHarness, metricsHarness, total } from "../_helpers/otel.ts";
import { clusterClient, loadSlots, simulatorPerSuite } from "./cluster_maintenance_helpers.ts";

describe("scenario: cluster metrics", () => {
  const sim = simulatorPerSuite({ primaries: 3 });
  let h: MetricsHarness;
  beforeEach(async () => {
    h = await metricsHarness();
  });
  afterEach(async () => {
    await h.shutdown();
    await assertNoLeaks();
  });

  it("SMIGRATED applied: its slots and time, the notifications, a topology change", async () => {
    const { client, seen } = clusterClient(sim, {
      metrics: otelMetrics({
        meterProvider: h.meterProvider,
        groups: ["command", "connection-basic", "resiliency"],
      }),
    });
    await client.connect();
    const slots = loadSlots("mtr", 4);
    for (const s of slots) await client.set(slotKey(s, "mtr"), "1");
    const r = await sim.slotMigrate({ effect: "slot-shuffle", slots });
    await waitFor(() => seen.applied.some((a) => a.seq === r.smigratedSeq), 5000, "the delta");
    for (const s of slots) assert.equal(await client.get(slotKey(s, "mtr")), "1");

    const durations = await h.points("db.client.operation.duration");
    assert.equal(total(durations, { "db.operation.name": "SET" }), slots.length);
    assert.equal(total(durations, { "db.operation.name": "GET" }), slots.length);
    const applied = await h.points("redis.client.cluster.smigrated.duration");
    assert.equal(total(applied), 1);
    assert.equal(applied[0]!.attributes["redis.client.cluster.slots"], slots.length);
    const notes = await h.points("redis.client.maintenance.notifications");
    assert.ok(total(notes, { "redis.client.connection.notification": "SMIGRATED" }) >= 1);
    assert.ok(total(notes, { "redis.client.connection.notification": "SMIGRATING" }) >= 1);
    const changes = await h.points("redis.client.cluster.topology.changes");
    assert.equal(total(changes, { "redis.client.cluster.topology.reason": "smigrated" }), 1);
    const moved = await h.points("redis.client.cluster.slots_moved");
    assert.equal(
      total(moved, { "redis.client.cluster.topology.reason": "smigrated" }),
      slots.length,
    );
    // Connections by node: every primary the client talked to is a pool of its own.
    const pools = new Set(
      (await h.points("db.client.connection.count")).map((p) =>
        p.attributes["db.client.connection.pool.name"]
      ),
    );
    assert.ok(pools.size >= 2, `pools: ${[...pools].join(", ")}`);
    assert.deepEqual(seen.warnings, []);
    await client.close();
  });

  it("MOVED followed without notifications is a redirection of kind moved", async () => {
    const client = new RedisClusterClient({
      nodes: sim.seeds,
      commandTimeout: 2000,
      maintenanceNotifications: { mode: "disabled" },
      topologyRefreshInterval: 0,
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["resiliency"] }),
    });
    await client.connect();
    const slots = loadSlots("mvd", 4);
    for (const s of slots) await client.set(slotKey(s, "mvd"), "1");
    await sim.slotMigrate({ effect: "slot-shuffle", slots });
    for (const s of slots) assert.equal(await client.get(slotKey(s, "mvd")), "1");
    const redirects = await h.points("redis.client.cluster.redirections");
    const moved = total(redirects, { "redis.client.redirection.kind": "moved" });
    assert.equal(moved, client.stats().moved);
    assert.ok(moved >= 1, `moved: ${moved}`);
    // Each MOVED is also an internal error of kind moved (the shared convention).
    const errors = await h.points("redis.client.errors");
    const internal = errors.filter((p) =>
      p.attributes["redis.client.errors.internal"] === true &&
      p.attributes["redis.client.redirection.kind"] === "moved"
    );
    assert.equal(total(internal), moved);
    assert.ok(internal.every((p) => p.attributes["error.type"] === "MOVED"));
    assert.equal(total(errors, { "redis.client.errors.internal": false }), 0);
    await client.close();
  });
});
