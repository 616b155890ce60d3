// MOVING under load, through the MaintenanceSimulator in front of a real redis-server.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertCounters, startLoad, waitFor } from "../_helpers/load.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

interface Seen {
  at: number;
  type: string;
  detail: Record<string, unknown>;
}

function record(client: RedisClient): Seen[] {
  const seen: Seen[] = [];
  for (const type of ["maintenance", "handoff"] as const) {
    client.addEventListener(type, (e) => {
      const detail = (e as CustomEvent).detail as Record<string, unknown>;
      seen.push({
        at: Date.now(),
        type: type === "handoff" ? "handoff" : `m:${String(detail.type)}`,
        detail,
      });
    });
  }
  return seen;
}

describe("scenario: MOVING under load", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  let sim: MaintenanceSimulator;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const workers of [16, 64]) {
    it(`named target, ${workers} workers: zero failures, leaves the old socket within 1 s`, async () => {
      sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
      const client = new RedisClient({ ...sim.endpoint, commandTimeout: 1000 });
      const seen = record(client);
      await client.ping();
      const prefix = `mv${workers}`;
      const load = startLoad(client, workers, prefix);
      await sleep(300);
      const movingAt = Date.now();
      const bind = sim.bind({ time: 3 });
      await waitFor(() => seen.some((s) => s.type === "handoff"), 2000, "the handoff");
      const handoff = seen.find((s) => s.type === "handoff")!;
      const result = await bind; // the window ended: the server closed the old connections
      const closedAt = Date.now();
      await sleep(300);
      const stats = await load.stop();
      assert.deepEqual(stats.errors, []);
      assert.equal(stats.failed, 0);
      await assertCounters(client, stats, prefix);
      const leftAfter = handoff.at - movingAt;
      assert.ok(leftAfter < 1000, `left the old socket ${leftAfter} ms after MOVING`);
      assert.ok(closedAt - handoff.at > 1500, "the handoff came long before the server's close");
      assert.deepEqual(handoff.detail.to, result.target);
      assert.equal(seen.filter((s) => s.type === "handoff").length, 1);
      const during = stats.timeline.slice(
        Math.floor((movingAt - stats.startedAt) / 100),
        Math.floor((closedAt - stats.startedAt) / 100),
      ).reduce((a, b) => a + (b ?? 0), 0);
      console.log(
        `  MOVING (${workers} workers): handoff after ${leftAfter} ms, drained in ${handoff.detail.drainMs} ms, ` +
          `${handoff.detail.held} held; ${during} commands completed during the 3 s window, ${stats.ok} in all, 0 failed`,
      );
      // Only the replacement is left, on the target.
      const conns = sim.connections();
      assert.equal(conns.length, 1);
      assert.equal(conns[0]!.endpoint, `${result.target.host}:${result.target.port}`);
      await client.close();
      await sim.close();
      await assertNoLeaks();
    });
  }

  for (const workers of [16, 64]) {
    it(`MOVING re-sent to a late opt-in, ${workers} workers: one handoff per seq`, async () => {
      sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
      const a = new RedisClient({ ...sim.endpoint, commandTimeout: 1000 });
      const seenA = record(a);
      await a.ping();
      const loadA = startLoad(a, workers, `lateA${workers}`);
      // dnsDelay: connections to the old endpoint count as old (get MOVING) for the whole window.
      const bind = sim.bind({ time: 3, dnsDelay: 3 });
      await waitFor(() => seenA.some((s) => s.type === "handoff"), 2000, "the first handoff");
      await sleep(1300);
      // A client that connects to the old endpoint during the window opts in and gets the
      // MOVING again, with the same seq and the remaining time: it hands off once.
      const b = new RedisClient({ ...sim.endpoint, commandTimeout: 1000 });
      const seenB = record(b);
      await b.ping();
      const loadB = startLoad(b, workers, `lateB${workers}`);
      await waitFor(() => seenB.some((s) => s.type === "handoff"), 2000, "the late handoff");
      const movingA = seenA.find((s) => s.type === "m:window-opened")!;
      const movingB = seenB.find((s) => s.type === "m:window-opened")!;
      assert.equal(movingB.detail.seq, movingA.detail.seq);
      assert.ok(
        // Whole seconds on the wire: the remaining ~1.7 s is sent as 1 or 2, a new window would be 3.
        Math.abs((movingB.detail.until as number) - (movingA.detail.until as number)) < 1000,
        "the re-sent MOVING carries the remaining time, not a new window",
      );
      const result = await bind;
      await sleep(200);
      const [statsA, statsB] = await Promise.all([loadA.stop(), loadB.stop()]);
      assert.equal(
        statsA.failed + statsB.failed,
        0,
        [...statsA.errors, ...statsB.errors].join("\n"),
      );
      await assertCounters(a, statsA, `lateA${workers}`);
      await assertCounters(b, statsB, `lateB${workers}`);
      assert.equal(seenA.filter((s) => s.type === "handoff").length, 1);
      assert.equal(seenB.filter((s) => s.type === "handoff").length, 1);
      assert.deepEqual(seenB.find((s) => s.type === "handoff")!.detail.to, result.target);
      await a.close();
      await b.close();
      await sim.close();
      await assertNoLeaks();
    });
  }

  for (const workers of [16, 64]) {
    it(`a second MOVING during the handoff updates the target, ${workers} workers`, async () => {
      sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
      const client = new RedisClient({ ...sim.endpoint, commandTimeout: 1000 });
      const seen = record(client);
      await client.ping();
      const load = startLoad(client, workers, `twice${workers}`);
      const first = sim.bind({ time: 3 });
      const second = sim.bind({ time: 3 });
      const [r1, r2] = await Promise.all([first, second]);
      await sleep(200);
      const stats = await load.stop();
      assert.equal(stats.failed, 0, stats.errors.join("\n"));
      await assertCounters(client, stats, `twice${workers}`);
      const targets = seen.filter((s) => s.type === "handoff").map((s) => s.detail.to);
      assert.ok(targets.length >= 1);
      assert.deepEqual(targets[targets.length - 1], r2.target);
      assert.notDeepEqual(r1.target, r2.target);
      await client.close();
      await sim.close();
      await assertNoLeaks();
    });
  }
});
