/**
 * Options of {@linkcode RedisClusterClient} and their defaults.
 *
 * @module
 */

import type { RedisClientOptions } from "../client/options.ts";
import { checkClientOptionKeys, CLIENT_OPTION_KEYS, parseRedisUrl } from "../client/options.ts";
import { type KeyTable, received } from "../_validate.ts";
import { type Endpoint as HostPort, splitEndpoint } from "../endpoint.ts";
import type { NodeAddressMap } from "./topology.ts";

/** Where reads (commands with the `readonly` flag) go. */
export type ReadFrom = "primary" | "replica" | "prefer-replica";

/**
 * Options of a {@linkcode RedisClusterClient}: the seed nodes, the cluster settings, and the
 * connection settings of the standalone client (applied to every node). `clientSideCache` makes
 * one cache for the client, with a tracking session per node.
 *
 * @example
 * ```ts
 * import type { RedisClusterClientOptions } from "@edge/redis/cluster";
 * const options: RedisClusterClientOptions = {
 *   nodes: ["redis://127.0.0.1:7000", "redis://127.0.0.1:7001"],
 *   readFrom: "prefer-replica",
 * };
 * ```
 */
export interface RedisClusterClientOptions
  extends Omit<RedisClientOptions, "url" | "host" | "port" | "db"> {
  /**
   * Seed nodes: `redis://host:port` (`rediss://` for TLS), `host:port`, or `{ host, port }`;
   * a single one may be given without the list. Any one reachable node of the cluster is
   * enough; the others are discovered. Credentials in the first URL apply to every node unless
   * `username` / `password` are given.
   */
  nodes: (string | HostPort)[] | string | HostPort;
  /**
   * Most attempts of one command, redirections and retries included.
   * @default {5}
   */
  maxAttempts?: number;
  /**
   * Longest time, in ms, one command may spend in redirections and retries.
   * @default {10000}
   */
  maxTotalRetriesDuration?: number;
  /**
   * Where reads go: `"primary"`; `"replica"` (a healthy replica of the slot, its primary when it
   * has none); `"prefer-replica"` (like `"replica"`, and the primary while the replica is
   * unreachable).
   * @default {"primary"}
   */
  readFrom?: ReadFrom;
  /**
   * Milliseconds between background topology refreshes; 0 turns them off (refreshes on
   * `MOVED` and on connection errors still happen).
   * @default {60000}
   */
  topologyRefreshInterval?: number;
  /**
   * Milliseconds between checks, while shard subscriptions exist, of whether their slots are
   * migrating: one `EXISTS` of a probe key per subscribed slot, pipelined to the slot's owner,
   * which answers `ASK` while the slot migrates. The client then subscribes on the importing
   * node too (`ASKING` + `SSUBSCRIBE`), before the owner ends its subscription, so no message
   * is lost whoever publishes it. During an SMIGRATING window the checks run every 10 ms, and
   * an `ASK` met by any command starts the same move. 0 turns the periodic checks off. RESP3
   * only: over RESP2 a subscribed connection refuses `ASKING`.
   * @default {100}
   */
  shardMigrationProbeInterval?: number;
  /**
   * Keep a muted copy of each shard subscription on the replicas of its slot's primary. A
   * replica receives the primary's messages through replication and keeps the channel when a
   * failover promotes it, so when the primary ends the channel (it learned of the failover) or
   * its connection is lost, the copy delivers at once: no message is lost in the round trip a
   * new subscription would take. Costs one more copy of every shard message per replica.
   * @default {true}
   */
  failoverShadows?: boolean;
  /**
   * Rewrites the addresses nodes announce (NAT, containers): `{ "10.0.0.5:6379":
   * "127.0.0.1:7000" }`, or a function returning the address to use (or `undefined` to keep it).
   */
  nodeAddressMap?: NodeAddressMap;
  /**
   * What MGET, MSET, DEL, UNLINK, EXISTS and TOUCH do with keys of several slots: `"split"` sends
   * one command per slot in parallel and merges the replies in the caller's order (not atomic:
   * an MSET may be applied on some slots only when a node fails); `"refuse"` rejects them like
   * any other cross-slot command.
   * @default {"split"}
   */
  crossSlot?: "split" | "refuse";
}

/** Internal: A seed, resolved. */
export interface ClusterSeed extends HostPort {
  tls: boolean;
}

/** Internal: Cluster settings with every default applied. */
export interface ResolvedClusterOptions {
  seeds: ClusterSeed[];
  maxAttempts: number;
  maxTotalRetriesDuration: number;
  readFrom: ReadFrom;
  topologyRefreshInterval: number;
  shardMigrationProbeInterval: number;
  failoverShadows: boolean;
  crossSlot: "split" | "refuse";
  /** Connection settings for every node (host and port replaced per node). */
  node: RedisClientOptions;
}

