/**
 * Option and result types of the {@linkcode MaintenanceSimulator}.
 *
 * @module
 */

import type { Connector } from "../transport/types.ts";
import type { ListenFunction, ListenTlsOptions } from "../transport/listen.ts";
import type { NotificationStyle } from "./_notifications.ts";
import type { RestMockOptions } from "./rest_mock.ts";

export type { NotificationStyle };

import type { Endpoint as ClientEndpoint } from "../endpoint.ts";

/**
 * A TCP endpoint.
 *
 * @example
 * ```ts
 * import type { Endpoint } from "@edge/redis/testing";
 * const e: Endpoint = { host: "127.0.0.1", port: 6379 };
 * ```
 */
export type Endpoint = ClientEndpoint;

/**
 * Options of {@linkcode MaintenanceSimulator.start}.
 *
 * @example
 * ```ts
 * import type { MaintenanceSimulatorOptions } from "@edge/redis/testing";
 * const options: MaintenanceSimulatorOptions = {
 *   upstream: "127.0.0.1:6379",
 *   listen: { host: "127.0.0.1", port: 16379 },
 *   http: "127.0.0.1:18080",
 *   rejectMaintNotifications: false,
 * };
 * ```
 */
export interface MaintenanceSimulatorOptions {
  /** The redis-server to forward to: `{ host, port }`, `"host:port"` or `"redis://host:port"`. */
  upstream: Endpoint | string;
  /** Where the proxy listens. @default { host: "127.0.0.1", port: 0 } (a free port) */
  listen?: Partial<Endpoint> | string;
  /**
   * Serve the endpoints (the first one and every bind target) over TLS with this certificate;
   * the upstream connections stay plain TCP. Plain TCP when unset.
   */
  tls?: ListenTlsOptions;
  /**
   * Also serve the fault-injector HTTP API and the REST mock here (`port` 0 picks a free one).
   * Off unless given.
   */
  http?: Endpoint | string;
  /**
   * Answer `CLIENT MAINT_NOTIFICATIONS` exactly as open-source Redis does (the command is
   * forwarded to the real server, which rejects it), to test the `auto` and `enabled` modes.
   * @default false
   */
  rejectMaintNotifications?: boolean;
  /** String style of the notification frames. @default "reference" */
  notificationStyle?: NotificationStyle;
  /**
   * Host names written into MOVING for `*-fqdn` endpoint types, by IP.
   * @default { "127.0.0.1": "localhost", "::1": "localhost" } (other addresses are written as they are)
   */
  hostNames?: Record<string, string>;
  /** Opens the upstream connections. @default the runtime's own transport */
  connector?: Connector;
  /** Opens the listening sockets. @default the runtime's own listener */
  listener?: ListenFunction;
  /** The redis-server binary used for replicas (bind with data movement, failover). @default "redis-server" */
  redisServer?: string;
  /** Credentials and identity of the management REST mock. */
  rest?: RestMockOptions;
  /** Receives diagnostics. @default none */
  logger?: { debug(...args: unknown[]): void };
}

/**
 * Options of {@linkcode MaintenanceSimulator.bind}.
 *
 * @example
 * ```ts
 * import type { BindOptions } from "@edge/redis/testing";
 * const rebind: BindOptions = { time: 2, target: "127.0.0.2:16379", dataMovement: true };
 * ```
 */
export interface BindOptions {
  /** Announced window, in seconds; old connections are closed when it ends. @default 15 */
  time?: number;
  /**
   * Where the endpoint moves: `{ host, port }` or `"host:port"`.
   * @default the same port on 127.0.0.2 (when listening on 127.0.0.1), else a free port on the same address
   */
  target?: Endpoint | string;
  /**
   * Move the data too: a second redis-server replicates the current one and is promoted at the
   * end of the window; from then on every connection is served by it.
   * @default false
   */
  dataMovement?: boolean;
  /**
   * Seconds after MOVING from which connections to the old endpoints count as reaching the new
   * place (the DNS name has followed): they get no MOVING and are not closed at the end.
   * @default half of `time`
   */
  dnsDelay?: number;
}

/**
 * What a bind did.
 *
 * @example
 * ```ts
 * import type { BindResult } from "@edge/redis/testing";
 * const show = (r: BindResult) => `MOVING ${r.seq} -> ${r.target.host}:${r.target.port}`;
 * ```
 */
