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

/**
 * A TCP endpoint.
 *
 * @example
 * ```ts
 * import type { Endpoint } from "@edge/redis/testing";
 * const e: Endpoint = { host: "127.0.0.1", port: 6379 };
 * ```
 */
export interface Endpoint {
  /** IP literal or host name (IPv6 without brackets). */
  host: string;
  /** TCP port. */
  port: number;
}

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
export type NotificationType = "MOVING" | "MIGRATING" | "MIGRATED" | "FAILING_OVER" | "FAILED_OVER";

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
