// The node map: one executor per node address, made by a factory on first use and closed when
// the node leaves the view (the keyed agent of undici). It keeps the per-index cache the hot path
// reads, which nodes are down, which were ever reached, and turns node events into the client's.
import type { ClientSideCache } from "../cache/client_side_cache.ts";
import type { TrackingSession } from "../cache/tracking_session.ts";
import type { ClusterMaintenanceSupport } from "./_cluster_maintenance.ts";
import { type ConnectionRole, type NodeEventName, NodeExecutor } from "../client/node_executor.ts";
import type { HandshakeStep } from "../connection/connection.ts";
import { ConnectionError, ReplyError } from "../errors.ts";
import { type Endpoint as HostPort, splitEndpoint } from "../endpoint.ts";
import type { RespValue } from "../resp/types.ts";
import type { Connector } from "../transport/types.ts";
import type { ClusterContext } from "./_context.ts";
import { type ClusterTopology, isClusterDisabledError } from "./topology.ts";

/** What the node map tells the rest of the client. */
export interface NodeMapHooks {
  /** A node ended a shard subscription by itself (or could not restore it on a new socket). */
  shardEnded(address: string, channel: string): void;
  /** A node's connection was lost (it reconnects). */
  lost(address: string): void;
  /** A node became unreachable: the topology may have changed. */
  unreachable(): void;
}

/** The hooks a node's executor is made with. */
export interface NodeFactoryHooks {
  /** A RESP3 push frame of the node (return `true` when consumed). */
  onPush(frame: RespValue[]): boolean;
  /** An event of the node. */
  emit(name: NodeEventName, detail: unknown): void;
  /** A shard channel a new socket could not restore. */
  onShardRestoreRefused(channel: string): void;
}

/** Makes the executor of one node (tests pass fakes). */
export type NodeFactory = (
  address: string,
  endpoint: HostPort,
  hooks: NodeFactoryHooks,
) => NodeExecutor;

const READONLY_STEP: HandshakeStep = { args: ["READONLY"], onReply: () => {} };

const decoder = new TextDecoder();

/**
 * The handshake step that makes sure a socket reaches a node of this cluster: `CLUSTER MYID`,
 * written with the rest of the handshake (no round trip of its own). A server with cluster
 * support disabled (a standalone server started on a node's address), or a node whose id is not
 * the one the topology names at that address, fails the socket with a `ConnectionError`; any
 * other error reply (a user without the permission) is let pass.
 *
 * @param address The node's address, for messages.
 * @param expectedId The id the current topology gives that address, when it knows one.
 * @returns The step.
 */
export function clusterNodeCheck(
  address: string,
  expectedId: () => string | null | undefined,
): HandshakeStep {
  return {
    args: ["CLUSTER", "MYID"],
    onReply: (v) => {
      if (v instanceof ReplyError) {
        if (!isClusterDisabledError(v)) return;
        throw new ConnectionError(
          `Cannot use "${address}": it is not a cluster node (cluster support disabled)`,
          { cause: v, written: false },
        );
      }
      const id = v instanceof Uint8Array ? decoder.decode(v) : String(v);
      const expected = expectedId();
      if (expected && id !== expected) {
        throw new ConnectionError(
          `Cannot use "${address}": it is not the cluster node the topology names there (node id ${id}, expected ${expected})`,
          { written: false },
        );
      }
    },
  };
}

/** Parses `host:port` / `[v6]:port` as the node map keys them. */
export function splitAddress(address: string): HostPort {
  const e = splitEndpoint(address, true);
  return typeof e === "string" ? { host: address, port: 0 } : e;
}

/**
 * The default factory: a {@linkcode NodeExecutor} with the client's settings, the client-side
 * cache's tracking, the cluster node check ({@linkcode clusterNodeCheck}) on every socket, and
 * `READONLY` on its connections for replica reads.
 *
 * @param ctx The client's shared state.
 * @param connector The transport.
 * @param maintenance Maintenance notifications support, when on.
 * @param cache The client-side cache, when on.
 * @param tracking Where the cache's tracking sessions are kept, by address.
 * @param idOf The node id the current topology gives an address (checked on every new socket).
 * @returns The factory.
 */
export function nodeFactory(
  ctx: ClusterContext,
  connector: Connector,
  maintenance: ClusterMaintenanceSupport | undefined,
  cache: ClientSideCache | undefined,
  tracking: Map<string, TrackingSession>,
  idOf: (address: string) => string | null | undefined,
): NodeFactory {
  return (address, endpoint, hooks) => {
    const { host, port } = endpoint;
    const check = clusterNodeCheck(address, () => idOf(address));
    const replicaReads = ctx.options.readFrom !== "primary";
    const session = (role: ConnectionRole): HandshakeStep[] =>
      replicaReads && role !== "subscriber" ? [check, READONLY_STEP] : [check];
    const onPush = hooks.onPush;
    const t = cache?.tracking(ctx.settings.protocol);
    const withTracking = t ? t.executorHooks({ session, onPush }) : { session, onPush };
    const node = new NodeExecutor({
      endpoint: { host, port },
      settings: { ...ctx.settings, host, port, db: 0 },
      connector,
      logger: ctx.logger,
      maintenance,
      ...withTracking,
      emit: hooks.emit,
      onListenerError: (error) => ctx.emit("error", error),
      onShardRestoreRefused: hooks.onShardRestoreRefused,
      label: `${address} `,
      metrics: ctx.metrics,
    });
    if (t) {
      t.attach(node);
      tracking.set(address, t);
    }
    return node;
  };
}

