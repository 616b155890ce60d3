/**
 * The standalone client.
 *
 * @module
 */

import { RedisCommands } from "../commands/commands.ts";
import type { ScoredMember } from "../commands/types.ts";
import { FLAG_BINARY, FLAG_BLOCKING, type Transform } from "../commands/_command.ts";
import {
  Connection,
  type ConnectionHooks,
  type Endpoint,
  FLAG_SUBSCRIBE,
} from "../connection/connection.ts";
import { ClosedError, TimeoutError } from "../errors.ts";
import { type Logger, silentLogger } from "../logger.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { defaultConnector } from "../transport/default.ts";
import type { Connector } from "../transport/types.ts";
import { LIB_NAME, VERSION } from "../version.ts";
import {
  type RedisClientOptions,
  resolveClientOptions,
  type ResolvedClientOptions,
} from "./options.ts";
import { ExclusivePool } from "./_pool.ts";
import { type ClientMaintenanceState, MaintenanceSupport } from "./_maintenance.ts";
import { Pipeline, Transaction } from "./pipeline.ts";
import {
  type PubSubListener,
  Subscription,
  type SubscriptionKind,
  SubscriptionManager,
} from "./subscription.ts";

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

/** Names of the client's events. */
export type RedisClientEventName =
  | "connect"
  | "ready"
  | "reconnecting"
  | "error"
  | "close"
  | "maintenance"
  | "handoff";

/** Walks a SCAN-family cursor to its end, yielding every page's items. */
async function* cursorIterator<T>(
  page: (cursor: string) => Promise<[string, T[]]>,
): AsyncIterableIterator<T> {
  let cursor = "0";
  do {
    const [next, items] = await page(cursor);
    cursor = next;
    yield* items;
  } while (cursor !== "0");
}

/** Commands that would break the shared connection, and what to use instead. */
const RESERVED: Record<string, string> = {
  SUBSCRIBE: "subscribe()",
  PSUBSCRIBE: "psubscribe()",
  SSUBSCRIBE: "ssubscribe()",
  UNSUBSCRIBE: "the subscription's unsubscribe()",
  PUNSUBSCRIBE: "the subscription's unsubscribe()",
  SUNSUBSCRIBE: "the subscription's unsubscribe()",
  MULTI: "multi()",
  EXEC: "multi().exec()",
  DISCARD: "multi().discard()",
  WATCH: "watch()",
  UNWATCH: "watch() and release()",
  SELECT: "the db option (one client per database)",
  HELLO: "the protocol option",
  AUTH: "the username and password options",
  RESET: "close() and a new client",
  QUIT: "close()",
  MONITOR: "redis-cli monitor",
};

class BinaryView extends RedisCommands<Uint8Array> {
  readonly #client: RedisClient;
  constructor(client: RedisClient) {
    super();
    this.#client = client;
  }
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown {
    return this.#client._run(args, transform, flags | FLAG_BINARY, blockMs);
  }
}

/**
 * A command session on one exclusive connection, for `WATCH` transactions. Commands run on
 * that connection; `multi().exec()` runs the transaction and ends the session (the result is
 * `null` when a watched key changed). End it early with `release()`, or with `await using`.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * const client = new RedisClient();
 * await using tx = await client.watch("counter");
 * const n = Number(await tx.get("counter") ?? 0);
 * const result = await tx.multi().set("counter", n + 1).exec(); // null if "counter" changed
 * ```
 */
export class WatchSession extends RedisCommands<string> implements AsyncDisposable {
  readonly #conn: Connection;
  readonly #release: (c: Connection) => void;
  readonly #blockingTimeout: (flags: number, blockMs: number | undefined) => number | undefined;
  #released = false;

  /** @internal */
  constructor(
    conn: Connection,
    release: (c: Connection) => void,
    blockingTimeout: (flags: number, blockMs: number | undefined) => number | undefined,
  ) {
    super();
    this.#conn = conn;
    this.#release = release;
    this.#blockingTimeout = blockingTimeout;
  }

  /** @internal */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown {
    if (this.#released) {
      return Promise.reject(new ClosedError("Cannot send the command: the WATCH session ended"));
    }
    return this.#conn.send(args, transform, flags, this.#blockingTimeout(flags, blockMs));
  }

