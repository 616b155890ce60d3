import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  MaintenanceController,
  type MaintenanceDecision,
  type MaintenanceOptions,
  StandaloneMaintenanceController,
} from "../../../src/maintenance/mod.ts";
import { FakeClock, push } from "./_helpers.ts";

const E = "10.0.0.1:12000";
const F = { host: "10.0.0.2", port: 12000 };
const G = { host: "10.0.0.3", port: 12000 };

type D = MaintenanceDecision<string>;

function setup(options?: MaintenanceOptions): {
  clock: FakeClock;
  mc: MaintenanceController<string>;
} {
  const clock = new FakeClock();
  return { clock, mc: new MaintenanceController<string>(options, clock) };
}

function types(ds: D[] | undefined): string[] {
  assert.ok(ds !== undefined, "expected decisions, got undefined");
  return ds.map((d) => d.type);
}

function only<T extends D["type"]>(ds: D[] | undefined, type: T): Extract<D, { type: T }> {
  assert.ok(ds !== undefined, "expected decisions, got undefined");
  const found = ds.filter((d) => d.type === type);
  assert.equal(found.length, 1, `expected one ${type} in ${JSON.stringify(types(ds))}`);
  return found[0] as Extract<D, { type: T }>;
}

function relaxed(ds: D[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of ds) if (d.type === "relax") out[d.connection] = d.until;
  return out;
}

function unrelaxed(ds: D[]): string[] {
  return ds.filter((d) => d.type === "unrelax").map((d) =>
    (d as { connection: string }).connection
  );
}

describe("MaintenanceController: MIGRATING / MIGRATED", () => {
  it("relaxes only the receiving connection until the end notification", () => {
    const { clock, mc } = setup();
    assert.deepEqual(mc.attach("a", E), []);
    assert.deepEqual(mc.attach("b", E), []);
    clock.t = 1_000;
    const opened = mc.onPush("a", push('>4\r\n+MIGRATING\r\n:2\r\n:10\r\n+["1"]\r\n'));
    assert.deepEqual(opened, [
      {
        type: "window-opened",
        kind: "MIGRATING",
        seq: 2,
        endpoint: E,
        connection: "a",
        until: 61_000,
      },
      { type: "relax", connection: "a", until: 61_000 },
    ]);
    assert.equal(mc.isRelaxed("a"), true);
    assert.equal(mc.isRelaxed("b"), false);
    assert.equal(mc.relaxedUntil("a"), 61_000);
    assert.equal(mc.timeoutFor("a", 2_000), 10_000);
    assert.equal(mc.timeoutFor("b", 2_000), 2_000);
    assert.equal(mc.isEndpointInWindow(E), false, "a connection window is not an endpoint window");
    assert.equal(mc.nextDeadline(), 61_000);

    clock.t = 3_000;
    const closed = mc.onPush("a", push('>3\r\n+MIGRATED\r\n:3\r\n+["1"]\r\n'));
    assert.deepEqual(closed, [
      {
        type: "window-closed",
        kind: "MIGRATING",
        seq: 2,
        endpoint: E,
        connection: "a",
        reason: "end",
        endSeq: 3,
      },
      { type: "unrelax", connection: "a" },
    ]);
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.timeoutFor("a", 2_000), 2_000);
    assert.equal(mc.nextDeadline(), undefined);
  });

  it("ignores the time field of a start notification (relaxes at once)", () => {
    const { mc } = setup();
    mc.attach("a", E);
    mc.onNotification("a", { type: "MIGRATING", seq: 1, time: 3600, shardIds: null });
    assert.equal(mc.isRelaxed("a"), true);
    assert.equal(mc.relaxedUntil("a"), 60_000);
  });

  it("FAILING_OVER / FAILED_OVER work the same way", () => {
    const { mc } = setup();
    mc.attach("a", E);
    const opened = mc.onPush("a", ["FAILING_OVER", 4, 2, '["1"]']);
    assert.equal(only(opened, "window-opened").kind, "FAILING_OVER");
    assert.equal(mc.isRelaxed("a"), true);
    const closed = mc.onPush("a", ["FAILED_OVER", 5, '["1"]']);
    assert.deepEqual(types(closed), ["window-closed", "unrelax"]);
    assert.equal(only(closed, "window-closed").kind, "FAILING_OVER");
  });

  it("closes only the matching kind: MIGRATED does not end a FAILING_OVER window", () => {
    const { mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["FAILING_OVER", 4, 2, null]);
    assert.deepEqual(mc.onPush("a", ["MIGRATED", 5, null]), []);
    assert.equal(mc.isRelaxed("a"), true);
    assert.deepEqual(types(mc.onPush("a", ["FAILED_OVER", 6, null])), ["window-closed", "unrelax"]);
  });

  it("treats an end notification with no open window as a no-op (replay on opt-in)", () => {
    const { mc } = setup();
    mc.attach("a", E);
    assert.deepEqual(mc.onPush("a", ["MIGRATED", 3, '["1"]']), []);
    assert.deepEqual(mc.onPush("a", ["FAILED_OVER", 4, '["1"]']), []);
    assert.deepEqual(mc.onPush("a", ["SMIGRATED", 5, []]), []);
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.nextDeadline(), undefined);
  });

  it("ignores a duplicate seq on the same connection but relaxes another connection", () => {
    const { mc } = setup();
    mc.attach("a", E);
    mc.attach("b", E);
    assert.deepEqual(types(mc.onPush("a", ["MIGRATING", 2, 10, null])), ["window-opened", "relax"]);
    assert.deepEqual(mc.onPush("a", ["MIGRATING", 2, 10, null]), []);
    assert.deepEqual(types(mc.onPush("b", ["MIGRATING", 2, 10, null])), ["window-opened", "relax"]);
    assert.equal(mc.isRelaxed("b"), true);
    assert.equal(mc.snapshot().connections.find((c) => c.connection === "a")?.windows.length, 1);
  });

  it("keeps overlapping windows: each end closes the oldest, relaxed until the last closes", () => {
    const { mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MIGRATING", 2, 10, null]);
    const second = mc.onPush("a", ["MIGRATING", 4, 10, null]);
    assert.deepEqual(types(second), ["window-opened"], "already relaxed to the same deadline");
    const first = mc.onPush("a", ["MIGRATED", 3, null]);
    assert.deepEqual(first, [{
      type: "window-closed",
      kind: "MIGRATING",
      seq: 2,
      endpoint: E,
      connection: "a",
      reason: "end",
      endSeq: 3,
    }]);
    assert.equal(mc.isRelaxed("a"), true);
    assert.deepEqual(mc.onPush("a", ["MIGRATED", 3, null]), [], "a repeated end closes nothing");
    assert.equal(mc.isRelaxed("a"), true);
    const last = mc.onPush("a", ["MIGRATED", 5, null]);
    assert.deepEqual(types(last), ["window-closed", "unrelax"]);
    assert.equal(only(last, "window-closed").seq, 4);
  });

  it("emits relax again when a later window extends the deadline", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MIGRATING", 2, 10, null]);
    clock.t = 5_000;
    const ds = mc.onPush("a", ["FAILING_OVER", 3, 10, null]);
    assert.deepEqual(relaxed(ds!), { a: 65_000 });
  });
});

