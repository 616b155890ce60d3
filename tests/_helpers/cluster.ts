// Starts a real Redis Cluster for the tests (redis-server --cluster-enabled yes on free loopback
// ports, assembled with CLUSTER ADDSLOTSRANGE / MEET / REPLICATE). The implementation is the
// simulator's (src/testing/_redis_cluster.ts); this adds the test defaults.
import {
  type RedisCluster,
  type RedisClusterOptions,
  startRedisCluster,
} from "../../src/testing/_redis_cluster.ts";

export type {
  AnnouncedAddress,
  MigrateOptions,
  MigrateResult,
  RedisCluster,
  RedisClusterNode,
  RedisClusterOptions,
} from "../../src/testing/_redis_cluster.ts";
export { SLOT_COUNT, slotKey } from "../../src/testing/_redis_cluster.ts";

/** Starts a cluster: 3 primaries with 1 replica each by default, debug command enabled. */
export function startCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  return startRedisCluster({
    ...options,
    args: ["--enable-debug-command", "yes", ...(options.args ?? [])],
  });
}
