/**
 * The Redis Cluster client: the public face over its parts — the node map (`_node_map.ts`),
 * the topology holder (`_topology_holder.ts`), the router (`_router.ts`), the redirect policy
 * (`_redirect_policy.ts`), fan-out (`_fan_out.ts`), transactions (`_transactions.ts`) and
 * pub/sub (`_pubsub.ts`, `_shard_migration.ts`, `_failover_shadows.ts`).
 *
 * @module
 */

import { systemClock } from "../_clock.ts";
import { BinaryView } from "../client/_binary_view.ts";
import { cursorIterator } from "../client/_cursor.ts";
import type { ClientMaintenanceState } from "../client/_maintenance.ts";
import { ClientSideCache } from "../cache/client_side_cache.ts";
import type { CacheStats } from "../cache/cache_store.ts";
import type { TrackingSession } from "../cache/tracking_session.ts";
import type { NodeExecutor } from "../client/_node.ts";
import { resolveClientOptions } from "../client/options.ts";
import { Pipeline, Transaction } from "../client/pipeline.ts";
import type { ScanIteratorOptions, SendCommandOptions } from "../client/redis_client.ts";
import type { MaintenanceEventDetail, TypedEventListener } from "../client/events.ts";
import type { PubSubListener, Subscription } from "../client/subscription.ts";
import type { WatchSession } from "../client/watch_session.ts";
import { RedisCommands } from "../commands/commands.ts";
import type { ScoredMember } from "../commands/types.ts";
import { FLAG_BINARY, FLAG_BLOCKING, FLAG_READONLY, type Transform } from "../commands/_command.ts";
import { commandPolicy } from "../commands/command_keys.ts";
import { FLAG_RAW } from "../connection/flags.ts";
import { reservedCommandError } from "../connection/reserved.ts";
import { silentLogger } from "../logger.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { defaultConnector } from "../transport/default.ts";
import { ClusterMaintenanceSupport } from "./_cluster_maintenance.ts";
import { type ClusterContext, type ClusterInternals, emptyStats, nameOf } from "./_context.ts";
import { FanOut } from "./_fan_out.ts";
import { nodeFactory, NodeMap } from "./_node_map.ts";
import { ClusterPubSub } from "./_pubsub.ts";
import { RedirectPolicy } from "./_redirect_policy.ts";
import { Router } from "./_router.ts";
import { TopologyHolder } from "./_topology_holder.ts";
import { Transactions } from "./_transactions.ts";
import { type RedisClusterClientOptions, resolveClusterOptions } from "./options.ts";
import { SLOT_COUNT } from "./slot.ts";
import {
  addressMapper,
  type ClusterNodeHealth,
  type ClusterNodeRole,
  type TopologyChange,
} from "./topology.ts";

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

