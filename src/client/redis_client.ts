/**
 * The standalone client.
 *
 * @module
 */

import { RedisCommands } from "../commands/commands.ts";
import type { ScoredMember } from "../commands/types.ts";
import { FLAG_BINARY, FLAG_BLOCKING, FLAG_RAW, type Transform } from "../commands/_command.ts";
import { ClosedError } from "../errors.ts";
import { type Logger, silentLogger } from "../logger.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { defaultConnector } from "../transport/default.ts";
import {
  type RedisClientOptions,
  resolveClientOptions,
  type ResolvedClientOptions,
} from "./options.ts";
import { type ClientMaintenanceState, MaintenanceSupport } from "./_maintenance.ts";
import { NodeExecutor, type NodeExecutorOptions } from "./_node.ts";
import { BinaryView } from "./_binary_view.ts";
import { cursorIterator } from "./_cursor.ts";
import { Pipeline, Transaction } from "./pipeline.ts";
import type { PubSubListener, Subscription, SubscriptionKind } from "./subscription.ts";
import { WatchSession } from "./watch_session.ts";
import type { RedisClientEventMap, TypedEventListener } from "./events.ts";
import { ClientSideCache, type CommandExec } from "../cache/client_side_cache.ts";
import type { CacheStats } from "../cache/cache_store.ts";
import type { TrackingSession } from "../cache/tracking_session.ts";

export { WatchSession };

/** @internal How a client kind built on RedisClient changes its executor (the sentinel client). */
export const NODE_OVERRIDES: unique symbol = Symbol("edge-redis.node-overrides");

/** @internal What a client kind built on RedisClient may change in its executor. */
export interface NodeOverrides {
  /** Executor settings replacing the defaults (`resolveEndpoint`, `session`, `onPush`). */
  executor?: Partial<Pick<NodeExecutorOptions, "resolveEndpoint" | "session" | "onPush">>;
  /** Called once with the executor, from the constructor. */
  created?: (node: NodeExecutor) => void;
}

/** Options of `sendCommand`. */
export interface SendCommandOptions {
  /**
   * Reply bulk strings as `Uint8Array`.
   * @default {false}
   */
  binary?: boolean;
  /**
   * The command blocks (run it on an exclusive connection); the value is its block time in ms,
   * 0 for forever.
   */
  blockMs?: number;
  /** Send-to-reply timeout for this command, in ms; 0 = none. Defaults to `commandTimeout`. */
  timeout?: number;
  /**
   * Gives up waiting: the command rejects with the signal's `reason`. A command not yet written
   * is dropped (never sent); one already written keeps its place in the reply stream and its late
   * reply is discarded; a blocking one's exclusive connection is closed.
   */
  signal?: AbortSignal;
}

/** Options of the `scan` family of iterators. */
export interface ScanIteratorOptions {
  /** Only names matching this glob-style pattern. */
  match?: string;
  /** A hint of how many to fetch per round trip. */
  count?: number;
  /** Only keys of this type (`scan` only). */
  type?: string;
}

/** Names of the client's events (the keys of {@linkcode RedisClientEventMap}). */
export type RedisClientEventName = keyof RedisClientEventMap;

/**
 * A Redis client for one standalone server (or one proxy endpoint). All typed command
 * methods share one multiplexed connection with automatic pipelining; blocking commands and
 * `WATCH` sessions use a small pool of exclusive connections.
 *
 * Events (`addEventListener`): `connect`, `ready`, `reconnecting`, `error`, `close`, and with
 * maintenance notifications `maintenance` and `handoff`; each a `CustomEvent` with a `detail`,
 * typed by {@linkcode RedisClientEventMap}.
 *
 * @typeParam Events The event map: {@linkcode RedisClientEventMap}, or the extension of it of a
 *   client kind built on this one.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * await using client = new RedisClient({ url: "redis://127.0.0.1:6379" });
 * await client.set("greeting", "hello", { ex: 60 });
 * console.log(await client.get("greeting")); // "hello"
 * const [a, b] = await client.pipeline().incr("n").incr("n").exec();
 * ```
 */
