// The one SMIGRATING / SMIGRATED state machine (standalone and cluster clients), on a manual clock.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  MAX_WINDOWS,
  SlotMigrationCoordinator,
  type SlotMigrationDecision,
} from "../../../src/maintenance/slot_migration_coordinator.ts";
import type { SlotMigration } from "../../../src/maintenance/notification.ts";

const A = { host: "127.0.0.1", port: 7000 };
const B = { host: "127.0.0.1", port: 7001 };
const C = { host: "127.0.0.1", port: 7002 };

function move(from: typeof A, to: typeof A, start: number, end: number): SlotMigration {
  return { source: from, destination: to, slots: [{ start, end }] };
}

function types(d: SlotMigrationDecision[]): string[] {
  return d.map((x) => x.type === "window-closed" ? `window-closed:${x.reason}` : x.type);
}

function make(max = 60_000) {
  const clock = {
    t: 1_000,
    now() {
      return this.t;
    },
  };
  return { clock, c: new SlotMigrationCoordinator(max, clock) };
}

describe("SlotMigrationCoordinator", () => {
  it("relaxes on SMIGRATING and stays relaxed until the delta of the closing SMIGRATED is applied", () => {
    const { c } = make();
    assert.deepEqual(types(c.smigrating(10, [{ start: 0, end: 99 }])), ["window-opened", "relax"]);
    assert.equal(c.relaxed, true);
    const d = c.smigrated(11, [move(A, B, 0, 99)]);
    assert.deepEqual(types(d), ["window-closed:end", "apply"]);
    assert.equal(c.relaxed, true, "still relaxed: the delta is not applied yet");
    assert.deepEqual(c.pending, [11]);
    assert.deepEqual(types(c.applied(11)), ["unrelax"]);
    assert.equal(c.relaxed, false);
  });

  it("50 000 SMIGRATING without an end keep at most MAX_WINDOWS open, in linear time", () => {
    const { clock, c } = make();
    let closed = 0;
    for (let seq = 1; seq <= 50_000; seq++) {
      for (const d of c.smigrating(seq, [{ start: seq % 16384, end: seq % 16384 }])) {
        if (d.type === "window-closed") closed++;
      }
    }
    assert.equal(c.windows.length, MAX_WINDOWS);
    assert.equal(closed, 50_000 - MAX_WINDOWS, "the oldest closed early, one per new window");
    assert.equal(c.windows[0]!.seq, 50_000 - MAX_WINDOWS + 1);
    assert.equal(c.relaxed, true);
    // Their backstops pass: every window closes, in order, and the client unrelaxes.
    clock.t += 60_000;
    const d = c.tick();
    assert.equal(d.filter((x) => x.type === "window-closed").length, MAX_WINDOWS);
    assert.deepEqual(
      d.filter((x) => x.type === "window-closed").slice(0, 2).map((x) => "open" in x && x.open),
      [MAX_WINDOWS - 1, MAX_WINDOWS - 2],
    );
    assert.equal(c.relaxed, false);
  });

  it("handles each seq once per client: copies from every node change nothing", () => {
    const { c } = make();
    c.smigrating(1, [{ start: 0, end: 9 }]);
    for (let i = 0; i < 5; i++) assert.deepEqual(c.smigrating(1, [{ start: 0, end: 9 }]), []);
    assert.equal(c.windows.length, 1);
    const first = c.smigrated(2, [move(A, B, 0, 9)]);
    assert.equal(first.filter((d) => d.type === "apply").length, 1);
    for (let i = 0; i < 5; i++) assert.deepEqual(c.smigrated(2, [move(A, B, 0, 9)]), []);
    c.applied(2);
    assert.equal(c.relaxed, false);
  });

  it("closes one window per SMIGRATED: relaxed until the last of overlapping windows closed", () => {
    const { c } = make();
    c.smigrating(1, [{ start: 0, end: 9 }]);
    c.smigrating(2, [{ start: 100, end: 109 }]);
    assert.equal(c.windows.length, 2);
    const d1 = c.smigrated(3, [move(A, B, 0, 9)]);
    const closed = d1.find((d) => d.type === "window-closed");
    assert.equal(closed?.type === "window-closed" && closed.seq, 1, "the oldest window closes");
    c.applied(3);
    assert.equal(c.relaxed, true, "one window still open");
    const d2 = c.smigrated(4, [move(A, C, 100, 109)]);
    assert.deepEqual(types(d2), ["window-closed:end", "apply"]);
    assert.deepEqual(types(c.applied(4)), ["unrelax"]);
  });

  it("an empty SMIGRATED only closes a window", () => {
    const { c } = make();
    c.smigrating(5, [{ start: 0, end: 0 }]);
    assert.deepEqual(types(c.smigrated(6, [])), ["window-closed:end", "unrelax"]);
    assert.deepEqual(c.pending, []);
  });

  it("the backstop closes a window whose SMIGRATED is lost", () => {
    const { c, clock } = make(60_000);
    const opened = c.smigrating(7, [{ start: 0, end: 0 }]);
    assert.equal(opened[0]!.type === "window-opened" && opened[0]!.until, 61_000);
    assert.equal(c.nextDeadline(), 61_000);
    clock.t = 60_999;
    assert.deepEqual(c.tick(), []);
    clock.t = 61_000;
    assert.deepEqual(types(c.tick()), ["window-closed:expired", "unrelax"]);
    assert.equal(c.nextDeadline(), undefined);
  });

  it("a lost SMIGRATED's window is closed by the next SMIGRATED", () => {
    const { c } = make();
    c.smigrating(1, [{ start: 0, end: 0 }]);
    // SMIGRATED 2 lost
    c.smigrating(3, [{ start: 1, end: 1 }]);
    const d = c.smigrated(4, [move(A, B, 1, 1)]);
    const closed = d.find((x) => x.type === "window-closed");
    assert.equal(closed?.type === "window-closed" && closed.seq, 1);
    c.applied(4);
    assert.equal(c.windows.length, 1, "the second window waits for its own end or the backstop");
  });

  it("holds a delta that arrives during a topology refresh and gives it out right after", () => {
    const { c } = make();
    c.smigrating(1, [{ start: 0, end: 9 }]);
    c.refreshStarted();
    const d = c.smigrated(2, [move(A, B, 0, 9)]);
    assert.deepEqual(types(d), ["window-closed:end", "deferred"]);
    assert.equal(c.relaxed, true, "relaxed while the delta waits");
    const after = c.refreshFinished();
    assert.deepEqual(types(after), ["apply"]);
    assert.deepEqual(types(c.applied(2)), ["unrelax"]);
  });

  it("nested refreshes: the delta waits for the last one", () => {
    const { c } = make();
    c.refreshStarted();
    c.refreshStarted();
    c.smigrated(2, [move(A, B, 0, 9)]);
    assert.deepEqual(types(c.refreshFinished()), []);
    assert.deepEqual(types(c.refreshFinished()), ["apply"]);
  });

  it("leaves out of an older SMIGRATED the slots a newer one already moved (reordered)", () => {
    const { c } = make();
    c.smigrating(1, [{ start: 0, end: 99 }]);
    c.smigrating(3, [{ start: 50, end: 149 }]);
    // SMIGRATED 4 (newer: 50-149 to C) arrives before SMIGRATED 2 (0-99 to B)
    const newer = c.smigrated(4, [move(B, C, 50, 149)]);
    assert.ok(newer.some((d) => d.type === "apply"));
    c.applied(4);
    const older = c.smigrated(2, [move(A, B, 0, 99)]);
    const apply = older.find((d) => d.type === "apply");
    assert.ok(apply?.type === "apply");
    assert.deepEqual(apply.entries[0]!.slots, [{ start: 0, end: 49 }]);
    assert.equal(apply.stale, 50);
    c.applied(2);
    assert.equal(c.relaxed, false);
  });

  it("an older SMIGRATED whose every slot moved since gives nothing to apply", () => {
    const { c } = make();
    c.smigrated(4, [move(B, C, 0, 9)]);
    c.applied(4);
    assert.deepEqual(types(c.smigrated(2, [move(A, B, 0, 9)])), []);
    assert.deepEqual(c.pending, []);
  });

  it("an SMIGRATING that arrives after its SMIGRATED opens no window", () => {
    const { c } = make();
    assert.deepEqual(types(c.smigrated(9, [move(A, B, 0, 0)])), ["apply", "relax"]);
    c.applied(9);
    assert.deepEqual(types(c.smigrating(8, [{ start: 0, end: 0 }])), ["window-skipped"]);
    assert.equal(c.relaxed, false);
    // A later migration opens a window as usual.
    assert.deepEqual(types(c.smigrating(10, [{ start: 1, end: 1 }])), ["window-opened", "relax"]);
  });

  it("a malformed SMIGRATED closes a window once per seq and asks for a refresh", () => {
    const { c } = make();
    c.smigrating(1, [{ start: 0, end: 0 }]);
    assert.deepEqual(types(c.malformedSmigrated(2, "bad slots")), [
      "window-closed:end",
      "refresh",
      "unrelax",
    ]);
    assert.deepEqual(c.malformedSmigrated(2, "bad slots"), [], "a copy from another node");
    assert.deepEqual(types(c.malformedSmigrated(undefined, "no seq")), ["refresh"]);
  });

  it("relaxedUntil: the latest backstop, unbounded while only a delta is pending", () => {
    const { c } = make(1_000);
    assert.equal(c.relaxedUntil(), undefined);
    c.smigrating(1, [{ start: 0, end: 0 }]);
    assert.equal(c.relaxedUntil(), 2_000);
    c.smigrated(2, [move(A, B, 0, 0)]);
    assert.equal(c.relaxedUntil(), Infinity);
    c.applied(2);
    assert.equal(c.relaxedUntil(), undefined);
  });

  it("passes entries with bad ranges through whole for the applier to report", () => {
    const { c } = make();
    const bad = { source: A, destination: B, slots: [{ start: 5, end: 1 }] };
    const d = c.smigrated(3, [bad, move(A, B, 0, 0)]);
    const apply = d.find((x) => x.type === "apply");
    assert.ok(apply?.type === "apply");
    assert.equal(apply.entries.length, 2);
  });
});
