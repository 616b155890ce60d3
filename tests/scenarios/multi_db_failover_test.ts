// MultiDbClient under 16 concurrent workers: failover on SIGKILL and on a network blackhole,
// failback after the grace period, and a MOVING on the active database handled as a handoff.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type DatabaseEventDetail,
  MultiDbClient,
  type MultiDbClientOptions,
  type SwitchEventDetail,
} from "../../src/multi_db/mod.ts";
import { RedisClient } from "../../src/client/redis_client.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";
import { waitFor } from "../_helpers/load.ts";

const WORKERS = 16;

interface MultiLoadStats {
  ok: number;
  /** Failed commands, with when they failed. */
  failures: { at: number; error: string }[];
  /** Acknowledged INCRs per worker. */
  incrs: number[];
  /** INCRs per worker that failed with an unknown outcome (may or may not have run). */
  unknownIncrs: number[];
}

/** Workers of INCR, SET/GET and INCR+GET pipelines, each on its own keys. */
function startLoad(client: MultiDbClient, prefix: string) {
  const stats: MultiLoadStats = {
    ok: 0,
    failures: [],
    incrs: new Array(WORKERS).fill(0),
    unknownIncrs: new Array(WORKERS).fill(0),
  };
  let stopped = false;
  const fail = (e: unknown) => stats.failures.push({ at: Date.now(), error: String(e) });
  const loops = Array.from({ length: WORKERS }, async (_, w) => {
    const ctr = `${prefix}:ctr:${w}`;
    const key = `${prefix}:k:${w}`;
    for (let i = 0; !stopped; i++) {
      switch (i % 3) {
        case 0:
          try {
            await client.incr(ctr);
            stats.incrs[w]!++;
            stats.ok++;
          } catch (e) {
            stats.unknownIncrs[w]!++;
            fail(e);
          }
          break;
        case 1:
          try {
            await client.set(key, String(i));
            // A failover may land between the two: a GET on the new database sees its value.
            const v = await client.get(key);
            assert.ok(v === String(i) || v === null || Number(v) < i, `GET returned ${v}`);
            stats.ok += 2;
          } catch (e) {
            if (e instanceof assert.AssertionError) throw e;
            fail(e);
          }
          break;
        case 2: {
          try {
            const r = await client.pipeline().incr(ctr).get(ctr).exec();
            if (r[0] instanceof Error) {
              stats.unknownIncrs[w]!++;
              fail(r[0]);
            } else {
              stats.incrs[w]!++;
              stats.ok++;
            }
          } catch (e) {
            stats.unknownIncrs[w]!++;
            fail(e);
          }
          break;
        }
      }
    }
  });
  return {
    stats,
    async stop(): Promise<MultiLoadStats> {
      stopped = true;
      await Promise.all(loops);
      return stats;
    },
  };
}

async function counters(server: RedisServer | { host: string; port: number }, prefix: string) {
  const c = new RedisClient({ host: server.host, port: server.port, commandTimeout: 3000 });
  try {
    const keys = Array.from({ length: WORKERS }, (_, w) => `${prefix}:ctr:${w}`);
    return (await c.mget(...keys)).map((v) => Number(v ?? 0));
  } finally {
    await c.close();
  }
}

/** Every acknowledged INCR is counted once; an unknown one at most once. */
function assertNoneLostOrDoubled(stats: MultiLoadStats, sums: number[]): void {
  for (let w = 0; w < WORKERS; w++) {
    const acked = stats.incrs[w]!;
    const unknown = stats.unknownIncrs[w]!;
    assert.ok(
      sums[w]! >= acked && sums[w]! <= acked + unknown,
      `worker ${w}: counters sum to ${sums[w]}, acknowledged ${acked}, unknown ${unknown}`,
    );
  }
}

interface Seen extends SwitchEventDetail {
  at: number;
}

function options(
  databases: MultiDbClientOptions["databases"],
  extra: Partial<MultiDbClientOptions> = {},
): MultiDbClientOptions {
  return {
    databases,
    commandTimeout: 500,
    connectTimeout: 300,
    reconnect: { baseDelay: 20, maxDelay: 100 },
    healthCheck: { interval: 200, timeout: 300, probes: 1, probeDelay: 0 },
    failureDetector: { minNumOfFailures: 8, failureRateThreshold: 0, slidingWindowMs: 1000 },
    commandRetry: { initialDelay: 20 },
    gracePeriod: 1500,
    failbackCheckInterval: 200,
    ...extra,
  };
}