/** Typed commands run on one node as they are (SCAN of one primary). */
class NodeCommands extends RedisCommands<string> {
  readonly #node: NodeExecutor;
  constructor(node: NodeExecutor) {
    super();
    this.#node = node;
  }
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    return this.#node.run(args, transform, flags, blockMs);
  }
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
 *   every primary to succeed; the others go to one primary. `scan()` walks every primary.
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
export class RedisClusterClient extends RedisCommands<string>
  implements AsyncDisposable, EventTarget {
  readonly #ctx: ClusterContext;
  readonly #events = new EventTarget();
  readonly #maintenance: ClusterMaintenanceSupport | undefined;
  /** The client-side cache (`clientSideCache` option), one for every node. */
  readonly #cache: ClientSideCache | undefined;
  readonly #nodes: NodeMap;
  readonly #holder: TopologyHolder;
  readonly #router: Router;
  readonly #policy: RedirectPolicy;
  readonly #transactions: Transactions;
  readonly #pubsub: ClusterPubSub;
  #binary: BinaryView | undefined;
  #closing: Promise<void> | undefined;

  /**
   * Creates a client. It discovers the cluster lazily on the first command, or on `connect()`.
   *
   * @param options The seed nodes and settings.
   */
  constructor(options: RedisClusterClientOptions) {
    super();
    const c = resolveClusterOptions(options);
    const seed = c.seeds[0]!;
    const settings = resolveClientOptions({ ...c.node, host: seed.host, port: seed.port });
    const logger = options.logger ?? silentLogger;
    const ctx: ClusterContext = this.#ctx = {
      options: c,
      settings,
      clock: (options as ClusterInternals).clock ?? systemClock,
      logger,
      map: addressMapper(options.nodeAddressMap),
      stats: emptyStats(),
      closed: false,
      emit: (name, detail) => this.#events.dispatchEvent(new CustomEvent(name, { detail })),
    };
    const mode = options.maintenanceNotifications?.mode ?? "auto";
    if (mode === "enabled" && settings.protocol !== 3) {
      throw new TypeError(
        'Cannot enable maintenance notifications with protocol 2: they need RESP3 (set protocol: 3 or mode: "auto")',
      );
    }
    this.#maintenance = mode !== "disabled" && settings.protocol === 3
      ? new ClusterMaintenanceSupport(options.maintenanceNotifications ?? {}, {
        logger,
        clock: ctx.clock,
        emit: (name, detail) => ctx.emit(name as RedisClusterClientEventName, detail),
        applyDelta: (seq, entries, stale) => this.#holder.applyDelta(seq, entries, stale),
        refresh: (reason) => {
          logger.debug(`Refreshing the topology: ${reason}`);
          this.#holder.scheduleRefresh();
        },
        // Slots are about to move: check the subscribed ones now, then often.
        windowsChanged: (open) => this.#pubsub.migration.windowsChanged(open),
      })
      : undefined;
    const cacheOptions = settings.clientSideCache;
    this.#cache = cacheOptions ? new ClientSideCache(cacheOptions, { logger }) : undefined;
    const tracking = new Map<string, TrackingSession>();
    const connector = options.connector ?? defaultConnector;
    this.#nodes = new NodeMap(
      ctx,
      nodeFactory(ctx, connector, this.#maintenance, this.#cache, tracking),
      () => this.#holder.topology,
      {
        shardEnded: (address, channel) => this.#pubsub.shardEnded(address, channel),
        lost: (address) => this.#pubsub.shadows.lost(address),
        unreachable: () => this.#holder.scheduleRefresh(),
      },
      tracking,
    );
    this.#holder = new TopologyHolder(ctx, this.#nodes, this.#cache, this.#maintenance);
    const slotMoves = new Map<number, Promise<unknown>>();
    this.#router = new Router(ctx, this.#holder, this.#nodes, this.#cache, slotMoves);
    this.#policy = new RedirectPolicy(ctx, this.#holder, this.#nodes, this.#router, {
      slotMoves,
      migrating: (slot, to) => this.#pubsub.migration.migrating(slot, to),
      moved: (slot) => this.#pubsub.moveSlot(slot),
    });
    this.#router.attach(this.#policy, new FanOut(ctx, this.#holder, this.#policy));
    this.#transactions = new Transactions(this.#holder, this.#router, this.#policy);
    this.#pubsub = new ClusterPubSub(ctx, this.#holder, this.#nodes, this.#policy, slotMoves);
    this.#holder.setHooks({
      adopted: () => this.#pubsub.reconcile(),
      migrated: (moved, dropped) => this.#pubsub.migrated(moved, dropped),
    });
  }

  // ------------------------------------------------------------------ events

  /**
   * Adds an event listener (`topology`, `node-added`, `node-removed`, `error`, `close`,
   * `maintenance`), typed by {@linkcode RedisClusterClientEventMap}.
   *
   * @param type The event name.
   * @param listener The listener; it gets the event's `CustomEvent` with its `detail`.
   * @param options Standard listener options.
   *
   * @example
   * ```ts ignore
   * cluster.addEventListener("node-added", (e) => console.log(e.detail.address, e.detail.role));
   * ```
   */
  addEventListener<K extends RedisClusterClientEventName>(
    type: K,
    listener: TypedEventListener<RedisClusterClientEventMap[K]> | null,
    options?: boolean | AddEventListenerOptions,
  ): void {
    this.#events.addEventListener(type, listener as EventListenerOrEventListenerObject, options);
  }

  /**
   * Removes an event listener.
   *
   * @param type The event name.
   * @param listener The listener.
   * @param options Standard listener options.
   */
  removeEventListener<K extends RedisClusterClientEventName>(
    type: K,
    listener: TypedEventListener<RedisClusterClientEventMap[K]> | null,
    options?: boolean | EventListenerOptions,
  ): void {
    this.#events.removeEventListener(
      type,
      listener as EventListenerOrEventListenerObject,
      options,
    );
  }

  /**
   * Dispatches an event to the client's listeners.
   *
   * @param event The event.
   * @returns `false` if a listener cancelled it.
   */
  dispatchEvent(event: Event): boolean {
    return this.#events.dispatchEvent(event);
  }

  // ------------------------------------------------------------------ topology

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
    if (!this.#holder.ready) return await this.#holder.discover();
    await this.#holder.refresh();
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
    return this.#holder.snapshot();
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
    return this.#holder.ownerOf(slot);
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
    return this.#maintenance?.snapshot(this.#ctx.settings.commandTimeout);
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
    return { ...this.#ctx.stats };
  }

  /**
   * The counters of the client-side cache (`clientSideCache` option; one cache for every
   * node).
   *
   * @returns Hits, misses, entries, bytes, evictions, invalidations and flushes, or `undefined`
   *   when the cache is off.
   *
   * @example
   * ```ts ignore
   * const cluster = new RedisClusterClient({ nodes: ["redis://127.0.0.1:7000"], clientSideCache: true });
   * await cluster.get("k");
   * await cluster.get("k");
   * console.log(cluster.cacheStats()); // { hits: 1, misses: 1, entries: 1, ... }
   * ```
   */
  cacheStats(): CacheStats | undefined {
    return this.#cache?.stats();
  }

  /**
   * Drops every reply of the client-side cache (nothing when the cache is off).
   *
   * @example
   * ```ts ignore
   * cluster.invalidateCache();
   * ```
   */
  invalidateCache(): void {
    this.#cache?.invalidateAll();
  }

  // ------------------------------------------------------------------ commands

  /** @internal Runs one command (the typed methods call this). */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    return this.#router.dispatch(args, transform, flags, blockMs, undefined);
  }

  /**
   * Connects now: discovers the cluster and opens a connection to every primary.
   *
   * @returns Resolves when every primary's connection is ready.
   */
  async connect(): Promise<void> {
    await this.#holder.discover();
    await Promise.all(this.#holder.primaries.map((i) => this.#nodes.at(i).connect()));
  }

  /**
   * Sends any command and returns its raw reply, routed by its keys like the typed methods.
   * Keyless commands follow their request policy (`all_shards`: every primary, replies
   * combined), or go to one primary.
   *
   * @param args The command and its arguments.
   * @param options Binary replies, blocking, timeout.
   * @returns The raw reply.
   *
   * @example
   * ```ts ignore
   * const size = await cluster.sendCommand(["DBSIZE"]); // the sum over the primaries
   * ```
   */
  sendCommand(args: RedisArgument[], options: SendCommandOptions = {}): Promise<RespValue> {
    if (!Array.isArray(args) || args.length === 0) {
      return Promise.reject(new TypeError("Cannot send an empty command"));
    }
    const refused = reservedCommandError(args);
    if (refused !== undefined) return Promise.reject(refused);
    const name = nameOf(args);
    if (name === "ASKING" || name === "READONLY" || name === "READWRITE") {
      // They change the shared connection of a node for every caller.
      return Promise.reject(
        new TypeError(
          `Cannot send "${name}" with sendCommand: the client sends ASKING itself, and readFrom chooses replica reads`,
        ),
      );
    }
    const policy = commandPolicy(args);
    const flags = FLAG_RAW | (options.binary ? FLAG_BINARY : 0) |
      (options.blockMs !== undefined || policy?.blocking ? FLAG_BLOCKING : 0) |
      (policy?.readonly ? FLAG_READONLY : 0);
    return this.#router.dispatch(
      args,
      undefined,
      flags,
      options.blockMs,
      options.timeout,
    ) as Promise<RespValue>;
  }

  /**
   * A view of this client whose commands reply bulk strings as `Uint8Array`.
   *
   * @returns The binary view (shares the client's connections).
   */
  binary(): RedisCommands<Uint8Array> {
    return this.#binary ??= new BinaryView((a, t, f, b) => this._run(a, t, f, b));
  }

  /**
   * Starts a pipeline: each command goes to its node (commands of one node leave together),
   * the results come back in order; each command is redirected on its own.
   *
   * @returns A new pipeline.
   */
  pipeline(): Pipeline {
    return new Pipeline((args, transform, flags, blockMs) =>
      this.#router.dispatch(args, transform, flags, blockMs, undefined)
    );
  }

  /**
   * Starts a transaction. Every key must hash to one slot; the transaction runs on that
   * slot's primary, and runs again there whole when the slot moved before `EXEC`.
   *
   * @returns A new transaction.
   */
  multi(): Transaction {
    const cache = this.#cache;
    const t = this.#transactions;
    if (cache !== undefined) {
      return new Transaction((commands) => cache.sendAll(commands, (c) => t.send(c)));
    }
    return new Transaction((commands) => t.send(commands));
  }

  /**
   * Borrows an exclusive connection of the node serving the keys and `WATCH`es them on it.
   * The keys must hash to one slot.
   *
   * @param keys The keys to watch.
   * @returns A session for reads and the transaction.
   */
  watch(...keys: RedisArgument[]): Promise<WatchSession> {
    return this.#transactions.watch(keys);
  }

  // ------------------------------------------------------------------ pub/sub

  /**
   * Subscribes to channels (on one node: a cluster forwards every message to every node).
   *
   * @param channels One channel or several.
   * @param listener Called per message; without it, iterate the subscription.
   * @returns The subscription, once the server confirmed it.
   */
  subscribe(channels: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#pubsub.subscribe("channel", channels, listener);
  }

  /**
   * Subscribes to glob-style patterns (on one node).
   *
   * @param patterns One pattern or several.
   * @param listener Called per message with the matching pattern.
   * @returns The subscription.
   */
  psubscribe(patterns: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#pubsub.subscribe("pattern", patterns, listener);
  }

  /**
   * Subscribes to shard channels (`SSUBSCRIBE`), each on the node serving its slot; when the
   * slot moves, the subscription follows it.
   *
   * @param channels One shard channel or several (of any slots).
   * @param listener Called per message.
   * @returns The subscription.
   */
  ssubscribe(channels: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#pubsub.subscribe("shard", channels, listener);
  }

  // ------------------------------------------------------------------ iterators

  /**
   * Iterates over every key of the cluster (SCAN on every primary in turn).
   *
   * @param options Pattern, count hint, type.
   * @returns An async iterator of key names.
   */
  async *scan(options: ScanIteratorOptions = {}): AsyncIterableIterator<string> {
    await this.#holder.discover();
    for (const address of this.#holder.primaryAddresses()) {
      const view = new NodeCommands(this.#nodes.executor(address));
      yield* cursorIterator((cursor) => view.scanPage(cursor, options));
    }
  }

  /**
   * Iterates over the fields of a hash (HSCAN).
   *
   * @param key The hash.
   * @param options Pattern, count hint.
   * @returns An async iterator of `[field, value]`.
   */
  hscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<[string, string]> {
    return cursorIterator((cursor) => this.hscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a set (SSCAN).
   *
   * @param key The set.
   * @param options Pattern, count hint.
   * @returns An async iterator of members.
   */
  sscan(key: RedisArgument, options: ScanIteratorOptions = {}): AsyncIterableIterator<string> {
    return cursorIterator((cursor) => this.sscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a sorted set with their scores (ZSCAN).
   *
   * @param key The sorted set.
   * @param options Pattern, count hint.
   * @returns An async iterator of `{ member, score }`.
   */
  zscan(
    key: RedisArgument,
    options: ScanIteratorOptions = {},
  ): AsyncIterableIterator<ScoredMember> {
    return cursorIterator((cursor) => this.zscanPage(key, cursor, options));
  }

  // ------------------------------------------------------------------ close

  /**
   * Closes the client: new commands are refused, commands waiting for a retry fail with
   * `ClosedError`, in-flight ones complete, then every connection closes.
   *
   * @returns Resolves when every socket and timer is closed.
   */
  close(): Promise<void> {
    return this.#close(false);
  }

  /**
   * Closes at once: everything queued or in flight on any node is rejected with `ClosedError`,
   * commands waiting for a retry too.
   *
   * @returns Resolves when every socket and timer is closed.
   *
   * @example
   * ```ts ignore
   * await cluster.destroy();
   * ```
   */
  destroy(): Promise<void> {
    return this.#close(true);
  }

  #close(destroy: boolean): Promise<void> {
    if (destroy) this.#nodes.destroyAll();
    if (this.#closing) return this.#closing;
    this.#ctx.closed = true;
    this.#holder.close();
    this.#pubsub.close();
    this.#policy.close();
    this.#pubsub.endAll();
    this.#maintenance?.close();
    const nodes = this.#nodes.takeAll();
    this.#closing = (async () => {
      await this.#holder.settled();
      // Nodes created while discovery or refresh finished.
      nodes.push(...this.#nodes.takeAll());
      if (destroy) { for (const n of nodes) n.destroy(); }
      await Promise.all(nodes.map((n) => n.close()));
      this.#ctx.emit("close", undefined);
    })();
    return this.#closing;
  }

  /** Closes the client: `await using cluster = new RedisClusterClient(...)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
