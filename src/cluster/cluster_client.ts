/**
 * The Redis Cluster client: the public face over its parts — the node map (`_node_map.ts`),
 * the topology holder (`_topology_holder.ts`), the router (`_router.ts`), the redirect policy
 * (`_redirect_policy.ts`), fan-out (`_fan_out.ts`), transactions (`_transactions.ts`) and
 * pub/sub (`_pubsub.ts`, `_shard_migration.ts`, `_failover_shadows.ts`).
 *
 * @module
 */

import { ClientEvents, ClientShell } from "../client/client_shell.ts";
import type { ClientMaintenanceState } from "../client/maintenance_support.ts";
import type { MaintenanceEventDetail } from "../client/events.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import { ClusterCore } from "./_cluster_core.ts";
import type { RedisClusterClientOptions } from "./options.ts";
import { SLOT_COUNT } from "./slot.ts";
import type { ClusterNodeHealth, ClusterNodeRole, TopologyChange } from "./topology.ts";

export type { RedisClusterClientOptions };

/** The `detail` of a `node-added` event. */
export interface NodeAddedDetail {
  /** `host:port` of the node. */
  address: string;
  /** Its role in the view that added it. */
  role: ClusterNodeRole;
}

/** The `detail` of a `node-removed` event. */
export interface NodeRemovedDetail {
  /** `host:port` of the node; its connections are closed. */
  address: string;
}

/**
 * The events of a {@linkcode RedisClusterClient}, by name.
 *
 * @example
 * ```ts ignore
 * import type { RedisClusterClientEventMap } from "@edge/redis/cluster";
 * const onTopology = (e: RedisClusterClientEventMap["topology"]) => console.log(e.detail.slotsMoved);
 * cluster.addEventListener("topology", onTopology);
 * ```
 */
export interface RedisClusterClientEventMap {
  /** A new view was adopted (or a `MOVED` patched): what changed. */
  topology: CustomEvent<TopologyEventDetail>;
  /** A node appeared in the view. */
  "node-added": CustomEvent<NodeAddedDetail>;
  /** A node left the view; its connections are closed. */
  "node-removed": CustomEvent<NodeRemovedDetail>;
  /** A connection error of a node, a failed background refresh, or a listener's exception. */
  error: CustomEvent<Error>;
  /** The client closed (every socket and timer released). */
  close: CustomEvent<undefined>;
  /** A maintenance notification was acted on (maintenance notifications on). */
  maintenance: CustomEvent<MaintenanceEventDetail>;
}

/** Names of the cluster client's events. */
export type RedisClusterClientEventName = keyof RedisClusterClientEventMap;

/** The `detail` of a `topology` event: what changed, and the epoch of the view adopted. */
export interface TopologyEventDetail extends TopologyChange {
  /** The cluster's current epoch as the answering node saw it. */
  epoch: number;
  /**
   * What caused the change: a refresh, a `MOVED` patched in at once, or an `SMIGRATED`
   * notification applied in place.
   */
  reason: "refresh" | "moved" | "smigrated";
}

/** One node as the client sees it (see {@linkcode RedisClusterClient.nodes}). */
export interface ClusterNodeSnapshot {
  /** `host:port` the client connects to. */
  address: string;
  /** The node id, when known. */
  id: string | null;
  /** Primary or replica. */
  role: ClusterNodeRole;
  /** Health as the cluster reports it. */
  health: ClusterNodeHealth;
  /** The primary of a replica. */
  primary: string | null;
  /** The slots the node serves as a primary. */
  slots: SlotRange[];
}

/** Counters of the redirections and retries the client met (see {@linkcode RedisClusterClient.stats}). */
export interface ClusterStats {
  /** `MOVED` replies followed. */
  moved: number;
  /** `ASK` replies followed. */
  ask: number;
  /** `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `MASTERDOWN` replies retried. */
  refused: number;
  /** Commands re-sent after a connection error that kept them from leaving the client. */
  unwrittenRetries: number;
  /** Topology refreshes completed. */
  refreshes: number;
  /**
   * Shard subscriptions opened ahead on a node importing their slot (`ASKING` + `SSUBSCRIBE`),
   * before the slot's owner ended them.
   */
  subscribedAhead: number;
  /**
   * Shard subscriptions taken over by their muted copy on a replica when the primary ended them
   * or was lost (a failover).
   */
  shadowTakeovers: number;
}