describe("scenario: MultiDbClient failover under load", () => {
  let a: RedisServer;
  let b: RedisServer;
  before(async () => {
    [a, b] = await Promise.all([
      // Every acknowledged write survives a SIGKILL, so the counters can be summed afterwards.
      startRedis({ args: ["--appendonly", "yes", "--appendfsync", "always"] }),
      startRedis(),
    ]);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
  });
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it(`${WORKERS} workers, SIGKILL of the active server: bounded failures, none lost or doubled, failback after the grace period`, async () => {
    const client = new MultiDbClient(options([
      { url: a.url, weight: 2, name: "a" },
      { url: b.url, weight: 1, name: "b" },
    ]));
    const seen: Seen[] = [];
    client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
    await client.connect();
    const load = startLoad(client, "kill");
    await sleep(400);
    const killedAt = Date.now();
    await a.kill();
    await waitFor(() => seen.length >= 1, 5000, "the failover");
    const failover = seen[0]!;
    await sleep(300);
    await a.restart();
    await waitFor(() => seen.length >= 2, 8000, "the failback");
    const failback = seen[1]!;
    await sleep(400);
    const stats = await load.stop();
    const failed = stats.failures.length;
    const late = stats.failures.filter((f) => f.at > failover.at + 200);
    const sums = await counters(a, "kill");
    const onB = await counters(b, "kill");
    for (let w = 0; w < WORKERS; w++) sums[w]! += onB[w]!;
    console.log(
      `  SIGKILL: switched to ${failover.to} (${failover.reason}) ${
        failover.at - killedAt
      } ms after the kill; ` +
        `${failed} failed commands (${late.length} after the switch), ${stats.ok} ok; ` +
        `failback ${failback.at - failover.at} ms after the failover; errors: ` +
        [...new Set(stats.failures.map((f) => f.error.replace(/\d+/g, "N")))].join(" | "),
    );
    assert.deepEqual([failover.from, failover.to], ["a", "b"]);
    // The in-flight commands open the breaker; a health-check PING in flight at the kill may see
    // it first (both are right).
    assert.ok(["CIRCUIT_BREAKER", "HEALTH_CHECK"].includes(failover.reason), failover.reason);
    assert.equal(seen.length, 2, "one failover, one failback");
    assert.deepEqual([failback.from, failback.to, failback.reason], ["b", "a", "FAILBACK"]);
    assert.ok(failback.at - failover.at >= 1490, "failback only after the grace period");
    assert.ok(failed <= 4 * WORKERS, `${failed} failed commands`);
    assert.deepEqual(late.map((f) => f.error), [], "no failure after the switch");
    assertNoneLostOrDoubled(stats, sums);
    assert.ok(onB.some((v) => v > 0) && sums.some((v, w) => v > onB[w]!), "both served");
    await client.close();
  });

  it(`${WORKERS} workers, the active endpoint blackholed: failover, then zero failures`, async () => {
    await using sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${a.port}` });
    const client = new MultiDbClient(options([
      { ...sim.endpoint, weight: 2, name: "a" },
      { url: b.url, weight: 1, name: "b" },
    ], { failbackSupported: false }));
    const seen: Seen[] = [];
    client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
    await client.connect();
    const load = startLoad(client, "hole");
    await sleep(400);
    const holeAt = Date.now();
    sim.faults.blackhole();
    await waitFor(() => seen.length >= 1, 5000, "the failover");
    const failover = seen[0]!;
    await sleep(800);
    const stats = await load.stop();
    sim.faults.clear();
    const failed = stats.failures.length;
    // Commands already written into the hole time out (commandTimeout after being written).
    const late = stats.failures.filter((f) => f.at > failover.at + 700);
    const sums = await counters(a, "hole");
    const onB = await counters(b, "hole");
    for (let w = 0; w < WORKERS; w++) sums[w]! += onB[w]!;
    console.log(
      `  blackhole: switched to ${failover.to} (${failover.reason}) ${
        failover.at - holeAt
      } ms after it began; ` +
        `${failed} failed commands (${late.length} later than the in-flight timeouts), ${stats.ok} ok; errors: ` +
        [...new Set(stats.failures.map((f) => f.error.replace(/\d+/g, "N")))].join(" | "),
    );
    assert.equal(failover.from, "a");
    assert.equal(failover.to, "b");
    assert.ok(["CIRCUIT_BREAKER", "HEALTH_CHECK"].includes(failover.reason));
    assert.ok(failed <= 4 * WORKERS, `${failed} failed commands`);
    assert.deepEqual(late.map((f) => f.error), [], "no failure after the switch");
    assertNoneLostOrDoubled(stats, sums);
    await client.close();
  });

  it(`${WORKERS} workers through a 1.5 s network_failure action: away for the outage, back after recovery and grace`, async () => {
    await using sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${a.port}` });
    const client = new MultiDbClient(options([
      { ...sim.endpoint, weight: 2, name: "a" },
      { url: b.url, weight: 1, name: "b" },
    ], { gracePeriod: 1000 }));
    const seen: Seen[] = [];
    client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
    await client.connect();
    const load = startLoad(client, "nf");
    await sleep(300);
    const startedAt = Date.now();
    const id = sim.startAction("network_failure", { kind: "blackhole", duration_ms: 1500 });
    await waitFor(() => sim.actionStatus(id)?.status === "success", 5000, "the outage to end");
    const endedAt = Date.now();
    await waitFor(() => seen.length >= 2, 5000, "the failback");
    await sleep(300);
    const stats = await load.stop();
    const [away, back] = seen as [Seen, Seen];
    const late = stats.failures.filter((f) => f.at > away.at + 700);
    const sums = await counters(a, "nf");
    const onB = await counters(b, "nf");
    for (let w = 0; w < WORKERS; w++) sums[w]! += onB[w]!;
    console.log(
      `  network_failure 1.5 s: away after ${away.at - startedAt} ms (${away.reason}), back ${
        back.at - endedAt
      } ms after the outage ended; ${stats.failures.length} failed (${late.length} late), ${stats.ok} ok`,
    );
    assert.deepEqual([away.from, away.to], ["a", "b"]);
    assert.deepEqual([back.from, back.to, back.reason], ["b", "a", "FAILBACK"]);
    assert.ok(back.at >= endedAt, "stayed away for the whole outage");
    assert.ok(back.at - away.at >= 990, "and for the grace period");
    assert.deepEqual(late.map((f) => f.error), []);
    assertNoneLostOrDoubled(stats, sums);
    await client.close();
  });

  it("a MOVING on the active database is a handoff, not a failover", async () => {
    await using sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${b.port}` });
    const client = new MultiDbClient(options([
      {
        ...sim.endpoint,
        weight: 2,
        name: "primary",
        maintenanceNotifications: { mode: "enabled" },
      },
      { url: a.url, weight: 1, name: "secondary" },
    ]));
    const seen: Seen[] = [];
    const handoffs: DatabaseEventDetail[] = [];
    client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
    client.addEventListener("handoff", (e) => handoffs.push(e.detail));
    await client.connect();
    const load = startLoad(client, "mv");
    await sleep(300);
    const result = await sim.bind({ time: 2 });
    await sleep(300);
    const stats = await load.stop();
    console.log(
      `  MOVING on the active database: ${handoffs.length} handoff(s), ${seen.length} switches, ` +
        `${stats.failures.length} failed, ${stats.ok} ok`,
    );
    assert.deepEqual(seen, [], "no failover");
    assert.ok(handoffs.some((h) => h.database === "primary"), "the handoff was reported");
    assert.deepEqual(stats.failures.map((f) => f.error), []);
    assert.equal(client.activeDatabase, "primary");
    assert.equal(client.databases()[0]!.circuit, "closed");
    assert.ok(result.notified >= 1);
    const sums = await counters(b, "mv");
    assert.deepEqual(sums, stats.incrs, "every INCR counted once");
    await client.close();
  });

  it("failures inside a relaxed maintenance window neither trip the breaker nor fail over", async () => {
    await using sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${b.port}` });
    const client = new MultiDbClient(options([
      {
        ...sim.endpoint,
        weight: 2,
        name: "primary",
        // A relaxed timeout shorter than the stall: commands do fail inside the window.
        maintenanceNotifications: { mode: "enabled", relaxedTimeout: 300 },
      },
      { url: a.url, weight: 1, name: "secondary" },
    ]));
    const seen: Seen[] = [];
    client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
    await client.connect();
    const load = startLoad(client, "mig");
    await sleep(200);
    await sim.migrate({ time: 2, stallMs: 1200 });
    await sleep(300);
    const stats = await load.stop();
    console.log(
      `  MIGRATING with a 1.2 s stall: ${stats.failures.length} failed inside the window, ` +
        `${seen.length} switches, circuit ${client.databases()[0]!.circuit}`,
    );
    assert.ok(stats.failures.length >= 8, "failures enough to trip the breaker outside a window");
    assert.deepEqual(seen, [], "no failover");
    assert.equal(client.activeDatabase, "primary");
    assert.equal(client.databases()[0]!.circuit, "closed");
    assertNoneLostOrDoubled(stats, await counters(b, "mig"));
    await client.close();
  });

  it("a database inside a maintenance window is not a failback target until the window closes", async () => {
    await using sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${b.port}` });
    const client = new MultiDbClient(options([
      {
        ...sim.endpoint,
        weight: 2,
        name: "primary",
        maintenanceNotifications: { mode: "enabled" },
      },
      { url: a.url, weight: 1, name: "secondary" },
    ]));
    const seen: Seen[] = [];
    client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
    await client.connect();
    await client.forceActiveDatabase("secondary", 300);
    // The primary's health-check connection is notified of the MOVING: its window is open for 2 s.
    const bind = sim.bind({ time: 2 });
    await sim.waitForEvent("MOVING");
    const windowStart = Date.now();
    await waitFor(() => client.databases()[0]!.inMaintenance, 2000, "the window on the primary");
    await sleep(600); // the forced period is over, the primary is healthy, but inside its window
    assert.equal(client.activeDatabase, "secondary");
    assert.equal(client.databases()[0]!.health, "healthy");
    await bind;
    await waitFor(() => seen.length === 2, 3000, "the failback");
    assert.deepEqual(seen.map((s) => [s.to, s.reason]), [["secondary", "FORCED"], [
      "primary",
      "FAILBACK",
    ]]);
    assert.ok(seen[1]!.at - windowStart >= 1800, "failed back after the window");
    await client.close();
  });
});
