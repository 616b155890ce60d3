/**
 * `MultiDbClient`: client-side geographic failover over several equivalent databases, with
 * a circuit breaker per database, health checks (PING, lag-aware, custom), failback by weight,
 * pub/sub failover and maintenance-aware switching.
 *
 * @example
 * ```ts ignore
 * import { MultiDbClient } from "@edge/redis/multi-db";
 * await using client = new MultiDbClient({
 *   databases: [
 *     { url: "redis://east.example.com:6379", weight: 1 },
 *     { url: "redis://west.example.com:6379", weight: 0.5 },
 *   ],
 *   commandTimeout: 2000,
 * });
 * client.addEventListener("switch", (e) => console.log(e.detail));
 * await client.incr("visits");
 * ```
 *
 * @module
 */

export {
  type DatabaseEventDetail,
  type HealthEventDetail,
  MultiDbClient,
  type MultiDbClientEventMap,
  type MultiDbEventListener,
  type MultiDbScanOptions,
  type SwitchEventDetail,
} from "./multi_db_client.ts";
export {
  type CommandRetryOptions,
  type DatabaseConfig,
  type DatabaseHealthCheck,
  type FailureDetectorOptions,
  type HealthCheckOptions,
  type InitializationPolicy,
  MULTI_DB_DEFAULTS,
  type MultiDbClientOptions,
  type MultiDbClock,
  type SwitchReason,
} from "./config.ts";
export {
  type BinarySubscriber,
  createDatabaseClient,
  type DatabaseClient,
  type DatabaseClientFactory,
  type DatabaseClientOptions,
  type DatabaseSubscription,
  type DatabaseTransaction,
} from "./database_client.ts";
export type { DatabaseHealth, DatabaseInfo } from "./database.ts";
export {
  type HealthCheckPolicy,
  type HealthCheckResult,
  type HealthCheckStrategy,
  type HealthCheckTarget,
  healthPolicyDecision,
  pingHealthCheck,
  type ProbeSettings,
} from "./health_check.ts";
export { lagAwareHealthCheck, type LagAwareHealthCheckOptions } from "./lag_aware_health_check.ts";
export { FailureDetector, type FailureOutcome } from "./failure_detector.ts";
export { type FailoverCandidate, selectFailbackTarget, selectFailoverTarget } from "./failover.ts";
export { commandRetryDelay, wasNotWritten } from "./command_executor.ts";
export type { MultiDbPipeline, MultiDbTransaction } from "./pipeline.ts";
export { MultiDbSubscription } from "./subscription.ts";
export { PermanentlyUnavailableError, TemporarilyUnavailableError } from "./errors.ts";
export {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
} from "../resilience/circuit_breaker.ts";
export { CircuitOpenError } from "../errors.ts";
export type { PubSubListener, PubSubMessage } from "../client/subscription.ts";
export type { Clock } from "../_clock.ts";
export type { CircuitMetrics, CircuitStateChange } from "../resilience/circuit_breaker.ts";
export type { ConnectionError, RedisError, RedisErrorOptions, ReplyError } from "../errors.ts";
export type { RedisClientOptions } from "../client/options.ts";
export type { SendCommandOptions, WatchSession } from "../client/redis_client.ts";
export type { ClientMaintenanceState } from "../client/maintenance_support.ts";
export type { Pipeline, Transaction } from "../client/pipeline.ts";
export type { SubscriptionKind } from "../client/subscription.ts";
export type { RedisCommands } from "../commands/commands.ts";
export type { ScoredMember } from "../commands/types.ts";
export type { Transform } from "../commands/command_runner.ts";
export type { Logger } from "../logger.ts";
export type { RedisArgument, RespValue } from "../resp/types.ts";
export type * from "../commands/types.ts";
export type {
  ConnectionSnapshot,
  ConnectionWindowSnapshot,
  EndpointWindowSnapshot,
  MaintenanceSnapshot,
} from "../maintenance/snapshot.ts";
export type {
  EndpointType,
  MaintenanceMode,
  ResolvedMaintenanceOptions,
} from "../maintenance/options.ts";
export type { Endpoint } from "../endpoint.ts";
export type { HostPort } from "../maintenance/endpoint.ts";
export type {
  Batch,
  BatchKind,
  BatchResults,
  ChainedCommand,
  ChainedCommands,
  NextBatch,
  PipelineExcluded,
} from "../client/pipeline.ts";
export type { ClientSideCacheOptions } from "../cache/options.ts";
export type { ClientSideCachePart } from "../cache/part.ts";
export type { ClientMaintenanceOptions } from "../client/options.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "../transport/types.ts";
export type { BackoffOptions } from "../resilience/backoff.ts";