export interface BindResult {
  /** Sequence number of the MOVING notification. */
  seq: number;
  /** The new endpoint. */
  target: Endpoint;
  /** The upstream serving the endpoints after the bind. */
  upstream: Endpoint;
  /** Connections that received the MOVING notification when it was announced. */
  notified: number;
  /** Old connections closed at the end of the window. */
  closed: number;
}

/**
 * Options of {@linkcode MaintenanceSimulator.migrate}.
 *
 * @example
 * ```ts
 * import type { MigrateOptions } from "@edge/redis/testing";
 * const migration: MigrateOptions = { time: 2, shardIds: ["1", "2"], stallMs: 500 };
 * ```
 */
export interface MigrateOptions {
  /** Announced duration, in seconds; MIGRATED follows after it. @default 2 */
  time?: number;
  /** Shard ids written into the notifications (as a JSON array string). @default ["1"] */
  shardIds?: string[];
  /** Hold every reply for this long right after MIGRATING. @default 0 */
  stallMs?: number;
  /** Delay every reply by this much until MIGRATED. @default 0 */
  slowMs?: number;
}

/**
 * What a migration did.
 *
 * @example
 * ```ts
 * import type { MigrateResult } from "@edge/redis/testing";
 * const seqs = (r: MigrateResult) => [r.migratingSeq, r.migratedSeq];
 * ```
 */
export interface MigrateResult {
  /** Sequence number of MIGRATING. */
  migratingSeq: number;
  /** Sequence number of MIGRATED. */
  migratedSeq: number;
  /** Connections that received MIGRATING. */
  notified: number;
}

/**
 * Options of {@linkcode MaintenanceSimulator.failover}.
 *
 * @example
 * ```ts
 * import type { FailoverOptions } from "@edge/redis/testing";
 * const failover: FailoverOptions = { time: 2, shardIds: ["1"] };
 * ```
 */
export interface FailoverOptions {
  /** Announced duration, in seconds, between FAILING_OVER and the promotion. @default 2 */
  time?: number;
  /** Shard ids written into the notifications. @default ["1"] */
  shardIds?: string[];
  /**
   * An existing replica of the current upstream to promote. @default a redis-server spawned
   * for the purpose and synchronised with `REPLICAOF`
   */
  replica?: Endpoint | string;
}

/**
 * What a failover did.
 *
 * @example
 * ```ts
 * import type { FailoverResult } from "@edge/redis/testing";
 * const primary = (r: FailoverResult) => `${r.upstream.host}:${r.upstream.port}`;
 * ```
 */
export interface FailoverResult {
  /** Sequence number of FAILING_OVER. */
  failingOverSeq: number;
  /** Sequence number of FAILED_OVER. */
  failedOverSeq: number;
  /** The promoted server, now the upstream. */
  upstream: Endpoint;
  /** Connections that received FAILING_OVER. */
  notified: number;
}

/**
 * The notification types the simulator sends.
 *
 * @example
 * ```ts
 * import type { NotificationType } from "@edge/redis/testing";
 * const t: NotificationType = "MOVING";
 * ```
 */
export type NotificationType =
  | "MOVING"
  | "MIGRATING"
  | "MIGRATED"
  | "FAILING_OVER"
  | "FAILED_OVER"
  | "SMIGRATING"
  | "SMIGRATED";

/**
 * A notification the simulator announced.
 *
 * @example
 * ```ts
 * import type { NotificationRecord } from "@edge/redis/testing";
 * const line = (e: NotificationRecord) => `${e.type} ${e.seq} to ${e.notified} connections`;
 * ```
 */
export interface NotificationRecord {
  /** The notification type. */
  type: NotificationType;
  /** Its sequence number (shared across types, from 0). */
  seq: number;
  /** The announced time, in seconds (MOVING, MIGRATING, FAILING_OVER). */
  time?: number;
  /** The MOVING target. */
  target?: Endpoint;
  /** The shard ids (MIGRATING ... FAILED_OVER). */
  shardIds?: string[];
  /** The slots as written into SMIGRATING, e.g. `"0-99,5000"`. */
  slots?: string;
  /** The entries of SMIGRATED. */
  entries?: SlotMigrationEntry[];
  /** When it was sent, ms since the epoch. */
  at: number;
  /** How many connections received it when it was announced. */
  notified: number;
}

/**
 * A snapshot of one proxied connection.
 *
 * @example
 * ```ts
 * import type { ConnectionInfo } from "@edge/redis/testing";
 * const ready = (c: ConnectionInfo) => c.optedIn && c.protocol === 3 && c.inFlight === 0;
 * ```
 */
