// OpenTelemetry metrics read back through the real SDK (@opentelemetry/sdk-metrics, test-only)
// from real redis-server processes: the counts equal what happened.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Logger, type MetricGroup, RedisClient } from "../../mod.ts";
import { MultiDbClient } from "../../src/multi_db/mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { otelMetrics } from "../../src/observability/mod.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { allHealthy, waitFor } from "../_helpers/load.ts";
import { sleep } from "../_helpers/leaks.ts";
import { eachHarness, type MetricsHarness, metricsHarness, total } from "../_helpers/otel.ts";

const DURATION = "db.client.operation.duration";

function warnings(): { logger: Logger; seen: string[] } {
  const seen: string[] = [];
  const noop = () => {};
  return {
    logger: { debug: noop, info: noop, warn: (m: string) => seen.push(m), error: noop },
    seen,
  };
}

/** The groups of a connection's life: opened (basic), closed (advanced). */
const CONNECTION_LIFE: MetricGroup[] = ["connection-basic", "connection-advanced"];

describe("metrics", () => {
  let server: RedisServer;
  let h: MetricsHarness;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });
  eachHarness(metricsHarness, (x) => h = x);

  it("N commands give N duration samples; a pipeline and a transaction one each", async () => {
    const client = new RedisClient({
      url: server.url,
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["command"] }),
    });
    const n = 25;
    await Promise.all(Array.from({ length: n }, (_, i) => client.set(`m:${i}`, String(i))));
    for (let i = 0; i < n; i++) await client.get(`m:${i}`);
    await client.pipeline().get("m:1").get("m:2").incr("m:3").exec();
    await client.multi().incr("m:4").incr("m:5").exec();
    await assert.rejects(client.sendCommand(["HGET", "m:1", "f"])); // WRONGTYPE
    const points = await h.points(DURATION);
    assert.equal(total(points, { "db.operation.name": "SET" }), n);
    assert.equal(total(points, { "db.operation.name": "GET" }), n);
    assert.equal(total(points, { "db.operation.name": "PIPELINE" }), 1);
    assert.equal(total(points, { "db.operation.name": "MULTI" }), 1);
    // The commands of the batches are not measured one by one.
    assert.equal(total(points, { "db.operation.name": "INCR" }), 0);
    assert.equal(total(points), 2 * n + 3);
    const pipe = points.find((p) => p.attributes["db.operation.name"] === "PIPELINE")!;
    assert.equal(pipe.attributes["db.operation.batch.size"], 3);
    const multi = points.find((p) => p.attributes["db.operation.name"] === "MULTI")!;
    assert.equal(multi.attributes["db.operation.batch.size"], 2);
    const failed = points.find((p) => p.attributes["db.operation.name"] === "HGET")!;
    assert.equal(failed.attributes["error.type"], "WRONGTYPE");
    assert.equal(failed.attributes["db.response.status_code"], "WRONGTYPE");
    const get = points.find((p) => p.attributes["db.operation.name"] === "GET")!;
    assert.equal(get.attributes["db.system.name"], "redis");
    assert.equal(get.attributes["server.address"], "127.0.0.1");
    assert.equal(get.attributes["server.port"], server.port);
    assert.equal(get.attributes["db.namespace"], "0");
    assert.match(String(get.attributes["redis.client.library"]), /^edge-redis_v/);
    assert.ok(get.sum > 0 && get.sum < 10, `durations in seconds: ${get.sum}`);
    await client.close();
  });

  it("includeCommands and excludeCommands choose the commands measured", async () => {
    const client = new RedisClient({
      url: server.url,
      metrics: otelMetrics({
        meterProvider: h.meterProvider,
        groups: ["command"],
        excludeCommands: ["get"],
      }),
    });
    await client.set("x", "1");
    await client.get("x");
    await client.sendCommand(["get", "x"]);
    const points = await h.points(DURATION);
    assert.equal(total(points, { "db.operation.name": "SET" }), 1);
    assert.equal(total(points, { "db.operation.name": "GET" }), 0);
    await client.close();
  });

  it("default groups: connections counted by state, no durations", async () => {
    const client = new RedisClient({
      url: server.url,
      metrics: otelMetrics({ meterProvider: h.meterProvider }),
    });
    await client.ping();
    assert.deepEqual(await h.points(DURATION), []);
    const count = await h.points("db.client.connection.count");
    assert.equal(total(count, { "db.client.connection.state": "idle" }), 1);
    assert.equal(total(count, { "db.client.connection.state": "used" }), 0);
    const created = await h.points("db.client.connection.create_time");
    assert.equal(total(created), 1);
    await client.close();
    // Closed sockets are counted in connection-advanced, off by default (as in node-redis).
    assert.deepEqual(await h.points("redis.client.connection.closed"), []);
  });

  it("connection-advanced: the wait for an exclusive connection, pending commands", async () => {
    const client = new RedisClient({
      url: server.url,
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["connection-advanced"] }),
    });
    await client.ping();
    assert.equal(await client.blpop(["nothing"], 0.05), null);
    assert.equal(total(await h.points("db.client.connection.wait_time")), 1);
    const pending = await h.points("db.client.connection.pending_requests");
    assert.equal(pending.length, 1);
    assert.equal(
      pending[0]!.attributes["db.client.connection.pool.name"],
      `127.0.0.1:${server.port}`,
    );
    assert.equal(pending[0]!.value, 0);
    await client.close();
  });

  it("a socket the server closed is one close with its reason, then one more at close()", async () => {
    const client = new RedisClient({
      url: server.url,
      clientName: "metrics-kill",
      reconnect: { baseDelay: 10, maxDelay: 20 },
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: CONNECTION_LIFE }),
    });
    let ready = 0;
    client.addEventListener("ready", () => ready++);
    await client.ping();
    const admin = new RedisClient({ url: server.url });
    await admin.sendCommand(["CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal"]);
    await admin.close();
    await waitFor(() => ready === 2, 3000, "the reconnect");
    const closed = await h.points("redis.client.connection.closed");
    const lost = total(closed, { "redis.client.connection.close.reason": "server_close" }) +
      total(closed, { "redis.client.connection.close.reason": "error" });
    assert.equal(lost, 1, JSON.stringify(closed.map((p) => p.attributes)));
    assert.equal(total(await h.points("db.client.connection.create_time")), 2);
    await client.close();
    const after = await h.points("redis.client.connection.closed");
    assert.equal(total(after, { "redis.client.connection.close.reason": "application_close" }), 1);
  });

  it("a socket that stops answering closes as healthcheck_failed", async () => {
    const hung = await startRedis();
    const client = new RedisClient({
      url: hung.url,
      commandTimeout: 200,
      reconnect: { baseDelay: 10, maxDelay: 20 },
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: CONNECTION_LIFE }),
    });
    let ready = 0;
    client.addEventListener("ready", () => ready++);
    await client.ping();
    process.kill(hung.pid, "SIGSTOP");
    try {
      // Commands time out; after 2 x max(commandTimeout, 1 s) of silence the socket is replaced.
      const t0 = Date.now();
      let closes = 0;
      while (closes === 0 && Date.now() - t0 < 5000) {
        await client.ping().catch(() => {});
        closes = total(await h.points("redis.client.connection.closed"));
      }
      const closed = await h.points("redis.client.connection.closed");
      assert.equal(
        total(closed, { "redis.client.connection.close.reason": "healthcheck_failed" }),
        1,
        JSON.stringify(closed.map((p) => p.attributes)),
      );
      assert.equal(total(closed), 1);
      process.kill(hung.pid, "SIGCONT");
      await waitFor(() => ready === 2, 5000, "the reconnect once the server answers again");
    } finally {
      process.kill(hung.pid, "SIGCONT");
      await client.close();
      await hung.stop();
    }
  });

  it("a server gone: one socket closed, however many attempts follow", async () => {
    const gone = await startRedis();
    const client = new RedisClient({
      url: gone.url,
      reconnect: { baseDelay: 5, maxDelay: 10 },
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: CONNECTION_LIFE }),
    });
    let attempts = 0;
    client.addEventListener("reconnecting", () => attempts++);
    await client.ping();
    await gone.stop();
    await waitFor(() => attempts >= 3, 5000, "a few attempts");
    assert.equal(total(await h.points("redis.client.connection.closed")), 1);
    await client.destroy();
    assert.equal(total(await h.points("redis.client.connection.closed")), 1);
  });

  it("a refused connection is one error of category network", async () => {
    const port = await freePort();
    const client = new RedisClient({
      port,
      reconnect: false,
      metrics: otelMetrics({
        meterProvider: h.meterProvider,
        groups: ["resiliency", ...CONNECTION_LIFE],
      }),
    });
    await assert.rejects(client.get("k"));
    // No socket was ever open: nothing closed.
    assert.equal(total(await h.points("redis.client.connection.closed")), 0);
    const errors = await h.points("redis.client.errors");
    assert.equal(
      total(errors, { "redis.client.errors.internal": false }),
      1,
      JSON.stringify(errors.map((p) => p.attributes)),
    );
    const e = errors.find((p) => p.attributes["redis.client.errors.internal"] === false)!;
    assert.equal(e.attributes["redis.client.errors.category"], "network");
    assert.equal(e.attributes["error.type"], "ConnectionError");
    assert.equal(e.attributes["db.operation.name"], "GET");
    await client.close();
  });

  // The standalone client counts a caller's error where its connection rejects the command
  // (no promise reaction per command); with durations or the cache, the reaction counts it.
  // Every way a command fails, counted once either way.
  for (
    const [label, extra] of [
      ["the error group alone", {}],
      ["with durations", { groups: ["command"] }],
      ["with the client-side cache", { cache: true }],
    ] as [string, { groups?: MetricGroup[]; cache?: boolean }][]
  ) {
    it(`every error a caller receives is counted once, by command (${label})`, async () => {
      const s = await startRedis();
      const metrics = otelMetrics({
        meterProvider: h.meterProvider,
        groups: ["resiliency", ...(extra.groups ?? [])] as MetricGroup[],
      });
      const client = new RedisClient({
        url: s.url,
        reconnect: false,
        clientSideCache: extra.cache === true && clientSideCache(),
        metrics,
      });
      const admin = new RedisClient({ url: s.url });
      const seen = new Map<string, number>();
      const fails = async (name: string, p: Promise<unknown>) => {
        await assert.rejects(p);
        seen.set(name, (seen.get(name) ?? 0) + 1);
      };
      try {
        await client.set("str", "v");
        await fails("HGET", client.hget("str", "f")); // an error reply
        await fails("LPUSH", client.sendCommand(["LPUSH", "str", "x"]));
        await fails("GET", client.sendCommand(["GET", null as unknown as string])); // refused
        await fails("SUBSCRIBE", client.sendCommand(["SUBSCRIBE", "c"])); // reserved
        await fails("GET", client.sendCommand(["GET", "k"], { signal: AbortSignal.abort() }));
        // Written, then timed out and given up while the server sleeps.
        const sleeping = admin.sendCommand(["DEBUG", "SLEEP", "0.4"]);
        await sleep(20);
        await fails("GET", client.sendCommand(["GET", "k"], { timeout: 50 }));
        const ac = new AbortController();
        const aborted = client.sendCommand(["STRLEN", "str"], { signal: ac.signal });
        setTimeout(() => ac.abort(new Error("given up")), 20);
        await fails("STRLEN", aborted);
        await sleeping;
        // A pipeline's and a transaction's errors are their values: not counted as commands.
        const [r] = await client.pipeline().hget("str", "f").exec();
        assert.ok(r instanceof Error);
        // In flight when the server dies (no reconnect).
        const dying = admin.sendCommand(["DEBUG", "SLEEP", "5"]).catch(() => {});
        await sleep(20);
        const inFlight = fails("GET", client.get("str"));
        await sleep(20);
        await s.kill();
        await inFlight;
        await dying;
        await fails("INCR", client.incr("n")); // the connection is closed for good
        const closing = client.close();
        await fails("GET", client.get("str")); // the client is closing
        await closing;
        // Closed: its metrics are closed too, and record nothing more.
        await assert.rejects(client.get("str"));
        // A queue bound: the second command is refused before it is queued.
        const bounded = new RedisClient({ port: await freePort(), maxQueueLength: 1, metrics });
        const queued = fails("GET", bounded.get("a"));
        await fails("EXISTS", bounded.exists("b"));
        bounded.destroy();
        await queued;
        await bounded.close();
        // Never connected: it expires in the queue.
        const offline = new RedisClient({ port: await freePort(), commandTimeout: 100, metrics });
        await fails("TTL", offline.ttl("k"));
        await offline.close();

        const errors = await h.points("redis.client.errors");
        const counted = new Map<string, number>();
        for (const p of errors) {
          if (p.attributes["redis.client.errors.internal"] !== false) continue;
          const name = String(p.attributes["db.operation.name"]);
          counted.set(name, (counted.get(name) ?? 0) + p.value);
        }
        assert.deepEqual(
          Object.fromEntries([...counted].sort()),
          Object.fromEntries([...seen].sort()),
        );
        const hget = errors.find((p) => p.attributes["db.operation.name"] === "HGET")!;
        assert.equal(hget.attributes["db.response.status_code"], "WRONGTYPE");
        assert.equal(hget.attributes["redis.client.errors.category"], "server");
      } finally {
        client.destroy();
        admin.destroy();
        await s.stop();
      }
    });
  }

  it("client-side cache: one hit and one miss", async () => {
    const client = new RedisClient({
      url: server.url,
      clientSideCache: clientSideCache(),
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["client-side-caching"] }),
    });
    await client.set("cached", "v");
    assert.equal(await client.get("cached"), "v");
    assert.equal(await client.get("cached"), "v");
    const requests = await h.points("redis.client.csc.requests");
    assert.equal(total(requests, { "redis.client.csc.result": "hit" }), 1);
    assert.equal(total(requests, { "redis.client.csc.result": "miss" }), 1);
    assert.equal(total(await h.points("redis.client.csc.items")), 1);
    const saved = total(await h.points("redis.client.csc.network_saved"));
    assert.equal(saved, client.cacheStats()!.bytesSaved);
    assert.ok(saved > 0);
    await client.close();
  });

  it("pub/sub messages sent and received; channel names hidden on request", async () => {
    const client = new RedisClient({
      url: server.url,
      metrics: otelMetrics({
        meterProvider: h.meterProvider,
        groups: ["pubsub"],
        hideChannelNames: true,
      }),
    });
    let got = 0;
    const sub = await client.subscribe("news", () => got++);
    await client.publish("news", "a");
    await client.publish("news", "b");
    await waitFor(() => got === 2, 2000, "the messages");
    const points = await h.points("redis.client.pubsub.messages");
    assert.equal(total(points, { "redis.client.pubsub.message.direction": "out" }), 2);
    assert.equal(total(points, { "redis.client.pubsub.message.direction": "in" }), 2);
    assert.ok(points.every((p) => !("redis.client.pubsub.channel" in p.attributes)));
    await sub.unsubscribe();
    await client.close();
  });

  it("stream lag of the entries read", async () => {
    const client = new RedisClient({
      url: server.url,
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["streaming"] }),
    });
    const old = Date.now() - 5000;
    await client.sendCommand(["XADD", "st", `${old}-0`, "f", "v"]);
    await client.sendCommand(["XADD", "st", "*", "f", "w"]);
    await client.sendCommand(["XREAD", "STREAMS", "st", "0"]);
    const lag = await h.points("redis.client.stream.lag");
    assert.equal(total(lag, { "redis.client.stream.name": "st" }), 2);
    assert.ok(lag[0]!.sum >= 5 && lag[0]!.sum < 60, `lag in seconds: ${lag[0]!.sum}`);
    await client.close();
  });

  it("unknown groups are a TypeError naming the valid ones", () => {
    assert.throws(
      () =>
        new RedisClient({
          url: server.url,
          // deno-lint-ignore no-explicit-any
          metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["commands" as any] }),
        }),
      (e: unknown) =>
        e instanceof TypeError && /"commands"/.test(e.message) &&
        /command, connection-basic, connection-advanced, resiliency, pubsub, streaming, client-side-caching/
          .test(e.message),
    );
    assert.throws(
      // deno-lint-ignore no-explicit-any
      () => new RedisClient({ metrics: otelMetrics({ meterProvider: {} as any }) }),
      /getMeter/,
    );
  });

  it("the part checks its options (a hint for a slip); a plain options object is refused", () => {
    assert.throws(
      () => otelMetrics({ meterProvider: h.meterProvider, group: ["command"] } as never),
      {
        name: "TypeError",
        message: "Cannot use the option `group` of metrics: no such option. Did you mean `groups`?",
      },
    );
    assert.throws(() => otelMetrics(undefined as never), /expected an options object/);
    assert.throws(() => new RedisClient({ metrics: { meterProvider: h.meterProvider } as never }), {
      name: "TypeError",
      message: "Cannot enable metrics from a plain options object: pass otelMetrics({ ... }), " +
        'imported from "@edge/redis/otel"',
    });
    const part = otelMetrics({ meterProvider: h.meterProvider });
    assert.ok(Object.isFrozen(part));
    assert.equal(part.part, "metrics");
  });

  it("a meter provider that throws never breaks a command (one warning)", async () => {
    const w = warnings();
    const throwing = new RedisClient({
      url: server.url,
      logger: w.logger,
      metrics: otelMetrics({
        meterProvider: {
          getMeter() {
            throw new Error("no meter");
          },
        },
      }),
    });
    await throwing.set("t", "1");
    assert.equal(await throwing.get("t"), "1");
    assert.equal(w.seen.length, 1);
    assert.match(w.seen[0]!, /no meter/);
    await throwing.close();

    const w2 = warnings();
    const broken = () => {
      throw new Error("record failed");
    };
    const instrument = { add: broken, record: broken, addCallback: broken, removeCallback: broken };
    const failing = new RedisClient({
      url: server.url,
      logger: w2.logger,
      metrics: otelMetrics({
        groups: ["command", "resiliency", "connection-basic"],
        meterProvider: {
          getMeter: () => ({
            createCounter: () => instrument,
            createUpDownCounter: () => instrument,
            createHistogram: () => instrument,
            createObservableGauge: () => instrument,
            createObservableCounter: () => instrument,
            createObservableUpDownCounter: () => instrument,
          }),
        },
      }),
    });
    for (let i = 0; i < 5; i++) await failing.set("t", String(i));
    await assert.rejects(failing.sendCommand(["HGET", "t", "f"]), /WRONGTYPE/);
    assert.equal(await failing.get("t"), "4");
    assert.equal(w2.seen.length, 1);
    assert.match(w2.seen[0]!, /record failed/);
    await failing.close();
  });
});

