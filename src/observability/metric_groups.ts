/**
 * The groups of metric instruments: a list `@edge/redis` exports without the recorder, which
 * comes with the `otelMetrics()` part of `@edge/redis/otel`.
 *
 * @module
 */

/**
 * The groups of instruments, named as the Redis clients name them.
 *
 * @example
 * ```ts
 * import { METRIC_GROUPS } from "@edge/redis";
 * console.log(METRIC_GROUPS.includes("command")); // true
 * ```
 */
export const METRIC_GROUPS = [
  "command",
  "connection-basic",
  "connection-advanced",
  "resiliency",
  "pubsub",
  "streaming",
  "client-side-caching",
] as const;

/** A group of instruments (see {@linkcode METRIC_GROUPS}). */
export type MetricGroup = typeof METRIC_GROUPS[number];
