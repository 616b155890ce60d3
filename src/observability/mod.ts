/**
 * `@edge/redis/otel`: OpenTelemetry metrics and tracing as parts. {@linkcode otelMetrics} and
 * {@linkcode otelTracing} make the values the `metrics` and `tracing` options of every client
 * kind take; importing this entry is what brings the recorder into a bundle, so `@edge/redis`
 * alone carries none of it. No OpenTelemetry package is a dependency: the providers are typed
 * structurally.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { otelMetrics, otelTracing } from "@edge/redis/otel";
 * await using client = new RedisClient({
 *   url: "redis://127.0.0.1:6379",
 *   metrics: otelMetrics({ meterProvider, groups: ["command"] }),
 *   tracing: otelTracing({ tracerProvider }),
 * });
 * ```
 *
 * @module
 */
export { type MetricsPart, otelMetrics, otelTracing, type TracingPart } from "./part.ts";
export { METRIC_GROUPS, type MetricGroup } from "./metric_groups.ts";
export type { MetricsOptions, TracingOptions } from "./metrics.ts";
export type * from "./otel_types.ts";
