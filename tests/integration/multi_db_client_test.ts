// MultiDbClient against real redis-server processes: commands, initialization policies,
// health checks, switching (every reason), failback, manual control, unavailability, pub/sub.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type HealthCheckStrategy,
  MultiDbClient,
  type MultiDbClientOptions,
  PermanentlyUnavailableError,
  type SwitchEventDetail,
  TemporarilyUnavailableError,
} from "../../src/multi_db/mod.ts";
import { RedisClient } from "../../src/client/redis_client.ts";
import { ConnectionError, RedisError, TimeoutError } from "../../src/errors.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";
import { allHealthy, waitFor } from "../_helpers/load.ts";
import { RawClient } from "../_helpers/raw_client.ts";

/** Small intervals so every test stays short. */
function fast(
  databases: MultiDbClientOptions["databases"],
  extra: Partial<MultiDbClientOptions> = {},
) {
  const o: MultiDbClientOptions = {
    databases,
    commandTimeout: 500,
    connectTimeout: 300,
    reconnect: { baseDelay: 20, maxDelay: 100 },
    healthCheck: { interval: 100, timeout: 300, probes: 1, probeDelay: 0 },
    failureDetector: { minNumOfFailures: 3, failureRateThreshold: 0, slidingWindowMs: 1000 },
    commandRetry: { initialDelay: 20 },
    gracePeriod: 1000,
    failbackCheckInterval: 100,
    maxNumFailoverAttempts: 2,
    delayInBetweenFailoverAttempts: 150,
    ...extra,
  };
  return o;
}

interface Seen extends SwitchEventDetail {
  at: number;
}

function switches(client: MultiDbClient): Seen[] {
  const seen: Seen[] = [];
  client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: Date.now() }));
  return seen;
}

