/**
 * The Redis Cluster client of `@edge/redis`: {@linkcode RedisClusterClient}, with the pure
 * pieces it is built from: key hashing ({@linkcode keySlot}, {@linkcode crc16}), topology
 * parsing ({@linkcode parseClusterShards}, {@linkcode parseClusterSlots}) and the view choice
 * between nodes ({@linkcode chooseTopology}).
 *
 * @example
 * ```ts ignore
 * import { RedisClusterClient } from "@edge/redis/cluster";
 *
 * await using cluster = new RedisClusterClient({
 *   nodes: ["redis://127.0.0.1:7000", "redis://127.0.0.1:7001"],
 *   readFrom: "prefer-replica",
 * });
 * cluster.addEventListener("topology", (e) => console.log(e.detail));
 * await cluster.set("{user1}.name", "Ada");
 * const [name, visits] = await cluster.pipeline().get("{user1}.name").incr("{user1}.visits").exec();
 * console.log(await cluster.dbsize()); // the sum over the primaries
 * ```
 *
 * @module
 */

export {
  type ClusterNodeSnapshot,
  type ClusterStats,
  type NodeAddedDetail,
  type NodeRemovedDetail,
  RedisClusterClient,
  type RedisClusterClientEventMap,
  type RedisClusterClientEventName,
  type TopologyEventDetail,
} from "./cluster_client.ts";
export { type ReadFrom, type RedisClusterClientOptions } from "./options.ts";
export { crc16, keySlot, SLOT_COUNT } from "./slot.ts";
export {
  type AddressMapper,
  addressMapper,
  chooseTopology,
  clusterInfoEpoch,
  type ClusterNode,
  type ClusterNodeHealth,
  type ClusterNodeRole,
  type ClusterTopology,
  diffTopology,
  emptyTopology,
  isClusterDisabledError,
  NO_NODE,
  type NodeAddressMap,
  parseClusterShards,
  parseClusterSlots,
  type ParseTopologyOptions,
  patchSlot,
  type TopologyChange,
  topologySignature,
} from "./topology.ts";
export type { HostPort } from "../maintenance/endpoint.ts";
export type { MaintenanceEventDetail, TypedEventListener } from "../client/events.ts";
export type { SlotRange } from "../maintenance/slots.ts";
export type {
  PubSubListener,
  PubSubMessage,
  Subscription,
  SubscriptionKind,
} from "../client/subscription.ts";
export type { ClientSideCacheOptions } from "../cache/options.ts";
export type { ClientSideCachePart } from "../cache/part.ts";
export type { CacheStats } from "../cache/cache_store.ts";
export type { ClientMaintenanceState } from "../client/maintenance_support.ts";
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
export type {
  Batch,
  BatchKind,
  BatchResults,
  ChainedCommand,
  ChainedCommands,
  NextBatch,
  Pipeline,
  PipelineExcluded,
  Transaction,
} from "../client/pipeline.ts";
export type { WatchSession } from "../client/watch_session.ts";
export type { ScanIteratorOptions, SendCommandOptions } from "../client/redis_client.ts";
export type { ClientMaintenanceOptions, RedisClientOptions } from "../client/options.ts";
export type { RedisCommands } from "../commands/commands.ts";
export type * from "../commands/types.ts";
export type { Transform } from "../commands/command_runner.ts";
export type { RedisArgument, RespValue } from "../resp/types.ts";
export type { RedisError, RedisErrorOptions, ReplyError } from "../errors.ts";
export type { Logger } from "../logger.ts";
export type { BackoffOptions } from "../resilience/backoff.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "../transport/types.ts";
