/**
 * The public face every client kind shares: the typed commands, `sendCommand`, `binary()`,
 * pipelines and transactions, `watch()`, the subscribe and scan families, the client-side
 * cache's calls, events, and close with refusal after close. A client kind supplies only a
 * {@linkcode ClientCore}: how a command reaches a node (one executor, one whose target the
 * sentinels choose, a router over a cluster's nodes, the active database).
 *
 * @module
 */

import { RedisCommands } from "../commands/commands.ts";
import {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_RAW,
  type Transform,
} from "../commands/command_runner.ts";
import { FLAG_COUNTED } from "../command_flags.ts";
import type { ScoredMember } from "../commands/types.ts";
import { ClosedError } from "../errors.ts";
import { checkCommandOptions, type KeyTable, type OptionSpec, received } from "../_validate.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { ClientSideCache } from "../cache/client_side_cache.ts";
import type { CacheStats } from "../cache/cache_store.ts";
import { BinaryView } from "./_binary_view.ts";
import { cursorIterator } from "./cursor_iterator.ts";
import { Pipeline, type QueuedCommand, Transaction } from "./pipeline.ts";
import type { PubSubListener, Subscription, SubscriptionKind } from "./subscription.ts";
import type { AddListenerOptions, ListenerOptions, TypedEventListener } from "./events.ts";
import type { WatchSession } from "./watch_session.ts";
import type { ClientMetrics, MetricsKind } from "../observability/metrics.ts";
import type { MetricsPart, TracingPart } from "../observability/part.ts";
import { resolveMetricsPart, resolveTracingPart } from "./options.ts";
import type { Logger } from "../logger.ts";
import { silentLogger } from "../logger.ts";

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

const NO_OPTIONS: SendCommandOptions = {};
const SEND_COMMAND_OPTIONS: OptionSpec = {
  keys: { binary: true, blockMs: true, timeout: true, signal: true } satisfies KeyTable<
    SendCommandOptions
  >,
  form: "{ timeout: 1000 }",
};

/** One command of a transaction's group (`MULTI`, the commands, `EXEC`), as a core queues it. */
export interface GroupCommand {
  /** The command and its arguments. */
  args: RedisArgument[];
  /** The reply transform, if any. */
  transform: Transform | undefined;
  /** `FLAG_*` bits. */
  flags: number;
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

/**
 * What a client kind supplies to the shell: how commands, transactions, WATCH sessions and
 * subscriptions reach a node, and how the kind connects and closes. The shell has already
 * refused everything after close, validated the arguments and applied the client-side cache.
 *
 * @example
 * ```ts ignore
 * // A kind with one executor:
 * const core: ClientCore = {
 *   run: (args, transform, flags, blockMs) => node.run(args, transform, flags, blockMs),
 *   send: (args, flags, o) => node.run(args, undefined, flags, undefined, o.timeout, o.signal),
 *   sendAll: (commands) => node.sendAll(commands),
 *   watch: (keys) => node.watch(keys),
 *   subscribe: (kind, names, listener, binary) => node.subscribe(kind, names, listener, 0, binary),
 *   connect: (o) => node.connect(o),
 *   close: () => node.close(),
 *   destroy: () => node.destroy(),
 * };
 * ```
 */
export interface ClientCore {
  /** Runs one command (the typed methods, pipelines). */
  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown>;
  /**
   * Runs one raw command of `sendCommand`, with its timeout and signal; `flags` carries
   * `FLAG_RAW`, `FLAG_BINARY` and, with `blockMs`, `FLAG_BLOCKING`.
   */
  send(args: RedisArgument[], flags: number, options: SendCommandOptions): Promise<unknown>;
  /**
   * Queues a transaction's commands (`MULTI` ... `EXEC`) together, all or none: one promise per
   * command. Kinds without it give `runTransaction`.
   */
  sendAll?(commands: GroupCommand[]): Promise<unknown>[];
  /** Runs a whole pipeline at `exec()` (a kind that replays batches elsewhere). */
  runPipeline?(commands: QueuedCommand[]): Promise<unknown[]>;
  /**
   * Runs a whole transaction at `exec()` (a kind that replays batches elsewhere); `flags` are
   * the transaction's own (`FLAG_BINARY` for a binary view's).
   */
  runTransaction?(commands: QueuedCommand[], flags: number): Promise<unknown[] | null>;
  /** Borrows a connection for `keys` and `WATCH`es them. */
  watch(keys: RedisArgument[]): Promise<WatchSession>;
  /** Subscribes (names already validated); resolves once confirmed. */
  subscribe(
    kind: SubscriptionKind,
    names: string[],
    listener: PubSubListener<string> | PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown>;
  /**
   * Pins a cursor walk (SCAN, HSCAN, ...) to where it started: the returned check throws when
   * a later page would be served elsewhere (the multi-database client after a switch).
   */
  cursorGuard?(): () => void;
  /** The client-side cache's counters, for a kind whose cache is not the shell's. */
  cacheStats?(): CacheStats | undefined;
  /** Drops the client-side cache, for a kind whose cache is not the shell's. */
  invalidateCache?(): void;
  /**
   * Every rejection of a non-blocking command that `run` or `send` gets with `FLAG_COUNTED`
   * is counted below (the error-count metric), so the shell attaches no promise reaction to
   * count it: true only for a kind nothing of which retries above its connection.
   */
  readonly countsErrors?: boolean;
  /** Connects now. */
  connect(options?: { signal?: AbortSignal }): Promise<void>;
  /** Closes gracefully (queued and in-flight work completes). */
  close(): Promise<void>;
  /** Closes at once (queued and in-flight work rejects); `close()` follows. */
  destroy(): void | Promise<void>;
}

/**
 * Where a client kind's parts dispatch the client's events; made before the core, given to the
 * shell, which exposes it as the client's `EventTarget`.
 *
 * @example
 * ```ts ignore
 * const events = new ClientEvents();
 * events.emit("ready", { host: "127.0.0.1", port: 6379 });
 * ```
 */
export class ClientEvents extends EventTarget {
  /**
   * @internal The client's metrics recorder (`metrics` option), `undefined` when off.
   *
   * @ignore
   */
  readonly metrics: ClientMetrics | undefined;