export class RedisClient<Events extends RedisClientEventMap = RedisClientEventMap>
  extends RedisCommands<string>
  implements AsyncDisposable, EventTarget {
  readonly #o: ResolvedClientOptions;
  readonly #logger: Logger;
  readonly #events = new EventTarget();
  readonly #node: NodeExecutor;
  readonly #maintenance: MaintenanceSupport | undefined;
  readonly #cache: ClientSideCache | undefined;
  readonly #tracking: TrackingSession | undefined;
  readonly #exec: CommandExec;
  #binary: BinaryView | undefined;
  #closing: Promise<void> | undefined;

  /**
   * Creates a client. It connects lazily on the first command, or on `connect()`.
   *
   * @param options The options; defaults connect to `redis://127.0.0.1:6379`.
   */
  constructor(options: RedisClientOptions = {}) {
    super();
    this.#o = resolveClientOptions(options);
    this.#logger = options.logger ?? silentLogger;
    const mode = options.maintenanceNotifications?.mode ?? "auto";
    if (mode === "enabled" && this.#o.protocol !== 3) {
      throw new TypeError(
        'Cannot enable maintenance notifications with protocol 2: they need RESP3 (set protocol: 3 or mode: "auto")',
      );
    }
    this.#maintenance = mode !== "disabled" && this.#o.protocol === 3
      ? new MaintenanceSupport(options.maintenanceNotifications ?? {}, {
        logger: this.#logger,
        emit: (name, detail) => this.#emit(name, detail),
      })
      : undefined;
    const overrides = (options as { [NODE_OVERRIDES]?: NodeOverrides })[NODE_OVERRIDES];
    const cacheOptions = this.#o.clientSideCache;
    this.#cache = cacheOptions
      ? new ClientSideCache(cacheOptions, { logger: this.#logger })
      : undefined;
    this.#tracking = this.#cache?.tracking(this.#o.protocol);
    this.#node = new NodeExecutor({
      endpoint: { host: this.#o.host, port: this.#o.port },
      settings: this.#o,
      connector: options.connector ?? defaultConnector,
      logger: this.#logger,
      maintenance: this.#maintenance,
      emit: (name, detail) => this.#emit(name, detail),
      onListenerError: (error) => this.#emit("error", error),
      ...overrides?.executor,
      ...this.#tracking?.executorHooks(overrides?.executor),
    });
    this.#tracking?.attach(this.#node);
    const node = this.#node;
    this.#exec = (args, transform, flags, blockMs) => node.run(args, transform, flags, blockMs);
    overrides?.created?.(this.#node);
  }

  #emit(name: RedisClientEventName, detail: unknown): void {
    this.#events.dispatchEvent(new CustomEvent(name, { detail }));
  }

  /**
   * The maintenance state: open windows, relaxed connections and their effective timeouts.
   *
   * @returns A snapshot, or `undefined` when maintenance notifications are disabled.
   *
   * @example
   * ```ts ignore
   * const state = client.maintenanceState();
   * console.log(state?.endpoints); // open MOVING windows
   * ```
   */
  maintenanceState(): ClientMaintenanceState | undefined {
    return this.#maintenance?.snapshot(this.#o.commandTimeout);
  }

  /**
   * The counters of the client-side cache (`clientSideCache` option).
   *
   * @returns Hits, misses, entries, estimated bytes, evictions, invalidations and flushes, or
   *   `undefined` when the cache is off.
   *
   * @example
   * ```ts ignore
   * const client = new RedisClient({ clientSideCache: { maxEntries: 10_000 } });
   * await client.get("k"); // from the server
   * await client.get("k"); // from memory
   * console.log(client.cacheStats()); // { hits: 1, misses: 1, entries: 1, ... }
   * ```
   */
  cacheStats(): CacheStats | undefined {
    return this.#cache?.stats();
  }

  /**
   * Drops every reply of the client-side cache (nothing when the cache is off). The client
   * does this by itself whenever a connection is lost or replaced.
   *
   * @example
   * ```ts ignore
   * client.invalidateCache();
   * ```
   */
  invalidateCache(): void {
    this.#cache?.invalidateAll();
  }

  /** @internal Runs one command (the typed methods call this). */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    const cache = this.#cache;
    if (cache === undefined || this.#node.closed) {
      return this.#node.run(args, transform, flags, blockMs);
    }
    return cache.run(args, transform, flags, blockMs, this.#exec);
  }

  /**
   * Connects now instead of on the first command.
   *
   * @param options `signal` gives up the attempt (its dial included): `connect()` then rejects
   *   with a `ConnectionError` whose `cause` is the signal's reason; the client stays usable.
   * @returns Resolves when the connection is ready; rejects with a `ConnectionError` or `TimeoutError`.
   *
   * @example
   * ```ts ignore
   * await client.connect({ signal: AbortSignal.timeout(1_000) });
   * ```
   */
  connect(options?: { signal?: AbortSignal }): Promise<void> {
    return this.#node.connect(options);
  }

  /**
   * Sends any command and returns its raw reply (see `RespValue`).
   *
   * Commands that would change the shared connection for every caller (`SUBSCRIBE`, `MULTI`,
   * `WATCH`, `SELECT`, `HELLO`, `AUTH`, `CLIENT REPLY`, ...) are refused with a `TypeError`
   * naming the API to use instead, here as in pipelines and transactions.
   *
   * @param args The command and its arguments, e.g. `["INFO", "server"]`.
   * @param options Binary replies, blocking, timeout.
   * @returns The raw reply.
   *
   * @example
   * ```ts ignore
   * const info = await client.sendCommand(["INFO", "server"]);
   * ```
   */
  sendCommand(args: RedisArgument[], options: SendCommandOptions = {}): Promise<RespValue> {
    if (!Array.isArray(args) || args.length === 0) {
      return Promise.reject(new TypeError("Cannot send an empty command"));
    }
    // FLAG_RAW: the connection refuses commands that would change its state for every caller.
    const flags = FLAG_RAW | (options.binary ? FLAG_BINARY : 0) |
      (options.blockMs !== undefined ? FLAG_BLOCKING : 0);
    if (this.#node.closed) {
      return Promise.reject(
        new ClosedError("Cannot send the command: the client is closed", { written: false }),
      );
    }
    if (this.#cache !== undefined) {
      return this.#cache.run(
        args,
        undefined,
        flags,
        options.blockMs,
        (a, t, f, b) =>
          b !== undefined
            ? this.#node.runExclusive(a, t, f, b, options.signal)
            : this.#node.run(a, t, f, undefined, options.timeout, options.signal),
      ) as Promise<RespValue>;
    }
    const { blockMs, timeout, signal } = options;
    const reply = blockMs !== undefined
      ? this.#node.runExclusive(args, undefined, flags, blockMs, signal)
      : this.#node.run(args, undefined, flags, undefined, timeout, signal);
    return reply as Promise<RespValue>;
  }

  /**
   * A view of this client whose commands reply bulk strings as `Uint8Array`: the typed
   * commands, `pipeline()`, `multi()`, the scan iterators and the subscribe family (messages as
   * `Uint8Array`).
   *
   * @returns The binary view (shares the client's connections).
   *
   * @example
   * ```ts ignore
   * const bytes: Uint8Array | null = await client.binary().get("image");
   * ```
   */
  binary(): BinaryView {
    return this.#binary ??= new BinaryView(
      (args, transform, flags, blockMs) => this._run(args, transform, flags, blockMs),
      {
        pipeline: () => this.pipeline(),
        multi: () => this.multi(),
        subscribeBinary: (kind, names, listener) =>
          this.#node.subscribe(kind, names, listener, this.#o.maxBufferedMessages, true),
      },
    );
  }

  /**
   * Starts a pipeline: commands sent together by `exec()`, results as values.
   *
   * @returns A new pipeline.
   */
  pipeline(): Pipeline {
    return new Pipeline((args, transform, flags, blockMs) =>
      this._run(args, transform, flags, blockMs)
    );
  }

  /**
   * Starts a transaction (`MULTI` ... `EXEC`) on the shared connection.
   *
   * @returns A new transaction.
   */
  multi(): Transaction {
    const cache = this.#cache;
    if (cache !== undefined) {
      return new Transaction((cmds) => cache.sendAll(cmds, (c) => this.#node.sendAll(c)));
    }
    return new Transaction((cmds) => this.#node.sendAll(cmds));
  }

  /**
   * Borrows an exclusive connection and `WATCH`es keys on it. The session never reconnects:
   * if its connection is lost, its commands and `exec()` reject with `ConnectionError`.
   *
   * @param keys The keys to watch.
   * @returns A session for reads and the transaction.
   */
  watch(...keys: RedisArgument[]): Promise<WatchSession> {
    return this.#node.watch(keys);
  }

  #subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener?: PubSubListener,
  ): Promise<Subscription> {
    return this.#node.subscribe(kind, names, listener, this.#o.maxBufferedMessages);
  }

  /**
   * Subscribes to channels. On RESP3 the shared connection keeps serving commands.
   *
   * @param channels One channel or several.
   * @param listener Called per message; without it, iterate the subscription.
   * @returns The subscription, once the server confirmed it.
   *
   * @example
   * ```ts ignore
   * const sub = await client.subscribe("news", (message, channel) => console.log(channel, message));
   * await sub.unsubscribe();
   * ```
   */
  subscribe(channels: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#subscribe("channel", channels, listener);
  }

  /**
   * Subscribes to glob-style patterns.
   *
   * @param patterns One pattern or several.
   * @param listener Called per message with the matching pattern.
   * @returns The subscription.
   */
  psubscribe(patterns: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#subscribe("pattern", patterns, listener);
  }

  /**
   * Subscribes to shard channels (`SSUBSCRIBE`).
   *
   * @param channels One shard channel or several.
   * @param listener Called per message.
   * @returns The subscription.
   */
  ssubscribe(channels: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#subscribe("shard", channels, listener);
  }

  /**
   * Iterates over every key (SCAN), page by page.
   *
   * @param options Pattern, count hint, type.
   * @returns An async iterator of key names.
   */
  scan(options: ScanIteratorOptions = {}): AsyncIterableIterator<string> {
    return cursorIterator((cursor) => this.scanPage(cursor, options));
  }

  /**
   * Iterates over the fields of a hash (HSCAN).
   *
   * @param key The hash.
   * @param options Pattern, count hint.
   * @returns An async iterator of `[field, value]`.
   */
  hscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<[string, string]> {
    return cursorIterator((cursor) => this.hscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a set (SSCAN).
   *
   * @param key The set.
   * @param options Pattern, count hint.
   * @returns An async iterator of members.
   */
  sscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<string> {
    return cursorIterator((cursor) => this.sscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a sorted set with their scores (ZSCAN).
   *
   * @param key The sorted set.
   * @param options Pattern, count hint.
   * @returns An async iterator of `{ member, score }`.
   */
  zscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<ScoredMember> {
    return cursorIterator((cursor) => this.zscanPage(key, cursor, options));
  }

  /**
   * Closes the client: new commands are refused, queued and in-flight ones complete (each
   * connection waits at most `closeTimeout` ms, then is destroyed), then every connection closes.
   * Subscriptions end. Concurrent calls return the same promise.
   *
   * @returns Resolves when every socket and timer is closed.
   */
  close(): Promise<void> {
    return this.#closing ??= this.#finish(this.#node.close());
  }

  /**
   * Closes at once: every queued and in-flight command rejects with `ClosedError`, every
   * socket is closed without waiting for replies.
   *
   * @returns Resolves when every socket and timer is closed.
   *
   * @example
   * ```ts ignore
   * client.destroy(); // e.g. in a signal handler
   * ```
   */
  destroy(): Promise<void> {
    if (this.#closing) {
      this.#node.destroy();
      return this.#closing;
    }
    this.#node.destroy();
    return this.#closing = this.#finish(this.#node.close());
  }

  async #finish(closed: Promise<void>): Promise<void> {
    this.#maintenance?.close();
    this.#tracking?.close();
    await closed;
    this.#maintenance?.close();
    this.#emit("close", undefined);
  }

  /** Closes the client: `await using client = new RedisClient()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Adds an event listener (`connect`, `ready`, `reconnecting`, `error`, `close`, `maintenance`,
   * `handoff`). Typed by the client's event map ({@linkcode RedisClientEventMap}, extended by
   * client kinds built on this one): the listener gets the event's `CustomEvent` with its
   * `detail`, and an unknown event name does not compile.
   *
   * @param type The event name.
   * @param listener The listener.
   * @param options Standard listener options.
   *
   * @example
   * ```ts ignore
   * client.addEventListener("handoff", (e) => console.log(`moved to ${e.detail.to.host}`));
   * ```
   */
  addEventListener<K extends keyof Events & string>(
    type: K,
    listener: TypedEventListener<Extract<Events[K], Event>> | null,
    options?: boolean | AddEventListenerOptions,
  ): void {
    this.#events.addEventListener(type, listener as EventListenerOrEventListenerObject, options);
  }

  /**
   * Removes an event listener.
   *
   * @param type The event name.
   * @param listener The listener.
   * @param options Standard listener options.
   */
  removeEventListener<K extends keyof Events & string>(
    type: K,
    listener: TypedEventListener<Extract<Events[K], Event>> | null,
    options?: boolean | EventListenerOptions,
  ): void {
    this.#events.removeEventListener(
      type,
      listener as EventListenerOrEventListenerObject,
      options,
    );
  }

  /**
   * Dispatches an event to the client's listeners.
   *
   * @param event The event.
   * @returns `false` if a listener cancelled it.
   */
  dispatchEvent(event: Event): boolean {
    return this.#events.dispatchEvent(event);
  }
}