describe("metrics: maintenance", () => {
  let server: RedisServer;
  let h: MetricsHarness;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });
  eachHarness(metricsHarness, (x) => h = x);

  it("MOVING: one handoff, the relaxed-timeout counter up then down, one notification", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const client = new RedisClient({
      ...sim.endpoint,
      commandTimeout: 1000,
      metrics: otelMetrics({ meterProvider: h.meterProvider }),
    });
    let handoffs = 0;
    client.addEventListener("handoff", () => handoffs++);
    await client.ping();
    const bind = sim.bind({ time: 2 });
    await waitFor(() => handoffs === 1, 2000, "the handoff");
    const relaxedDuring = total(await h.points("redis.client.connection.relaxed_timeout"));
    assert.ok(relaxedDuring >= 1, `relaxed during the window: ${relaxedDuring}`);
    await bind;
    let relaxedAfter = relaxedDuring;
    for (let i = 0; i < 60 && relaxedAfter !== 0; i++) {
      await sleep(50);
      relaxedAfter = total(await h.points("redis.client.connection.relaxed_timeout"));
    }
    assert.equal(relaxedAfter, 0, "the timeouts restored once the window closed");
    await client.ping();
    assert.equal(total(await h.points("redis.client.connection.handoff")), 1);
    const notes = await h.points("redis.client.maintenance.notifications");
    assert.equal(total(notes, { "redis.client.connection.notification": "MOVING" }), 1);
    await client.close();
    await sim.close();
  });
});