  /**
   * Makes the event target, and the metrics recorder when the `metrics` or `tracing` part is
   * given (made before the core, so every part of it can report).
   *
   * @param options The client's options (`metrics`, `tracing`, `logger` are read).
   * @param kind The client kind.
   * @throws {TypeError} A `metrics` or `tracing` option that is not a part.
   */
  constructor(
    options: { metrics?: MetricsPart; tracing?: TracingPart; logger?: Logger } = {},
    kind: MetricsKind = "standalone",
  ) {
    super();
    const o = typeof options === "object" && options !== null ? options : {};
    // The parts bring the recorder (`@edge/redis/otel`): this entry carries none of it.
    const metrics = resolveMetricsPart(o.metrics);
    const tracing = resolveTracingPart(o.tracing);
    const m = this.metrics = (metrics ?? tracing)?._recorder(
      metrics?._options,
      tracing?._options,
      o.logger ?? silentLogger,
      kind,
    );
    m?.listen(this);
  }

  /**
   * Dispatches a `CustomEvent` named `name` with `detail`.
   *
   * @param name The event name.
   * @param detail The event's detail.
   */
  emit(name: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail }));
  }
}

/** The closed error of an entry point: "Cannot <what>: the client is closed". */
function closedError(what: string): ClosedError {
  return new ClosedError(`Cannot ${what}: the client is closed`, { written: false });
}

function validNames(names: unknown): string[] | TypeError {
  const list = typeof names === "string" ? [names] : Array.isArray(names) ? [...names] : [];
  if (list.length === 0) return new TypeError("Cannot subscribe: no channel given");
  for (const n of list) {
    if (typeof n !== "string" || n.length === 0) {
      return new TypeError("Cannot subscribe: channel names must be non-empty strings");
    }
  }
  return list as string[];
}

/** A cursor walk that stops with the guard's error once the walk would continue elsewhere. */
async function* guarded<T>(
  page: (cursor: string) => Promise<[string, T[]]>,
  check: () => void,
): AsyncIterableIterator<T> {
  let cursor = "0";
  do {
    const [next, items] = await page(cursor);
    check();
    cursor = next;
    yield* items;
  } while (cursor !== "0");
}