  /**
   * Starts the transaction on this session's connection.
   *
   * @returns A transaction; its `exec()` ends the session.
   */
  multi(): Transaction {
    return new Transaction(
      (cmds) =>
        this.#released
          ? cmds.map(() =>
            Promise.reject(new ClosedError("Cannot send the command: the WATCH session ended"))
          )
          : this.#conn.sendAll(cmds),
      () => this.release(),
    );
  }

  /**
   * Sends `UNWATCH` and returns the connection to the pool. Idempotent.
   *
   * @returns Resolves when released.
   */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    try {
      // With a command still unanswered (a timed-out BLPOP), UNWATCH would wait behind it: the
      // pool drops such a connection instead.
      if (!this.#conn.closed && this.#conn.idle) {
        await this.#conn.send(["UNWATCH"], undefined, 0);
      }
    } catch {
      // The connection is broken: the pool drops it.
    }
    this.#release(this.#conn);
  }

  /** Releases the session: `await using tx = await client.watch("k")`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/**
 * A Redis client for one standalone server (or one proxy endpoint). All typed command
 * methods share one multiplexed connection with automatic pipelining; blocking commands and
 * `WATCH` sessions use a small pool of exclusive connections.
 *
 * Events (`addEventListener`): `connect`, `ready`, `reconnecting`, `error`, `close`, and with
 * maintenance notifications `maintenance` and `handoff`; each a `CustomEvent` with a `detail`.
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
export class RedisClient extends RedisCommands<string> implements AsyncDisposable, EventTarget {
  readonly #o: ResolvedClientOptions;
  readonly #logger: Logger;
  readonly #connector: Connector;
  readonly #events = new EventTarget();
  readonly #shared: Connection;
  readonly #pool: ExclusivePool;
  readonly #pubsub: SubscriptionManager;
  #subscriber: Connection | undefined;
  #binary: BinaryView | undefined;
  #closed = false;
  #poolSeq = 0;
  readonly #maintenance: MaintenanceSupport | undefined;

  /**
   * Creates a client. It connects lazily on the first command, or on `connect()`.
   *
   * @param options The options; defaults connect to `redis://127.0.0.1:6379`.
   */
  constructor(options: RedisClientOptions = {}) {
    super();
    this.#o = resolveClientOptions(options);
    this.#logger = options.logger ?? silentLogger;
    this.#connector = options.connector ?? defaultConnector;
    this.#pubsub = new SubscriptionManager((args, subscribe) =>
      subscribe
        ? this.#pubsubConnection().send(args, undefined, FLAG_SUBSCRIBE)
        : this.#pubsubConnection().sendNoReply(args)
    );
    const mode = options.maintenanceNotifications?.mode ?? "auto";
    if (mode === "enabled" && this.#o.protocol !== 3) {
      throw new TypeError(
        'Cannot enable maintenance notifications with protocol 2: they need RESP3 (set protocol: 3 or mode: "auto")',
      );
    }
    this.#maintenance = mode !== "disabled" && this.#o.protocol === 3
      ? new MaintenanceSupport(
        options.maintenanceNotifications ?? {},
        { host: this.#o.host, port: this.#o.port },
        {
          logger: this.#logger,
          shared: () => this.#shared,
          retireExclusive: (pred) => this.#pool.retire(pred),
          emit: (name, detail) => this.#emit(name, detail),
        },
      )
      : undefined;
    const shared: Connection = this.#newConnection("shared", false, () => shared);
    this.#shared = shared;
    this.#pool = new ExclusivePool(
      () => {
        const c: Connection = this.#newConnection(`exclusive#${++this.#poolSeq}`, false, () => c);
        return c;
      },
      this.#o.maxExclusiveConnections,
      this.#o.exclusiveIdleTimeout,
      this.#o.commandTimeout,
    );
  }

  #newConnection(label: string, subscriber: boolean, self: () => Connection): Connection {
    const o = this.#o;
    const isShared = label === "shared";
    const m = this.#maintenance;
    const hooks: ConnectionHooks = {
      onConnect: isShared ? (e: Endpoint) => this.#emit("connect", e) : undefined,
      onReady: isShared ? (e: Endpoint) => this.#emit("ready", e) : undefined,
      onReconnecting: isShared
        ? (delay, attempt, error) => this.#emit("reconnecting", { delay, attempt, error })
        : undefined,
      onError: (error) => this.#emit("error", error),
      onClose: m ? () => m.unregister(self()) : undefined,
      onPush: (frame) => this.#onPush(self(), frame),
      session: isShared && o.protocol === 3 || subscriber
        ? () => this.#pubsub.session()
        : undefined,
      handshake: m ? (transport, protocol) => m.handshake(self(), transport, protocol) : undefined,
      resolveEndpoint: m ? (configured) => m.resolveEndpoint(configured) : undefined,
      connectTimeout: m ? (configured) => m.connectTimeout(configured) : undefined,
    };
    const conn = new Connection({
      endpoint: { host: o.host, port: o.port },
      tls: o.tls,
      connector: this.#connector,
      protocol: o.protocol,
      username: o.username,
      password: o.password,
      db: o.db,
      clientName: o.clientName,
      libName: LIB_NAME,
      libVersion: VERSION,
      connectTimeout: o.connectTimeout,
      commandTimeout: o.commandTimeout,
      reconnect: o.reconnect,
      maxQueueLength: o.maxQueueLength,
      maxQueueBytes: o.maxQueueBytes,
      subscriber,
      logger: this.#logger,
      hooks,
      label,
    });
    m?.register(conn, label);
    return conn;
  }

  #onPush(conn: Connection, frame: RespValue[]): void {
    if (this.#pubsub.onPush(frame)) return;
    if (this.#maintenance?.onPush(conn, frame)) return;
    this.#logger.debug(`Ignoring a push frame of type "${String(frame[0])}"`);
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

  #pubsubConnection(): Connection {
    if (this.#o.protocol === 3) return this.#shared;
    if (!this.#subscriber) {
      const c: Connection = this.#newConnection("subscriber", true, () => c);
      this.#subscriber = c;
    }
    return this.#subscriber;
  }

  /** @internal Runs one command (the typed methods call this). */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot send the command: the client is closed"));
    }
    if ((flags & FLAG_BLOCKING) === 0) return this.#shared.send(args, transform, flags);
    const name = args[0];
    if (name === "WAIT" || name === "WAITAOF") {
      // WAIT counts the acknowledgements of the writes of the connection it runs on: the shared
      // one, where the client's writes went. It holds that connection for up to its timeout.
      return this.#shared.send(args, transform, flags, this.#blockingTimeout(flags, blockMs));
    }
    return this.#runExclusive(args, transform, flags, blockMs ?? 0);
  }

  /** The timeout of a blocking command: its block time plus `commandTimeout` (0 = forever). */
  #blockingTimeout(flags: number, blockMs: number | undefined): number | undefined {
    if ((flags & FLAG_BLOCKING) === 0) return undefined;
    const t = this.#o.commandTimeout;
    const b = blockMs ?? 0;
    return b === 0 || t === 0 ? 0 : b + t;
  }

  async #runExclusive(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number,
  ): Promise<unknown> {
    const conn = await this.#pool.acquire();
    const timeout = this.#blockingTimeout(flags | FLAG_BLOCKING, blockMs);
    try {
      const v = await conn.send(args, transform, flags, timeout);
      this.#pool.release(conn);
      return v;
    } catch (e) {
      // A blocked connection that timed out still waits for its reply: do not reuse it.
      if (e instanceof TimeoutError || conn.closed) this.#pool.discard(conn);
      else this.#pool.release(conn);
      throw e;
    }
  }

  /**
   * Connects now instead of on the first command.
   *
   * @returns Resolves when the connection is ready; rejects with a `ConnectionError` or `TimeoutError`.
   */
  connect(): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot connect: the client is closed"));
    }
    return this.#shared.connect();
  }

  /**
   * Sends any command and returns its raw reply (see `RespValue`).
   *
   * @param args The command and its arguments, e.g. `["DEBUG", "PROTOCOL", "map"]`.
   * @param options Binary replies, blocking, timeout.
   * @returns The raw reply.
   *
   * @example
   * ```ts ignore
   * const map = await client.sendCommand(["DEBUG", "PROTOCOL", "map"]);
   * ```
   */
  sendCommand(args: RedisArgument[], options: SendCommandOptions = {}): Promise<RespValue> {
    if (!Array.isArray(args) || args.length === 0) {
      return Promise.reject(new TypeError("Cannot send an empty command"));
    }
    const name = typeof args[0] === "string" ? args[0].toUpperCase() : "";
    const instead = RESERVED[name] ??
      (name === "CLIENT" && String(args[1]).toUpperCase() === "REPLY" ? "nothing" : undefined);
    if (instead !== undefined) {
      // These change the state of the shared connection for every caller, or answer out of band.
      return Promise.reject(
        new TypeError(`Cannot send "${name}" with sendCommand: use ${instead}`),
      );
    }
    const flags = (options.binary ? FLAG_BINARY : 0) |
      (options.blockMs !== undefined ? FLAG_BLOCKING : 0);
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot send the command: the client is closed"));
    }
    if (options.blockMs !== undefined) {
      return this.#runExclusive(args, undefined, flags, options.blockMs) as Promise<RespValue>;
    }
    return this.#shared.send(args, undefined, flags, options.timeout) as Promise<RespValue>;
  }

  /**
   * A view of this client whose commands reply bulk strings as `Uint8Array`.
   *
   * @returns The binary view (shares the client's connections).
   *
   * @example
   * ```ts ignore
   * const bytes: Uint8Array | null = await client.binary().get("image");
   * ```
   */
  binary(): RedisCommands<Uint8Array> {
    return this.#binary ??= new BinaryView(this);
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
    if (this.#closed) {
      return new Transaction((cmds) =>
        cmds.map(() =>
          Promise.reject(new ClosedError("Cannot send the transaction: the client is closed"))
        )
      );
    }
    return new Transaction((cmds) => this.#shared.sendAll(cmds));
  }

  /**
   * Borrows an exclusive connection and `WATCH`es keys on it.
   *
   * @param keys The keys to watch.
   * @returns A session for reads and the transaction.
   */
  async watch(...keys: RedisArgument[]): Promise<WatchSession> {
    if (keys.length === 0) throw new TypeError("Cannot watch: no key given");
    const conn = await this.#pool.acquire();
    try {
      await conn.send(["WATCH", ...keys], undefined, 0);
    } catch (e) {
      this.#pool.discard(conn);
      throw e;
    }
    return new WatchSession(
      conn,
      (c) => this.#pool.release(c),
      (flags, blockMs) => this.#blockingTimeout(flags, blockMs),
    );
  }

  #subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener?: PubSubListener,
  ): Promise<Subscription> {
    const list = typeof names === "string" ? [names] : [...names];
    if (list.length === 0) {
      return Promise.reject(new TypeError("Cannot subscribe: no channel given"));
    }
    for (const n of list) {
      if (typeof n !== "string" || n.length === 0) {
        return Promise.reject(
          new TypeError("Cannot subscribe: channel names must be non-empty strings"),
        );
      }
    }
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot subscribe: the client is closed"));
    }
    const sub = new Subscription(this.#pubsub, kind, list, listener);
    return this.#pubsub.add(sub).then(() => sub);
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
   * Closes the client: new commands are refused, queued and in-flight ones complete, then
   * every connection closes. Subscriptions end.
   *
   * @returns Resolves when every socket and timer is closed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#maintenance?.close();
    this.#pubsub.endAll();
    await Promise.all([
      this.#shared.close(),
      this.#pool.close(),
      this.#subscriber?.close(),
    ]);
    this.#emit("close", undefined);
  }

  /** Closes the client: `await using client = new RedisClient()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Adds an event listener (`connect`, `ready`, `reconnecting`, `error`, `close`, `maintenance`, `handoff`).
   *
   * @param type The event name.
   * @param listener The listener; events are `CustomEvent`s with a `detail`.
   * @param options Standard listener options.
   */
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void {
    this.#events.addEventListener(type, listener, options);
  }

  /**
   * Removes an event listener.
   *
   * @param type The event name.
   * @param listener The listener.
   * @param options Standard listener options.
   */
  removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | EventListenerOptions,
  ): void {
    this.#events.removeEventListener(type, listener, options);
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