describe("metrics: multi-db", () => {
  let a: RedisServer;
  let b: RedisServer;
  let h: MetricsHarness;
  before(async () => {
    [a, b] = await Promise.all([startRedis(), startRedis()]);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
  });
  eachHarness(metricsHarness, (x) => h = x);

  it("a failover is one switch with its reason; databases inherit the metrics", async () => {
    const client = new MultiDbClient({
      databases: [{ url: a.url, weight: 2 }, { url: b.url }],
      commandTimeout: 500,
      connectTimeout: 300,
      reconnect: { baseDelay: 20, maxDelay: 100 },
      healthCheck: { interval: 60_000, timeout: 300, probes: 1, probeDelay: 0 },
      failureDetector: { minNumOfFailures: 2, failureRateThreshold: 0, slidingWindowMs: 1000 },
      commandRetry: { initialDelay: 20 },
      gracePeriod: 1000,
      metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["command", "resiliency"] }),
    });
    await client.connect();
    await allHealthy(client);
    await client.set("x", "0");
    await a.kill();
    await Promise.allSettled(Array.from({ length: 10 }, () => client.incr("x")));
    const switches = await h.points("redis.client.geofailover.failovers");
    assert.equal(total(switches), 1);
    assert.deepEqual(
      switches[0]!.attributes["db.client.geofailover.fail_from"],
      `127.0.0.1:${a.port}`,
    );
    assert.deepEqual(
      switches[0]!.attributes["db.client.geofailover.fail_to"],
      `127.0.0.1:${b.port}`,
    );
    assert.equal(switches[0]!.attributes["db.client.geofailover.reason"], "CIRCUIT_BREAKER");
    // The databases' own clients measured the commands, with their endpoint.
    const on = await h.points(DURATION);
    assert.ok(
      total(on, { "db.operation.name": "INCR", "server.port": b.port }) >= 1,
      JSON.stringify(on.map((p) => p.attributes)),
    );
    assert.equal(total(on, { "db.operation.name": "SET", "server.port": a.port }), 1);
    const breakers = await h.points("redis.client.multidb.circuit_breaker.state");
    assert.deepEqual(
      breakers.map((p) => p.attributes["redis.client.multidb.database"]).sort(),
      [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`].sort(),
    );
    const checks = await h.points("redis.client.multidb.health_checks");
    assert.ok(total(checks) >= 2, "the first health check of each database");
    await client.close();
    await a.restart();
  });
});