describe("MaintenanceController: the relaxedWindowMaxDuration backstop", () => {
  it("closes a window whose end is lost, exactly at the deadline", () => {
    const { clock, mc } = setup({ relaxedWindowMaxDuration: 5_000 });
    mc.attach("a", E);
    clock.t = 100;
    mc.onPush("a", ["MIGRATING", 2, 10, null]);
    assert.equal(mc.nextDeadline(), 5_100);
    clock.t = 5_099;
    assert.deepEqual(mc.tick(), []);
    assert.equal(mc.isRelaxed("a"), true);
    clock.t = 5_100;
    assert.deepEqual(mc.tick(), [
      {
        type: "window-closed",
        kind: "MIGRATING",
        seq: 2,
        endpoint: E,
        connection: "a",
        reason: "backstop",
      },
      { type: "unrelax", connection: "a" },
    ]);
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.nextDeadline(), undefined);
    assert.deepEqual(mc.tick(), []);
    assert.deepEqual(mc.onPush("a", ["MIGRATED", 3, null]), [], "a late end is a no-op");
  });

  it("answers queries correctly before tick() is called, and reports expiries on the next call", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MIGRATING", 2, 10, null]);
    clock.t = 70_000;
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.timeoutFor("a", 2_000), 2_000);
    const ds = mc.onPush("a", ["MIGRATING", 6, 10, null]);
    assert.deepEqual(types(ds), ["window-closed", "unrelax", "window-opened", "relax"]);
    assert.equal(only(ds, "window-closed").seq, 2);
    assert.equal(only(ds, "window-opened").seq, 6);
  });

  it("orders expiries of one late tick by time", () => {
    const { clock, mc } = setup({ relaxedWindowMaxDuration: 10_000 });
    mc.attach("a", E);
    mc.attach("b", E);
    clock.t = 2_000;
    mc.onPush("b", ["FAILING_OVER", 2, 1, null]);
    clock.t = 3_000;
    mc.onPush("a", ["MIGRATING", 3, 1, null]);
    mc.onPush("a", ["MOVING", 4, 5, null]); // endpoint window to 8000, reconnect at 5500
    clock.t = 50_000;
    const ds = mc.tick();
    assert.deepEqual(
      ds.map((d) => `${d.type}:${"kind" in d ? d.kind : ""}`),
      [
        "reconnect-configured:",
        "window-closed:MOVING",
        "window-closed:FAILING_OVER",
        "window-closed:MIGRATING",
        "unrelax:",
        "unrelax:",
      ],
    );
    assert.deepEqual(unrelaxed(ds).sort(), ["a", "b"]);
  });
});

describe("MaintenanceController: relaxation rule in timeoutFor", () => {
  it("takes the looser of configured and relaxed, 0 loosest, never tightens", () => {
    const { mc } = setup({ relaxedTimeout: 10_000, relaxedBlockingTimeout: 20_000 });
    mc.attach("a", E);
    assert.equal(mc.timeoutFor("a", 30_000), 30_000);
    mc.onPush("a", ["MIGRATING", 1, 1, null]);
    assert.equal(mc.timeoutFor("a", 2_000), 10_000);
    assert.equal(mc.timeoutFor("a", 30_000), 30_000);
    assert.equal(mc.timeoutFor("a", 0), 0);
    assert.equal(mc.timeoutFor("a", 5_000, { blocking: true }), 20_000);
    assert.equal(mc.timeoutFor("a", 25_000, { blocking: true }), 25_000);
    assert.equal(mc.timeoutFor("a", 0, { blocking: true }), 0);
    assert.equal(mc.timeoutFor("a", 2_000, { blocking: false }), 10_000);
  });

  it("uses 0 (no timeout) for blocking commands by default, and for all with relaxedTimeout 0", () => {
    const a = setup();
    a.mc.attach("a", E);
    a.mc.onPush("a", ["MIGRATING", 1, 1, null]);
    assert.equal(a.mc.timeoutFor("a", 5_000, { blocking: true }), 0);
    const b = setup({ relaxedTimeout: 0 });
    b.mc.attach("a", E);
    b.mc.onPush("a", ["MIGRATING", 1, 1, null]);
    assert.equal(b.mc.timeoutFor("a", 2_000), 0);
  });

  it("returns the configured timeout for an unknown connection", () => {
    const { mc } = setup();
    assert.equal(mc.timeoutFor("nobody", 1_234), 1_234);
    assert.equal(mc.isRelaxed("nobody"), false);
    assert.equal(mc.relaxedUntil("nobody"), undefined);
  });
});