export interface ConnectionInfo {
  /** Connection id, unique within the process. */
  id: number;
  /** The simulator endpoint the client connected to, `host:port`. */
  endpoint: string;
  /** The client's address, `host:port`. */
  remote: string;
  /** Whether the client connected over TLS. */
  tls: boolean;
  /** The redis-server this connection forwards to, `host:port`. */
  upstream: string;
  /** Opted in with `CLIENT MAINT_NOTIFICATIONS ON`. */
  optedIn: boolean;
  /** The endpoint type asked for; `null` for a bare `ON` or when not opted in. */
  endpointType: string | null;
  /** RESP version. */
  protocol: 2 | 3;
  /** Selected database. */
  db: number;
  /** Commands forwarded and not yet answered. */
  inFlight: number;
  /** Bytes received from the client. */
  bytesIn: number;
  /** Bytes sent to the client. */
  bytesOut: number;
  /** MOVED replies forwarded to the client. */
  moved: number;
  /** ASK replies forwarded to the client. */
  ask: number;
  /** Age, in ms. */
  ageMs: number;
}

/**
 * State of an action started through the HTTP API.
 *
 * @example
 * ```ts
 * import type { ActionStatus } from "@edge/redis/testing";
 * const finished = (s: ActionStatus) => s.status === "success" || s.status === "failed";
 * ```
 */
export interface ActionStatus {
  /** Progress: `pending` (queued behind another action), `running`, `success` or `failed`. */
  status: "pending" | "running" | "success" | "failed";
  /** The action's result, when it succeeded. */
  output: unknown;
  /** The error message, when it failed. */
  error: string | null;
}

/**
 * One entry of an SMIGRATED notification: slots that moved from one node to another
 * (addresses as the nodes announce them: the simulator's proxies).
 *
 * @example
 * ```ts
 * import type { SlotMigrationEntry } from "@edge/redis/testing";
 * const e: SlotMigrationEntry = {
 *   source: "127.0.0.1:15379",
 *   destination: "127.0.0.1:15380",
 *   slots: "0-99,5000",
 * };
 * ```
 */
export interface SlotMigrationEntry {
  /** The node that gave the slots away, `host:port`. */
  source: string;
  /** The node that owns them now, `host:port`. */
  destination: string;
  /** The slots, as ranges: `"123,456,789-1000"`. */
  slots: string;
}

/**
 * What a {@linkcode SlotMigrateOptions.effect} does to the cluster.
 *
 * - `remove-add`: every slot of one primary moves to a new node that joins (node replacement);
 *   the old primary is left empty.
 * - `remove`: the slots of one primary are spread over the other primaries; it is left empty.
 * - `add`: a new node joins and takes a share of every primary's slots.
 * - `slot-shuffle`: slots move between the existing primaries.
 *
 * @example
 * ```ts
 * import type { SlotMigrateEffect } from "@edge/redis/testing";
 * const effect: SlotMigrateEffect = "slot-shuffle";
 * ```
 */
export type SlotMigrateEffect = "remove-add" | "remove" | "add" | "slot-shuffle";

/**
 * Options of {@linkcode ClusterMaintenanceSimulator.start}.
 *
 * @example
 * ```ts
 * import type { ClusterSimulatorOptions } from "@edge/redis/testing";
 * const options: ClusterSimulatorOptions = { primaries: 3, http: "127.0.0.1:0" };
 * ```
 */
export interface ClusterSimulatorOptions {
  /** Primaries of the cluster (each gets an equal share of the slots). @default 3 */
  primaries?: number;
  /**
   * Replicas of each primary, behind proxies of their own like every node (their replication
   * links pass through the primaries' proxies as raw streams). @default 0
   */
  replicasPerPrimary?: number;
  /** Address the proxies and the nodes bind (loopback). @default "127.0.0.1" */
  host?: string;
  /** Extra redis-server arguments for every node. */
  args?: string[];
  /** Also serve the fault-injector HTTP API here (`port` 0 picks a free one). Off unless given. */
  http?: Endpoint | string;
  /**
   * Answer `CLIENT MAINT_NOTIFICATIONS` exactly as open-source Redis does (rejected).
   * @default false
   */
  rejectMaintNotifications?: boolean;
  /** String style of the notification frames. @default "reference" */
  notificationStyle?: NotificationStyle;
  /** Opens the upstream connections. @default the runtime's own transport */
  connector?: Connector;
  /** Opens the listening sockets. @default the runtime's own listener */
  listener?: ListenFunction;
  /** The redis-server binary. @default "redis-server" */
  redisServer?: string;
  /** Receives diagnostics. @default none */
  logger?: { debug(...args: unknown[]): void };
}

