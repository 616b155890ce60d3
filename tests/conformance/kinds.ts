// The client kinds the conformance suite runs on: for each, how to start its servers, make a
// client of it with given options, tell which server holds a key, and stop. Every kind's
// client is handed to the suite as the one face (`ConformanceClient`) the kinds promise to share.
import { RedisClient } from "../../src/client/redis_client.ts";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { RedisSentinelClient } from "../../src/sentinel/mod.ts";
import { MultiDbClient } from "../../src/multi_db/mod.ts";
import type { MetricsPart, TracingPart } from "../../src/observability/mod.ts";
import type { ClientSideCachePart } from "../../src/cache/mod.ts";
import { startRedis } from "../_helpers/redis_server.ts";
import { startCluster } from "../_helpers/cluster.ts";
import { startSentinelGroup } from "../_helpers/sentinel.ts";

/** A server address. */
export interface Endpoint {
  host: string;
  port: number;
}

/** What the suite may set on a client of any kind. */
export interface KindClientOptions {
  /** `CLIENT SETNAME` of every connection, so the servers can tell the client's sockets. */
  clientName?: string;
  /** The client-side cache (a part of `@edge/redis/cache`). */
  clientSideCache?: ClientSideCachePart;
  /** OpenTelemetry metrics (a multi-db client hands them to its databases' clients). */
  metrics?: MetricsPart;
  /** OpenTelemetry tracing. */
  tracing?: TracingPart;
}

/**
 * The public face every client kind shares: the standalone client's typed commands and its
 * face methods. The suite only calls these.
 */
export type ConformanceClient =
  & Pick<
    RedisClient,
    | Exclude<
      keyof RedisClient,
      | "addEventListener"
      | "removeEventListener"
      | "cacheStats"
      | "destroy"
      | "maintenanceState"
      | "invalidateCache"
    >
    | typeof Symbol.asyncDispose
  >
  & {
    /** Listens to the `close` event (every kind documents it). */
    addEventListener(type: "close", listener: (e: Event) => void): void;
    /** The cache counters, where the kind has them. */
    cacheStats?(): { hits: number; misses: number } | undefined;
  };

/** Servers of one kind, started for one test file. */
export interface Deployment {
  /** Every server a client of this kind may connect to (data nodes, replicas, sentinels). */
  readonly servers: readonly Endpoint[];
  /** The servers that hold data (not sentinels). */
  readonly dataServers: readonly Endpoint[];
  /** The server a key (or a shard channel) lives on, where the client's commands for it run. */
  dataNode(key: string): Endpoint;
  /**
   * A new client. `onStartup` gets one line per event the kind documents for connecting (its
   * typed listeners), e.g. `ready 127.0.0.1:6379`.
   */
  client(options?: KindClientOptions, onStartup?: (line: string) => void): ConformanceClient;
  /** The lines `onStartup` must have seen once the client connected and ran a command. */
  readonly startupLines: readonly string[];
  /** Stops every server. */
  stop(): Promise<void>;
}

/** A client kind: its name and how to deploy it. */
export interface Kind<D extends Deployment = Deployment> {
  readonly name: string;
  start(): Promise<D>;
}

const address = (e: Endpoint): string => `${e.host}:${e.port}`;

/** `RedisClient` on one redis-server. */
export const standalone: Kind = {
  name: "standalone",
  async start() {
    const server = await startRedis();
    return {
      servers: [server],
      dataServers: [server],
      dataNode: () => server,
      client(options = {}, onStartup) {
        const c = new RedisClient({ url: server.url, ...options });
        if (onStartup) {
          c.addEventListener("connect", (e) => onStartup(`connect ${address(e.detail)}`));
          c.addEventListener("ready", (e) => onStartup(`ready ${address(e.detail)}`));
        }
        return c;
      },
      startupLines: [`connect ${address(server)}`, `ready ${address(server)}`],
      stop: () => server.stop(),
    };
  },
};

