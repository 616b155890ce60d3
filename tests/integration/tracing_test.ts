// OpenTelemetry traces read back through the real SDK (@opentelemetry/sdk-trace-base, test-only)
// from real redis-server processes: a span per command or batch, on the database conventions;
// no argument value unless asked; maintenance as span events.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { otelTracing } from "../../src/observability/mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { waitFor } from "../_helpers/load.ts";
import { eachHarness, tracesHarness } from "../_helpers/otel.ts";

type Harness = Awaited<ReturnType<typeof tracesHarness>>;

describe("tracing", () => {
  let server: RedisServer;
  let t: Harness;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });
  eachHarness(tracesHarness, (x) => t = x);

  it("a client span per command and per batch; no argument values by default", async () => {
    const client = new RedisClient({
      url: server.url,
      tracing: otelTracing({ tracerProvider: t.tracerProvider }),
    });
    await client.set("secret-key", "secret-value");
    await client.get("secret-key");
    await client.pipeline().get("a").get("b").exec();
    await client.multi().incr("n").exec();
    await assert.rejects(client.sendCommand(["HGET", "secret-key", "f"]));
    const spans = t.spans();
    assert.deepEqual(spans.map((s) => s.name), ["SET", "GET", "PIPELINE", "MULTI", "HGET"]);
    for (const s of spans) {
      assert.equal(s.kind, 2); // client
      assert.equal(s.attributes["db.system.name"], "redis");
      assert.equal(s.attributes["db.operation.name"], s.name);
      assert.equal(s.attributes["server.port"], server.port);
      assert.equal(s.attributes["db.query.text"], undefined);
      assert.doesNotMatch(JSON.stringify(s), /secret/);
    }
    assert.equal(spans[2]!.attributes["db.operation.batch.size"], 2);
    const failed = spans[4]!;
    assert.equal(failed.status.code, 2); // error
    assert.equal(failed.attributes["error.type"], "WRONGTYPE");
    assert.equal(failed.attributes["db.response.status_code"], "WRONGTYPE");
    await client.close();
  });

  it("queryText: the command with every argument replaced by ?", async () => {
    const client = new RedisClient({
      url: server.url,
      tracing: otelTracing({ tracerProvider: t.tracerProvider, queryText: true }),
    });
    await client.set("k", "v", { ex: 10 });
    assert.equal(t.spans()[0]!.attributes["db.query.text"], "SET ? ? ? ?");
    await client.close();
  });

  it("a tracer that throws never breaks a command (one warning); a bad provider is a TypeError", async () => {
    const seen: string[] = [];
    const noop = () => {};
    const broken = () => {
      throw new Error("span failed");
    };
    const client = new RedisClient({
      url: server.url,
      logger: { debug: noop, info: noop, warn: (m: string) => seen.push(m), error: noop },
      tracing: otelTracing({ tracerProvider: { getTracer: () => ({ startSpan: broken }) } }),
    });
    for (let i = 0; i < 3; i++) await client.set("t", String(i));
    assert.equal(await client.get("t"), "2");
    assert.equal(seen.length, 1);
    assert.match(seen[0]!, /span failed/);
    await client.close();
    assert.throws(
      // deno-lint-ignore no-explicit-any
      () => new RedisClient({ tracing: otelTracing({ tracerProvider: {} as any }) }),
      /Cannot use tracing: tracerProvider must have a getTracer method/,
    );
    assert.throws(
      () => otelTracing({ tracerProvider: t.tracerProvider, queryTxt: true } as never),
      {
        name: "TypeError",
        message: "Cannot use the option `queryTxt` of tracing: no such option. Did you mean " +
          "`queryText`?",
      },
    );
    assert.throws(
      () => new RedisClient({ tracing: { tracerProvider: t.tracerProvider } as never }),
      {
        name: "TypeError",
        message: "Cannot enable tracing from a plain options object: pass otelTracing({ ... }), " +
          'imported from "@edge/redis/otel"',
      },
    );
  });

  it("MOVING: the maintenance decision and the handoff as span events", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const client = new RedisClient({
      ...sim.endpoint,
      commandTimeout: 1000,
      tracing: otelTracing({ tracerProvider: t.tracerProvider }),
    });
    let handoffs = 0;
    client.addEventListener("handoff", () => handoffs++);
    await client.ping();
    const bind = sim.bind({ time: 1 });
    await waitFor(() => handoffs === 1, 2000, "the handoff");
    await bind;
    const events = t.spans().flatMap((s) => s.events);
    const handoff = events.find((e) => e.name === "redis.client.handoff");
    assert.ok(handoff, JSON.stringify(events));
    assert.match(String(handoff.attributes["redis.client.event.to"]), /:\d+$/);
    assert.ok(events.some((e) => e.name === "redis.client.maintenance"));
    await client.close();
    await sim.close();
  });
});