/**
 * The face every client kind shares (see the module doc). `S` is not a parameter: the shell
 * replies text; `binary()` is its byte view.
 *
 * @typeParam Events The kind's event map (event name -> `CustomEvent`).
 * @typeParam Sub The kind's subscription type.
 *
 * @example
 * ```ts ignore
 * class MyClient extends ClientShell<RedisClientEventMap> {
 *   constructor() {
 *     const events = new ClientEvents();
 *     super(makeCore(events), events);
 *   }
 * }
 * ```
 */
export abstract class ClientShell<
  Events extends object,
  Sub extends AsyncIterable<unknown> = Subscription,
> extends RedisCommands<string> implements AsyncDisposable, EventTarget {
  readonly #core: ClientCore;
  readonly #events: ClientEvents;
  readonly #cache: ClientSideCache | undefined;
  readonly #exec: ClientCore["run"];
  readonly #sendAll: ((commands: GroupCommand[]) => Promise<unknown>[]) | undefined;
  /** The metrics recorder when commands are measured, else `undefined` (one check per command). */
  readonly #metrics: ClientMetrics | undefined;
  /** Commands without a cache or a block have their errors counted by the connection. */
  readonly #counted: boolean;
  #binary: BinaryView | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  /**
   * Wires the face to a kind's core.
   *
   * @param core How commands reach a node.
   * @param events Where the kind's parts dispatch events.
   * @param cache The client-side cache in front of `core.run`, if the kind keeps one.
   */
  protected constructor(core: ClientCore, events: ClientEvents, cache?: ClientSideCache) {
    super();
    this.#core = core;
    this.#events = events;
    this.#cache = cache;
    this.#exec = (args, transform, flags, blockMs) => core.run(args, transform, flags, blockMs);
    const m = events.metrics;
    this.#metrics = m?.perCommand ? m : undefined;
    this.#counted = this.#metrics !== undefined && cache === undefined &&
      core.countsErrors === true;
    const sendAll = core.sendAll;
    if (sendAll !== undefined) {
      const send = (commands: GroupCommand[]) => sendAll.call(core, commands);
      const guarded = cache === undefined
        ? send
        : (commands: GroupCommand[]) => cache.sendAll(commands, send);
      // A transaction is measured as one operation: from its queueing to EXEC's reply.
      this.#sendAll = this.#metrics === undefined ? guarded : (commands) => {
        const start = m!.now();
        const all = guarded(commands);
        const last = all.length - 1;
        if (last > 0) all[last] = m!.batch("MULTI", last - 1, start, all[last]!);
        return all;
      };
    }
    if (m !== undefined && cache !== undefined) {
      m.source({ cache: () => cache.stats() });
    }
  }

  /** Whether `close()` or `destroy()` was called: every entry point then rejects. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Runs one command (the typed methods call this). */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    if (this.#metrics !== undefined) return this.#metered(args, transform, flags, blockMs);
    if (this.#closed) return Promise.reject(closedError("send the command"));
    const cache = this.#cache;
    if (cache === undefined) return this.#core.run(args, transform, flags, blockMs);
    return cache.run(args, transform, flags, blockMs, this.#exec);
  }

  /** `_run` with the command measured. */
  #metered(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    const m = this.#metrics!;
    const start = m.durations ? performance.now() : 0;
    if (this.#counted && (flags & FLAG_BLOCKING) === 0) {
      if (this.#closed) {
        const e = closedError("send the command");
        m.commandError(e, args[0]);
        return Promise.reject(e);
      }
      return m.command(args, start, this.#core.run(args, transform, flags | FLAG_COUNTED), true);
    }
    return m.command(args, start, this.#dispatch(args, transform, flags, blockMs));
  }

  /** `_run` unmeasured (the commands of a measured pipeline). */
  #dispatch(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    if (this.#closed) return Promise.reject(closedError("send the command"));
    const cache = this.#cache;
    if (cache === undefined) return this.#core.run(args, transform, flags, blockMs);
    return cache.run(args, transform, flags, blockMs, this.#exec);
  }

  /**
   * Sends any command and returns its raw reply (see `RespValue`).
   *
   * Commands that would change the shared connection for every caller (`SUBSCRIBE`, `MULTI`,
   * `WATCH`, `SELECT`, `HELLO`, `AUTH`, `CLIENT REPLY`, ...) are refused with a `TypeError`
   * naming the API to use instead, here as in pipelines and transactions.
   *
   * @param args The command and its arguments, e.g. `["INFO", "server"]`.
   * @param options Binary replies, blocking, timeout, signal.
   * @returns The raw reply.
   *
   * @example
   * ```ts ignore
   * const info = await client.sendCommand(["INFO", "server"]);
   * ```
   */
  sendCommand(args: RedisArgument[], options: SendCommandOptions = NO_OPTIONS): Promise<RespValue> {
    if (!Array.isArray(args) || args.length === 0) {
      return Promise.reject(
        new TypeError(
          Array.isArray(args)
            ? "Cannot send an empty command"
            : `Cannot send ${received(args)} as a command: expected the command and its ` +
              `arguments as one list, e.g. sendCommand(["GET", "k"])`,
        ),
      );
    }
    if (options !== NO_OPTIONS) {
      try {
        checkCommandOptions(options, SEND_COMMAND_OPTIONS, "sendCommand");
      } catch (e) {
        return Promise.reject(e);
      }
    }
    if (this.#closed) return Promise.reject(closedError("send the command"));
    // FLAG_RAW: the connection refuses commands that would change its state for every caller.
    const counted = this.#counted && options.blockMs === undefined;
    const flags = FLAG_RAW | (options.binary ? FLAG_BINARY : 0) |
      (options.blockMs !== undefined ? FLAG_BLOCKING : 0) | (counted ? FLAG_COUNTED : 0);
    const core = this.#core;
    const cache = this.#cache;
    const m = this.#metrics;
    const start = m?.durations ? performance.now() : 0;
    const p = cache === undefined ? core.send(args, flags, options) : cache.run(
      args,
      undefined,
      flags,
      options.blockMs,
      (a, _t, f) => core.send(a, f, options),
    );
    return (m === undefined ? p : m.command(args, start, p, counted)) as Promise<RespValue>;
  }

  /**
   * Connects now instead of on the first command.
   *
   * @param options `signal` gives up the attempt: `connect()` then rejects with a
   *   `ConnectionError` whose `cause` is the signal's reason; the client stays usable.
   * @returns Resolves when the client is ready; rejects with a `ConnectionError` or
   *   `TimeoutError`, or `ClosedError` after `close()`.
   *
   * @example
   * ```ts ignore
   * await client.connect({ signal: AbortSignal.timeout(1_000) });
   * ```
   */
  connect(options?: { signal?: AbortSignal }): Promise<void> {
    if (this.#closed) return Promise.reject(closedError("connect"));
    return this.#core.connect(options);
  }

  /**
   * A view of this client whose commands reply bulk strings as `Uint8Array`: the typed
   * commands, `pipeline()`, `multi()`, the scan iterators and the subscribe family (messages as
   * `Uint8Array`), all on the same connections.
   *
   * @returns The binary view.
   *
   * @example
   * ```ts ignore
   * const bytes: Uint8Array | null = await client.binary().get("image");
   * ```
   */
  binary(): BinaryView {
    return this.#binary ??= new BinaryView(this);
  }

  /**
   * Starts a pipeline: commands sent together by `exec()`, results (errors included) as values.
   *
   * @returns A new pipeline.
   *
   * @example
   * ```ts ignore
   * const [n, v] = await client.pipeline().incr("n").get("k").exec();
   * ```
   */
  pipeline(): Pipeline {
    const runPipeline = this.#core.runPipeline;
    const m = this.#metrics;
    const p = new Pipeline(
      m === undefined
        ? (args, transform, flags, blockMs) => this._run(args, transform, flags, blockMs)
        : (args, transform, flags, blockMs) => this.#dispatch(args, transform, flags, blockMs),
    );
    if (runPipeline !== undefined) {
      p._runner = (q) =>
        this.#closed
          ? Promise.reject(closedError("run the pipeline"))
          : runPipeline.call(this.#core, q);
    }
    if (m !== undefined) {
      // Measured as one operation; its commands are not measured one by one.
      const inner = p._runner;
      p._runner = (q) => {
        const start = m.now();
        return m.batch(
          "PIPELINE",
          q.length,
          start,
          inner !== undefined ? inner(q) : p._sendAllOf(q),
        );
      };
    }
    return p;
  }

  /**
   * Starts a transaction (`MULTI` ... `EXEC`), queued together on one connection by `exec()`.
   * With the client-side cache on, the keys it writes are dropped from the cache.
   *
   * @returns A new transaction.
   *
   * @example
   * ```ts ignore
   * const [a, b] = (await client.multi().incr("a").incr("b").exec())!;
   * ```
   */
  multi(): Transaction {
    const sendAll = this.#sendAll;
    const runTransaction = this.#core.runTransaction;
    const t = new Transaction((commands) => {
      if (this.#closed) {
        const e = closedError("run the transaction");
        return commands.map(() => Promise.reject(e));
      }
      if (sendAll === undefined) {
        const e = new TypeError("Cannot run the transaction: this client has no transactions");
        return commands.map(() => Promise.reject(e));
      }
      return sendAll(commands);
    });
    if (runTransaction !== undefined) {
      const m = this.#metrics;
      t._runner = (q, flags) => {
        if (this.#closed) return Promise.reject(closedError("run the transaction"));
        if (m === undefined) return runTransaction.call(this.#core, q, flags);
        return m.batch("MULTI", q.length, m.now(), runTransaction.call(this.#core, q, flags));
      };
    }
    return t;
  }

  /**
   * Borrows a connection and `WATCH`es keys on it. The session never reconnects: if its
   * connection is lost, its commands and `exec()` reject with `ConnectionError`.
   *
   * @param keys The keys to watch.
   * @returns A session for reads and the transaction.
   *
   * @example Check-and-set, tried again while another client changed the key in between
   * ```ts ignore
   * for (let attempt = 1; attempt <= 10; attempt++) {
   *   await using session = await client.watch("balance"); // released at the end of the block
   *   const balance = Number(await session.get("balance") ?? 0);
   *   if (balance < 10) break; // nothing to do: no transaction
   *   const result = await session.multi().decrby("balance", 10).exec();
   *   if (result !== null) break; // committed: [new balance]
   *   // null: "balance" changed after WATCH, nothing was written; read it again
   * }
   * ```
   */
  watch(...keys: RedisArgument[]): Promise<WatchSession> {
    if (keys.length === 0) return Promise.reject(new TypeError("Cannot watch: no key given"));
    if (this.#closed) return Promise.reject(closedError("watch"));
    return this.#core.watch(keys);
  }

  /**
   * @internal Subscribes for the face and its binary view.
   *
   * @ignore
   */
  _subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener: PubSubListener<string> | PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown> {
    const list = validNames(names);
    if (list instanceof TypeError) return Promise.reject(list);
    if (this.#closed) return Promise.reject(closedError("subscribe"));
    return this.#core.subscribe(kind, list, listener, binary);
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
  subscribe(channels: string | string[], listener?: PubSubListener): Promise<Sub> {
    return this._subscribe("channel", channels, listener, false) as Promise<Sub>;
  }

  /**
   * Subscribes to glob-style patterns.
   *
   * @param patterns One pattern or several.
   * @param listener Called per message with the matching pattern.
   * @returns The subscription.
   *
   * @example
   * ```ts ignore
   * const sub = await client.psubscribe("news.*", (message, channel, pattern) => {});
   * ```
   */
  psubscribe(patterns: string | string[], listener?: PubSubListener): Promise<Sub> {
    return this._subscribe("pattern", patterns, listener, false) as Promise<Sub>;
  }

  /**
   * Subscribes to shard channels (`SSUBSCRIBE`).
   *
   * @param channels One shard channel or several.
   * @param listener Called per message.
   * @returns The subscription.
   *
   * @example
   * ```ts ignore
   * const sub = await client.ssubscribe("orders:{eu}", (message) => console.log(message));
   * ```
   */
  ssubscribe(channels: string | string[], listener?: PubSubListener): Promise<Sub> {
    return this._subscribe("shard", channels, listener, false) as Promise<Sub>;
  }

  /**
   * @internal A cursor walk for the face and its binary view, pinned by the kind's guard.
   *
   * @ignore
   */
  _cursor<T>(page: (cursor: string) => Promise<[string, T[]]>): AsyncIterableIterator<T> {
    const check = this.#core.cursorGuard?.();
    return check === undefined ? cursorIterator(page) : guarded(page, check);
  }

  /**
   * Iterates over every key (SCAN), page by page; on a cluster, over every primary.
   *
   * @param options Pattern, count hint, type.
   * @returns An async iterator of key names.
   *
   * @example
   * ```ts ignore
   * for await (const key of client.scan({ match: "user:*", count: 500 })) console.log(key);
   * ```
   */
  scan(options: ScanIteratorOptions = {}): AsyncIterableIterator<string> {
    return this._cursor((cursor) => this.scanPage(cursor, options));
  }

  /**
   * Iterates over the fields of a hash (HSCAN).
   *
   * @param key The hash.
   * @param options Pattern, count hint.
   * @returns An async iterator of `[field, value]`.
   *
   * @example
   * ```ts ignore
   * for await (const [field, value] of client.hscan("user:1")) console.log(field, value);
   * ```
   */
  hscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<[string, string]> {
    return this._cursor((cursor) => this.hscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a set (SSCAN).
   *
   * @param key The set.
   * @param options Pattern, count hint.
   * @returns An async iterator of members.
   *
   * @example
   * ```ts ignore
   * for await (const member of client.sscan("tags")) console.log(member);
   * ```
   */
  sscan(key: RedisArgument, options: ScanIteratorOptions = {}): AsyncIterableIterator<string> {
    return this._cursor((cursor) => this.sscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a sorted set with their scores (ZSCAN).
   *
   * @param key The sorted set.
   * @param options Pattern, count hint.
   * @returns An async iterator of `{ member, score }`.
   *
   * @example
   * ```ts ignore
   * for await (const { member, score } of client.zscan("ranking")) console.log(member, score);
   * ```
   */
  zscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<ScoredMember> {
    return this._cursor((cursor) => this.zscanPage(key, cursor, options));
  }

  /**
   * The counters of the client-side cache (`clientSideCache` option).
   *
   * @returns Hits, misses, entries, estimated bytes, evictions, invalidations and flushes, or
   *   `undefined` when the cache is off.
   *
   * @example
   * ```ts ignore
   * console.log(client.cacheStats()); // { hits: 1, misses: 1, entries: 1, ... }
   * ```
   */
  cacheStats(): CacheStats | undefined {
    return this.#cache !== undefined ? this.#cache.stats() : this.#core.cacheStats?.();
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
    if (this.#cache !== undefined) this.#cache.invalidateAll();
    else this.#core.invalidateCache?.();
  }

  /**
   * Closes the client: new commands are refused with `ClosedError`, queued and in-flight ones
   * complete (each connection within its close bound), then every connection closes and the
   * `close` event fires. Subscriptions end. Concurrent calls return the same promise.
   *
   * @returns Resolves when every socket and timer is closed.
   *
   * @example
   * ```ts ignore
   * await client.close();
   * ```
   */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    this.#closed = true;
    return this.#closing = this.#finish(this.#core.close());
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
    this.#closed = true;
    const destroyed = this.#core.destroy();
    if (this.#closing !== undefined) return this.#closing;
    return this.#closing = this.#finish(
      Promise.resolve(destroyed).then(() => this.#core.close()),
    );
  }

  async #finish(closed: Promise<void>): Promise<void> {
    await closed;
    this.#events.emit("close", undefined);
    this.#events.metrics?.close();
  }

  /** Closes the client: `await using client = new RedisClient()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Adds an event listener. Typed by the kind's event map: the listener gets the event's
   * `CustomEvent` with its `detail`, and an unknown event name does not compile.
   *
   * @param type The event name.
   * @param listener The listener.
   * @param options Standard listener options.
   *
   * @example
   * ```ts ignore
   * client.addEventListener("error", (e) => console.error(e.detail.message));
   * ```
   */
  addEventListener<K extends keyof Events & string>(
    type: K,
    listener: TypedEventListener<Extract<Events[K], Event>> | null,
    options?: boolean | AddListenerOptions,
  ): void {
    this.#events.addEventListener(type, listener as EventListenerOrEventListenerObject, options);
  }

  /**
   * Removes an event listener.
   *
   * @param type The event name.
   * @param listener The listener.
   * @param options Standard listener options.
   *
   * @example
   * ```ts ignore
   * client.removeEventListener("error", onError);
   * ```
   */
  removeEventListener<K extends keyof Events & string>(
    type: K,
    listener: TypedEventListener<Extract<Events[K], Event>> | null,
    options?: boolean | ListenerOptions,
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
   *
   * @example
   * ```ts ignore
   * client.dispatchEvent(new CustomEvent("error", { detail: new Error("test") }));
   * ```
   */
  dispatchEvent(event: Event): boolean {
    return this.#events.dispatchEvent(event);
  }
}