describe("MaintenanceController: MOVING with a target (handoff)", () => {
  it("hands off, relaxes every connection of the endpoint, pins the target for the window", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.attach("b", E);
    mc.attach("other", "10.9.9.9:6379");
    clock.t = 1_000;
    const ds = mc.onPush(
      "a",
      push(">4\r\n$6\r\nMOVING\r\n:1\r\n:15\r\n$14\r\n10.0.0.2:12000\r\n"),
    );
    assert.deepEqual(ds, [
      {
        type: "window-opened",
        kind: "MOVING",
        seq: 1,
        endpoint: E,
        connection: "a",
        until: 16_000,
        target: F,
      },
      {
        type: "handoff",
        endpoint: E,
        target: F,
        seq: 1,
        drainDeadline: 6_000, // min(10000/2, 15000/2)
        windowEnd: 16_000,
        retire: ["a", "b"],
      },
      { type: "relax", connection: "a", until: 16_000 },
      { type: "relax", connection: "b", until: 16_000 },
    ]);
    assert.equal(mc.isRelaxed("other"), false);
    assert.deepEqual(mc.movingTarget(E), F);
    assert.equal(mc.isEndpointInWindow(E), true);
    assert.equal(mc.isEndpointInWindow("10.9.9.9:6379"), false);
    assert.equal(mc.isRetiring("a"), true);
    assert.equal(mc.isRetiring("b"), true);
    assert.equal(mc.isRetiring("other"), false);
    assert.equal(mc.timeoutFor("b", 2_000), 10_000);
    assert.equal(mc.timeoutForEndpoint(E, 2_000), 10_000);
    assert.equal(mc.timeoutForEndpoint(E, 2_000, { blocking: true }), 0);
    assert.equal(mc.timeoutForEndpoint("10.9.9.9:6379", 2_000), 2_000);
    assert.equal(mc.nextDeadline(), 16_000);

    // A connection opened during the window (the replacement) is relaxed from its first byte.
    clock.t = 2_000;
    assert.deepEqual(mc.attach("replacement", E), [
      { type: "relax", connection: "replacement", until: 16_000 },
    ]);
    assert.equal(mc.isRetiring("replacement"), false);
    assert.equal(mc.timeoutFor("replacement", 2_000), 10_000);

    clock.t = 15_999;
    assert.deepEqual(mc.tick(), []);
    clock.t = 16_000;
    const end = mc.tick();
    assert.deepEqual(end[0], {
      type: "window-closed",
      kind: "MOVING",
      seq: 1,
      endpoint: E,
      reason: "expired",
    });
    assert.deepEqual(unrelaxed(end), ["a", "b", "replacement"]);
    assert.equal(mc.movingTarget(E), undefined);
    assert.equal(mc.isEndpointInWindow(E), false);
    assert.equal(mc.timeoutFor("replacement", 2_000), 2_000);
    assert.equal(mc.nextDeadline(), undefined);
  });

  it("returns copies: mutating a decision or a query result does not change the pin", () => {
    const { mc } = setup();
    mc.attach("a", E);
    const h = only(mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"]), "handoff");
    h.target.host = "evil";
    const t = mc.movingTarget(E)!;
    t.port = 1;
    assert.deepEqual(mc.movingTarget(E), F);
  });

  it("computes the drain deadline from the relaxed timeout and the window, floor 1 s", () => {
    const cases: [MaintenanceOptions, number, number][] = [
      [{}, 4, 2_000], // window/2
      [{}, 1, 1_000], // floor
      [{}, 0, 1_000], // floor, window already over
      [{ relaxedTimeout: 3_000 }, 15, 1_500], // relaxed/2
      [{ relaxedTimeout: 0 }, 15, 7_500], // no relaxed bound
    ];
    for (const [options, seconds, cap] of cases) {
      const { clock, mc } = setup(options);
      clock.t = 500;
      mc.attach("a", E);
      const h = only(mc.onPush("a", ["MOVING", 1, seconds, "10.0.0.2:12000"]), "handoff");
      assert.equal(h.drainDeadline, 500 + cap, JSON.stringify([options, seconds]));
    }
  });

  it("recomputes drainCap(endpoint) from what is left of the window", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    assert.equal(mc.drainCap(E), 5_000, "no window: relaxedTimeout / 2");
    mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"]);
    assert.equal(mc.drainCap(E), 5_000);
    clock.t = 10_000;
    assert.equal(mc.drainCap(E), 2_500);
    clock.t = 14_000;
    assert.equal(mc.drainCap(E), 1_000);
    assert.equal(mc.drainCap({ host: "10.0.0.1", port: 12000 }), 1_000);
  });

  it("makes no second handoff for the same seq on the same or another connection", () => {
    const { mc } = setup();
    mc.attach("a", E);
    mc.attach("b", E);
    assert.equal(
      types(mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"])).includes("handoff"),
      true,
    );
    assert.deepEqual(mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"]), []);
    assert.deepEqual(mc.onPush("b", ["MOVING", 1, 15, "10.0.0.2:12000"]), []);
  });

  it("relaxes a late opt-in that gets the MOVING re-sent, without a second handoff", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"]);
    // A connection to the same endpoint opened late: relaxed by attach, the re-send adds nothing.
    clock.t = 4_000;
    assert.deepEqual(relaxed(mc.attach("late", E)), { late: 15_000 });
    assert.deepEqual(mc.onPush("late", ["MOVING", 1, 11, "10.0.0.2:12000"]), []);
    // A connection keyed on another endpoint that gets the re-send is relaxed to the window end.
    mc.attach("elsewhere", "10.0.0.2:12000");
    assert.equal(mc.isRelaxed("elsewhere"), false);
    const ds = mc.onPush("elsewhere", ["MOVING", 1, 11, "10.0.0.2:12000"]);
    assert.deepEqual(ds, [{ type: "relax", connection: "elsewhere", until: 15_000 }]);
    assert.equal(mc.timeoutFor("elsewhere", 2_000), 10_000);
    assert.equal(mc.isRetiring("elsewhere"), false);
    assert.equal(mc.isEndpointInWindow("10.0.0.2:12000"), false);
    clock.t = 15_000;
    const end = mc.tick();
    assert.deepEqual(unrelaxed(end).sort(), ["a", "elsewhere", "late"]);
  });

  it("forgets a MOVING seq once its window and the backstop have passed (seq reuse after a restart)", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    assert.ok(types(mc.onPush("a", ["MOVING", 0, 15, "10.0.0.2:12000"])).includes("handoff"));
    clock.t = 59_999;
    const repeat = mc.onPush("b-not-attached", ["MOVING", 0, 15, "10.0.0.2:12000"]);
    assert.deepEqual(types(repeat), ["window-closed", "unrelax"], "only the window's expiry");
    mc.attach("late", E);
    assert.deepEqual(mc.onPush("late", ["MOVING", 0, 15, "10.0.0.2:12000"]), [
      { type: "relax", connection: "late", until: 74_999 },
    ], "still a known seq: relaxed, no handoff");
    clock.t = 200_000;
    mc.attach("b", E);
    const again = mc.onPush("b", ["MOVING", 0, 15, "10.0.0.3:12000"]);
    assert.deepEqual(only(again, "handoff").target, G);
    assert.deepEqual(only(again, "handoff").retire, ["late", "b"], "a already retiring");
  });
});

