/**
 * The client-side cache of one client: which reads it answers from memory, the store, and the
 * tracking sessions (one per executor) that keep it true. Every client kind builds one per
 * client and routes its reads through {@linkcode ClientSideCache.run}:
 *
 * - the standalone client: one executor, one {@linkcode TrackingSession};
 * - a cluster client: one tracking session per node executor, all on the same cache;
 *   `invalidateWhere((key) => movedSlots.has(keySlot(key)))` on SMIGRATED;
 * - the sentinel client: its executor's new sockets (a master switch is a handoff) flush by
 *   themselves; the multi-database client calls `invalidateAll()` when it switches databases.
 *
 * A reply is served from memory only if it was read on a connection whose tracking was on,
 * and kept only if no invalidation of its key (and no flush) arrived while it was on its way.
 *
 * @module
 */

import {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_ERRORS_AS_VALUES,
  FLAG_READONLY,
} from "../command_flags.ts";
import type { Clock } from "../_clock.ts";
import type { Logger } from "../logger.ts";
import { silentLogger } from "../logger.ts";
import type { RedisArgument, RespValue, Transform } from "../resp/types.ts";
import { type CacheStats, CacheStore } from "./cache_store.ts";
import { cacheableKeyOf, writtenKeys } from "./cacheable.ts";
import {
  type ClientSideCacheOptions,
  resolveCacheOptions,
  type ResolvedCacheOptions,
} from "./options.ts";
import { copyReply, ENTRY_OVERHEAD, replyBytes } from "./_reply.ts";
import { TrackingSession } from "./tracking_session.ts";

/** Runs one command where the client would (its executor's `run`). */
export type CommandExec = (
  args: RedisArgument[],
  transform: Transform | undefined,
  flags: number,
  blockMs?: number,
) => Promise<unknown>;

/** A command of a group sent together (a transaction). */
export interface CacheGroupCommand {
  /** The command. */
  args: RedisArgument[];
  /** Its reply transform. */
  transform: Transform | undefined;
  /** Its flags. */
  flags: number;
}

/** What a {@linkcode ClientSideCache} needs besides its options. */
export interface ClientSideCacheDeps {
  /** Where to log refused tracking and the like. @default {silentLogger} */
  logger?: Logger;
  /** Where the time of `ttl` comes from (only `now` is read). @default {Date.now} */
  clock?: Pick<Clock, "now">;
  /**
   * Keys may change owner without an invalidation (a cluster's slots move): replies of absent
   * keys are kept at most `clusterMissTtl`.
   * @default {false}
   */
  ownersMove?: boolean;
}

/**
 * Whether a reply says its key is absent: `null`, `0`, `-1`, `-2`, `""`, `"none"`, `false`, or an
 * aggregate that is empty or holds only such values (HMGET of a missing hash). Existing keys
 * may reply so too (STRLEN of ""): they are only bounded more than needed.
 */
function absentReply(v: RespValue): boolean {
  if (v === null || v === 0 || v === -1 || v === -2 || v === "" || v === "none" || v === false) {
    return true;
  }
  if (typeof v === "bigint") return v === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if (Array.isArray(v)) return v.every((x) => absentReply(x as RespValue));
  if (v instanceof Map) return v.size === 0;
  if (v instanceof Set) return v.size === 0;
  return false;
}

const LATIN1_CHUNK = 8192;

function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += LATIN1_CHUNK) {
    s += String.fromCharCode(...b.subarray(i, i + LATIN1_CHUNK));
  }
  return s;
}

/**
 * The name of a command among the cached commands of its key: the command name alone for the
 * common `[NAME, key]`, else every argument but the key, length-prefixed (`4:HGET1:f`, numbers as
 * `n5,`, bytes as `b2:..`), so distinct lists never share a name (a command name never starts
 * with a digit). `~` in front for the binary view.
 */
function commandId(args: readonly RedisArgument[], binary: boolean): string | undefined {
  let s: string;
  if (args.length === 2) s = args[0] as string;
  else {
    s = "";
    for (let i = 0; i < args.length; i++) {
      if (i === 1) continue;
      const a = args[i] as unknown;
      if (typeof a === "string") s += a.length + ":" + a;
      else if (typeof a === "number") s += "n" + String(a) + ",";
      else if (a instanceof Uint8Array) s += "b" + a.length + ":" + latin1(a);
      // Not an argument at all: the encoder refuses it with its clear TypeError.
      else return undefined;
    }
  }
  return binary ? "~" + s : s;
}