/** `RedisClusterClient` on 3 primaries with one replica each. */
export const cluster: Kind = {
  name: "cluster",
  async start() {
    const c = await startCluster();
    const nodes = [...c.primaries(), ...c.replicas()];
    return {
      servers: nodes,
      dataServers: nodes,
      dataNode: (key) => c.nodeForSlot(keySlot(key)),
      client(options = {}, onStartup) {
        const client = new RedisClusterClient({ nodes: c.seeds, ...options });
        if (onStartup) {
          client.addEventListener(
            "topology",
            (e) => onStartup(`topology ${e.detail.reason}`),
          );
          client.addEventListener("node-added", (e) => onStartup(`node-added ${e.detail.address}`));
        }
        // Type gap: binary() is typed `RedisCommands<Uint8Array>` (no scan or subscribe family).
        return client as unknown as ConformanceClient;
      },
      startupLines: ["topology refresh", ...nodes.map((n) => `node-added ${address(n)}`)],
      stop: () => c.stop(),
    };
  },
};

/** `RedisSentinelClient` on a master, one replica and three sentinels. */
export const sentinel: Kind = {
  name: "sentinel",
  async start() {
    const group = await startSentinelGroup({ replicas: 1, sentinels: 3, persistence: false });
    const master = group.master;
    return {
      servers: [...group.servers, ...group.sentinels],
      dataServers: group.servers,
      dataNode: () => master,
      client(options = {}, onStartup) {
        const c = new RedisSentinelClient({
          masterName: group.masterName,
          sentinels: group.sentinelUrls,
          ...options,
        });
        if (onStartup) {
          c.addEventListener("switch", (e) => onStartup(`switch ${address(e.detail.to)}`));
          c.addEventListener("connect", (e) => onStartup(`connect ${address(e.detail)}`));
          c.addEventListener("ready", (e) => onStartup(`ready ${address(e.detail)}`));
        }
        return c;
      },
      startupLines: [
        `switch ${address(master)}`,
        `connect ${address(master)}`,
        `ready ${address(master)}`,
      ],
      stop: () => group.stop(),
    };
  },
};

/** The multi-db deployment: two standalone servers, `a` (weight 1, active) and `b`. */
export interface MultiDbDeployment extends Deployment {
  /** The databases by name. */
  readonly databases: { readonly a: Endpoint; readonly b: Endpoint };
  /** A new client, as its own type. */
  multiDb(options?: KindClientOptions): MultiDbClient;
}

/** `MultiDbClient` over two standalone servers. */
export const multiDb: Kind<MultiDbDeployment> = {
  name: "multi-db",
  async start() {
    const [a, b] = await Promise.all([startRedis(), startRedis()]);
    const multiDb = (options: KindClientOptions = {}) =>
      new MultiDbClient({
        databases: [
          { name: "a", url: a.url, weight: 1 },
          { name: "b", url: b.url, weight: 0.5 },
        ],
        healthCheck: { interval: 1_000, timeout: 1_000, probes: 1, probeDelay: 0 },
        ...options,
      });
    return {
      servers: [a, b],
      dataServers: [a, b],
      databases: { a, b },
      dataNode: () => a,
      multiDb,
      client(options = {}, onStartup) {
        const c = multiDb(options);
        if (onStartup) {
          c.addEventListener(
            "switch",
            (e) => onStartup(`switch ${e.detail.from ?? "none"} -> ${e.detail.to}`),
          );
          c.addEventListener(
            "health",
            (e) => onStartup(`health ${e.detail.database} ${e.detail.health}`),
          );
        }
        // Type gaps: binary() is typed `RedisCommands<Uint8Array>` (no scan or subscribe family);
        // the subscribe family returns `MultiDbSubscription`, not `Subscription`.
        return c as unknown as ConformanceClient;
      },
      // The first choice of the active database is no `switch` (its detail's `from: null`
      // suggests it could be one); the first health checks are `health` events.
      startupLines: ["health a healthy", "health b healthy"],
      stop: async () => {
        await Promise.all([a.stop(), b.stop()]);
      },
    };
  },
};
