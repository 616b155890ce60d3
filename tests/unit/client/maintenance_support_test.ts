// MaintenanceSupport with stand-in connections: the opt-in step, relaxed timeouts, and which
// connection hands off and which retires on MOVING, for connections of several endpoints
// behind one controller.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MaintenanceSupport } from "../../../src/client/maintenance_support.ts";
import { silentLogger } from "../../../src/logger.ts";
import { A, B, type Fake, fakeConnection, frame, optIn } from "../../_helpers/maintenance_fakes.ts";

function setup() {
  const events: [string, Record<string, unknown>][] = [];
  const m = new MaintenanceSupport({ mode: "enabled" }, {
    logger: silentLogger,
    emit: (name, detail) => events.push([name, detail as Record<string, unknown>]),
  });
  return { m, events };
}

describe("MaintenanceSupport", () => {
  it("relaxes the receiving connection on MIGRATING and restores it on MIGRATED", () => {
    const { m } = setup();
    const fa = fakeConnection(A);
    const a = optIn(m, fa, "shared", "shared");
    assert.equal(m.onPush(a, frame("MIGRATING", 1, 10, ["1"])), true);
    assert.ok(fa.policy !== undefined, "relaxed");
    assert.equal(fa.policy!(1000, false), 10_000);
    m.onPush(a, frame("MIGRATED", 2, ["1"]));
    assert.equal(fa.policy, undefined, "restored");
    m.close();
  });

  it("on MOVING hands off the shared connection of that endpoint and retires its exclusive ones", async () => {
    const { m, events } = setup();
    const retired: Fake[] = [];
    const fa = fakeConnection(A);
    const fx = fakeConnection(A);
    const fb = fakeConnection(B);
    const a = optIn(m, fa, "A shared", "shared");
    optIn(m, fx, "A exclusive#1", "exclusive", retired);
    optIn(m, fb, "B shared", "shared");
    m.onPush(a, frame("MOVING", 3, 2, "127.0.0.2:7000"));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(fa.handoffs, 1);
    assert.deepEqual(retired, [fx]);
    assert.equal(fb.handoffs, 0, "another endpoint's connection stays");
    assert.deepEqual(m.movingTarget(A), { host: "127.0.0.2", port: 7000 });
    assert.equal(m.movingTarget(B), undefined);
    assert.ok(events.some(([n]) => n === "handoff"));
    const moving = events.find(([n, d]) => n === "maintenance" && d.type === "handoff");
    assert.deepEqual(moving?.[1].retire, ["A shared", "A exclusive#1"]);
    assert.ok(m.connectTimeout(1000, A) >= 10_000, "relaxed connect inside the window");
    assert.equal(m.connectTimeout(1000, B), 1000);
    m.close();
  });

  it("a duplicate MOVING seq triggers one handoff", async () => {
    const { m } = setup();
    const fa = fakeConnection(A);
    const a = optIn(m, fa, "shared", "shared");
    m.onPush(a, frame("MOVING", 5, 2, "127.0.0.2:7000"));
    m.onPush(a, frame("MOVING", 5, 2, "127.0.0.2:7000"));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(fa.handoffs, 1);
    m.close();
  });

  it("an SMIGRATING relaxes the connection that received it until its SMIGRATED, reading no slots", () => {
    // A standalone client cannot route by slot: its controller has no slot-migration part, so
    // SMIGRATING / SMIGRATED relax and restore each connection that received its copy, as
    // MIGRATING / MIGRATED do; nothing client-wide, no slot delta (the cluster client's support,
    // tests/unit/cluster/cluster_maintenance_test.ts, applies them).
    const { m, events } = setup();
    assert.equal(m.controller.constructor.name, "StandaloneMaintenanceController");
    const fa = fakeConnection(A);
    const fb = fakeConnection(B);
    const a = optIn(m, fa, "shared", "shared");
    const b = optIn(m, fb, "exclusive#1", "exclusive");
    assert.equal(m.onPush(a, frame("SMIGRATING", 7, "0-99")), true, "taken");
    assert.equal(fa.policy!(1000, false), 10_000);
    assert.equal(fb.policy, undefined, "not relaxed by another connection's copy");
    assert.equal(m.onPush(b, frame("SMIGRATING", 7, "not a slot list")), true, "slots not read");
    assert.equal(fb.policy!(1000, false), 10_000, "relaxed by its own copy");
    assert.equal(m.connectTimeout(1000, B), 1000, "new sockets are not");
    const opened = events.filter(([, d]) => d.type === "window-opened");
    assert.deepEqual(opened.map(([, d]) => [d.kind, d.connection]), [
      ["SMIGRATING", "shared"],
      ["SMIGRATING", "exclusive#1"],
    ]);
    assert.equal(
      m.onPush(b, frame("SMIGRATED", 8, [["127.0.0.1:7000", "127.0.0.1:7001", "0-99"]])),
      true,
    );
    assert.equal(fb.policy, undefined, "restored");
    assert.ok(fa.policy !== undefined, "still relaxed: its SMIGRATED has not come");
    m.onPush(a, frame("SMIGRATED", 8, "garbage"));
    assert.equal(fa.policy, undefined, "restored");
    assert.deepEqual(events.filter(([, d]) => d.type === "slot-delta"), [], "no slot delta");
    assert.deepEqual(events.filter(([, d]) => d.type === "malformed"), []);
    m.close();
  });

  it("leaves push frames that are not maintenance notifications alone", () => {
    const { m } = setup();
    const a = optIn(m, fakeConnection(A), "shared", "shared");
    assert.equal(m.onPush(a, frame("message", "ch", "hi")), false);
    m.close();
  });
});
