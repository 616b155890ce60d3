/**
 * OpenTelemetry as parts: {@linkcode otelMetrics} and {@linkcode otelTracing} make the values the
 * `metrics` and `tracing` options of every client kind take. The recorder (instruments,
 * attributes, spans: `metrics.ts`) is reached only from here, so a bundle of `@edge/redis` that
 * never imports `@edge/redis/otel` carries none of it.
 *
 * @module
 */

import type { Logger } from "../logger.ts";
import { checkKeys, type KeyTable } from "../_validate.ts";
import {
  checkMetricsOptions,
  checkTracingOptions,
  ClientMetrics,
  type MetricsKind,
  type MetricsOptions,
  type TracingOptions,
} from "./metrics.ts";

/**
 * @internal Makes the recorder of one client from the parts it was given (either may be
 * missing): `undefined` when nothing is to be recorded.
 */
export type OtelRecorderFactory = (
  metrics: MetricsOptions | undefined,
  tracing: TracingOptions | undefined,
  logger: Logger,
  kind: MetricsKind,
) => ClientMetrics | undefined;

/**
 * An OpenTelemetry metrics part: what {@linkcode otelMetrics} returns, passed as the `metrics`
 * option of `RedisClient`, `RedisClusterClient`, `RedisSentinelClient` or `MultiDbClient`. It
 * holds the validated settings only: one part may be given to several clients (instruments are
 * made once per meter provider, whatever the number of clients).
 *
 * @example
 * ```ts ignore
 * import { otelMetrics } from "@edge/redis/otel";
 * const metrics = otelMetrics({ meterProvider, groups: ["command"] });
 * const client = new RedisClient({ url: "redis://127.0.0.1:6379", metrics });
 * ```
 */
export interface MetricsPart {
  /** What the part is: always `"metrics"`. */
  readonly part: "metrics";
  /**
   * @internal The settings.
   * @ignore
   */
  readonly _options: MetricsOptions;
  /**
   * @internal Makes a client's recorder.
   * @ignore
   */
  readonly _recorder: OtelRecorderFactory;
}

/**
 * An OpenTelemetry tracing part: what {@linkcode otelTracing} returns, passed as the `tracing`
 * option of any client kind; may be given to several clients.
 *
 * @example
 * ```ts ignore
 * import { otelTracing } from "@edge/redis/otel";
 * const client = new RedisClient({ tracing: otelTracing({ tracerProvider }) });
 * ```
 */
export interface TracingPart {
  /** What the part is: always `"tracing"`. */
  readonly part: "tracing";
  /**
   * @internal The settings.
   * @ignore
   */
  readonly _options: TracingOptions;
  /**
   * @internal Makes a client's recorder.
   * @ignore
   */
  readonly _recorder: OtelRecorderFactory;
}

const METRICS_OPTION_KEYS: KeyTable<MetricsOptions> = {
  meterProvider: true,
  groups: true,
  includeCommands: true,
  excludeCommands: true,
  hideChannelNames: true,
  buckets: true,
};

const TRACING_OPTION_KEYS: KeyTable<TracingOptions> = { tracerProvider: true, queryText: true };

const recorder: OtelRecorderFactory = (metrics, tracing, logger, kind) =>
  ClientMetrics.create(metrics, logger, kind, tracing);

/**
 * Makes an OpenTelemetry metrics part: the client's instruments under the names the Redis
 * clients share (`db.client.*`, `redis.client.*`), recorded through the `meterProvider` given
 * (structurally typed: no dependency). Pass it as the `metrics` option of any client kind. The
 * options are checked here, once.
 *
 * @param options The `meterProvider` and which groups, commands and buckets to record.
 * @returns The part, for the `metrics` option.
 * @throws {TypeError} No `meterProvider`, an unknown option (with a "Did you mean" hint) or
 *   group, bad command lists or buckets.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { otelMetrics } from "@edge/redis/otel";
 * import { MeterProvider } from "@opentelemetry/sdk-metrics";
 * const meterProvider = new MeterProvider({ readers: [] });
 * await using client = new RedisClient({
 *   url: "redis://127.0.0.1:6379",
 *   metrics: otelMetrics({ meterProvider, groups: ["command", "resiliency"] }),
 * });
 * ```
 */
export function otelMetrics(options: MetricsOptions): MetricsPart {
  if (typeof options === "object" && options !== null && !Array.isArray(options)) {
    checkKeys(options, METRICS_OPTION_KEYS, "metrics");
  }
  const o = checkMetricsOptions(options);
  return Object.freeze({ part: "metrics", _options: o, _recorder: recorder });
}

/**
 * Makes an OpenTelemetry tracing part: a client span per command or batch (`db.operation.name`;
 * `db.query.text` only with `queryText`, never argument values), and the client's events as span
 * events, through the `tracerProvider` given. Pass it as the `tracing` option of any client kind.
 *
 * @param options The `tracerProvider`, and whether spans carry the query text.
 * @returns The part, for the `tracing` option.
 * @throws {TypeError} No `tracerProvider`, or an unknown option (with a "Did you mean" hint).
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { otelTracing } from "@edge/redis/otel";
 * import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
 * await using client = new RedisClient({
 *   tracing: otelTracing({ tracerProvider: new BasicTracerProvider() }),
 * });
 * ```
 */
export function otelTracing(options: TracingOptions): TracingPart {
  if (typeof options === "object" && options !== null && !Array.isArray(options)) {
    checkKeys(options, TRACING_OPTION_KEYS, "tracing");
  }
  const o = checkTracingOptions(options);
  return Object.freeze({ part: "tracing", _options: o, _recorder: recorder });
}