async function direct<T>(server: RedisServer, fn: (c: RedisClient) => Promise<T>): Promise<T> {
  const c = new RedisClient({ url: server.url, commandTimeout: 2000 });
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

const name = (s: RedisServer) => `127.0.0.1:${s.port}`;

describe("MultiDbClient", () => {
  let a: RedisServer;
  let b: RedisServer;
  let c: RedisServer;
  before(async () => {
    [a, b, c] = await Promise.all([startRedis(), startRedis(), startRedis()]);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });
  beforeEach(async () => {
    // Servers a test killed come back; data is cleared.
    for (const s of [a, b, c]) {
      const up = await direct(s, (x) => x.ping()).then(() => true, () => false);
      if (!up) await s.restart();
      await direct(s, (x) => x.flushall());
    }
    markLeakBaseline();
  });
  afterEach(assertNoLeaks);

  it("serves every kind of command from the healthy database of highest weight", async () => {
    await using client = new MultiDbClient(fast([
      { url: b.url, weight: 0.5 },
      { url: a.url, weight: 2, name: "primary" },
      { url: c.url },
    ]));
    assert.equal(await client.set("k", "v"), "OK");
    assert.equal(client.activeDatabase, "primary");
    assert.equal(await client.get("k"), "v");
    assert.equal(await client.sendCommand(["ECHO", "hi"]), "hi");
    assert.deepEqual(await client.pipeline().incr("n").incr("n").get("k").exec(), [1, 2, "v"]);
    assert.deepEqual(await client.multi().incr("n").get("n").exec(), [3, "3"]);
    const bytes = await client.binary().get("k");
    assert.ok(bytes instanceof Uint8Array);
    const tx = await client.watch("n");
    assert.equal(await tx.get("n"), "3");
    assert.deepEqual(await tx.multi().incr("n").exec(), [4]);
    const keys: string[] = [];
    for await (const k of client.scan({ match: "*" })) keys.push(k);
    assert.deepEqual(keys.sort(), ["k", "n"]);
    // The data went to the primary only.
    assert.equal(await direct(a, (x) => x.get("n")), "4");
    assert.equal(await direct(b, (x) => x.get("n")), null);
    const dbs = client.databases();
    assert.deepEqual(dbs.map((d) => [d.name, d.weight, d.active, d.circuit]), [
      [name(b), 0.5, false, "closed"],
      ["primary", 2, true, "closed"],
      [name(c), 1, false, "closed"],
    ]);
    assert.deepEqual(dbs[1]!.endpoint, { host: "127.0.0.1", port: a.port });
    await waitFor(
      () => client.databases().every((d) => d.health === "healthy"),
      3000,
      "every health check",
    );
    // A named database is found by its endpoint too.
    await client.setActiveDatabase(name(b));
    await client.setActiveDatabase(`127.0.0.1:${a.port}`);
    assert.equal(client.activeDatabase, "primary");
  });

  describe("initialization policy", () => {
    // [policy, dead databases of 3, starts]
    const cases: ["all-available" | "majority-available" | "one-available", number, boolean][] = [
      ["all-available", 0, true],
      ["all-available", 1, false],
      ["majority-available", 1, true],
      ["majority-available", 2, false],
      ["one-available", 2, true],
      ["one-available", 3, false],
    ];
    for (const [policy, dead, starts] of cases) {
      it(`${policy} with ${dead} of 3 databases down ${starts ? "starts" : "refuses"}`, async () => {
        const live = [a, b, c].slice(0, 3 - dead).map((s, i) => ({ url: s.url, weight: 3 - i }));
        const down = await Promise.all(
          Array.from({ length: dead }, async () => ({
            url: `redis://127.0.0.1:${await freePort()}`,
            weight: 10,
          })),
        );
        const client = new MultiDbClient(
          fast([...down, ...live], { initializationPolicy: policy }),
        );
        try {
          if (starts) {
            await client.connect();
            // The unreachable databases weigh more; the healthy one of highest weight serves.
            assert.equal(client.activeDatabase, name(a));
            assert.equal(await client.ping(), "PONG");
          } else {
            await assert.rejects(client.connect(), (e: unknown) => {
              assert.ok(e instanceof ConnectionError);
              assert.match(
                e.message,
                new RegExp(
                  `^Cannot connect: the initialization policy "${policy}" needs \\d of 3 databases healthy, and \\d (is|are) not \\(\\d healthy`,
                ),
              );
              return true;
            });
            assert.equal(client.activeDatabase, undefined);
            // A command tries again, and fails the same way.
            await assert.rejects(client.get("k"), ConnectionError);
          }
        } finally {
          await client.close();
        }
      });
    }
  });

  describe("defaults with two databases", () => {
    // The defaults only: no option of fast().
    it("one database down at start: the other serves at once, after one probe", async () => {
      const downUrl = `redis://127.0.0.1:${await freePort()}`;
      for (const order of ["down first", "down second"] as const) {
        const databases = order === "down first"
          ? [{ url: downUrl, weight: 2 }, { url: a.url }]
          : [{ url: a.url, weight: 2 }, { url: downUrl }];
        const client = new MultiDbClient({ databases });
        const t0 = Date.now();
        assert.equal(await client.set("k", "v"), "OK", order);
        const took = Date.now() - t0;
        assert.equal(client.activeDatabase, name(a), order);
        // Before: three probes 500 ms apart (1 s), or refused ("majority-available" of 2).
        assert.ok(took < 400, `${order}: the first command took ${took} ms`);
        await client.close();
      }
    });

    it("the refusal counts what its checks found", async () => {
      const downUrl = `redis://127.0.0.1:${await freePort()}`;
      const client = new MultiDbClient({
        databases: [{ url: a.url }, { url: downUrl }],
        initializationPolicy: "all-available",
      });
      await assert.rejects(client.connect(), (e: unknown) => {
        assert.ok(e instanceof ConnectionError);
        const m =
          /needs 2 of 2 databases healthy, and 1 is not \((\d) healthy(, 1 not checked yet)?;/
            .exec(e.message);
        assert.ok(m, e.message);
        const healthy = client.databases().filter((d) => d.health === "healthy").length;
        // Whatever was counted was true then: a healthy one counted, or still being checked.
        assert.ok(m[1] === "1" || m[2] !== undefined, e.message);
        assert.ok(Number(m[1]) <= healthy, e.message);
        return true;
      });
      await client.close();
    });

    it("every database killed in use: the next command fails within the health check timeouts", async () => {
      const client = new MultiDbClient({ databases: [{ url: a.url, weight: 2 }, { url: b.url }] });
      assert.equal(await client.set("k", "v"), "OK");
      await Promise.all([a.kill(), b.kill()]);
      const t0 = Date.now();
      const e = await client.get("k").then(() => undefined, (x) => x);
      const took = Date.now() - t0;
      assert.ok(e instanceof TemporarilyUnavailableError, String(e));
      assert.equal(e.written, false);
      // Two health check timeouts (1 000 each) + commandRetry.initialDelay (500); before: 11.4 s.
      assert.ok(took <= 3_000, `the command failed after ${took} ms`);
      await client.close();
    });
  });

  describe("health checks", () => {
    it("fails over on a failed health check (HEALTH_CHECK), without any command", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }]));
      const seen = switches(client);
      await client.connect();
      await a.kill();
      const killedAt = Date.now();
      await waitFor(() => seen.length === 1, 3000, "the switch");
      assert.deepEqual(
        { from: seen[0]!.from, to: seen[0]!.to, reason: seen[0]!.reason },
        { from: name(a), to: name(b), reason: "HEALTH_CHECK" },
      );
      console.log(`  health-check failover ${seen[0]!.at - killedAt} ms after SIGKILL`);
      const info = client.databases()[0]!;
      assert.equal(info.health, "unhealthy");
      assert.equal(info.circuit, "forced-open", "held in its grace period");
      assert.ok(info.graceUntil! > Date.now());
      assert.equal(await client.set("k", "b"), "OK");
      assert.equal(await direct(b, (x) => x.get("k")), "b");
      await client.close();
    });

    it("PING policies over several probes: all, any, majority", async () => {
      // The custom check fails the first probe of every check, then passes.
      const flaky = (): HealthCheckStrategy => {
        let n = 0;
        return () => Promise.resolve(n++ % 3 !== 0);
      };
      const results: Record<string, string> = {};
      for (const policy of ["all", "any", "majority"] as const) {
        const client = new MultiDbClient(fast([
          { url: b.url, weight: 1 },
          {
            url: a.url,
            weight: 2,
            healthCheck: { strategy: flaky(), probes: 3, probeDelay: 10, policy },
          },
        ], { initializationPolicy: "one-available" }));
        await client.connect();
        await waitFor(
          () => client.databases()[1]!.health !== "unknown",
          2000,
          "the first check",
        );
        results[policy] = client.databases()[1]!.health;
        await client.close();
      }
      assert.deepEqual(results, { all: "unhealthy", any: "healthy", majority: "healthy" });
    });

    it("a real PING check of an unreachable database fails whatever the policy", async () => {
      const dead = `redis://127.0.0.1:${await freePort()}`;
      for (const policy of ["all", "any", "majority"] as const) {
        const client = new MultiDbClient(fast([
          { url: dead, weight: 2, healthCheck: { probes: 2, probeDelay: 10, policy } },
          { url: a.url },
        ], { initializationPolicy: "one-available" }));
        await client.connect();
        assert.equal(client.activeDatabase, name(a));
        await waitFor(() => client.databases()[0]!.health !== "unknown", 2000, "the check");
        const d = client.databases()[0]!;
        assert.equal(d.health, "unhealthy", policy);
        assert.ok(d.healthError !== undefined && d.healthError.length > 0);
        await client.close();
      }
    });

    it("custom checks get the database's client and endpoint; false, throw and silence fail", async () => {
      const targets: string[] = [];
      let verdict: "ok" | "false" | "throw" | "hang" = "ok";
      const check: HealthCheckStrategy = async (t) => {
        targets.push(`${t.database} ${t.endpoint?.port} ${t.timeout}`);
        assert.equal(await t.client.sendCommand(["PING"]), "PONG");
        if (verdict === "false") return false;
        if (verdict === "throw") throw new Error("replication is broken");
        if (verdict === "hang") {
          await new Promise<void>((r) => t.signal.addEventListener("abort", () => r()));
        }
        return true;
      };
      const client = new MultiDbClient(fast([
        { url: a.url, weight: 2, healthCheck: check },
        { url: b.url, healthCheck: false },
      ]));
      const seen = switches(client);
      await client.connect();
      assert.equal(client.activeDatabase, name(a));
      assert.equal(targets[0], `${name(a)} ${a.port} 300`);
      verdict = "throw";
      await waitFor(() => seen.length === 1, 3000, "the switch");
      assert.equal(seen[0]!.reason, "HEALTH_CHECK");
      assert.equal(client.databases()[0]!.healthError, "replication is broken");
      const error = () => client.databases()[0]!.healthError;
      verdict = "hang";
      await waitFor(() => error() === "no answer within 300 ms", 2000, "a timed-out check");
      verdict = "false";
      await waitFor(() => error() === "the check answered unhealthy", 2000, "a false check");
      assert.equal(client.databases()[1]!.health, "healthy", "no check: always healthy");
      await client.close();
    });

    it('checkActive: "idle" checks the active database only when it served nothing', async () => {
      let probes = 0;
      const client = new MultiDbClient(fast([
        {
          url: a.url,
          weight: 2,
          healthCheck: {
            checkActive: "idle",
            interval: 100,
            strategy: () => Promise.resolve(++probes > 0),
          },
        },
        { url: b.url },
      ]));
      await client.connect();
      const first = probes;
      let stop = false;
      const busy = (async () => {
        while (!stop) await client.ping();
      })();
      await sleep(600);
      const whileBusy = probes - first;
      stop = true;
      await busy;
      await sleep(600);
      const whileIdle = probes - first - whileBusy;
      assert.equal(whileBusy, 0, "no check while commands are answered");
      assert.ok(whileIdle >= 2, `${whileIdle} checks while idle`);
      await client.close();
    });

    it("a server still loading its data (LOADING) is unhealthy until it is done", async () => {
      const slow = await startRedis({
        args: ["--key-load-delay", "500", "--loading-process-events-interval-bytes", "1024"],
      });
      try {
        await direct(slow, async (x) => {
          await x.sendCommand(["DEBUG", "POPULATE", "4000"]);
          await x.sendCommand(["SAVE"]);
        });
        await slow.restart(); // loads 4000 keys, 0.5 ms each, answering in between
        const client = new MultiDbClient(fast([
          { url: slow.url, weight: 2 },
          { url: a.url },
        ], { initializationPolicy: "one-available" }));
        const seen = switches(client);
        await client.connect();
        assert.equal(client.activeDatabase, name(a));
        await waitFor(() => client.databases()[0]!.health !== "unknown", 2000, "the check");
        const d = client.databases()[0]!;
        assert.equal(d.health, "unhealthy");
        // The server answers LOADING, or the connection holds the probe until it is done.
        assert.match(d.healthError ?? "", /^LOADING |^no answer within 300 ms$/);
        await waitFor(() => seen.length === 1, 10_000, "the failback once loaded");
        assert.deepEqual([seen[0]!.to, seen[0]!.reason], [name(slow), "FAILBACK"]);
        assert.equal(await client.dbsize(), 4000);
        await client.close();
      } finally {
        await slow.stop();
      }
    });
  });

  describe("switching", () => {
    it("an open circuit fails over (CIRCUIT_BREAKER); unwritten commands retried, none lost", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }], {
        // Health checks too rare to notice: the breaker decides.
        healthCheck: { interval: 60_000, timeout: 300, probes: 1 },
        failureDetector: { minNumOfFailures: 2, failureRateThreshold: 0 },
      }));
      const seen = switches(client);
      await client.connect();
      await allHealthy(client);
      await client.set("x", "0");
      await a.kill();
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => client.incr("x")),
      );
      const failed = results.filter((r) => r.status === "rejected");
      assert.deepEqual(seen.map((s) => [s.from, s.to, s.reason]), [
        [name(a), name(b), "CIRCUIT_BREAKER"],
      ]);
      // Commands issued after the kill were never written to the dead server: all retried on b.
      assert.equal(
        failed.length,
        0,
        String(failed.map((f) => (f as PromiseRejectedResult).reason)),
      );
      assert.equal(await direct(b, (x) => x.get("x")), "20");
      await client.close();
    });

    it("retryOnFailover: false reports unwritten commands instead of moving them", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }], {
        healthCheck: { interval: 60_000, timeout: 300, probes: 1 },
        failureDetector: { minNumOfFailures: 2, failureRateThreshold: 0 },
        retryOnFailover: false,
      }));
      await client.connect();
      await a.kill();
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => client.incr("x")));
      const failed = results.filter((r) => r.status === "rejected");
      assert.equal(client.activeDatabase, name(b));
      assert.ok(failed.length > 0);
      for (const f of failed) {
        const e = (f as PromiseRejectedResult).reason;
        assert.ok(e instanceof RedisError, String(e));
        assert.notEqual((e as { written?: boolean }).written, true, "only unwritten ones");
      }
      assert.equal(Number(await direct(b, (x) => x.get("x")) ?? 0), 20 - failed.length);
      assert.equal(await client.incr("x"), 21 - failed.length, "new commands go to b");
      await client.close();
    });

    it("a pipeline or transaction nothing of which was written runs whole on the new database", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }], {
        healthCheck: { interval: 60_000, timeout: 300, probes: 1 },
        failureDetector: { minNumOfFailures: 1, failureRateThreshold: 0 },
      }));
      const seen = switches(client);
      await client.connect();
      await allHealthy(client);
      await a.kill();
      // Queued on the dead server's client, never written; the failover brings them back.
      const [p, t] = await Promise.all([
        client.pipeline().incr("p").incr("p").get("p").exec(),
        client.multi().incr("t").incr("t").exec(),
      ]);
      assert.deepEqual(p, [1, 2, "2"]);
      assert.deepEqual(t, [1, 2]);
      assert.deepEqual(seen.map((s) => [s.to, s.reason]), [[name(b), "CIRCUIT_BREAKER"]]);
      assert.deepEqual(await direct(b, (x) => x.mget("p", "t")), ["2", "2"]);
      await client.close();
    });

    it("a pipeline or transaction that may have been written is never run again", async () => {
      await using sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${a.port}` });
      const client = new MultiDbClient(fast([{ ...sim.endpoint, weight: 2 }, { url: b.url }], {
        healthCheck: { interval: 60_000, timeout: 300, probes: 1 },
        failureDetector: { minNumOfFailures: 1, failureRateThreshold: 0 },
      }));
      const seen = switches(client);
      await client.connect();
      await allHealthy(client);
      sim.faults.blackhole();
      const [p, t] = await Promise.all([
        client.pipeline().incr("p").incr("p").exec(),
        client.multi().incr("t").exec().then(() => undefined, (e) => e),
      ]);
      sim.faults.clear();
      assert.ok(p[0] instanceof TimeoutError && p[1] instanceof TimeoutError, String(p));
      assert.notEqual((p[0] as TimeoutError).written, false, "may have run");
      assert.ok(t instanceof TimeoutError, String(t));
      assert.equal(seen.length, 1, "the failures still fail over");
      assert.equal(seen[0]!.reason, "CIRCUIT_BREAKER");
      assert.deepEqual(await direct(b, (x) => x.mget("p", "t")), [null, null], "not run twice");
      await client.close();
    });

    it("fails back only after the grace period, to a strictly higher weight (FAILBACK)", async () => {
      const client = new MultiDbClient(fast([
        { url: a.url, weight: 2 },
        { url: b.url, weight: 1 },
        { url: c.url, weight: 1 },
      ], { gracePeriod: 1500 }));
      const seen = switches(client);
      await client.connect();
      await a.kill();
      await waitFor(() => seen.length === 1, 3000, "the failover");
      assert.equal(seen[0]!.to, name(b));
      await a.restart();
      await waitFor(() => client.databases()[0]!.health === "healthy", 3000, "a healthy again");
      await waitFor(() => seen.length === 2, 4000, "the failback");
      const back = seen[1]!;
      assert.deepEqual([back.from, back.to, back.reason], [name(b), name(a), "FAILBACK"]);
      const waited = back.at - seen[0]!.at;
      assert.ok(waited >= 1490, `failed back ${waited} ms after failing over`);
      // c has the same weight as b: never a failback target from b.
      assert.ok(!seen.some((s) => s.to === name(c)));
      await client.close();
    });

    it("failbackSupported: false stays on the database failed over to", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }], {
        gracePeriod: 100,
        failbackSupported: false,
      }));
      const seen = switches(client);
      await client.connect();
      await a.kill();
      await waitFor(() => seen.length === 1, 3000, "the failover");
      await a.restart();
      await sleep(800);
      assert.equal(seen.length, 1);
      assert.equal(client.activeDatabase, name(b));
      await client.close();
    });

    it("setActiveDatabase switches (FORCED), refuses an unhealthy or unknown one", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }], {
        failbackCheckInterval: 60_000,
      }));
      const seen = switches(client);
      await client.set("k", "a");
      await client.setActiveDatabase(name(b));
      assert.equal(client.activeDatabase, name(b));
      assert.deepEqual(seen.map((s) => s.reason), ["FORCED"]);
      assert.equal(await client.get("k"), null);
      await assert.rejects(
        client.setActiveDatabase("nowhere"),
        /Cannot find the database "nowhere"/,
      );
      await a.kill();
      await waitFor(() => client.databases()[0]!.health === "unhealthy", 3000, "a unhealthy");
      await assert.rejects(client.setActiveDatabase(name(a)), (e: unknown) => {
        assert.ok(e instanceof RedisError);
        assert.match(e.message, /^Cannot switch to "127\.0\.0\.1:\d+": it is unhealthy/);
        return true;
      });
      assert.equal(client.activeDatabase, name(b));
      await client.close();
    });

    it("forceActiveDatabase holds the others out for the duration, then fails back", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }]));
      const seen = switches(client);
      await client.connect();
      await client.forceActiveDatabase(name(b), 800);
      const forcedAt = Date.now();
      assert.equal(client.activeDatabase, name(b));
      assert.equal(client.databases()[0]!.circuit, "forced-open");
      await waitFor(() => seen.length === 2, 3000, "the failback");
      assert.deepEqual(seen.map((s) => s.reason), ["FORCED", "FAILBACK"]);
      assert.ok(seen[1]!.at - forcedAt >= 750, "no failback while forced");
      await assert.rejects(client.forceActiveDatabase(name(b), 0), RangeError);
      await client.close();
    });

    it("addDatabase, setWeight and removeDatabase steer the active database", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 1 }]));
      const seen = switches(client);
      await client.connect();
      assert.equal(client.addDatabase({ url: b.url, weight: 5, name: "big" }), "big");
      await waitFor(() => client.activeDatabase === "big", 3000, "the failback to big");
      assert.throws(() => client.addDatabase({ url: b.url }), /another database has the endpoint/);
      assert.throws(() => client.addDatabase({ url: c.url, weight: -2 }), RangeError);
      assert.equal(client.databases().length, 2, "a refused database is not added");
      client.setWeight(name(a), 10);
      await waitFor(() => client.activeDatabase === name(a), 3000, "the failback to a");
      assert.throws(() => client.setWeight(name(a), 0), RangeError);
      await client.removeDatabase(name(a));
      assert.equal(client.activeDatabase, "big");
      await assert.rejects(client.removeDatabase("big"), /it is the only one/);
      assert.deepEqual(seen.map((s) => [s.to, s.reason]), [
        ["big", "FAILBACK"],
        [name(a), "FAILBACK"],
        ["big", "FORCED"],
      ]);
      assert.equal(await client.ping(), "PONG");
      await client.close();
    });

    it("no healthy database: temporarily, then permanently unavailable; recovers", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }], {
        gracePeriod: 200,
      }));
      const seen = switches(client);
      await client.connect();
      await Promise.all([a.kill(), b.kill()]);
      await waitFor(
        () => client.databases().every((d) => d.health === "unhealthy"),
        3000,
        "both unhealthy",
      );
      // Fails at once, without waiting for a connection.
      const t0 = Date.now();
      const t = await client.get("k").then(() => undefined, (e) => e);
      assert.ok(t instanceof TemporarilyUnavailableError, String(t));
      assert.ok(Date.now() - t0 < 200);
      assert.equal(t.written, false);
      assert.match(
        t.message,
        /^Cannot send the command: no healthy database, failover attempt 1 of 2/,
      );
      await sleep(400);
      const perm = await client.get("k").then(() => undefined, (e) => e);
      await sleep(200);
      const perm2 = await client.get("k").then(() => undefined, (e) => e);
      assert.ok(
        perm instanceof PermanentlyUnavailableError || perm2 instanceof PermanentlyUnavailableError,
        `${perm} / ${perm2}`,
      );
      await b.restart();
      await waitFor(
        () => client.activeDatabase === name(b) && client.databases()[1]!.health === "healthy",
        5000,
        "recovery on b",
      );
      assert.equal(await client.set("k", "v"), "OK");
      // Whichever died first was failed away from once, for a failed health check.
      assert.ok(seen.length >= 1 && seen.every((s) => s.reason === "HEALTH_CHECK"));
      await client.close();
    });
  });

  it("types its events by name", async () => {
    const client = new MultiDbClient({ databases: [{ url: a.url }] });
    const to: string[] = [];
    client.addEventListener("switch", (e) => to.push(e.detail.to));
    // @ts-expect-error: a misspelt event name does not compile
    client.addEventListener("swtich", () => {});
    client.dispatchEvent(
      new CustomEvent("switch", { detail: { from: null, to: "x", reason: "FORCED" } }),
    );
    assert.deepEqual(to, ["x"]);
    await client.close();
  });

  describe("pub/sub", () => {
    it("re-makes subscriptions in the order they were made, before the next command", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }]));
      const seen = switches(client);
      await client.subscribe("s1", () => {});
      await client.psubscribe("p2.*", () => {});
      await client.ssubscribe("s3", () => {});
      await client.subscribe(["s4", "s5"], () => {});
      const monitor = await RawClient.connect(b.port);
      monitor.send(["MONITOR"]);
      await monitor.until(() => monitor.items.length > 0, 2000, "MONITOR's OK");
      await a.kill();
      await waitFor(() => seen.length === 1, 3000, "the failover");
      await client.set("after", "1");
      await monitor.until(
        () => monitor.items.some((i) => String(i.value).includes('"after"')),
        2000,
        "the SET",
      );
      const lines = monitor.items.map((i) => String(i.value))
        .filter((l) => /"(P|S)?SUBSCRIBE"|"SET" "after"/i.test(l))
        .map((l) => l.slice(l.indexOf("]") + 2));
      assert.deepEqual(lines, [
        '"SUBSCRIBE" "s1"',
        '"PSUBSCRIBE" "p2.*"',
        '"SSUBSCRIBE" "s3"',
        '"SUBSCRIBE" "s4" "s5"',
        '"SET" "after" "1"',
      ]);
      await monitor.close();
      await client.close();
    });

    it("subscriptions deliver after a failover, the same objects", async () => {
      const client = new MultiDbClient(fast([{ url: a.url, weight: 2 }, { url: b.url }]));
      const seen = switches(client);
      const got: string[] = [];
      const sub = await client.subscribe("news", (m, ch) => got.push(`${ch}:${m}`));
      const psub = await client.psubscribe("ev.*");
      assert.equal(sub.database, name(a));
      assert.equal(await client.publish("news", "1"), 1);
      await waitFor(() => got.length === 1, 2000, "the first message");
      await a.kill();
      await waitFor(() => seen.length === 1, 3000, "the failover");
      assert.equal(sub.database, name(b));
      assert.equal(psub.database, name(b));
      // Subscribed on b before b served a command: the first publish is heard.
      assert.equal(await client.publish("news", "2"), 1);
      assert.equal(await client.publish("ev.x", "3"), 1);
      await waitFor(() => got.length === 2, 2000, "the message after the failover");
      assert.deepEqual(got, ["news:1", "news:2"]);
      const it = psub[Symbol.asyncIterator]();
      assert.deepEqual((await it.next()).value, { channel: "ev.x", message: "3", pattern: "ev.*" });
      await sub.unsubscribe();
      assert.equal(sub.active, false);
      assert.equal(await client.publish("news", "4"), 0);
      await client.close();
      assert.equal((await it.next()).done, true, "iteration ends with the client");
    });
  });
});
