// Type-level tests of the parts (checked by `deno check`, never run): the `clientSideCache`,
// `metrics` and `tracing` options of every kind take the values the factories of
// `@edge/redis/cache` and `@edge/redis/otel` make, and a plain options object (the form of
// earlier versions) does not compile.
import {
  type ClientSideCachePart,
  type MetricsPart,
  type OtelMeterProvider,
  type OtelTracerProvider,
  RedisClient,
  type TracingPart,
} from "../../mod.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { otelMetrics, otelTracing } from "../../src/observability/mod.ts";
import { RedisClusterClient } from "../../src/cluster/mod.ts";
import { RedisSentinelClient } from "../../src/sentinel/mod.ts";
import { MultiDbClient } from "../../src/multi_db/mod.ts";

export function parts(meterProvider: OtelMeterProvider, tracerProvider: OtelTracerProvider): void {
  const cache: ClientSideCachePart = clientSideCache({ maxEntries: 10_000 });
  const metrics: MetricsPart = otelMetrics({ meterProvider, groups: ["command"] });
  const tracing: TracingPart = otelTracing({ tracerProvider });
  const options = { clientSideCache: cache, metrics, tracing };
  new RedisClient({ url: "redis://127.0.0.1:6379", ...options });
  new RedisClient({ clientSideCache: false });
  new RedisClusterClient({ nodes: ["127.0.0.1:7000"], ...options });
  new RedisSentinelClient({ masterName: "m", sentinels: ["127.0.0.1:26379"], ...options });
  new MultiDbClient({ databases: [{ url: "redis://127.0.0.1:6379" }], ...options });
  clientSideCache();

  // @ts-expect-error: the cache's options go to clientSideCache() of "@edge/redis/cache"
  new RedisClient({ clientSideCache: { maxEntries: 10_000 } });
  // @ts-expect-error: `true` for the defaults is clientSideCache() now
  new RedisClient({ clientSideCache: true });
  // @ts-expect-error: the metrics options go to otelMetrics() of "@edge/redis/otel"
  new RedisClient({ metrics: { meterProvider } });
  // @ts-expect-error: the tracing options go to otelTracing() of "@edge/redis/otel"
  new RedisClient({ tracing: { tracerProvider } });
  // @ts-expect-error: a misspelt option of the part
  clientSideCache({ maxEntires: 1 });
}
