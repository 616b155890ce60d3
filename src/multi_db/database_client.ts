/**
 * What the multi-database client needs of the client of one database, and the factory that
 * creates it: a `RedisClient` for a database given by `url` (or `host`/`port`). The factory is
 * an option, so any client with this shape can serve as a database.
 *
 * @module
 */

import type { AddListenerOptions, ListenerOptions, TypedEventListener } from "../client/events.ts";
import type { Endpoint } from "../endpoint.ts";
import { RedisClient, type SendCommandOptions, type WatchSession } from "../client/redis_client.ts";
import { RedisClusterClient } from "../cluster/cluster_client.ts";
import type { RedisClientOptions } from "../client/options.ts";
import type { ClientMaintenanceState } from "../client/maintenance_support.ts";
import type { PubSubListener } from "../client/subscription.ts";
import type { CacheStats } from "../cache/cache_store.ts";
import type { Transform } from "../commands/command_runner.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";

/**
 * A subscription made on one database's client: the multi-database client only ends it.
 *
 * @example
 * ```ts
 * import type { DatabaseSubscription } from "@edge/redis/multi-db";
 * const none: DatabaseSubscription = { unsubscribe: () => Promise.resolve() };
 * ```
 */
export interface DatabaseSubscription {
  /** Ends the subscription. */
  unsubscribe(): Promise<void>;
}

/**
 * A transaction of one database's client, as the multi-database client replays one on it.
 *
 * @example
 * ```ts
 * import type { DatabaseTransaction } from "@edge/redis/multi-db";
 * const run = (tx: DatabaseTransaction) => tx.exec();
 * ```
 */
export interface DatabaseTransaction {
  /** Records one command. */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown;
  /** Runs `MULTI`, the commands, `EXEC`. */
  exec(): Promise<unknown[] | null>;
  /** Adds flags to every command of the transaction (`FLAG_BINARY` for a binary view's). */
  _withFlags?(flags: number): unknown;
}

/**
 * The subscribe family of a database client's binary view (`client.binary()`): messages as
 * `Uint8Array`.
 *
 * @example
 * ```ts ignore
 * import type { BinarySubscriber } from "@edge/redis/multi-db";
 * const b: BinarySubscriber = new RedisClient().binary();
 * ```
 */
export interface BinarySubscriber {
  /** Subscribes to channels, messages as bytes. */
  subscribe(
    names: string | string[],
    listener?: PubSubListener<Uint8Array>,
  ): Promise<DatabaseSubscription>;
  /** Subscribes to patterns, messages as bytes. */
  psubscribe(
    names: string | string[],
    listener?: PubSubListener<Uint8Array>,
  ): Promise<DatabaseSubscription>;
  /** Subscribes to shard channels, messages as bytes. */
  ssubscribe(
    names: string | string[],
    listener?: PubSubListener<Uint8Array>,
  ): Promise<DatabaseSubscription>;
}

/**
 * The client of one database, as the multi-database client uses it. `RedisClient` has this
 * shape.
 *
 * @example
 * ```ts
 * import type { DatabaseClient } from "@edge/redis/multi-db";
 * import { RedisClient } from "@edge/redis";
 * const client: DatabaseClient = new RedisClient({ url: "redis://127.0.0.1:6379" });
 * await client.close();
 * ```
 */
export interface DatabaseClient {
  /** Runs one typed command (see `RedisCommands`). */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown>;
  /** Sends any command, raw reply. */
  sendCommand(args: RedisArgument[], options?: SendCommandOptions): Promise<RespValue>;
  /** Starts a transaction. */
  multi(): DatabaseTransaction;
  /** Starts a WATCH session. */
  watch(...keys: RedisArgument[]): Promise<WatchSession>;
  /** Subscribes to channels. */
  subscribe(names: string | string[], listener?: PubSubListener): Promise<DatabaseSubscription>;
  /** Subscribes to patterns. */
  psubscribe(names: string | string[], listener?: PubSubListener): Promise<DatabaseSubscription>;
  /** Subscribes to shard channels. */
  ssubscribe(names: string | string[], listener?: PubSubListener): Promise<DatabaseSubscription>;
  /** The maintenance state, when the client handles maintenance notifications. */
  maintenanceState?(): ClientMaintenanceState | undefined;
  /** Drops what a client-side cache holds, when the client has one. */
  invalidateCache?(): void;
  /** The counters of the client-side cache, if it has one. */
  cacheStats?(): CacheStats | undefined;
  /** The binary view, for subscriptions whose messages are bytes. */
  binary?(): BinarySubscriber;
  /** Closes every connection. */
  close(): Promise<void>;
  /** Listens to the client's events (`maintenance`, `handoff`, ...). */
  addEventListener(
    type: string,
    listener: TypedEventListener<Event> | null,
    options?: boolean | AddListenerOptions,
  ): void;
  /** Stops listening. */
  removeEventListener(
    type: string,
    listener: TypedEventListener<Event> | null,
    options?: boolean | ListenerOptions,
  ): void;
}

/**
 * The options a database's client is created with: the top-level client options with the
 * database's own on top, and `nodes` for a cluster database.
 *
 * @example
 * ```ts
 * import type { DatabaseClientOptions } from "@edge/redis/multi-db";
 * const o: DatabaseClientOptions = { url: "redis://127.0.0.1:6379", commandTimeout: 1000 };
 * ```
 */
export interface DatabaseClientOptions extends RedisClientOptions {
  /** Seed nodes of a cluster database (`redis://host:port`, `host:port` or `{ host, port }`). */
  nodes?: (string | Endpoint)[];
}

/**
 * Creates the client of one database.
 *
 * @example
 * ```ts
 * import type { DatabaseClientFactory } from "@edge/redis/multi-db";
 * import { RedisClient } from "@edge/redis";
 * const factory: DatabaseClientFactory = (options) => new RedisClient(options);
 * ```
 */
export type DatabaseClientFactory = (options: DatabaseClientOptions) => DatabaseClient;

/**
 * The default factory: a `RedisClusterClient` for a database given by `nodes` (OSS cluster
 * failover), a `RedisClient` for one given by `url` or `host`/`port`.
 *
 * @param options The merged options of the database.
 * @returns The client.
 *
 * @example
 * ```ts
 * import { createDatabaseClient } from "@edge/redis/multi-db";
 * const client = createDatabaseClient({ url: "redis://127.0.0.1:6379" });
 * await client.close();
 * ```
 */
export function createDatabaseClient(options: DatabaseClientOptions): DatabaseClient {
  if (options.nodes !== undefined) {
    const { nodes, url: _url, host: _host, port: _port, db, ...rest } = options;
    if (db !== undefined && db !== 0) {
      throw new TypeError(`Cannot use database ${db} of a cluster: a cluster has only database 0`);
    }
    return new RedisClusterClient({ ...rest, nodes });
  }
  return new RedisClient(options);
}
