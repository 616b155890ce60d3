/**
 * The bounded store of the client-side cache: replies by the key they read and the rest of their
 * command (an entry name that is unique among the commands of one key), evicted least recently
 * used first past `maxEntries` or `maxBytes`, expired after `ttl`. Pure: the time comes from an
 * injected clock.
 *
 * It also keeps the replies that are on their way: a read registers its key when it is sent
 * ({@linkcode CacheStore.begin}) and offers its reply when it arrives
 * ({@linkcode CacheStore.settle}); the reply is kept only if no invalidation of that key (and no
 * flush) happened in between, so a value the server already declared changed is never stored.
 *
 * @module
 */

import type { Clock } from "../_clock.ts";

/**
 * Counters of a cache, as returned by `cacheStats()`.
 *
 * @example
 * ```ts ignore
 * const { hits, misses } = client.cacheStats()!;
 * console.log(`hit ratio ${(hits / (hits + misses)).toFixed(3)}`);
 * ```
 */
export interface CacheStats {
  /** Reads answered from memory. */
  hits: number;
  /** Cacheable reads sent to the server. */
  misses: number;
  /** Replies kept now. */
  entries: number;
  /** Estimated bytes of the replies kept now. */
  bytes: number;
  /** Replies evicted by `maxEntries`, `maxBytes` or `ttl`. */
  evictions: number;
  /** Replies dropped because their key changed or the whole cache was flushed. */
  invalidations: number;
  /** Times the whole cache was dropped (null invalidation, lost or replaced connection, ...). */
  flushes: number;
  /** Of `evictions`, the replies whose `ttl` had passed. */
  expired: number;
  /** Estimated bytes of the replies answered from memory (network traffic saved). */
  bytesSaved: number;
}

/** Settings of a {@linkcode CacheStore}. */
export interface CacheStoreOptions {
  /** Most entries. */
  maxEntries: number;
  /** Most estimated bytes. */
  maxBytes: number;
  /** Lifetime of an entry in ms; 0 = none. */
  ttl: number;
  /** Where the time of `ttl` comes from (only `now` is read). @default {Date.now} */
  clock?: Pick<Clock, "now">;
}

/** One kept reply. */
export interface CacheEntry<V> {
  /** The reply. */
  readonly value: V;
  /**
   * @internal
   *
   * @ignore
   */
  readonly id: string;
  /**
   * @internal
   *
   * @ignore
   */
  readonly key: string;
  /**
   * @internal
   *
   * @ignore
   */
  readonly bytes: number;
  /**
   * @internal
   *
   * @ignore
   */
  readonly expiresAt: number;
  /**
   * @internal LRU list: towards the most recently used.
   *
   * @ignore
   */
  newer: CacheEntry<V> | undefined;
  /**
   * @internal LRU list: towards the least recently used.
   *
   * @ignore
   */
  older: CacheEntry<V> | undefined;
  /**
   * @internal The other entries of the same key.
   *
   * @ignore
   */
  nextOfKey: CacheEntry<V> | undefined;
  /**
   * @internal
   *
   * @ignore
   */
  prevOfKey: CacheEntry<V> | undefined;
}

/** Reads of one key on their way. */
interface InFlight {
  count: number;
  /** Sequence number of the last invalidation of the key while reads were on their way. */
  invalidatedAt: number;
}

/**
 * A bounded LRU store of replies with per-key invalidation and in-flight tracking.
 *
 * @example
 * ```ts
 * import { CacheStore } from "./cache_store.ts";
 * const store = new CacheStore<string>({ maxEntries: 2, maxBytes: 1 << 20, ttl: 0 });
 * const ticket = store.begin("k");
 * store.settle(ticket, "k", "GET", "v", 1); // true: kept
 * store.get("k", "GET")?.value; // "v"
 * store.invalidate(["k"]);
 * store.get("k", "GET"); // undefined
 * ```
 */
export class CacheStore<V> {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #ttl: number;
  readonly #clock: Pick<Clock, "now">;
  /** The first entry of each key; the others follow on `nextOfKey`. */
  readonly #byKey = new Map<string, CacheEntry<V>>();
  #count = 0;
  readonly #inFlight = new Map<string, InFlight>();
  #newest: CacheEntry<V> | undefined;
  #oldest: CacheEntry<V> | undefined;
  #bytes = 0;
  /** Bumped by every invalidation and flush; a ticket is its value when the read was sent. */
  #seq = 0;
  #flushedAt = 0;
  #hits = 0;
  #expired = 0;
  #bytesSaved = 0;
  #misses = 0;
  #evictions = 0;
  #invalidations = 0;
  #flushes = 0;

  /**
   * Creates an empty store.
   *
   * @param options Bounds and clock.
   */
  constructor(options: CacheStoreOptions) {
    this.#maxEntries = options.maxEntries;
    this.#maxBytes = options.maxBytes;
    this.#ttl = options.ttl;
    this.#clock = options.clock ?? { now: Date.now };
  }

  /** Number of entries. */
  get size(): number {
    return this.#count;
  }