describe("MaintenanceController: a connection that swaps its socket in place", () => {
  it("clears the retiring mark when attached again, so a later MOVING retires it again", () => {
    const { clock, mc } = setup();
    mc.attach("shared", E);
    assert.deepEqual(
      only(mc.onPush("shared", ["MOVING", 1, 15, "10.0.0.2:12000"]), "handoff").retire,
      [
        "shared",
      ],
    );
    assert.equal(mc.isRetiring("shared"), true);
    // The replacement socket's handshake: same id, still relaxed, no longer retiring.
    clock.t = 300;
    assert.deepEqual(mc.attach("shared", E), []);
    assert.equal(mc.isRetiring("shared"), false);
    assert.equal(mc.isRelaxed("shared"), true);
    clock.t = 15_000;
    mc.tick();
    clock.t = 100_000;
    const next = mc.onPush("shared", ["MOVING", 9, 15, "10.0.0.3:12000"]);
    assert.deepEqual(only(next, "handoff").retire, ["shared"]);
  });

  it("keeps the connection's open windows across a new socket", () => {
    const { mc } = setup();
    mc.attach("shared", E);
    mc.onPush("shared", ["MIGRATING", 1, 2, null]);
    assert.deepEqual(mc.attach("shared", E), []);
    assert.equal(mc.isRelaxed("shared"), true);
    assert.deepEqual(types(mc.onPush("shared", ["MIGRATED", 2, null])), [
      "window-closed",
      "unrelax",
    ]);
  });
});

describe("MaintenanceController: a second MOVING during a handoff", () => {
  it("retargets the pin, extends the window, retires connections attached since", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"]);
    clock.t = 2_000;
    mc.attach("replacement", E);
    clock.t = 5_000;
    const ds = mc.onPush("replacement", ["MOVING", 2, 15, "10.0.0.3:12000"]);
    assert.deepEqual(ds, [
      {
        type: "handoff-retarget",
        previousTarget: F,
        endpoint: E,
        target: G,
        seq: 2,
        drainDeadline: 10_000, // min(5000, 15000/2)
        windowEnd: 20_000,
        retire: ["replacement"],
      },
      { type: "relax", connection: "a", until: 20_000 },
      { type: "relax", connection: "replacement", until: 20_000 },
    ]);
    assert.deepEqual(mc.movingTarget(E), G);
    assert.equal(mc.isRetiring("replacement"), true);
    assert.equal(mc.snapshot().endpoints[0]?.seq, 2);
    // The first seq re-sent to another connection does not undo the retarget.
    mc.attach("c", E);
    assert.deepEqual(mc.onPush("c", ["MOVING", 1, 10, "10.0.0.2:12000"]), []);
    assert.deepEqual(mc.movingTarget(E), G);
    clock.t = 19_999;
    assert.deepEqual(mc.tick(), []);
    clock.t = 20_000;
    const end = mc.tick();
    assert.equal(only(end, "window-closed").seq, 2);
    assert.equal(mc.movingTarget(E), undefined);
  });

  it("never shortens the window", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 30, "10.0.0.2:12000"]);
    clock.t = 1_000;
    const ds = mc.onPush("a", ["MOVING", 2, 5, "10.0.0.3:12000"]);
    assert.equal(only(ds, "handoff-retarget").windowEnd, 30_000);
    assert.equal(only(ds, "handoff-retarget").retire.length, 0);
    assert.deepEqual(relaxed(ds!), {});
    assert.deepEqual(mc.movingTarget(E), G);
  });

  it("keeps the pin when the second MOVING has no target", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 15, "10.0.0.2:12000"]);
    clock.t = 10_000;
    const ds = mc.onPush("a", ["MOVING", 2, 15, null]);
    assert.deepEqual(ds, [{ type: "relax", connection: "a", until: 25_000 }]);
    assert.deepEqual(mc.movingTarget(E), F);
    clock.t = 30_000;
    assert.equal(types(mc.tick()).includes("reconnect-configured"), false);
  });
});

