// ClusterMaintenanceSupport with stand-in connections: SMIGRATING / SMIGRATED handled client-wide
// by the controller's slot-migration part (every connection relaxed by one copy, new sockets too,
// one window and one applied delta per seq), standalone notifications dropped.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClusterMaintenanceSupport } from "../../../src/cluster/_cluster_maintenance.ts";
import type { SlotMigration } from "../../../src/maintenance/notification.ts";
import { silentLogger } from "../../../src/logger.ts";
import { A, B, fakeConnection, frame, optIn } from "../../_helpers/maintenance_fakes.ts";

function setup() {
  const events: [string, Record<string, unknown>][] = [];
  const applied: [number, SlotMigration[], number][] = [];
  const refreshes: string[] = [];
  const m = new ClusterMaintenanceSupport({ mode: "enabled" }, {
    logger: silentLogger,
    emit: (name, detail) => events.push([name, detail as Record<string, unknown>]),
    applyDelta: (seq, entries, stale) => applied.push([seq, entries, stale]),
    refresh: (reason) => refreshes.push(reason),
  });
  return { m, events, applied, refreshes };
}

describe("ClusterMaintenanceSupport", () => {
  it("an SMIGRATING on one connection relaxes every connection of the client, once per seq", () => {
    const { m, events, applied } = setup();
    assert.equal(m.controller.constructor.name, "MaintenanceController");
    const fa = fakeConnection(A);
    const fb = fakeConnection(B);
    const a = optIn(m, fa, "shared", "shared");
    const b = optIn(m, fb, "exclusive#1", "exclusive");
    m.onPush(a, frame("SMIGRATING", 7, "0-99"));
    m.onPush(b, frame("SMIGRATING", 7, "0-99"));
    assert.equal(fa.policy!(1000, false), 10_000);
    assert.equal(fb.policy!(1000, false), 10_000, "relaxed by another connection's copy");
    assert.equal(m.connectTimeout(1000, B), 10_000, "new sockets too");
    const opened = events.filter(([, d]) => d.type === "window-opened");
    assert.equal(opened.length, 1, "one window per seq");
    assert.equal(opened[0]![1].scope, "client");
    assert.equal(opened[0]![1].connection, "shared");
    assert.deepEqual(opened[0]![1].slots, [{ start: 0, end: 99 }]);
    m.onPush(b, frame("SMIGRATED", 8, [["127.0.0.1:7000", "127.0.0.1:7001", "0-99"]]));
    m.onPush(a, frame("SMIGRATED", 8, [["127.0.0.1:7000", "127.0.0.1:7001", "0-99"]]));
    assert.equal(fa.policy, undefined, "restored");
    assert.equal(fb.policy, undefined, "restored");
    assert.equal(applied.length, 1, "one delta per seq");
    assert.equal(applied[0]![0], 8);
    assert.deepEqual(applied[0]![1][0]!.destination, { host: "127.0.0.1", port: 7001 });
    const deltas = events.filter(([, d]) => d.type === "slot-delta");
    assert.equal(deltas.length, 1);
    assert.equal(deltas[0]![1].connection, "exclusive#1");
    assert.equal(deltas[0]![1].phase, "applied");
    m.close();
  });

  it("a malformed SMIGRATED closes the window and asks for a refresh; MOVING is dropped", () => {
    const { m, events, refreshes } = setup();
    const fa = fakeConnection(A);
    const a = optIn(m, fa, "shared", "shared");
    m.onPush(a, frame("SMIGRATING", 3, "5"));
    assert.ok(fa.policy !== undefined, "relaxed");
    assert.equal(m.onPush(a, frame("SMIGRATED", 4, "not entries")), true);
    assert.equal(fa.policy, undefined, "restored");
    assert.equal(refreshes.length, 1);
    assert.equal(events.find(([, d]) => d.type === "malformed")?.[1].seq, 4);
    assert.equal(m.onPush(a, frame("MOVING", 5, 15, "127.0.0.2:7000")), true, "taken");
    assert.equal(fa.handoffs, 0, "not acted on");
    assert.equal(m.movingTarget(A), undefined);
    m.close();
  });
});
