// Type-level tests of the client constructors (checked by `deno check`, never run): a URL string
// first, as the standalone client takes it; a single seed or sentinel without the list.
import { RedisClient } from "../../mod.ts";
import { RedisClusterClient } from "../../src/cluster/mod.ts";
import { RedisSentinelClient } from "../../src/sentinel/mod.ts";

export function constructors(): void {
  new RedisClient("redis://127.0.0.1:6380");
  new RedisClient("rediss://cache.example:6380/1", { commandTimeout: 2000 });
  new RedisClient("127.0.0.1:6380");
  new RedisClient({ url: "redis://127.0.0.1:6380" });
  new RedisClient();
  // @ts-expect-error: the URL is given once
  new RedisClient("redis://h:1", { url: "redis://h:2" });
  // @ts-expect-error: a port alone is not a URL (give { port })
  new RedisClient(6380);

  new RedisClusterClient({ nodes: "127.0.0.1:7000" });
  new RedisClusterClient({ nodes: { host: "127.0.0.1", port: 7000 } });
  // @ts-expect-error: the cluster client takes its options object only
  new RedisClusterClient("redis://127.0.0.1:7000");
  new RedisSentinelClient({ masterName: "m", sentinels: "127.0.0.1:26379" });
}