describe("MaintenanceController: MOVING without a target", () => {
  it("reconnects to the configured endpoint at half the announced time", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.attach("b", E);
    clock.t = 1_000;
    const ds = mc.onPush("a", push(">4\r\n$6\r\nMOVING\r\n:0\r\n:15\r\n_\r\n"));
    assert.deepEqual(ds, [
      {
        type: "window-opened",
        kind: "MOVING",
        seq: 0,
        endpoint: E,
        connection: "a",
        until: 16_000,
        target: null,
      },
      { type: "relax", connection: "a", until: 16_000 },
      { type: "relax", connection: "b", until: 16_000 },
    ]);
    assert.equal(mc.movingTarget(E), undefined);
    assert.equal(mc.isEndpointInWindow(E), true);
    assert.equal(mc.isRetiring("a"), false);
    assert.equal(mc.nextDeadline(), 8_500);
    assert.equal(mc.snapshot().endpoints[0]?.reconnectAt, 8_500);

    clock.t = 5_000;
    mc.attach("during", E); // dialled the old endpoint during the window: retired too
    clock.t = 8_499;
    assert.deepEqual(mc.tick(), []);
    clock.t = 8_500;
    assert.deepEqual(mc.tick(), [{
      type: "reconnect-configured",
      endpoint: E,
      seq: 0,
      at: 8_500,
      drainDeadline: 8_500 + 3_750, // min(10000/2, 7500/2)
      windowEnd: 16_000,
      retire: ["a", "b", "during"],
    }]);
    assert.equal(mc.isRetiring("during"), true);
    assert.equal(mc.isRelaxed("a"), true, "still relaxed until the window ends");
    assert.equal(mc.nextDeadline(), 16_000);
    mc.attach("after", E);
    assert.equal(mc.isRetiring("after"), false);
    clock.t = 16_000;
    const end = mc.tick();
    assert.equal(only(end, "window-closed").reason, "expired");
    assert.deepEqual(unrelaxed(end), ["a", "b", "during", "after"]);
  });

  it("reports a reconnect that came due late with its due time", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 3, 10, null]);
    clock.t = 7_000;
    const r = only(mc.tick(), "reconnect-configured");
    assert.equal(r.at, 5_000);
    assert.equal(r.drainDeadline, 8_500, "half of what is left of the window, from now");
  });

  it("settles a MOVING with time 0 in the same call", () => {
    const { mc } = setup();
    mc.attach("a", E);
    const ds = mc.onPush("a", ["MOVING", 3, 0, null]);
    assert.deepEqual(types(ds), ["window-opened", "reconnect-configured", "window-closed"]);
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.nextDeadline(), undefined);
  });

  it("turns into a handoff when a MOVING with a target follows, cancelling the reconnect", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 15, null]);
    clock.t = 2_000;
    const ds = mc.onPush("a", ["MOVING", 2, 15, "10.0.0.2:12000"]);
    const h = only(ds, "handoff");
    assert.deepEqual(h.target, F);
    assert.deepEqual(h.retire, ["a"]);
    assert.equal(h.windowEnd, 17_000);
    assert.deepEqual(mc.movingTarget(E), F);
    clock.t = 7_500;
    assert.deepEqual(mc.tick(), [], "the reconnect at 7500 was cancelled");
  });

  it("schedules a new reconnect for a new MOVING after the first reconnect happened", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 20, null]);
    clock.t = 10_000;
    assert.ok(types(mc.tick()).includes("reconnect-configured"));
    mc.attach("b", E);
    clock.t = 12_000;
    mc.onPush("b", ["MOVING", 2, 10, null]);
    assert.equal(mc.nextDeadline(), 17_000);
    clock.t = 17_000;
    assert.deepEqual(only(mc.tick(), "reconnect-configured").retire, ["b"]);
  });

  it("keeps a pending reconnect when a second MOVING without target arrives", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.onPush("a", ["MOVING", 1, 20, null]); // reconnect at 10000
    clock.t = 4_000;
    mc.onPush("a", ["MOVING", 2, 20, null]);
    assert.equal(mc.snapshot().endpoints[0]?.reconnectAt, 10_000);
    assert.equal(mc.snapshot().endpoints[0]?.end, 24_000);
  });
});