  #find(key: string, id: string): CacheEntry<V> | undefined {
    let e = this.#byKey.get(key);
    while (e !== undefined && e.id !== id) e = e.nextOfKey;
    return e;
  }

  /**
   * Looks a reply up and marks it most recently used; counts a hit or a miss.
   *
   * @param key The key the command reads.
   * @param id The rest of the command (its name among the commands of `key`).
   * @returns The entry, or `undefined` (an expired one is dropped).
   */
  get(key: string, id: string): CacheEntry<V> | undefined {
    const e = this.#find(key, id);
    if (e === undefined) {
      this.#misses++;
      return undefined;
    }
    if (e.expiresAt !== 0 && this.#clock.now() >= e.expiresAt) {
      this.#remove(e);
      this.#evictions++;
      this.#expired++;
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    this.#bytesSaved += e.bytes;
    if (e !== this.#newest) {
      this.#unlink(e);
      this.#pushNewest(e);
    }
    return e;
  }

  /**
   * Registers a read of `key` being sent.
   *
   * @param key The key it reads.
   * @returns The ticket to pass to {@linkcode CacheStore.settle} or {@linkcode CacheStore.release}.
   */
  begin(key: string): number {
    const f = this.#inFlight.get(key);
    if (f === undefined) this.#inFlight.set(key, { count: 1, invalidatedAt: 0 });
    else f.count++;
    return this.#seq;
  }

  /**
   * A read registered with `begin` ended without a reply to keep.
   *
   * @param key The key it read.
   */
  release(key: string): void {
    const f = this.#inFlight.get(key);
    if (f === undefined) return;
    if (--f.count === 0) this.#inFlight.delete(key);
  }

  /**
   * The reply of a read registered with `begin` arrived: keeps it unless the key was invalidated
   * (or the store flushed) since, or it is larger than `maxBytes`.
   *
   * @param ticket What `begin` returned.
   * @param key The key the read reads.
   * @param id The rest of the command, as for {@linkcode CacheStore.get}.
   * @param value The reply (kept as is: pass a private copy).
   * @param bytes Its estimated size.
   * @param ttl Milliseconds it may be served (0 = until invalidated); the store's `ttl` when
   *   not given.
   * @returns Whether it was kept.
   */
  settle(
    ticket: number,
    key: string,
    id: string,
    value: V,
    bytes: number,
    ttl: number = this.#ttl,
  ): boolean {
    const f = this.#inFlight.get(key);
    let stale = ticket < this.#flushedAt;
    if (f !== undefined) {
      if (f.invalidatedAt > ticket) stale = true;
      if (--f.count === 0) this.#inFlight.delete(key);
    }
    if (stale || bytes > this.#maxBytes) return false;
    const old = this.#find(key, id);
    if (old !== undefined) this.#remove(old);
    const e: CacheEntry<V> = {
      value,
      id,
      key,
      bytes,
      expiresAt: ttl > 0 ? this.#clock.now() + ttl : 0,
      newer: undefined,
      older: undefined,
      nextOfKey: this.#byKey.get(key),
      prevOfKey: undefined,
    };
    if (e.nextOfKey !== undefined) e.nextOfKey.prevOfKey = e;
    this.#byKey.set(key, e);
    this.#count++;
    this.#pushNewest(e);
    this.#bytes += bytes;
    while (this.#count > this.#maxEntries || this.#bytes > this.#maxBytes) {
      const victim = this.#oldest;
      if (victim === undefined || victim === e) break;
      this.#remove(victim);
      this.#evictions++;
    }
    return true;
  }

  /**
   * Drops the replies of these keys; reads of them on their way will not be kept.
   *
   * @param keys The keys that changed.
   */
  invalidate(keys: Iterable<string>): void {
    for (const key of keys) {
      const f = this.#inFlight.get(key);
      if (f !== undefined) f.invalidatedAt = ++this.#seq;
      let e = this.#byKey.get(key);
      while (e !== undefined) {
        const next = e.nextOfKey;
        this.#remove(e);
        this.#invalidations++;
        e = next;
      }
    }
  }

  /**
   * Drops the replies of every key matching `pred` (a cluster: the keys of migrated slots);
   * reads of such keys on their way will not be kept.
   *
   * @param pred Whether a key's replies go.
   */
  invalidateWhere(pred: (key: string) => boolean): void {
    const keys: string[] = [];
    for (const key of this.#byKey.keys()) if (pred(key)) keys.push(key);
    for (const key of this.#inFlight.keys()) if (!this.#byKey.has(key) && pred(key)) keys.push(key);
    this.invalidate(keys);
  }

  /** Drops everything; no read on its way will be kept. */
  invalidateAll(): void {
    this.#flushedAt = ++this.#seq;
    this.#flushes++;
    this.#invalidations += this.#count;
    this.#count = 0;
    this.#byKey.clear();
    this.#newest = this.#oldest = undefined;
    this.#bytes = 0;
  }

  /**
   * The counters.
   *
   * @returns A snapshot.
   */
  stats(): CacheStats {
    return {
      hits: this.#hits,
      misses: this.#misses,
      entries: this.#count,
      bytes: this.#bytes,
      evictions: this.#evictions,
      invalidations: this.#invalidations,
      flushes: this.#flushes,
      expired: this.#expired,
      bytesSaved: this.#bytesSaved,
    };
  }

  #pushNewest(e: CacheEntry<V>): void {
    e.older = this.#newest;
    e.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = e;
    this.#newest = e;
    if (this.#oldest === undefined) this.#oldest = e;
  }

  #unlink(e: CacheEntry<V>): void {
    if (e.newer !== undefined) e.newer.older = e.older;
    else this.#newest = e.older;
    if (e.older !== undefined) e.older.newer = e.newer;
    else this.#oldest = e.newer;
    e.newer = e.older = undefined;
  }

  #remove(e: CacheEntry<V>): void {
    this.#unlink(e);
    this.#count--;
    this.#bytes -= e.bytes;
    if (e.prevOfKey !== undefined) e.prevOfKey.nextOfKey = e.nextOfKey;
    else if (e.nextOfKey !== undefined) this.#byKey.set(e.key, e.nextOfKey);
    else this.#byKey.delete(e.key);
    if (e.nextOfKey !== undefined) e.nextOfKey.prevOfKey = e.prevOfKey;
    e.nextOfKey = e.prevOfKey = undefined;
  }
}