/**
 * One executor per node address.
 *
 * @example Made on first use, closed when the node leaves
 * ```ts ignore
 * const node = nodes.executor("127.0.0.1:7000");
 * await node.run(["PING"], undefined, 0);
 * nodes.drop("127.0.0.1:7000"); // in-flight replies still arrive
 * ```
 */
export class NodeMap {
  readonly #ctx: ClusterContext;
  readonly #create: NodeFactory;
  readonly #topology: () => ClusterTopology;
  readonly #hooks: NodeMapHooks;
  readonly #nodes = new Map<string, NodeExecutor>();
  /** Tracking sessions of the client-side cache, by node address (filled by the factory). */
  readonly #tracking: Map<string, TrackingSession>;
  /** Executors by node index of the current topology (a cache). */
  #byIndex: (NodeExecutor | undefined)[] = [];
  /** Nodes whose connection is down, with the last error. */
  readonly down: Map<string, Error> = new Map();
  /** Nodes a connection was ever ready to. */
  readonly #reached = new Set<string>();

  /**
   * @param ctx The client's shared state.
   * @param create Makes a node's executor.
   * @param topology The current view (where an address's host and port are looked up).
   * @param hooks What node events become.
   * @param tracking The cache's tracking sessions the factory fills, by address.
   */
  constructor(
    ctx: ClusterContext,
    create: NodeFactory,
    topology: () => ClusterTopology,
    hooks: NodeMapHooks,
    tracking: Map<string, TrackingSession> = new Map(),
  ) {
    this.#ctx = ctx;
    this.#create = create;
    this.#topology = topology;
    this.#hooks = hooks;
    this.#tracking = tracking;
  }

  /** The executor of a node, made on first use. */
  executor(address: string, host?: string, port?: number): NodeExecutor {
    let node = this.#nodes.get(address);
    if (node) return node;
    if (host === undefined || port === undefined) {
      const n = this.#topology().nodes.find((x) => x.address === address);
      ({ host, port } = n ?? splitAddress(address));
    }
    node = this.#create(address, { host, port }, {
      onPush: (frame) => {
        // A node ends a shard subscription itself when the channel's slot leaves it.
        const kind = frame[0];
        if (kind === "sunsubscribe" || kind === "SUNSUBSCRIBE") {
          this.#hooks.shardEnded(address, String(frame[1]));
        }
        return false;
      },
      emit: (name, detail) => this.#onNodeEvent(address, name, detail),
      // A new socket could not restore a shard channel: its slot left the node meanwhile.
      onShardRestoreRefused: (channel) => this.#hooks.shardEnded(address, channel),
    });
    this.#nodes.set(address, node);
    return node;
  }

  /** The executor of node `index` of the current view (the hot path's cache). */
  at(index: number): NodeExecutor {
    let e = this.#byIndex[index];
    if (e === undefined || e.closed) {
      const n = this.#topology().nodes[index]!;
      e = this.executor(n.address, n.host, n.port);
      this.#byIndex[index] = e;
    }
    return e;
  }

  /** Forgets the per-index cache (the view changed). */
  reindex(): void {
    this.#byIndex = [];
  }

  /** The executor of a node, when one exists. */
  get(address: string): NodeExecutor | undefined {
    return this.#nodes.get(address);
  }

  /** Whether a node has an executor. */
  has(address: string): boolean {
    return this.#nodes.has(address);
  }

  /** The addresses with an executor. */
  addresses(): string[] {
    return [...this.#nodes.keys()];
  }

  /** Whether a connection to the node was ever ready. */
  reached(address: string): boolean {
    return this.#reached.has(address);
  }

  /**
   * Closes a node's executor (in-flight replies still arrive).
   *
   * @param flushCache Whether the client-side cache is dropped whole: `false` when the keys the
   *   node served were dropped already (their slots moved).
   */
  drop(address: string, flushCache = true): void {
    const node = this.#nodes.get(address);
    if (!node) return;
    this.#nodes.delete(address);
    this.down.delete(address);
    this.#byIndex = [];
    const tracking = this.#tracking.get(address);
    if (tracking) {
      this.#tracking.delete(address);
      tracking.close(flushCache);
    }
    const clock = this.#ctx.clock;
    const start = clock.now();
    node.close().then(() => {
      this.#ctx.logger.debug(`"${address}": connections closed in ${clock.now() - start} ms`);
    }, () => {});
  }

  /** Takes every executor out of the map (the client closes them). */
  takeAll(): NodeExecutor[] {
    const nodes = [...this.#nodes.values()];
    this.#nodes.clear();
    return nodes;
  }

  /** Rejects everything queued or in flight on every node. */
  destroyAll(): void {
    for (const n of this.#nodes.values()) n.destroy();
  }

  #onNodeEvent(address: string, name: NodeEventName, detail: unknown): void {
    if (name === "ready") {
      this.down.delete(address);
      this.#reached.add(address);
      return;
    }
    if (name === "reconnecting") {
      this.#hooks.lost(address);
      const error = (detail as { error?: Error } | undefined)?.error;
      this.down.set(address, error ?? new ConnectionError(`Cannot reach "${address}"`));
      this.#hooks.unreachable();
      return;
    }
    if (name === "error") {
      // An error of any of the node's connections; only a shared connection that is not ready
      // makes the node down (an exclusive one refused while it serves does not).
      if (detail instanceof ConnectionError && this.#nodes.get(address)?.shared?.ready !== true) {
        this.down.set(address, detail);
        this.#hooks.unreachable();
      }
      this.#ctx.emit("error", detail);
    }
  }
}