describe("MaintenanceController: SMIGRATING / SMIGRATED", () => {
  it("relaxes every connection of the client and emits the slot delta once per seq", () => {
    const { mc } = setup();
    mc.attach("n1", "127.0.0.1:7000");
    mc.attach("n2", "127.0.0.1:7001");
    const open1 = mc.onPush("n1", push(">3\r\n+SMIGRATING\r\n:12\r\n+123,456,5000-7000\r\n"));
    assert.deepEqual(only(open1, "window-opened").slots, [
      { start: 123, end: 123 },
      { start: 456, end: 456 },
      { start: 5000, end: 7000 },
    ]);
    assert.equal(only(open1, "window-opened").open, 1);
    assert.deepEqual(relaxed(open1!), { n1: 60_000, n2: 60_000 }, "a client window");
    assert.equal(mc.inSlotMigration(), true);
    assert.deepEqual(mc.onPush("n2", ["SMIGRATING", 12, "123,456,5000-7000"]), [], "seq seen");
    assert.equal(mc.isRelaxed("n2"), true);
    assert.deepEqual(mc.snapshot().connections.map((c) => c.windows.map((w) => w.kind)), [
      ["SMIGRATING"],
      ["SMIGRATING"],
    ]);

    const frame = push(
      ">3\r\n+SMIGRATED\r\n:13\r\n*1\r\n*3\r\n+127.0.0.1:15379\r\n+127.0.0.1:15380\r\n+123,456,5000-7000\r\n",
    );
    const first = mc.onPush("n1", frame);
    assert.deepEqual(types(first), ["window-closed", "slot-delta", "unrelax", "unrelax"]);
    assert.deepEqual(only(first, "slot-delta"), {
      type: "slot-delta",
      seq: 13,
      connection: "n1",
      entries: [{
        source: { host: "127.0.0.1", port: 15379 },
        destination: { host: "127.0.0.1", port: 15380 },
        slots: [{ start: 123, end: 123 }, { start: 456, end: 456 }, { start: 5000, end: 7000 }],
      }],
      stale: 0,
    });
    assert.equal(mc.inSlotMigration(), false);
    assert.deepEqual(mc.onPush("n2", frame), [], "delta applied once per client");
    assert.deepEqual(mc.onPush("n1", frame), [], "duplicate on the same connection");
  });

  it("an SMIGRATED that arrives before its SMIGRATING (reordered) leaves no window open", () => {
    const { mc } = setup();
    mc.attach("n1", "127.0.0.1:7000");
    mc.attach("n2", "127.0.0.1:7001");
    assert.deepEqual(types(mc.onPush("n1", ["SMIGRATED", 31, [["127.0.0.1:7001", "1-2"]]])), [
      "slot-delta",
    ]);
    assert.deepEqual(mc.onPush("n2", ["SMIGRATING", 30, "1-2"]), [], "its end already came");
    assert.equal(mc.isRelaxed("n1"), false);
    assert.equal(mc.isRelaxed("n2"), false);
    assert.equal(mc.nextDeadline(), undefined);
  });

  it("holds a delta back during a topology refresh, relaxed meanwhile, and gives it out after", () => {
    const { mc } = setup();
    mc.attach("n1", "127.0.0.1:7000");
    mc.onPush("n1", ["SMIGRATING", 40, "5"]);
    mc.topologyRefreshStarted();
    const held = mc.onPush("n1", ["SMIGRATED", 41, [["127.0.0.1:7001", "5"]]]);
    assert.deepEqual(types(held), ["window-closed", "slot-delta-deferred", "relax"]);
    assert.equal(mc.isRelaxed("n1"), true, "relaxed until the delta is applied");
    assert.equal(mc.relaxedUntil("n1"), Infinity);
    const after = mc.topologyRefreshFinished();
    assert.deepEqual(types(after), ["slot-delta", "unrelax"]);
    assert.equal(only(after, "slot-delta").connection, "n1", "the connection that delivered it");
    assert.equal(mc.isRelaxed("n1"), false);
  });

  it("a malformed SMIGRATED closes a window once per seq and is reported once", () => {
    const { mc } = setup();
    mc.attach("n1", "127.0.0.1:7000");
    mc.attach("n2", "127.0.0.1:7001");
    mc.onPush("n1", ["SMIGRATING", 50, "5"]);
    const bad = ["SMIGRATED", 51, "not entries"];
    const first = mc.onPush("n1", bad);
    assert.deepEqual(types(first), ["window-closed", "malformed", "unrelax", "unrelax"]);
    assert.equal(only(first, "malformed").seq, 51);
    assert.deepEqual(mc.onPush("n2", bad), [], "another connection's copy");
  });

  it("emits the delta of an SMIGRATED without a window, and nothing for an empty one", () => {
    const { mc } = setup();
    mc.attach("n1", "127.0.0.1:7000");
    assert.deepEqual(types(mc.onPush("n1", ["SMIGRATED", 20, [["127.0.0.1:7001", "1-2"]]])), [
      "slot-delta",
    ]);
    mc.onPush("n1", ["SMIGRATING", 21, "3"]);
    assert.deepEqual(types(mc.onPush("n1", ["SMIGRATED", 22, []])), ["window-closed", "unrelax"]);
  });

  it("closes an SMIGRATING window by the backstop", () => {
    const { clock, mc } = setup({ relaxedWindowMaxDuration: 1_000 });
    mc.attach("n1", "127.0.0.1:7000");
    mc.attach("n2", "127.0.0.1:7001");
    mc.onPush("n1", ["SMIGRATING", 1, "3"]);
    assert.equal(mc.nextDeadline(), 1_000);
    clock.t = 1_000;
    const ds = mc.tick();
    assert.deepEqual(types(ds), ["window-closed", "unrelax", "unrelax"]);
    assert.equal(only(ds, "window-closed").kind, "SMIGRATING");
    assert.equal(only(ds, "window-closed").reason, "backstop");
    assert.equal(only(ds, "window-closed").connection, undefined, "a client window");
    assert.equal(only(ds, "window-closed").endpoint, "127.0.0.1:7000", "where it was opened");
    assert.equal(mc.nextDeadline(), undefined);
  });
});