/**
 * A client for Redis Cluster. It discovers the cluster from any seed node (`CLUSTER SHARDS`,
 * `CLUSTER SLOTS` before Redis 7), keeps a 16384-entry slot table, and sends each command to
 * the primary of its key's slot over that node's multiplexed connection (automatic
 * pipelining per node).
 *
 * - Redirections: `MOVED` re-routes the slot at once and refreshes the topology in the
 *   background (one refresh for many redirects); `ASK` sends `ASKING` and the command together
 *   to the importing node. `TRYAGAIN`, `CLUSTERDOWN`, `LOADING` and `MASTERDOWN` are retried
 *   with a pause, within `maxAttempts` and `maxTotalRetriesDuration`. Only commands the server
 *   refused, or that never left the client, are sent again: a command whose connection was
 *   lost after it was written fails with `ConnectionError`.
 * - Topology refreshes ask several nodes and never adopt a view older than the current one
 *   (cluster epochs); they run on `MOVED`, on connection errors and every
 *   `topologyRefreshInterval`. A failed-over primary is replaced by its promoted replica
 *   without the caller doing anything.
 * - Keys of one command must hash to one slot (use hash tags: `{user1}.name`), except for
 *   MGET, MSET, DEL, UNLINK, EXISTS and TOUCH, which are split per slot and merged in order
 *   (not atomic; `crossSlot: "refuse"` rejects them instead). Other cross-slot commands are
 *   rejected before anything is sent, with a `TypeError` naming the slots.
 * - Keyless commands follow the command table's request/response policies: `DBSIZE` sums the
 *   primaries' replies, `KEYS` concatenates them, `SCRIPT EXISTS` ANDs them, `FLUSHALL` needs
 *   every primary to succeed, `RANDOMKEY` answers a key of any primary that has one; the
 *   others go to one primary. `scan()` and `scanPage()` walk every primary in turn (by node
 *   id): a page's cursor is `"0"` after the last primary, else `"<node cursor>:<node id>"`,
 *   naming the primary of the next page; a cursor naming a node that serves no slot any more
 *   is refused with a `RedisError` (start again from `"0"`).
 * - Every new node connection checks, in its handshake batch, that it reaches the cluster node
 *   the topology names (`CLUSTER MYID`); a server that is not a cluster node fails with
 *   `ConnectionError` and the topology is refreshed.
 * - `watch()` on a key of a migrating slot (`ASK`) fails at once with a `RedisError`: retry
 *   once the migration ended.
 * - Pipelines are split per node and reassembled in order, each command redirected on its
 *   own. Transactions (`multi()`) and `watch()` need all keys in one slot; a transaction
 *   refused before `EXEC` because the slot moved runs again, whole, on the new owner. Blocking
 *   commands use the node's exclusive connections.
 * - `readFrom: "replica"` sends reads to replicas (connections opened with `READONLY`).
 * - Pub/sub: `subscribe`/`psubscribe` on one node; `ssubscribe` on the owner of each channel's
 *   slot, and moved with the slot (subscribed on the new owner before the old one is dropped).
 *
 * Events: `topology` (what changed), `node-added`, `node-removed`, `error`, `close`, and with
 * maintenance notifications `maintenance`.
 *
 * @example
 * ```ts ignore
 * import { RedisClusterClient } from "@edge/redis/cluster";
 * await using cluster = new RedisClusterClient({ nodes: ["redis://127.0.0.1:7000"] });
 * await cluster.set("{user1}.name", "Ada");
 * await cluster.mget("a", "b", "c"); // keys of several slots: split and merged
 * const [n] = await cluster.pipeline().incr("hits").get("a").exec();
 * ```
 */
export class RedisClusterClient extends ClientShell<RedisClusterClientEventMap> {
  readonly #core: ClusterCore;

  /**
   * Creates a client. It discovers the cluster lazily on the first command, or on `connect()`.
   *
   * @param options The seed nodes and settings.
   */
  constructor(options: RedisClusterClientOptions) {
    const events = new ClientEvents(options, "cluster");
    const core = new ClusterCore(options, events);
    super(core, events, core.cache);
    this.#core = core;
  }

  /**
   * Refreshes the topology now (it also refreshes by itself).
   *
   * @returns Resolves when a view was read (and adopted, unless older than the current one).
   *
   * @example
   * ```ts ignore
   * await cluster.refreshTopology();
   * console.log(cluster.nodes().length);
   * ```
   */
  async refreshTopology(): Promise<void> {
    if (!this.#core.holder.ready) return await this.#core.holder.discover();
    await this.#core.holder.refresh();
  }

  /**
   * The nodes of the current view.
   *
   * @returns One entry per node, primaries with their slots.
   *
   * @example
   * ```ts ignore
   * for (const n of cluster.nodes()) console.log(n.address, n.role, n.slots);
   * ```
   */
  nodes(): ClusterNodeSnapshot[] {
    return this.#core.holder.snapshot();
  }

  /**
   * The node serving a slot as its primary, in the current view.
   *
   * @param slot The slot, 0-16383.
   * @returns Its `host:port`, or `undefined` when no node serves it.
   *
   * @example
   * ```ts ignore
   * import { keySlot } from "@edge/redis/cluster";
   * cluster.nodeForSlot(keySlot("user:1"));
   * ```
   */
  nodeForSlot(slot: number): string | undefined {
    if (!Number.isInteger(slot) || slot < 0 || slot >= SLOT_COUNT) {
      throw new RangeError(`Cannot look up slot ${slot}: slots are 0-16383`);
    }
    return this.#core.holder.ownerOf(slot);
  }

  /**
   * The maintenance state: open windows, relaxed connections and their effective timeouts.
   *
   * @returns A snapshot, or `undefined` when maintenance notifications are disabled.
   *
   * @example
   * ```ts ignore
   * console.log(cluster.maintenanceState()?.connections.length);
   * ```
   */
  maintenanceState(): ClientMaintenanceState | undefined {
    return this.#core.maintenance?.snapshot(this.#core.ctx.settings.commandTimeout);
  }

  /**
   * Counters of the redirections, retries and refreshes so far.
   *
   * @returns A copy of the counters.
   *
   * @example
   * ```ts ignore
   * const { moved, ask } = cluster.stats();
   * ```
   */
  stats(): ClusterStats {
    return { ...this.#core.ctx.stats };
  }
}