/**
 * One client's cache of read replies, kept true by server-assisted invalidation.
 *
 * @example
 * ```ts ignore
 * import { ClientSideCache } from "./client_side_cache.ts";
 * const cache = new ClientSideCache({ maxEntries: 1000 });
 * const tracking = cache.tracking(3); // one per executor: its hooks go into the executor
 * const value = await cache.run(["GET", "k"], undefined, FLAG_READONLY, undefined, exec);
 * cache.invalidateAll(); // e.g. the multi-database client switched databases
 * ```
 */
export class ClientSideCache {
  /** The resolved options. */
  readonly options: ResolvedCacheOptions;
  readonly #store: CacheStore<RespValue>;
  readonly #logger: Logger;
  readonly #prefixes: readonly string[];
  /** Tracking sessions whose connection does not track now. */
  #inactive = 0;
  /** Milliseconds a reply of an absent key is kept when owners move; -1: not kept; 0: no bound. */
  #missTtl = 0;
  /** Tracking sessions whose invalidation connection is overdue (silent for `maxStaleness`). */
  #overdue = 0;

  /**
   * Creates an empty cache; reads are answered from memory once a tracking session is on.
   *
   * @param options The cache options (`true` for the defaults).
   * @param deps Logger and clock.
   */
  constructor(
    options: ClientSideCacheOptions | ResolvedCacheOptions | true,
    deps: ClientSideCacheDeps = {},
  ) {
    this.options = resolveCacheOptions(options as ClientSideCacheOptions | true);
    this.#store = new CacheStore<RespValue>({
      maxEntries: this.options.maxEntries,
      maxBytes: this.options.maxBytes,
      ttl: this.options.ttl,
      clock: deps.clock,
    });
    this.#logger = deps.logger ?? silentLogger;
    this.#prefixes = this.options.prefixes;
    if (deps.ownersMove) {
      const ttl = this.options.ttl;
      const miss = this.options.clusterMissTtl;
      this.#missTtl = miss === 0 ? -1 : ttl > 0 ? Math.min(ttl, miss) : miss;
    }
  }

  /**
   * Creates the tracking session of one executor (its connections' session steps, pushes and
   * losses). The cache answers from memory only while no session is off: a session is idle until
   * its executor's first socket (whose session step flushes the cache), then on while its
   * connection tracks.
   *
   * @param protocol The executor's RESP version: 3 tracks on the data connection, 2 redirects
   *   the invalidations to a connection subscribed to `__redis__:invalidate`.
   * @returns The session; wire it with `executorHooks()` and `attach(node)`.
   */
  tracking(protocol: 2 | 3): TrackingSession {
    return new TrackingSession(this, protocol, this.#logger);
  }

  /**
   * @internal A tracking session's state changed (the session flushes the cache itself).
   *
   * @ignore
   */
  _sessionChanged(wasOff: boolean, isOff: boolean): void {
    if (wasOff) this.#inactive--;
    if (isOff) this.#inactive++;
  }

  /**
   * @internal A session's invalidation connection became overdue (nothing read on it for
   * `maxStaleness`: the cache is flushed and bypassed) or was heard from again.
   * @ignore
   */
  _sessionOverdue(overdue: boolean): void {
    if (overdue) {
      if (this.#overdue++ === 0) {
        this.#logger.warn(
          `Client-side cache: nothing read on the invalidation connection for ${this.options.maxStaleness} ms; flushed, reads go to the server until it answers`,
        );
      }
      this.#store.invalidateAll();
    } else if (--this.#overdue === 0) {
      this.#logger.debug("Client-side cache: the invalidation connection answers again");
    }
  }

  /**
   * Runs one command through the cache: a cacheable read is answered from memory or sent and
   * its reply kept; a write drops the keys it changes before it is sent (and, for blocking
   * commands, again when it is done).
   *
   * @param args The command.
   * @param transform The reply transform (applied to a private copy on every hit).
   * @param flags The command's flags (`FLAG_READONLY`, `FLAG_BINARY`, ...).
   * @param blockMs The block time of a blocking command.
   * @param exec Runs the command on the server.
   * @returns The transformed reply.
   */
  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    exec: CommandExec,
  ): Promise<unknown> {
    if ((flags & (FLAG_READONLY | FLAG_BLOCKING)) !== FLAG_READONLY) {
      return this.#write(args, transform, flags, blockMs, exec);
    }
    const key = cacheableKeyOf(args);
    if (key === undefined || !this.#wanted(key)) return exec(args, transform, flags, blockMs);
    const id = commandId(args, (flags & FLAG_BINARY) !== 0);
    if (id === undefined) return exec(args, transform, flags, blockMs);
    const store = this.#store;
    const hit = store.get(key, id);
    if (hit !== undefined) return answer(hit.value, transform, flags);
    // Not kept while a session is off or overdue (the cache was flushed then).
    if (this.#inactive + this.#overdue > 0) return exec(args, transform, flags, blockMs);
    const ticket = store.begin(key);
    return exec(args, undefined, flags, blockMs).then((raw) => {
      const v = raw as RespValue;
      if (v instanceof Error) {
        // A pipeline's error value.
        store.release(key);
        return v;
      }
      const bytes = replyBytes(v) + key.length + id.length + ENTRY_OVERHEAD;
      const missTtl = this.#missTtl;
      if (missTtl === 0 || !absentReply(v)) store.settle(ticket, key, id, copyReply(v), bytes);
      else if (missTtl > 0) store.settle(ticket, key, id, copyReply(v), bytes, missTtl);
      else store.release(key);
      if (transform === undefined) return v;
      if ((flags & FLAG_ERRORS_AS_VALUES) === 0) return transform(v);
      try {
        return transform(v);
      } catch (e) {
        return e;
      }
    }, (e) => {
      store.release(key);
      throw e;
    });
  }

  #write(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    exec: CommandExec,
  ): Promise<unknown> {
    this.noteWrite(args);
    const p = exec(args, transform, flags, blockMs);
    if ((flags & FLAG_BLOCKING) !== 0) {
      // It writes when it unblocks, on another connection than the one tracking.
      const after = () => this.noteWrite(args);
      p.then(after, after);
    }
    return p;
  }

  /**
   * Sends a group (a transaction) with `exec`, dropping the keys its writes change before it is
   * sent and again once it is done (its replies come before the invalidation messages may).
   *
   * @param commands The group.
   * @param exec Sends the group.
   * @returns One promise per command.
   */
  sendAll<C extends CacheGroupCommand>(
    commands: C[],
    exec: (commands: C[]) => Promise<unknown>[],
  ): Promise<unknown>[] {
    const note = () => {
      for (const c of commands) this.noteWrite(c.args);
    };
    note();
    const out = exec(commands);
    const last = out[out.length - 1];
    if (last !== undefined) last.then(note, note);
    return out;
  }

  /**
   * Drops what a write is about to change: its keys (as the command key table finds them), or
   * everything for `FLUSHALL`/`FLUSHDB`/`SWAPDB`. Reads of those keys on their way are not kept.
   *
   * @param args The command.
   */
  noteWrite(args: readonly RedisArgument[]): void {
    const keys = writtenKeys(args);
    if (keys === undefined) return;
    if (keys === "all") this.#store.invalidateAll();
    else this.#store.invalidate(keys);
  }

  #wanted(key: string): boolean {
    const p = this.#prefixes;
    if (p.length === 0) return true;
    for (let i = 0; i < p.length; i++) if (key.startsWith(p[i] as string)) return true;
    return false;
  }

  /**
   * Drops every reply; no read on its way is kept. For a switch to another server or database.
   *
   * @example
   * ```ts ignore
   * cache.invalidateAll();
   * ```
   */
  invalidateAll(): void {
    this.#store.invalidateAll();
  }

  /**
   * Drops the replies of these keys.
   *
   * @param keys Key names (as the invalidation messages name them).
   *
   * @example
   * ```ts ignore
   * cache.invalidateKeys(["user:1"]);
   * ```
   */
  invalidateKeys(keys: Iterable<string>): void {
    this.#store.invalidate(keys);
  }

  /**
   * Drops the replies of every key matching `pred`, e.g. the keys of the slots a cluster
   * migration moved.
   *
   * @param pred Whether a key's replies go.
   *
   * @example
   * ```ts ignore
   * cache.invalidateWhere((key) => moved.has(keySlot(key)));
   * ```
   */
  invalidateWhere(pred: (key: string) => boolean): void {
    this.#store.invalidateWhere(pred);
  }

  /**
   * The counters.
   *
   * @returns Hits, misses, entries, bytes, evictions, invalidations, flushes.
   */
  stats(): CacheStats {
    return this.#store.stats();
  }
}

function answer(
  value: RespValue,
  transform: Transform | undefined,
  flags: number,
): Promise<unknown> {
  const v = copyReply(value);
  if (transform === undefined) return Promise.resolve(v);
  try {
    return Promise.resolve(transform(v));
  } catch (e) {
    return (flags & FLAG_ERRORS_AS_VALUES) !== 0 ? Promise.resolve(e) : Promise.reject(e);
  }
}