describe("StandaloneMaintenanceController: SMIGRATING / SMIGRATED without the slot-migration part", () => {
  function standalone(options?: MaintenanceOptions) {
    const clock = new FakeClock();
    return { clock, mc: new StandaloneMaintenanceController<string>(options, clock) };
  }

  it("relaxes only the receiving connection, as MIGRATING does, and gives no slot delta", () => {
    const { mc } = standalone();
    mc.attach("n1", "127.0.0.1:7000");
    mc.attach("n2", "127.0.0.1:7001");
    const open = mc.onPush("n1", ["SMIGRATING", 12, "123,5000-7000"]);
    assert.deepEqual(open, [
      {
        type: "window-opened",
        kind: "SMIGRATING",
        seq: 12,
        endpoint: "127.0.0.1:7000",
        connection: "n1",
        until: 60_000,
      },
      { type: "relax", connection: "n1", until: 60_000 },
    ]);
    assert.equal(mc.isRelaxed("n2"), false, "not client-wide");
    assert.equal(mc.inSlotMigration(), false);
    assert.deepEqual(mc.onPush("n1", ["SMIGRATING", 12, "123"]), [], "seq seen");
    const close = mc.onPush("n1", ["SMIGRATED", 13, [["127.0.0.1:7000", "127.0.0.1:7001", "123"]]]);
    assert.deepEqual(types(close), ["window-closed", "unrelax"]);
    assert.equal(only(close, "window-closed").endSeq, 13);
    assert.deepEqual(mc.onPush("n2", ["SMIGRATED", 13, []]), [], "no window on n2: a no-op");
    mc.topologyRefreshStarted();
    assert.deepEqual(mc.topologyRefreshFinished(), []);
  });

  it("reads no slots: a bad slot list is not malformed, an unreadable seq is", () => {
    const { clock, mc } = standalone({ relaxedWindowMaxDuration: 1_000 });
    mc.attach("n1", "127.0.0.1:7000");
    assert.deepEqual(types(mc.onPush("n1", ["SMIGRATING", 1, "not slots"])), [
      "window-opened",
      "relax",
    ]);
    assert.deepEqual(mc.snapshot().connections[0]!.windows.map((w) => w.kind), ["SMIGRATING"]);
    const bad = mc.onPush("n1", ["SMIGRATED", "x", []]);
    assert.deepEqual(types(bad), ["malformed"]);
    assert.equal(only(bad, "malformed").seq, undefined);
    clock.t = 1_000;
    const ds = mc.tick();
    assert.deepEqual(types(ds), ["window-closed", "unrelax"]);
    assert.equal(only(ds, "window-closed").reason, "backstop");
  });

  it("handles a parsed SMIGRATING given to onNotification the same way", () => {
    const { mc } = standalone();
    mc.attach("c", "127.0.0.1:7000");
    const ds = mc.onNotification("c", {
      type: "SMIGRATING",
      seq: 4,
      slots: [{ start: 1, end: 2 }],
    });
    assert.deepEqual(types(ds), ["window-opened", "relax"]);
  });

  it("the MaintenanceController is the standalone one with the part", () => {
    const { mc } = setup();
    assert.ok(mc instanceof StandaloneMaintenanceController);
  });
});

describe("MaintenanceController: frames and connections it does not act on", () => {
  it("returns undefined for non-maintenance push frames", () => {
    const { mc } = setup();
    mc.attach("a", E);
    assert.equal(mc.onPush("a", ["message", "news", "hi"]), undefined);
    assert.equal(mc.onPush("a", ["invalidate", ["k"]]), undefined);
    assert.equal(mc.onPush("a", []), undefined);
  });

  it("turns a malformed frame into a malformed decision and changes nothing", () => {
    const { mc } = setup();
    mc.attach("a", E);
    const ds = mc.onPush("a", push(">4\r\n$6\r\nMOVING\r\n:1\r\n:15\r\n$8\r\n10.0.0.2\r\n"));
    assert.equal(ds?.length, 1);
    const m = only(ds, "malformed");
    assert.equal(m.connection, "a");
    assert.equal(m.name, "MOVING");
    assert.match(m.reason, /missing the port/);
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.isEndpointInWindow(E), false);
    assert.equal(mc.nextDeadline(), undefined);
    assert.deepEqual(types(mc.onPush("a", ["MIGRATING", "x"])), ["malformed"]);
  });

  it("ignores notifications on a connection that is not attached", () => {
    const { mc } = setup();
    assert.deepEqual(mc.onPush("ghost", ["MOVING", 1, 15, "10.0.0.2:12000"]), []);
    assert.deepEqual(mc.onPush("ghost", ["MIGRATING", 1, 15, null]), []);
    assert.equal(mc.nextDeadline(), undefined);
    assert.deepEqual(mc.snapshot().endpoints, []);
  });

  it("forgets a detached connection and its windows", () => {
    const { clock, mc } = setup();
    mc.attach("a", E);
    mc.attach("b", E);
    mc.onPush("a", ["MIGRATING", 1, 1, null]);
    mc.detach("a");
    mc.detach("a");
    mc.detach("never");
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.nextDeadline(), undefined);
    const ds = mc.onPush("b", ["MOVING", 2, 15, "10.0.0.2:12000"]);
    assert.deepEqual(only(ds, "handoff").retire, ["b"]);
    mc.detach("b");
    clock.t = 15_000;
    assert.deepEqual(types(mc.tick()), ["window-closed"], "no unrelax for a detached connection");
  });

  it("moves a connection attached again to another endpoint", () => {
    const { mc } = setup();
    mc.attach("a", E);
    mc.attach("b", "10.5.5.5:1");
    mc.onPush("b", ["MOVING", 1, 15, "10.0.0.2:12000"]);
    assert.equal(mc.isRelaxed("a"), false);
    assert.deepEqual(relaxed(mc.attach("a", "10.5.5.5:1")), { a: 15_000 });
    assert.equal(
      mc.snapshot().connections.find((c) => c.connection === "a")?.endpoint,
      "10.5.5.5:1",
    );
  });

  it("normalises endpoint keys (IPv6 spellings, host case, HostPort objects)", () => {
    const { mc } = setup();
    mc.attach("a", "::1:6379");
    mc.attach("b", { host: "::1", port: 6379 });
    mc.attach("c", "Redis.Example:6379");
    const ds = mc.onPush("a", ["MOVING", 1, 15, "[::2]:6379"]);
    const h = only(ds, "handoff");
    assert.equal(h.endpoint, "[::1]:6379");
    assert.deepEqual(h.retire, ["a", "b"]);
    assert.deepEqual(mc.movingTarget("[::1]:6379"), { host: "::2", port: 6379 });
    assert.deepEqual(mc.movingTarget({ host: "::1", port: 6379 }), { host: "::2", port: 6379 });
    mc.onPush("c", ["MOVING", 2, 15, "10.0.0.2:6379"]);
    assert.equal(mc.isEndpointInWindow("redis.example:6379"), true);
  });

  it("works with any connection id type, e.g. objects", () => {
    const clock = new FakeClock();
    const mc = new MaintenanceController<{ name: string }>({}, clock);
    const conn = { name: "shared" };
    mc.attach(conn, E);
    const ds = mc.onPush(conn, ["MIGRATING", 1, 1, null]);
    assert.equal(ds?.find((d) => d.type === "relax")?.type, "relax");
    assert.equal(mc.isRelaxed(conn), true);
    assert.equal(mc.isRelaxed({ name: "shared" }), false, "identity, not structure");
  });
});