function parseSeed(
  seed: string | HostPort,
): { seed: ClusterSeed; url?: ReturnType<typeof parseRedisUrl> } {
  if (typeof seed === "object" && seed !== null) {
    if (
      typeof seed.host !== "string" || !Number.isInteger(seed.port) || seed.port < 1 ||
      seed.port > 65535
    ) {
      throw new TypeError(
        `Cannot use the seed node ${JSON.stringify(seed)}: expected { host, port }`,
      );
    }
    return { seed: { host: seed.host, port: seed.port, tls: false } };
  }
  if (typeof seed !== "string" || seed.trim() === "") {
    throw new TypeError(`Cannot use the seed node ${String(seed)}: expected "redis://host:port"`);
  }
  const text = seed.trim();
  if (/^rediss?:\/\//i.test(text)) {
    const url = parseRedisUrl(text);
    return {
      seed: { host: url.host ?? "127.0.0.1", port: url.port ?? 6379, tls: url.tls },
      url,
    };
  }
  const e = splitEndpoint(text);
  if (typeof e === "string" || e.port < 1) {
    throw new TypeError(`Cannot use the seed node "${text}": expected "redis://host:port"`);
  }
  return { seed: { host: e.host, port: e.port, tls: false } };
}

function booleanOption(name: string, v: boolean | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== "boolean") {
    throw new TypeError(`Cannot use ${name} ${String(v)}: expected true or false`);
  }
  return v;
}

function integerAtLeast(name: string, v: number | undefined, min: number, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    throw new RangeError(`Cannot use ${name} ${String(v)}: expected an integer >= ${min}`);
  }
  return v;
}

const { url: _u, host: _h, port: _p, db: _db, ...NODE_OPTION_KEYS } = CLIENT_OPTION_KEYS;

/** Internal: The keys of {@linkcode RedisClusterClientOptions}. */
export const CLUSTER_OPTION_KEYS: KeyTable<RedisClusterClientOptions> = {
  ...NODE_OPTION_KEYS,
  nodes: true,
  maxAttempts: true,
  maxTotalRetriesDuration: true,
  readFrom: true,
  topologyRefreshInterval: true,
  shardMigrationProbeInterval: true,
  failoverShadows: true,
  nodeAddressMap: true,
  crossSlot: true,
};

const SEEDS_HINT =
  'the cluster\'s nodes come from its seeds: give them as nodes: ["redis://host:port"]';
const CLUSTER_HINTS: Readonly<Record<string, string>> = {
  url: SEEDS_HINT,
  host: SEEDS_HINT,
  port: SEEDS_HINT,
  db: "a cluster has only database 0",
};

/** Internal: Applies defaults and validates. */
export function resolveClusterOptions(o: RedisClusterClientOptions): ResolvedClusterOptions {
  if (o === null || typeof o !== "object" || Array.isArray(o)) {
    throw new TypeError(
      `Cannot create the cluster client from ${
        typeof o === "string" ? "a string" : received(o)
      }: expected an options object, e.g. { nodes: ["redis://127.0.0.1:7000"] }`,
    );
  }
  checkClientOptionKeys(o, CLUSTER_OPTION_KEYS, "the cluster client", CLUSTER_HINTS);
  const nodes = typeof o.nodes === "string" || (typeof o.nodes === "object" && o.nodes !== null &&
      !Array.isArray(o.nodes))
    ? [o.nodes]
    : o.nodes;
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new TypeError(
      `Cannot create the cluster client: nodes is ${
        Array.isArray(nodes) ? "empty" : received(nodes)
      }; give at least one seed, e.g. nodes: ["redis://127.0.0.1:7000"]`,
    );
  }
  const parsed = nodes.map(parseSeed);
  const first = parsed[0]!.url;
  const readFrom = o.readFrom ?? "primary";
  if (readFrom !== "primary" && readFrom !== "replica" && readFrom !== "prefer-replica") {
    throw new RangeError(
      `Cannot use readFrom "${
        String(readFrom)
      }": expected "primary", "replica" or "prefer-replica"`,
    );
  }
  const crossSlot = o.crossSlot ?? "split";
  if (crossSlot !== "split" && crossSlot !== "refuse") {
    throw new RangeError(
      `Cannot use crossSlot "${String(crossSlot)}": expected "split" or "refuse"`,
    );
  }
  const tls = o.tls ?? (parsed.some((p) => p.seed.tls) ? true : undefined);
  const {
    nodes: _n,
    maxAttempts: _a,
    maxTotalRetriesDuration: _d,
    readFrom: _r,
    topologyRefreshInterval: _t,
    shardMigrationProbeInterval: _p,
    failoverShadows: _f,
    nodeAddressMap: _m,
    crossSlot: _c,
    ...node
  } = o;
  return {
    seeds: parsed.map((p) => p.seed),
    maxAttempts: integerAtLeast("maxAttempts", o.maxAttempts, 1, 5),
    maxTotalRetriesDuration: integerAtLeast(
      "maxTotalRetriesDuration",
      o.maxTotalRetriesDuration,
      0,
      10_000,
    ),
    readFrom,
    topologyRefreshInterval: integerAtLeast(
      "topologyRefreshInterval",
      o.topologyRefreshInterval,
      0,
      60_000,
    ),
    shardMigrationProbeInterval: integerAtLeast(
      "shardMigrationProbeInterval",
      o.shardMigrationProbeInterval,
      0,
      100,
    ),
    failoverShadows: booleanOption("failoverShadows", o.failoverShadows, true),
    crossSlot,
    node: {
      ...node,
      username: o.username ?? first?.username,
      password: o.password ?? first?.password,
      tls,
    },
  };
}
