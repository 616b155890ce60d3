/**
 * `@edge/redis/sentinel`: {@linkcode RedisSentinelClient}, a client that finds the master (or
 * a replica) of a name through Redis Sentinel and follows failovers. It has the standalone
 * client's commands, pipelines, transactions, `WATCH` sessions and subscriptions.
 *
 * @example
 * ```ts ignore
 * import { RedisSentinelClient } from "@edge/redis/sentinel";
 * await using client = new RedisSentinelClient({
 *   masterName: "mymaster",
 *   sentinels: ["redis://127.0.0.1:26379", "redis://127.0.0.1:26380", "redis://127.0.0.1:26381"],
 * });
 * client.addEventListener("switch", (e) => console.log("master is now", e.detail.to));
 * await client.incr("visits");
 * ```
 *
 * @module
 */
export {
  RedisSentinelClient,
  type RedisSentinelClientEventMap,
  type RedisSentinelClientEventName,
  type SentinelSwitchDetail,
} from "./sentinel_client.ts";
export type { RedisSentinelClientOptions } from "./options.ts";