describe("MaintenanceController: mode disabled", () => {
  it("makes no decisions at all and never relaxes", () => {
    const { clock, mc } = setup({ mode: "disabled" });
    assert.equal(mc.mode, "disabled");
    assert.deepEqual(mc.attach("a", E), []);
    const frames = [
      ["MOVING", 1, 15, "10.0.0.2:12000"],
      ["MOVING", 2, 15, null],
      ["MIGRATING", 3, 1, null],
      ["FAILING_OVER", 4, 1, null],
      ["SMIGRATING", 5, "1"],
      ["SMIGRATED", 6, [["a:1", "b:2", "1"]]],
      ["MIGRATED", 7, null],
      ["MOVING", "bad"],
    ];
    for (const f of frames) {
      assert.deepEqual(mc.onPush("a", f), [], `consumed, no decision: ${JSON.stringify(f)}`);
    }
    assert.equal(mc.onPush("a", ["message", "c", "m"]), undefined, "still routes non-maintenance");
    assert.deepEqual(
      mc.onNotification("a", { type: "MIGRATING", seq: 9, time: 1, shardIds: null }),
      [],
    );
    assert.equal(mc.isRelaxed("a"), false);
    assert.equal(mc.timeoutFor("a", 2_000), 2_000);
    assert.equal(mc.timeoutForEndpoint(E, 2_000), 2_000);
    assert.equal(mc.movingTarget(E), undefined);
    assert.equal(mc.isEndpointInWindow(E), false);
    assert.equal(mc.isRetiring("a"), false);
    assert.equal(mc.nextDeadline(), undefined);
    assert.deepEqual(mc.attach("b", E), []);
    clock.t = 100_000;
    assert.deepEqual(mc.tick(), []);
    const s = mc.snapshot(2_000);
    assert.deepEqual(s.endpoints, []);
    assert.equal(
      s.connections.every((c) => c.relaxedUntil === undefined && c.timeout === 2_000),
      true,
    );
  });
});

describe("MaintenanceController: construction and snapshot", () => {
  it("resolves and validates the options", () => {
    const mc = new MaintenanceController({ relaxedTimeout: 30_000 });
    assert.equal(mc.options.relaxedTimeout, 30_000);
    assert.equal(mc.options.relaxedWindowMaxDuration, 60_000);
    assert.equal(mc.mode, "auto");
    assert.throws(() => new MaintenanceController({ relaxedTimeout: -1 }), RangeError);
    assert.throws(() => new MaintenanceController({ mode: 1 as unknown as "auto" }), TypeError);
  });

  it("reads the system clock when none is injected", () => {
    const mc = new MaintenanceController<string>();
    mc.attach("a", E);
    const before = Date.now();
    const ds = mc.onPush("a", ["MIGRATING", 1, 1, null]);
    const until = only(ds, "relax").until;
    assert.ok(until >= before + 60_000 && until <= Date.now() + 60_000);
  });

  it("lists windows, connections and effective timeouts", () => {
    const { clock, mc } = setup({ relaxedBlockingTimeout: 30_000 });
    mc.attach("a", E);
    mc.attach("b", E);
    mc.attach("c", "10.7.7.7:1");
    clock.t = 1_000;
    mc.onPush("c", ["MIGRATING", 1, 2, null]);
    mc.onPush("a", ["MOVING", 2, 15, "10.0.0.2:12000"]);
    clock.t = 2_000;
    const s = mc.snapshot(2_000);
    assert.equal(s.at, 2_000);
    assert.equal(s.options.relaxedBlockingTimeout, 30_000);
    assert.deepEqual(s.endpoints, [{
      endpoint: E,
      seq: 2,
      target: F,
      openedAt: 1_000,
      end: 16_000,
      reconnectAt: undefined,
    }]);
    assert.deepEqual(s.connections, [
      {
        connection: "a",
        endpoint: E,
        relaxedUntil: 16_000,
        retiring: true,
        windows: [],
        timeout: 10_000,
        blockingTimeout: 30_000,
      },
      {
        connection: "b",
        endpoint: E,
        relaxedUntil: 16_000,
        retiring: true,
        windows: [],
        timeout: 10_000,
        blockingTimeout: 30_000,
      },
      {
        connection: "c",
        endpoint: "10.7.7.7:1",
        relaxedUntil: 61_000,
        retiring: false,
        windows: [{ kind: "MIGRATING", seq: 1, openedAt: 1_000, deadline: 61_000 }],
        timeout: 10_000,
        blockingTimeout: 30_000,
      },
    ]);
    assert.equal(mc.snapshot().connections[0]?.timeout, undefined);
    clock.t = 16_000;
    const later = mc.snapshot(2_000);
    assert.deepEqual(later.endpoints, []);
    assert.equal(later.connections[0]?.relaxedUntil, undefined);
    assert.equal(later.connections[0]?.timeout, 2_000);
  });

  it("bounds the memory of seen seqs on a noisy server", () => {
    const { mc } = setup();
    mc.attach("a", E);
    for (let seq = 0; seq < 5_000; seq++) mc.onPush("a", ["MIGRATED", seq, null]);
    // The oldest seqs were forgotten on this connection: a start with seq 0 opens a window.
    assert.deepEqual(types(mc.onPush("a", ["MIGRATING", 0, 1, null])), ["window-opened", "relax"]);
    assert.deepEqual(mc.onPush("a", ["MIGRATING", 4_999, 1, null]), [], "recent seq remembered");
  });
});
