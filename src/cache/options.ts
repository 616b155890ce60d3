/**
 * Options of the client-side cache and their validation.
 *
 * @module
 */

/**
 * Settings of the client-side cache (server-assisted, RESP3 tracking or RESP2 redirect).
 *
 * @example
 * ```ts
 * import type { ClientSideCacheOptions } from "@edge/redis";
 * const cache: ClientSideCacheOptions = { maxEntries: 50_000, mode: "broadcast", prefixes: ["user:"] };
 * ```
 */
export interface ClientSideCacheOptions {
  /**
   * Most replies kept; past it the least recently used one is evicted.
   * @default {10000}
   */
  maxEntries?: number;
  /**
   * Most bytes of replies kept (an estimate: the UTF-16 length of strings, the length of byte
   * arrays, plus a fixed overhead per entry and per aggregate element); past it the least
   * recently used reply is evicted. A single reply larger than this is not cached.
   * @default {33554432}
   */
  maxBytes?: number;
  /**
   * Longest a reply is served from memory, in ms, as an extra bound next to invalidation;
   * 0 = until invalidated or evicted.
   * @default {0}
   */
  ttl?: number;
  /**
   * Cluster clients only: longest a reply that says its key is absent (`null`, `0`, `-1`, `-2`,
   * `""`, `"none"`, an empty aggregate or one of only such values) is served from memory, in
   * ms; 0 = such replies are not kept. A slot that moves to another node takes no invalidation
   * for keys that did not exist: a write to one on the new owner reaches no tracking table of
   * this client, so this bounds how long such a miss can be stale. Replies of existing keys
   * need no bound: the old owner invalidates them when they migrate away.
   * @default {1000}
   */
  clusterMissTtl?: number;
  /**
   * `"default"`: the server remembers the keys this client read and invalidates those;
   * `"broadcast"`: the server invalidates every key starting with one of `prefixes` (no per-key
   * memory on the server, more invalidation traffic).
   * @default {"default"}
   */
  mode?: "default" | "broadcast";
  /**
   * Only keys starting with one of these are cached (all keys when empty). In broadcast mode
   * they are also the `BCAST PREFIX` list of `CLIENT TRACKING`; prefixes must not overlap.
   * @default {[]}
   */
  prefixes?: string[];
  /**
   * Longest the cache answers from memory without hearing from the server on the connection
   * that carries the invalidations (RESP3: the shared connection; RESP2: the one subscribed to
   * `__redis__:invalidate`), in ms. That connection writes a `PING` after half of it of silence;
   * once nothing was read on it for this long (a network path that went silent), the cache is
   * flushed and every read goes to the server until a reply arrives on it again. This bounds how
   * long a hit can be stale when invalidations cannot arrive. 0 = no bound (and no probe).
   * @default {1000}
   */
  maxStaleness?: number;
}

/** Internal: The cache options with every default applied. */
export interface ResolvedCacheOptions {
  maxEntries: number;
  maxBytes: number;
  ttl: number;
  clusterMissTtl: number;
  mode: "default" | "broadcast";
  prefixes: readonly string[];
  maxStaleness: number;
}

/** Default `maxEntries`. */
export const DEFAULT_MAX_ENTRIES = 10_000;
/** Default `clusterMissTtl` (ms). */
export const DEFAULT_CLUSTER_MISS_TTL = 1000;

/** Default `maxStaleness`, ms. */
export const DEFAULT_MAX_STALENESS = 1000;

/** Default `maxBytes` (32 MiB). */
export const DEFAULT_MAX_BYTES: number = 32 * 1024 * 1024;

function count(name: string, v: number | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    throw new RangeError(
      `Cannot use clientSideCache.${name} ${String(v)}: expected an integer of at least ${min}`,
    );
  }
  return v;
}

/**
 * Applies the defaults and validates: `RangeError` for a bad number, `TypeError` for a bad
 * mode or prefix list.
 *
 * @param o The options; `true` for the defaults.
 * @returns The resolved options.
 *
 * @example
 * ```ts
 * import { resolveCacheOptions } from "./options.ts";
 * resolveCacheOptions({ maxEntries: 500 }).maxBytes; // 33554432
 * ```
 */
export function resolveCacheOptions(o: ClientSideCacheOptions | true): ResolvedCacheOptions {
  const opts: ClientSideCacheOptions = o === true ? {} : o;
  if (typeof opts !== "object" || opts === null) {
    throw new TypeError("Cannot use clientSideCache: expected an options object");
  }
  const mode = opts.mode ?? "default";
  if (mode !== "default" && mode !== "broadcast") {
    throw new TypeError(
      `Cannot use clientSideCache.mode "${String(mode)}": expected "default" or "broadcast"`,
    );
  }
  const prefixes = opts.prefixes ?? [];
  if (!Array.isArray(prefixes) || prefixes.some((p) => typeof p !== "string" || p === "")) {
    throw new TypeError("Cannot use clientSideCache.prefixes: expected non-empty strings");
  }
  for (const a of prefixes) {
    for (const b of prefixes) {
      if (a !== b && b.startsWith(a)) {
        throw new TypeError(
          `Cannot use clientSideCache.prefixes: "${a}" overlaps with "${b}" (the server refuses overlapping prefixes)`,
        );
      }
    }
  }
  const ttl = opts.ttl ?? 0;
  if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl < 0) {
    throw new RangeError(
      `Cannot use clientSideCache.ttl ${String(ttl)}: expected a non-negative number`,
    );
  }
  const maxStaleness = opts.maxStaleness ?? DEFAULT_MAX_STALENESS;
  if (typeof maxStaleness !== "number" || !Number.isFinite(maxStaleness) || maxStaleness < 0) {
    throw new RangeError(
      `Cannot use clientSideCache.maxStaleness ${
        String(maxStaleness)
      }: expected a non-negative number`,
    );
  }
  return {
    maxEntries: count("maxEntries", opts.maxEntries, DEFAULT_MAX_ENTRIES, 1),
    maxBytes: count("maxBytes", opts.maxBytes, DEFAULT_MAX_BYTES, 1),
    ttl,
    clusterMissTtl: count("clusterMissTtl", opts.clusterMissTtl, DEFAULT_CLUSTER_MISS_TTL, 0),
    mode,
    prefixes: [...new Set(prefixes)],
    maxStaleness,
  };
}