/**
 * Options of {@linkcode ClusterMaintenanceSimulator.slotMigrate}.
 *
 * @example
 * ```ts
 * import type { SlotMigrateOptions } from "@edge/redis/testing";
 * const move: SlotMigrateOptions = { effect: "slot-shuffle", slots: "0-99", delayMs: 200 };
 * ```
 */
export interface SlotMigrateOptions {
  /** What happens to the cluster. @default "slot-shuffle" */
  effect?: SlotMigrateEffect;
  /**
   * The slots to move: `"0-99,5000"`, a list of slots, or absent for the effect's default
   * (`remove-add` / `remove`: every slot of the last primary; `add`: a quarter of every
   * primary's slots; `slot-shuffle`: 100 slots of each primary to the next one).
   */
  slots?: string | number[];
  /**
   * The destination, as a node index or `host:port` (proxy address), for `slot-shuffle` and
   * `remove`. @default the next primary after each source
   */
  target?: number | string;
  /** Pause between SMIGRATING and the start of the migration. @default 0 */
  delayMs?: number;
  /** Keys per `MIGRATE` batch. @default 100 */
  keysPerBatch?: number;
  /** Pause after each `MIGRATE` batch (clients meet ASK meanwhile). @default 0 */
  pauseBetweenKeysMs?: number;
  /** Pause after the last key moved, before `SETSLOT NODE` (the ASK window). @default 0 */
  finalizeDelayMs?: number;
  /** Which connections get the notifications: every node's, or only sources' and destinations'. @default "all" */
  notify?: "all" | "involved";
  /** Shape of the SMIGRATED entries: `[src, dst, slots]` or the older `[dst, slots]`. @default "triplets" */
  entryShape?: "triplets" | "pairs";
  /**
   * Copies of SMIGRATED each connection gets (faults): 0 plays a lost notification (it is still
   * recorded in `events()`, with `notified: 0`), 2 a duplicate. @default 1
   */
  smigratedCopies?: number;
}

/**
 * What a slot migration did.
 *
 * @example
 * ```ts
 * import type { SlotMigrateResult } from "@edge/redis/testing";
 * const seqs = (r: SlotMigrateResult) => [r.smigratingSeq, r.smigratedSeq];
 * ```
 */
export interface SlotMigrateResult {
  /** Sequence number of SMIGRATING. */
  smigratingSeq: number;
  /** Sequence number of SMIGRATED. */
  smigratedSeq: number;
  /** The SMIGRATED entries (one per source and destination pair). */
  entries: SlotMigrationEntry[];
  /** Keys moved with `MIGRATE`. */
  keys: number;
  /** Connections that received SMIGRATING. */
  notified: number;
  /** The node that joined (`add`, `remove-add`), `host:port`. */
  added: string | null;
  /** Nodes left without slots, `host:port`. */
  emptied: string[];
}

/**
 * One node of the simulated cluster.
 *
 * @example
 * ```ts
 * import type { ClusterNodeInfo } from "@edge/redis/testing";
 * const show = (n: ClusterNodeInfo) => `${n.endpoint.port} -> ${n.upstream.port}: ${n.slots}`;
 * ```
 */
export interface ClusterNodeInfo {
  /** Creation order. */
  index: number;
  /** The node id. */
  id: string;
  /** Its role (as of the last migration or refresh). */
  role: "primary" | "replica";
  /** For a replica: the id of its primary. */
  primaryId: string | null;
  /** The proxy clients connect to, which the node announces. */
  endpoint: Endpoint;
  /** The redis-server behind the proxy. */
  upstream: Endpoint;
  /** Its pid. */
  pid: number;
  /** The slots it owns, as ranges (`""` when empty). */
  slots: string;
  /** Open client connections on its proxy. */
  connections: number;
}

/**
 * A MOVED or ASK reply a proxy forwarded.
 *
 * @example
 * ```ts
 * import type { RedirectInfo } from "@edge/redis/testing";
 * const late = (r: RedirectInfo, since: number) => r.at >= since;
 * ```
 */
export interface RedirectInfo {
  /** The connection that received it. */
  connection: number;
  /** The node proxy, `host:port`. */
  endpoint: string;
  /** `MOVED` or `ASK`. */
  kind: "MOVED" | "ASK";
  /** The slot named in the reply. */
  slot: number;
  /** The address named in the reply. */
  target: string;
  /** When, ms since the epoch. */
  at: number;
}
