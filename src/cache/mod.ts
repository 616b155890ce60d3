/**
 * `@edge/redis/cache`: client-side caching as a part. {@linkcode clientSideCache} makes the value
 * the `clientSideCache` option of every client kind takes; importing this entry is what brings
 * the cache's code (the store, the tracking sessions, the command key table) into a bundle, so
 * `@edge/redis` alone carries none of it.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { clientSideCache } from "@edge/redis/cache";
 * await using client = new RedisClient({
 *   url: "redis://127.0.0.1:6379",
 *   clientSideCache: clientSideCache({ maxEntries: 10_000 }),
 * });
 * await client.get("user:1"); // from the server, then from memory until the key changes
 * ```
 *
 * @module
 */
export { clientSideCache, type ClientSideCachePart } from "./part.ts";
export type { ClientSideCacheOptions } from "./options.ts";
export type { CacheStats } from "./cache_store.ts";
