// Random sequences of notifications, attaches, detaches and clock moves, checked against the
// controller's invariants. Deterministic: a seeded PRNG, an injected clock.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MaintenanceController, type MaintenanceDecision } from "../../../src/maintenance/mod.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import { FakeClock } from "./_helpers.ts";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ENDPOINTS = ["10.0.0.1:1", "10.0.0.2:1"];
const TARGETS = ["10.0.1.1:1", "10.0.1.2:1", null, "null"];

function run(seed: number, steps: number): { decisions: number; handoffs: number } {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const clock = new FakeClock();
  const mc = new MaintenanceController<string>({ relaxedWindowMaxDuration: 20_000 }, clock);
  const attached = new Set<string>();
  const streamRelaxed = new Map<string, boolean>();
  // seq -> until when the controller must remember it (window end or backstop, the later)
  const handoffSeqs = new Map<number, number>();
  const retiredSinceAttach = new Set<string>();
  let seq = 0;
  let total = 0;

  const check = (ds: MaintenanceDecision<string>[], what: string): void => {
    total += ds.length;
    for (const d of ds) {
      switch (d.type) {
        case "relax":
          assert.ok(attached.has(d.connection), `${what}: relax of a detached connection`);
          assert.ok(d.until > clock.t, `${what}: relax until the past`);
          streamRelaxed.set(d.connection, true);
          break;
        case "unrelax":
          assert.equal(streamRelaxed.get(d.connection), true, `${what}: unrelax without relax`);
          streamRelaxed.set(d.connection, false);
          break;
        case "handoff":
        case "handoff-retarget":
        case "reconnect-configured":
          if (d.type === "handoff") {
            const remembered = handoffSeqs.get(d.seq);
            assert.ok(
              remembered === undefined || clock.t >= remembered,
              `${what}: second handoff for seq ${d.seq}`,
            );
            handoffSeqs.set(d.seq, Math.max(d.windowEnd, clock.t + 20_000));
          }
          assert.ok(d.drainDeadline >= clock.t + 1_000, `${what}: drain below the floor`);
          for (const c of d.retire) {
            assert.ok(attached.has(c), `${what}: retiring a detached connection`);
            assert.ok(!retiredSinceAttach.has(c), `${what}: ${c} retired twice`);
            retiredSinceAttach.add(c);
            assert.equal(mc.isRetiring(c), true);
          }
          break;
        default:
          break;
      }
    }
    for (const c of attached) {
      assert.equal(
        mc.isRelaxed(c),
        streamRelaxed.get(c) ?? false,
        `${what}: isRelaxed(${c}) disagrees with the decisions`,
      );
      assert.equal(mc.timeoutFor(c, 2_000), mc.isRelaxed(c) ? 10_000 : 2_000);
    }
  };

  for (let i = 0; i < steps; i++) {
    const r = rnd();
    const conn = `c${Math.floor(rnd() * 5)}`;
    if (r < 0.12) {
      const ds = mc.attach(conn, pick(ENDPOINTS));
      attached.add(conn);
      retiredSinceAttach.delete(conn);
      check(ds, `attach ${conn}`);
    } else if (r < 0.17) {
      mc.detach(conn);
      attached.delete(conn);
      streamRelaxed.delete(conn);
      retiredSinceAttach.delete(conn);
    } else if (r < 0.35) {
      const next = mc.nextDeadline();
      if (next !== undefined && next > clock.t) {
        clock.t = next - 1;
        assert.deepEqual(mc.tick(), [], "nothing comes due before nextDeadline()");
        clock.t = next;
      } else {
        clock.t += Math.floor(rnd() * 8_000);
      }
      check(mc.tick(), "tick");
    } else {
      // Mostly new seqs, sometimes a repeat of a recent one.
      const s = rnd() < 0.25 && seq > 0 ? seq - Math.floor(rnd() * Math.min(seq, 4)) : ++seq;
      const kind = pick([
        "MOVING",
        "MOVING",
        "MIGRATING",
        "MIGRATED",
        "FAILING_OVER",
        "FAILED_OVER",
        "SMIGRATING",
        "SMIGRATED",
        "BAD",
      ]);
      const time = Math.floor(rnd() * 20);
      const frame: RespValue[] = kind === "MOVING"
        ? ["MOVING", s, time, pick(TARGETS)]
        : kind === "MIGRATING" || kind === "FAILING_OVER"
        ? [kind, s, time, '["1"]']
        : kind === "SMIGRATING"
        ? [kind, s, "1-10"]
        : kind === "SMIGRATED"
        ? [kind, s, rnd() < 0.5 ? [] : [["10.0.0.1:1", "10.0.0.2:1", "1-10"]]]
        : kind === "BAD"
        ? ["MOVING", "x"]
        : [kind, s, '["1"]'];
      const ds = mc.onPush(conn, frame);
      assert.ok(ds !== undefined, "maintenance frames are always consumed");
      check(ds, `${JSON.stringify(frame)} on ${conn}`);
    }
  }
  return { decisions: total, handoffs: handoffSeqs.size };
}

describe("MaintenanceController: random sequences keep the invariants", () => {
  for (const seed of [1, 2, 3, 42, 1234, 99991]) {
    it(`seed ${seed}`, () => {
      const { decisions, handoffs } = run(seed, 3_000);
      assert.ok(decisions > 500, `the run exercised the controller (${decisions} decisions)`);
      assert.ok(handoffs > 0, "the run made handoffs");
    });
  }
});
