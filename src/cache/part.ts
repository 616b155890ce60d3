/**
 * The client-side cache as a part: {@linkcode clientSideCache} makes the value every client kind
 * takes as its `clientSideCache` option. The cache's code (the store, the tracking sessions and
 * the command key table it reads) is reached only from here, so a bundle of `@edge/redis` that
 * never imports `@edge/redis/cache` carries none of it.
 *
 * @module
 */

import { checkKeys, type KeyTable } from "../_validate.ts";
import { ClientSideCache, type ClientSideCacheDeps } from "./client_side_cache.ts";
import { type ClientSideCacheOptions, resolveCacheOptions } from "./options.ts";

/**
 * A client-side cache part: what {@linkcode clientSideCache} returns, passed as the
 * `clientSideCache` option of `RedisClient`, `RedisClusterClient`, `RedisSentinelClient` or
 * `MultiDbClient`. It holds the validated settings only: every client given the part builds a
 * cache of its own from it, so one part may be passed to several clients (they share no
 * entries and no counters).
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { clientSideCache } from "@edge/redis/cache";
 * const cache = clientSideCache({ maxEntries: 10_000 });
 * const client = new RedisClient({ url: "redis://127.0.0.1:6379", clientSideCache: cache });
 * ```
 */
export interface ClientSideCachePart {
  /** What the part is: always `"clientSideCache"`. */
  readonly part: "clientSideCache";
  /**
   * @internal Builds the cache of one client (a new one on every call).
   * @ignore
   */
  _create(deps: ClientSideCacheDeps): ClientSideCache;
}

const CACHE_OPTION_KEYS: KeyTable<ClientSideCacheOptions> = {
  maxEntries: true,
  maxBytes: true,
  ttl: true,
  mode: true,
  prefixes: true,
  clusterMissTtl: true,
  maxStaleness: true,
};

/**
 * Makes a client-side cache part: replies of read commands kept in memory and answered from
 * there, kept true by server-assisted invalidation (RESP3 `CLIENT TRACKING`, or on RESP2 a
 * connection subscribed to `__redis__:invalidate`). Pass it as the `clientSideCache` option of
 * any client kind. The options are checked here, once.
 *
 * @param options The cache settings; the defaults when omitted.
 * @returns The part, for the `clientSideCache` option (reusable: each client builds its own
 *   cache from it).
 * @throws {TypeError} An unknown option (with a "Did you mean" hint), a bad `mode` or `prefixes`.
 * @throws {RangeError} A bad number.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { clientSideCache } from "@edge/redis/cache";
 * await using client = new RedisClient({
 *   url: "redis://127.0.0.1:6379",
 *   clientSideCache: clientSideCache({ maxEntries: 10_000 }),
 * });
 * await client.get("user:1"); // from the server
 * await client.get("user:1"); // from memory, until the key changes
 * console.log(client.cacheStats()?.hits); // 1
 * ```
 */
export function clientSideCache(options?: ClientSideCacheOptions): ClientSideCachePart {
  const o = options === undefined ? {} : options;
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new TypeError(
      `Cannot make the client-side cache from ${
        Array.isArray(o) ? "an array" : o === null ? "null" : `a ${typeof o}`
      }: expected an options object, e.g. clientSideCache({ maxEntries: 10_000 })`,
    );
  }
  checkKeys(o, CACHE_OPTION_KEYS, "clientSideCache");
  const resolved = resolveCacheOptions(o);
  return Object.freeze({
    part: "clientSideCache",
    _create: (deps: ClientSideCacheDeps) => new ClientSideCache(resolved, deps),
  });
}
