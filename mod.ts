/**
 * `@edge/redis`: a Redis client for Deno and Bun on the runtime's raw sockets, with no
 * dependencies. This entry has the standalone {@linkcode RedisClient}, the error classes and
 * the shared types.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * await using client = new RedisClient({ url: "redis://127.0.0.1:6379" });
 * await client.set("k", "v");
 * console.log(await client.get("k")); // "v"
 * ```
 *
 * @module
 */
export * from "./src/errors.ts";
export {
  RedisClient,
  type RedisClientEventName,
  type ScanIteratorOptions,
  type SendCommandOptions,
  WatchSession,
} from "./src/client/redis_client.ts";
export type { BinaryView, BinaryViewHost } from "./src/client/_binary_view.ts";
export {
  type ClientCore,
  ClientEvents,
  ClientShell,
  type GroupCommand,
} from "./src/client/client_shell.ts";
export type {
  AddListenerOptions,
  HandoffDetail,
  ListenerOptions,
  MaintenanceEventDetail,
  ReconnectingDetail,
  RedisClientEventMap,
  TypedEventListener,
} from "./src/client/events.ts";
export {
  type ClientMaintenanceOptions,
  parseRedisUrl,
  type RedisClientOptions,
} from "./src/client/options.ts";
export {
  Batch,
  type BatchKind,
  type BatchResults,
  type ChainedCommand,
  type ChainedCommands,
  type NextBatch,
  Pipeline,
  type PipelineExcluded,
  type QueuedCommand,
  Transaction,
} from "./src/client/pipeline.ts";
export type { ClientMaintenanceState } from "./src/client/maintenance_support.ts";
export type { ClientSideCacheOptions } from "./src/cache/options.ts";
export type { ClientSideCachePart } from "./src/cache/part.ts";
export type { CacheStats } from "./src/cache/cache_store.ts";
export { METRIC_GROUPS, type MetricGroup } from "./src/observability/metric_groups.ts";
export type { MetricsOptions, TracingOptions } from "./src/observability/metrics.ts";
export type { MetricsPart, TracingPart } from "./src/observability/part.ts";
export type * from "./src/observability/otel_types.ts";
export type {
  ConnectionSnapshot,
  ConnectionWindowSnapshot,
  EndpointWindowSnapshot,
  MaintenanceSnapshot,
} from "./src/maintenance/snapshot.ts";
export type { ResolvedMaintenanceOptions } from "./src/maintenance/options.ts";
export type { EndpointType, MaintenanceMode } from "./src/maintenance/options.ts";
export type { Endpoint } from "./src/endpoint.ts";
export type { HostPort } from "./src/maintenance/endpoint.ts";
export {
  type PubSubListener,
  type PubSubMessage,
  Subscription,
  type SubscriptionKind,
} from "./src/client/subscription.ts";
export { RedisCommands } from "./src/commands/commands.ts";
export type * from "./src/commands/types.ts";
export type { Transform } from "./src/commands/command_runner.ts";
export { type Logger, silentLogger } from "./src/logger.ts";
export { backoffDelay, type BackoffOptions } from "./src/resilience/backoff.ts";
export type { RedisArgument, RespValue } from "./src/resp/types.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./src/transport/types.ts";
