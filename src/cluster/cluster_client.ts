/**
 * The Redis Cluster client: one executor per node, a slot table, redirections and retries.
 *
 * @module
 */

import { type Clock, systemClock, type TimerId } from "../_clock.ts";
import { BinaryView } from "../client/_binary_view.ts";
import { cursorIterator } from "../client/cursor_iterator.ts";
import type { ClientMaintenanceState } from "../client/maintenance_support.ts";
import { ClientSideCache } from "../cache/client_side_cache.ts";
import type { CacheStats } from "../cache/cache_store.ts";
import type { TrackingSession } from "../cache/tracking_session.ts";
import {
  type ConnectionRole,
  type GroupCommand,
  type NodeEventName,
  NodeExecutor,
} from "../client/node_executor.ts";
import { resolveClientOptions, type ResolvedClientOptions } from "../client/options.ts";
import { Pipeline, Transaction } from "../client/pipeline.ts";
import type { ScanIteratorOptions, SendCommandOptions } from "../client/redis_client.ts";
import type { MaintenanceEventDetail, TypedEventListener } from "../client/events.ts";
import {
  type PubSubListener,
  Subscription,
  type SubscriptionKind,
  SubscriptionManager,
} from "../client/subscription.ts";
import type { WatchSession } from "../client/watch_session.ts";
import { RedisCommands } from "../commands/commands.ts";
import type { ScoredMember } from "../commands/types.ts";
import {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_READONLY,
  type Transform,
} from "../commands/command_runner.ts";
import { commandKeyIndexes, type CommandPolicy, commandPolicy } from "../commands/command_keys.ts";
import { FLAG_ERRORS_AS_VALUES, FLAG_RAW } from "../connection/flags.ts";
import { reservedCommandError } from "../connection/reserved.ts";
import type { HandshakeStep } from "../connection/connection.ts";
import { ClosedError, ConnectionError, RedisError, ReplyError, TimeoutError } from "../errors.ts";
import { type Logger, silentLogger } from "../logger.ts";
import { formatEndpoint, type HostPort } from "../maintenance/endpoint.ts";
import type { SlotMigration } from "../maintenance/notification.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { defaultConnector } from "../transport/default.ts";
import type { Connector } from "../transport/types.ts";
import { aggregateReplies } from "./_aggregate.ts";
import { ClusterMaintenanceSupport } from "./_cluster_maintenance.ts";
import { applySlotDelta } from "./slot_delta.ts";
import { isRetryableRefusal, parseRedirect } from "./_redirect.ts";
import {
  type RedisClusterClientOptions,
  resolveClusterOptions,
  type ResolvedClusterOptions,
} from "./options.ts";
import { keySlot, SLOT_COUNT } from "./slot.ts";
import {
  type AddressMapper,
  addressMapper,
  chooseTopology,
  clusterInfoEpoch,
  type ClusterNode,
  type ClusterNodeHealth,
  type ClusterNodeRole,
  type ClusterTopology,
  diffTopology,
  emptyTopology,
  isClusterDisabledError,
  NO_NODE,
  parseClusterShards,
  parseClusterSlots,
  patchSlot,
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

/** One command on its way through redirections and retries. */
interface Job {
  args: RedisArgument[];
  transform: Transform | undefined;
  /** Flags for the connection (never `FLAG_ERRORS_AS_VALUES`). */
  flags: number;
  blockMs: number | undefined;
  timeout: number | undefined;
  /** The key slot, or -1 for a keyless command. */
  slot: number;
  /** A node the command must run on (fan-out, keyless pick), or `undefined`. */
  node: string | undefined;
  /** The `ASK` target of the next attempt. */
  asking: string | undefined;
  attempts: number;
  start: number;
  /** The caller takes errors as values (pipelines). */
  asValue: boolean;
  /** The last node tried. */
  last: string | undefined;
}

interface RetryTimer {
  id: TimerId;
  fail: () => void;
}

interface InnerSubscription {
  node: string;
  sub: Subscription;
}

/**
 * A shard subscription opened ahead (`ASKING` + `SSUBSCRIBE`) on the node importing its slot,
 * taken over as the subscription once the slot lands there.
 */
interface PreSubscription {
  node: string;
  /** The subscription once the node confirmed; `undefined` when it refused (not importing). */
  ready: Promise<Subscription | undefined>;
  dropped: boolean;
  /** The migration check round it was opened in (an older check's reply does not end it). */
  round: number;
}

/**
 * A muted copy of a shard subscription on a replica of the slot's primary: the replica receives
 * the primary's messages through replication and keeps the channel when it is promoted, so the
 * copy takes over, with no gap, when the primary ends the channel or its connection is lost.
 */
interface ShadowSubscription {
  ready: Promise<Subscription | undefined>;
  /** The subscription once the replica confirmed it. */
  sub?: Subscription;
  /** Delivers once it took over; `held` keeps its messages while the client decides. */
  live: { on: boolean; held?: [string, string][] };
  dropped: boolean;
}

/**
 * Milliseconds a lost node's shard subscriptions wait before their copies on its replicas take
 * over: the copies first deliver, muted, what the node published just before it went.
 */
const SHADOW_TAKEOVER_GRACE = 100;

/** Milliseconds between migration checks of shard subscriptions during an SMIGRATING window. */
const WINDOW_PROBE_INTERVAL = 10;
/**
 * Longest time a replaced shard subscription keeps listening on the node its slot left, waiting
 * for that node to end it (it may learn of the move after the client did).
 */
const RETIRE_TIMEOUT = 5_000;

const KINDS: Record<string, SubscriptionKind> = {
  SUBSCRIBE: "channel",
  UNSUBSCRIBE: "channel",
  PSUBSCRIBE: "pattern",
  PUNSUBSCRIBE: "pattern",
  SSUBSCRIBE: "shard",
  SUNSUBSCRIBE: "shard",
};

const UNSUBSCRIBE: Record<SubscriptionKind, string> = {
  channel: "UNSUBSCRIBE",
  pattern: "PUNSUBSCRIBE",
  shard: "SUNSUBSCRIBE",
};

const READONLY_STEP = [{ args: ["READONLY"], onReply: () => {} }];

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

function nameOf(args: readonly RedisArgument[]): string {
  const n = args[0];
  return typeof n === "string" ? n.toUpperCase() : String(n);
}

function rangesOfSlots(slots: Iterable<number>): string {
  return [...slots].sort((a, b) => a - b).join(", ");
}

function rangesText(slots: readonly SlotRange[]): string {
  return slots.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(",");
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
  readonly #c: ResolvedClusterOptions;
  readonly #settings: ResolvedClientOptions;
  readonly #logger: Logger;
  readonly #connector: Connector;
  readonly #clock: Clock = systemClock;
  readonly #events = new EventTarget();
  readonly #map: AddressMapper;
  readonly #maintenance: ClusterMaintenanceSupport | undefined;
  readonly #nodes = new Map<string, NodeExecutor>();
  /** The client-side cache (`clientSideCache` option), one for every node. */
  readonly #cache: ClientSideCache | undefined;
  /** Tracking sessions of the cache, by node address. */
  readonly #tracking = new Map<string, TrackingSession>();
  /** Executors by node index of the current topology (a cache). */
  #byIndex: (NodeExecutor | undefined)[] = [];
  #topo: ClusterTopology = emptyTopology();
  #primaries: number[] = [];
  #rr = 0;
  #ready = false;
  #discovering: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  #periodic: TimerId | undefined;
  readonly #retries = new Set<RetryTimer>();
  /** Nodes whose connection is down, with the last error. */
  readonly #down = new Map<string, Error>();
  /** Nodes a connection was ever ready to. */
  readonly #reached = new Set<string>();
  readonly #stats: ClusterStats = {
    moved: 0,
    ask: 0,
    refused: 0,
    unwrittenRetries: 0,
    refreshes: 0,
    subscribedAhead: 0,
    shadowTakeovers: 0,
  };
  readonly #pubsub: SubscriptionManager;
  readonly #inner: Record<SubscriptionKind, Map<string, InnerSubscription>> = {
    channel: new Map(),
    pattern: new Map(),
    shard: new Map(),
  };
  readonly #moving = new Map<string, Promise<void>>();
  /** Slots whose shard subscriptions are moving: commands for them wait (no message gap). */
  readonly #slotMoves = new Map<number, Promise<unknown>>();
  /** Shard subscriptions opened ahead on the node importing their slot, per channel. */
  readonly #pre = new Map<string, PreSubscription>();
  /** Muted copies of shard subscriptions on the replicas of their node, per channel and node. */
  readonly #shadows = new Map<string, Map<string, ShadowSubscription>>();
  /** Nodes whose connection was lost, with the timer of their shadows' takeover. */
  readonly #lostTimers = new Map<string, TimerId>();
  /** Slots of the wanted shard channels, with how many channels each. */
  readonly #shardSlots = new Map<number, number>();
  /** Probe keys (a key of the slot no one writes), per slot. */
  readonly #probeKeys = new Map<number, string>();
  /**
   * Shard subscriptions replaced by one on their slot's new owner, still listening on the old
   * node until it ends them (a message is published on one node only: no duplicates).
   */
  readonly #retiring = new Map<string, { node: string; timer: TimerId; sub: Subscription }>();
  #probeTimer: TimerId | undefined;
  /** A follow-up topology refresh (`#refreshLater`). */
  #laterRefresh: TimerId | undefined;
  #probing = false;
  /** Whether a node refused a probe (warned once). */
  #probeRefused = false;
  /** Migration check rounds sent. */
  #probeRound = 0;
  /** SMIGRATING windows open now (maintenance notifications). */
  #windowsOpen = 0;
  /** Names the client's subscriptions want, per kind. */
  readonly #wanted: Record<SubscriptionKind, Set<string>> = {
    channel: new Set(),
    pattern: new Set(),
    shard: new Set(),
  };
  #binary: BinaryView | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  /**
   * Creates a client. It discovers the cluster lazily on the first command, or on `connect()`.
   *
   * @param options The seed nodes and settings.
   */
  constructor(options: RedisClusterClientOptions) {
    super();
    this.#c = resolveClusterOptions(options);
    const seed = this.#c.seeds[0]!;
    this.#settings = resolveClientOptions({ ...this.#c.node, host: seed.host, port: seed.port });
    this.#logger = options.logger ?? silentLogger;
    this.#connector = options.connector ?? defaultConnector;
    this.#map = addressMapper(options.nodeAddressMap);
    const mode = options.maintenanceNotifications?.mode ?? "auto";
    if (mode === "enabled" && this.#settings.protocol !== 3) {
      throw new TypeError(
        'Cannot enable maintenance notifications with protocol 2: they need RESP3 (set protocol: 3 or mode: "auto")',
      );
    }
    this.#maintenance = mode !== "disabled" && this.#settings.protocol === 3
      ? new ClusterMaintenanceSupport(options.maintenanceNotifications ?? {}, {
        logger: this.#logger,
        emit: (name, detail) => this.#emit(name as RedisClusterClientEventName, detail),
        applyDelta: (seq, entries, stale) => this.#applyDelta(seq, entries, stale),
        refresh: (reason) => {
          this.#logger.debug(`Refreshing the topology: ${reason}`);
          this.#scheduleRefresh();
        },
        windowsChanged: (open) => {
          this.#windowsOpen = open;
          // Slots are about to move: check the subscribed ones now, then often.
          if (open > 0) this.#armProbe(0);
        },
      })
      : undefined;
    const cacheOptions = this.#settings.clientSideCache;
    this.#cache = cacheOptions
      ? new ClientSideCache(cacheOptions, { logger: this.#logger })
      : undefined;
    this.#pubsub = new SubscriptionManager(
      (args, subscribe) => this.#pubsubSend(args, subscribe),
      (e) => this.#emit("error", e),
    );
  }

  // ------------------------------------------------------------------ events

  #emit(name: RedisClusterClientEventName, detail: unknown): void {
    this.#events.dispatchEvent(new CustomEvent(name, { detail }));
  }

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

  // ------------------------------------------------------------------ nodes

  #executor(address: string, host?: string, port?: number): NodeExecutor {
    let node = this.#nodes.get(address);
    if (node) return node;
    if (host === undefined || port === undefined) {
      const n = this.#topo.nodes.find((x) => x.address === address);
      if (n) {
        host = n.host;
        port = n.port;
      } else {
        const colon = address.lastIndexOf(":");
        host = address.slice(0, colon).replace(/^\[|\]$/g, "");
        port = Number(address.slice(colon + 1));
      }
    }
    const endpoint = { host, port };
    const session: ((role: ConnectionRole) => HandshakeStep[]) | undefined =
      this.#c.readFrom === "primary"
        ? undefined
        : (role) => (role === "subscriber" ? [] : READONLY_STEP);
    const onPush = (frame: RespValue[]): boolean => {
      // A node ends a shard subscription itself when the channel's slot leaves it.
      const kind = frame[0];
      if (kind === "sunsubscribe" || kind === "SUNSUBSCRIBE") {
        this.#onShardUnsubscribed(address, String(frame[1]));
      }
      return false;
    };
    const tracking = this.#cache?.tracking(this.#settings.protocol);
    const hooks = tracking ? tracking.executorHooks({ session, onPush }) : { session, onPush };
    node = new NodeExecutor({
      endpoint,
      settings: { ...this.#settings, host, port, db: 0 },
      connector: this.#connector,
      logger: this.#logger,
      maintenance: this.#maintenance,
      ...hooks,
      emit: (name, detail) => this.#onNodeEvent(address, name, detail),
      onListenerError: (error) => this.#emit("error", error),
      // A new socket could not restore a shard channel: its slot left the node meanwhile.
      onShardRestoreRefused: (channel) => this.#onShardUnsubscribed(address, channel),
      label: `${address} `,
    });
    if (tracking) {
      tracking.attach(node);
      this.#tracking.set(address, tracking);
    }
    this.#nodes.set(address, node);
    return node;
  }

  #onNodeEvent(address: string, name: NodeEventName, detail: unknown): void {
    if (name === "ready") {
      this.#down.delete(address);
      this.#reached.add(address);
      return;
    }
    if (name === "reconnecting") {
      // RESP3 only: over RESP2 the subscriptions are on another connection, whose loss this
      // is not.
      if (!this.#lostTimers.has(address) && !this.#closed && this.#settings.protocol === 3) {
        // The copies on its replicas take over once what the lost node published before it
        // went has come through replication (no replica is promoted that fast).
        this.#lostTimers.set(
          address,
          this.#clock.setTimer(() => {
            this.#lostTimers.delete(address);
            if (this.#closed || !this.#down.has(address)) return;
            for (const [channel, inner] of this.#inner.shard) {
              if (
                inner.node === address && this.#wanted.shard.has(channel) &&
                !this.#moving.has(`shard\u0000${channel}`)
              ) {
                this.#takeOverShadow(channel, address);
              }
            }
          }, SHADOW_TAKEOVER_GRACE),
        );
      }
      const error = (detail as { error?: Error } | undefined)?.error;
      this.#down.set(address, error ?? new ConnectionError(`Cannot reach "${address}"`));
      if (this.#ready) this.#scheduleRefresh();
      return;
    }
    if (name === "error") {
      if (detail instanceof ConnectionError) {
        this.#down.set(address, detail);
        if (this.#ready) this.#scheduleRefresh();
      }
      this.#emit("error", detail);
    }
  }

  #execAt(index: number): NodeExecutor {
    let e = this.#byIndex[index];
    if (e === undefined || e.closed) {
      const n = this.#topo.nodes[index]!;
      e = this.#executor(n.address, n.host, n.port);
      this.#byIndex[index] = e;
    }
    return e;
  }

  /**
   * Closes a node's executor (in-flight replies still arrive).
   *
   * @param flushCache Whether the client-side cache is dropped whole: `false` when the keys the
   *   node served were dropped already (their slots moved).
   */
  #dropExecutor(address: string, flushCache = true): void {
    const node = this.#nodes.get(address);
    if (!node) return;
    this.#nodes.delete(address);
    this.#down.delete(address);
    this.#byIndex = [];
    const tracking = this.#tracking.get(address);
    if (tracking) {
      this.#tracking.delete(address);
      tracking.close(flushCache);
    }
    const start = this.#clock.now();
    node.close().then(() => {
      this.#logger.debug(`"${address}": connections closed in ${this.#clock.now() - start} ms`);
    }, () => {});
  }

  /** Indexes of the primaries serving at least one slot. */
  #computePrimaries(): number[] {
    const seen = new Uint8Array(this.#topo.nodes.length);
    const out: number[] = [];
    const slots = this.#topo.slots;
    for (let s = 0; s < SLOT_COUNT; s++) {
      const i = slots[s]!;
      if (i !== NO_NODE && seen[i] === 0) {
        seen[i] = 1;
        out.push(i);
      }
    }
    return out;
  }

  #anyPrimary(): string | undefined {
    const list = this.#primaries;
    if (list.length === 0) return undefined;
    for (let k = 0; k < list.length; k++) {
      const i = list[(this.#rr++ & 0x7fffffff) % list.length]!;
      const a = this.#topo.nodes[i]!.address;
      if (!this.#down.has(a)) return a;
    }
    return this.#topo.nodes[list[0]!]!.address;
  }

  // ------------------------------------------------------------------ topology

  /** Reads one node's view. */
  async #readView(node: NodeExecutor, timeout: number): Promise<ClusterTopology> {
    const [shards, info] = await Promise.allSettled([
      node.run(["CLUSTER", "SHARDS"], undefined, 0, undefined, timeout),
      node.run(["CLUSTER", "INFO"], undefined, 0, undefined, timeout),
    ]);
    const options = {
      answeredBy: node.endpoint,
      tls: this.#settings.tls !== undefined,
      mapAddress: this.#map,
      epoch: info.status === "fulfilled" ? clusterInfoEpoch(info.value as RespValue) : 0,
    };
    if (shards.status === "fulfilled") {
      return parseClusterShards(shards.value as RespValue, options);
    }
    const e = shards.reason;
    if (isClusterDisabledError(e)) throw e;
    if (!(e instanceof ReplyError)) throw e;
    // Before Redis 7.0: CLUSTER SLOTS.
    const slots = await node.run(["CLUSTER", "SLOTS"], undefined, 0, undefined, timeout);
    return parseClusterSlots(slots as RespValue, options);
  }

  #queryTimeout(): number {
    const t = this.#settings.commandTimeout;
    return t === 0 ? 5000 : Math.min(t, 5000);
  }

  /** First discovery: the seeds in parallel; the first view wins, a full refresh follows. */
  #discover(): Promise<void> {
    if (this.#ready) return Promise.resolve();
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot send the command: the client is closed"));
    }
    if (this.#discovering) return this.#discovering;
    const attempt = (async () => {
      const seeds = this.#c.seeds.map((s) => ({ ...s, address: formatEndpoint(s) }));
      const reasons: string[] = [];
      let notCluster: { address: string; error: unknown } | undefined;
      const timeout = this.#queryTimeout();
      const view = await new Promise<ClusterTopology | undefined>((resolve) => {
        let pending = seeds.length;
        let done = false;
        for (const s of seeds) {
          const node = this.#executor(s.address, s.host, s.port);
          node.connect()
            .then(() => this.#readView(node, timeout))
            .then((v) => {
              if (!done) {
                done = true;
                resolve(v);
              }
            }, (e) => {
              reasons.push(`${s.address}: ${(e as Error)?.message ?? String(e)}`);
              if (isClusterDisabledError(e)) notCluster ??= { address: s.address, error: e };
              this.#dropExecutor(s.address);
              if (--pending === 0 && !done) {
                done = true;
                resolve(undefined);
              }
            });
        }
      });
      if (this.#closed) throw new ClosedError("Cannot discover the cluster: the client is closed");
      if (view === undefined) {
        for (const s of seeds) this.#dropExecutor(s.address);
        if (notCluster) {
          throw new RedisError(
            `Cannot discover the cluster topology: "${notCluster.address}" is not a cluster node (cluster support disabled)`,
            { cause: notCluster.error },
          );
        }
        throw new ConnectionError(
          `Cannot discover the cluster topology: no seed node answered (${reasons.join("; ")})`,
          { written: false },
        );
      }
      if (view.nodes.length === 0 || this.#computeCoverage(view) === 0) {
        throw new RedisError(
          "Cannot discover the cluster topology: the cluster has no slot assigned",
        );
      }
      this.#adopt(view, "refresh");
      this.#ready = true;
      const seedAddresses = new Set(seeds.map((s) => s.address));
      if (!view.nodes.some((n) => seedAddresses.has(n.address))) {
        this.#logger.warn(
          `No seed node appears in the topology it announced (${
            view.nodes.map((n) => n.address).join(", ")
          }): if those addresses are not reachable from here, set nodeAddressMap`,
        );
      }
      if (view.nodes.length > 1) this.#scheduleRefresh();
      this.#armPeriodic();
    })();
    this.#discovering = attempt;
    attempt.then(() => {
      this.#discovering = undefined;
    }, () => {
      this.#discovering = undefined;
    });
    return attempt;
  }

  #computeCoverage(view: ClusterTopology): number {
    let n = 0;
    for (let s = 0; s < SLOT_COUNT; s++) if (view.slots[s] !== NO_NODE) n++;
    return n;
  }

  /** Adopts a view: new executors on demand, executors of nodes gone closed, events. */
  #adopt(view: ClusterTopology, reason: "refresh" | "moved"): void {
    const before = this.#topo;
    const change = diffTopology(before, view);
    if (this.#cache !== undefined && before.nodes.length > 0) this.#dropMovedSlots(before, view);
    this.#topo = view;
    this.#byIndex = [];
    this.#primaries = this.#computePrimaries();
    const keep = new Set(view.nodes.filter((n) => n.health !== "fail").map((n) => n.address));
    for (const address of [...this.#nodes.keys()]) {
      if (!keep.has(address)) this.#dropExecutor(address);
    }
    const empty = before.nodes.length === 0;
    for (const a of change.added) {
      const n = view.nodes.find((x) => x.address === a)!;
      const added: NodeAddedDetail = { address: a, role: n.role };
      this.#emit("node-added", added);
    }
    for (const a of change.removed) this.#emit("node-removed", { address: a });
    if (
      empty || change.added.length > 0 || change.removed.length > 0 || change.slotsMoved > 0 ||
      change.changed.length > 0
    ) {
      const detail: TopologyEventDetail = { ...change, epoch: view.epoch, reason };
      this.#emit("topology", detail);
    }
    this.#reconcileSubscriptions();
  }

  /** Drops the cached replies of the slots whose owner differs between two views. */
  #dropMovedSlots(before: ClusterTopology, after: ClusterTopology): void {
    const moved = new Uint8Array(SLOT_COUNT);
    let any = false;
    for (let s = 0; s < SLOT_COUNT; s++) {
      const a = before.slots[s]!;
      const b = after.slots[s]!;
      const from = a === NO_NODE ? undefined : before.nodes[a]!.address;
      const to = b === NO_NODE ? undefined : after.nodes[b]!.address;
      if (from !== to) {
        moved[s] = 1;
        any = true;
      }
    }
    if (any) this.#cache!.invalidateWhere((key) => moved[keySlot(key)] === 1);
  }

  /** One refresh at a time; a request during one runs another right after it. */
  #refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return this.#refreshing;
    }
    this.#maintenance?.refreshStarted();
    const run = (async () => {
      try {
        do {
          this.#refreshAgain = false;
          await this.#refreshOnce();
        } while (this.#refreshAgain && !this.#closed);
      } finally {
        this.#refreshing = undefined;
        this.#armPeriodic();
        // SMIGRATED deltas that arrived meanwhile are newer than what was read: applied now.
        this.#maintenance?.refreshFinished();
      }
    })();
    this.#refreshing = run;
    return run;
  }

  #scheduleRefresh(): void {
    if (this.#closed || !this.#ready) return;
    this.#refresh().catch((e) => {
      if (!this.#closed) this.#emit("error", e);
    });
  }

  async #refreshOnce(): Promise<void> {
    if (this.#closed) return;
    // Ask up to three nodes, reachable ones first: the primaries, then replicas, then seeds.
    // Primaries serving slots first, then replicas: a node left empty by a slot migration is
    // asked (and connected to) only when no other is left.
    const serving = new Set(this.#primaries.map((i) => this.#topo.nodes[i]!.address));
    const known = this.#topo.nodes.filter((n) => n.health !== "fail").map((n) => n.address);
    const seeds = this.#c.seeds.map((s) => formatEndpoint(s));
    const replicaSet = new Set(
      this.#topo.nodes.filter((n) => n.role === "replica").map((n) => n.address),
    );
    const preferred = [
      ...shuffle(known.filter((a) => serving.has(a))),
      ...shuffle(known.filter((a) => replicaSet.has(a))),
    ];
    const order = [...new Set([...preferred, ...shuffle(known), ...seeds])];
    const had = new Set(this.#nodes.keys());
    const up = order.filter((a) => !this.#down.has(a));
    const preferredUp = preferred.filter((a) => !this.#down.has(a));
    // Nodes known to be down are asked only when no other is left: a query to them would wait
    // for its timeout.
    const ask = (preferredUp.length > 0 ? preferredUp : up.length > 0 ? up : order).slice(0, 3);
    const timeout = this.#queryTimeout();
    const results = await Promise.allSettled(ask.map((a) => {
      const node = this.#executor(a);
      return this.#readView(node, timeout);
    }));
    if (this.#closed) return;
    const views: ClusterTopology[] = [];
    const reasons: string[] = [];
    results.forEach((r, i) => {
      if (r.status === "fulfilled") {
        if (this.#computeCoverage(r.value) > 0) views.push(r.value);
      } else reasons.push(`${ask[i]}: ${(r.reason as Error)?.message ?? String(r.reason)}`);
    });
    for (const a of ask) {
      // Seeds that are not part of the cluster any more are not kept connected.
      if (
        !this.#topo.nodes.some((n) => n.address === a) &&
        !views.some((v) => v.nodes.some((n) => n.address === a))
      ) {
        this.#dropExecutor(a);
      }
    }
    if (views.length === 0) {
      throw new ConnectionError(
        `Cannot refresh the cluster topology: no node answered (${reasons.join("; ")})`,
      );
    }
    this.#stats.refreshes++;
    const chosen = chooseTopology(views, this.#topo.epoch);
    if (chosen) this.#adopt(chosen, "refresh");
    // Nodes connected only to be asked that serve nothing (an emptied primary) are let go.
    for (const a of ask) {
      if (!had.has(a) && !this.#serves(a)) this.#dropExecutor(a, false); // nothing read there
    }
  }

  /** Whether a node serves slots, or is a replica of the current view. */
  #serves(address: string): boolean {
    const t = this.#topo;
    const i = t.nodes.findIndex((n) => n.address === address);
    if (i === -1) return false;
    return t.nodes[i]!.role === "replica" || this.#primaries.includes(i);
  }

  #armPeriodic(): void {
    const every = this.#c.topologyRefreshInterval;
    if (this.#closed || every === 0 || !this.#ready) return;
    this.#clock.clearTimer(this.#periodic);
    this.#periodic = this.#clock.setTimer(() => {
      this.#periodic = undefined;
      this.#scheduleRefresh();
    }, every);
  }

  /** Schedules one more topology refresh in `ms` (one pending at a time). */
  #refreshLater(ms: number): void {
    if (this.#closed || this.#laterRefresh !== undefined) return;
    this.#laterRefresh = this.#clock.setTimer(() => {
      this.#laterRefresh = undefined;
      this.#scheduleRefresh();
    }, ms);
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
    if (!this.#ready) return await this.#discover();
    await this.#refresh();
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
    const t = this.#topo;
    const slots: SlotRange[][] = t.nodes.map(() => []);
    for (let s = 0; s < SLOT_COUNT; s++) {
      const i = t.slots[s]!;
      if (i === NO_NODE) continue;
      const list = slots[i]!;
      const last = list[list.length - 1];
      if (last && last.end === s - 1) last.end = s;
      else list.push({ start: s, end: s });
    }
    return t.nodes.map((n, i) => ({
      address: n.address,
      id: n.id,
      role: n.role,
      health: n.health,
      primary: n.primary,
      slots: slots[i]!,
    }));
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
    const i = this.#topo.slots[slot]!;
    return i === NO_NODE ? undefined : this.#topo.nodes[i]!.address;
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
    return this.#maintenance?.snapshot(this.#settings.commandTimeout);
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
    return { ...this.#stats };
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
    return this.#dispatch(args, transform, flags, blockMs, undefined);
  }

  #dispatch(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
  ): Promise<unknown> {
    const cache = this.#cache;
    if (cache === undefined || this.#closed) {
      return this.#dispatchServer(args, transform, flags, blockMs, timeout);
    }
    return cache.run(
      args,
      transform,
      flags,
      blockMs,
      (a, t, f, b) => this.#dispatchServer(a, t, f, b, timeout),
    );
  }

  #dispatchServer(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
  ): Promise<unknown> {
    if (this.#closed) {
      const e = new ClosedError("Cannot send the command: the client is closed", {
        written: false,
      });
      return (flags & FLAG_ERRORS_AS_VALUES) !== 0 ? Promise.resolve(e) : Promise.reject(e);
    }
    if (!this.#ready) {
      return this.#discover().then(
        () => this.#route(args, transform, flags, blockMs, timeout),
        (e) => {
          if ((flags & FLAG_ERRORS_AS_VALUES) !== 0) return e;
          throw e;
        },
      );
    }
    return this.#route(args, transform, flags, blockMs, timeout);
  }

  #job(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
    slot: number,
    node: string | undefined,
  ): Job {
    return {
      args,
      transform,
      flags: flags & ~FLAG_ERRORS_AS_VALUES,
      blockMs,
      timeout,
      slot,
      node,
      asking: undefined,
      attempts: 0,
      start: this.#clock.now(),
      asValue: (flags & FLAG_ERRORS_AS_VALUES) !== 0,
      last: undefined,
    };
  }

  #route(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
  ): Promise<unknown> {
    const idx = commandKeyIndexes(args, true);
    if (idx !== undefined && idx.length > 0) {
      const slot = keySlot(args[idx[0]!]!);
      for (let i = 1; i < idx.length; i++) {
        if (keySlot(args[idx[i]!]!) !== slot) {
          return this.#crossSlot(args, idx, transform, flags, timeout);
        }
      }
      return this.#sendKeyed(args, transform, flags, blockMs, timeout, slot);
    }
    if (idx === undefined && args.length > 1) {
      // A command the key table does not know (a module's): its key is most often the first
      // argument; a MOVED corrects the slot otherwise.
      return this.#sendKeyed(args, transform, flags, blockMs, timeout, keySlot(args[1]!));
    }
    const policy = commandPolicy(args);
    if (policy?.request === "all_shards" || policy?.request === "all_nodes") {
      return this.#fanOut(args, transform, flags, timeout, policy);
    }
    return this.#send(this.#job(args, transform, flags, blockMs, timeout, -1, undefined));
  }

  /**
   * The first attempt of a keyed command: straight to the slot's node; the `Job` that carries
   * redirections and retries is only made when the node refuses or the connection fails (the
   * retry budget counts from then).
   */
  #sendKeyed(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
    slot: number,
  ): Promise<unknown> {
    const i = this.#topo.slots[slot]!;
    if (i !== NO_NODE && this.#slotMoves.size === 0) {
      const k = this.#readIndex(i, flags);
      const address = this.#topo.nodes[k]!.address;
      if (this.#down.size === 0 || !this.#down.has(address)) {
        const node = this.#execAt(k);
        return node.run(args, transform, flags & ~FLAG_ERRORS_AS_VALUES, blockMs, timeout).then(
          undefined,
          (e) => {
            const job = this.#job(args, transform, flags, blockMs, timeout, slot, undefined);
            job.attempts = 1;
            job.last = address;
            return this.#onError(job, e, node, address);
          },
        );
      }
    }
    return this.#send(this.#job(args, transform, flags, blockMs, timeout, slot, undefined));
  }

  /** The address of the node for the next attempt, or `undefined` when none serves the slot. */
  #target(job: Job): string | undefined {
    if (job.asking !== undefined) return job.asking;
    if (job.node !== undefined) return job.node;
    if (job.slot < 0) return this.#anyPrimary();
    const i = this.#topo.slots[job.slot]!;
    if (i === NO_NODE) return undefined;
    return this.#topo.nodes[this.#readIndex(i, job.flags)]!.address;
  }

  /** The node index to send to for a slot served by primary `i`: a replica for reads when asked. */
  #readIndex(i: number, flags: number): number {
    if (this.#c.readFrom === "primary" || (flags & FLAG_READONLY) === 0) return i;
    const reps = this.#topo.replicas[i];
    if (reps === undefined || reps.length === 0) return i;
    const r = reps[(this.#rr++ & 0x7fffffff) % reps.length]!;
    if (this.#c.readFrom === "replica" || !this.#down.has(this.#topo.nodes[r]!.address)) return r;
    return i;
  }

  #send(job: Job): Promise<unknown> {
    let node: NodeExecutor;
    let address: string;
    if (this.#slotMoves.size !== 0 && job.slot >= 0) {
      // A shard subscription of this slot is moving: SPUBLISH and friends wait until the new
      // owner confirmed it, so no message of this client falls between the two.
      const moving = this.#slotMoves.get(job.slot);
      if (moving) return moving.then(() => this.#send(job));
    }
    if (job.asking === undefined && job.node === undefined && job.slot >= 0) {
      // The common case: a keyed command to the slot's node (cached executor).
      const i = this.#topo.slots[job.slot]!;
      if (i === NO_NODE) {
        job.attempts++;
        this.#scheduleRefresh();
        return this.#later(
          job,
          new RedisError(`Cannot send "${nameOf(job.args)}": no node serves slot ${job.slot}`),
        );
      }
      const k = this.#readIndex(i, job.flags);
      address = this.#topo.nodes[k]!.address;
      node = this.#execAt(k);
    } else {
      const a = this.#target(job);
      if (a === undefined) {
        job.attempts++;
        this.#scheduleRefresh();
        return this.#later(
          job,
          new RedisError(`Cannot send "${nameOf(job.args)}": no primary serves any slot`),
        );
      }
      address = a;
      node = this.#executor(a);
    }
    if (job.asking === undefined && this.#down.size > 0 && this.#down.has(address)) {
      // Do not queue behind a connection that is down: wait for the topology to change.
      job.attempts++;
      job.last = address;
      this.#scheduleRefresh();
      return this.#later(job, this.#down.get(address)!);
    }
    job.attempts++;
    job.last = address;
    let p: Promise<unknown>;
    if (job.asking !== undefined) {
      job.asking = undefined;
      p = node.sendAll([
        { args: ["ASKING"], transform: undefined, flags: 0 },
        { args: job.args, transform: job.transform, flags: job.flags & ~FLAG_BLOCKING },
      ])[1]!;
    } else {
      p = node.run(job.args, job.transform, job.flags, job.blockMs, job.timeout);
    }
    return p.then(undefined, (e) => this.#onError(job, e, node, address));
  }

  #canRetry(job: Job): boolean {
    return !this.#closed && job.attempts < this.#c.maxAttempts &&
      this.#clock.now() - job.start < this.#c.maxTotalRetriesDuration;
  }

  #fail(job: Job, e: unknown): unknown {
    let error = e;
    if (
      job.last !== undefined && this.#down.has(job.last) &&
      (e instanceof TimeoutError || e instanceof ClosedError || e instanceof ConnectionError) &&
      e.written === false
    ) {
      // Retries ran out while the node was unreachable: say so.
      const cause = this.#down.get(job.last)!;
      error = new ConnectionError(
        `Cannot send "${
          nameOf(job.args)
        }" to "${job.last}": the node is unreachable (${cause.message})${
          this.#reached.has(job.last)
            ? ""
            : "; if the cluster announces addresses this client cannot reach, set nodeAddressMap"
        }`,
        { cause, written: false },
      );
    }
    if (job.asValue) return error;
    throw error;
  }

  #onError(job: Job, e: unknown, node: NodeExecutor, address: string): unknown {
    if (e instanceof ReplyError) {
      const r = parseRedirect(e, node.endpoint);
      if (r !== undefined) {
        if (!this.#canRetry(job)) return this.#fail(job, e);
        const to = this.#map(r.to);
        const target = formatEndpoint(to);
        if (r.ask) {
          this.#stats.ask++;
          this.#executor(target, to.host, to.port);
          this.#slotMigrating(r.slot, target);
          job.asking = target;
          return this.#send(job);
        }
        this.#stats.moved++;
        job.node = undefined;
        // The server's slot wins (a command whose keys the table does not know).
        job.slot = r.slot;
        this.#patch(r.slot, to);
        const moving = this.#moveShardSubscriptions(r.slot);
        return moving ? moving.then(() => this.#send(job)) : this.#send(job);
      }
      if (isRetryableRefusal(e)) {
        this.#stats.refused++;
        if (e.prefix === "CLUSTERDOWN" || e.prefix === "MASTERDOWN") this.#scheduleRefresh();
        return this.#later(job, e);
      }
      return this.#fail(job, e);
    }
    const unwritten =
      (e instanceof ConnectionError || e instanceof TimeoutError || e instanceof ClosedError) &&
      e.written === false;
    const letGo = node.closed && !this.#nodes.has(address);
    if ((e instanceof ConnectionError || e instanceof ClosedError) && !letGo) {
      if (e instanceof ConnectionError) this.#down.set(address, e);
      this.#scheduleRefresh();
    }
    if (unwritten && !this.#closed) {
      this.#stats.unwrittenRetries++;
      if (
        letGo && job.node === undefined && job.slot >= 0 &&
        job.asking === undefined && this.#canRetry(job)
      ) {
        // Not written by a node this client let go (its slots moved): to the new owner now.
        return this.#send(job);
      }
      return this.#later(job, e);
    }
    return this.#fail(job, e);
  }

  /** Retries after a pause: the remaining time spread over the remaining attempts. */
  #later(job: Job, e: unknown): Promise<unknown> {
    if (!this.#canRetry(job)) {
      try {
        return Promise.resolve(this.#fail(job, e));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const left = this.#c.maxTotalRetriesDuration - (this.#clock.now() - job.start);
    const attemptsLeft = Math.max(1, this.#c.maxAttempts - job.attempts);
    const ms = Math.max(10, Math.min(left, Math.floor(left / (attemptsLeft * (attemptsLeft + 1)))));
    return new Promise((resolve, reject) => {
      const entry: RetryTimer = {
        id: undefined,
        fail: () => {
          try {
            resolve(
              this.#fail(
                job,
                new ClosedError("Cannot send the command: the client is closed", {
                  written: false,
                }),
              ),
            );
          } catch (err) {
            reject(err);
          }
        },
      };
      entry.id = this.#clock.setTimer(() => {
        this.#retries.delete(entry);
        this.#send(job).then(resolve, reject);
      }, ms);
      this.#retries.add(entry);
    });
  }

  /** A MOVED: the slot goes to its new owner at once, a refresh follows. */
  #patch(slot: number, to: HostPort): void {
    const before = this.#topo.nodes.length;
    const owner = this.#topo.slots[slot]!;
    const now = patchSlot(this.#topo, slot, to);
    if (owner !== now && this.#cache !== undefined) {
      // The old owner no longer sends invalidations for the keys of this slot.
      this.#cache.invalidateWhere((key) => keySlot(key) === slot);
    }
    if (this.#topo.nodes.length !== before) this.#primaries = this.#computePrimaries();
    else if (!this.#primaries.includes(this.#topo.slots[slot]!)) {
      this.#primaries = this.#computePrimaries();
    }
    this.#scheduleRefresh();
  }

  /**
   * An SMIGRATED delta: the slot table changes in place (no CLUSTER SLOTS read). New owners get
   * an executor at once; shard subscriptions of the moved slots move (subscribed on the new
   * owner before the old one is let go), channel and pattern subscriptions leave emptied nodes;
   * cached replies of the moved slots are dropped, only those; nodes left without a slot are
   * closed once their subscriptions moved (in-flight replies still arrive; work they did not
   * write comes back unwritten and goes to the new owner).
   */
  #applyDelta(seq: number, entries: SlotMigration[], stale: number): void {
    if (this.#closed) return;
    if (!this.#ready) {
      this.#logger.debug(`SMIGRATED ${seq} before the first discovery: it reads the new table`);
      return;
    }
    const t = this.#topo;
    const delta = applySlotDelta(
      {
        nodes: t.nodes.map((n) => n.address),
        slots: t.slots,
        replicaReads: t.nodes.filter((n) => n.role === "replica").map((n) => n.address),
      },
      entries,
      { mapAddress: this.#map },
    );
    for (const m of delta.malformed) {
      this.#logger.warn(`SMIGRATED ${seq}: entry ${m.index} not applied: ${m.reason}`);
    }
    if (delta.malformed.length > 0) this.#scheduleRefresh();
    if (delta.movedCount === 0 && delta.added.length === 0 && delta.dropped.length === 0) {
      this.#logger.debug(`SMIGRATED ${seq}: the table already routes these slots there`);
      return;
    }
    const old = new Map(t.nodes.map((n, i) => [n.address, i]));
    const nodes: ClusterNode[] = delta.table.nodes.map((a) => {
      const i = old.get(a);
      if (i !== undefined) return t.nodes[i]!;
      const colon = a.lastIndexOf(":");
      return {
        address: a,
        host: a.slice(0, colon).replace(/^\[|\]$/g, ""),
        port: Number(a.slice(colon + 1)),
        id: null,
        role: "primary",
        health: "online",
        replicationOffset: 0,
        primary: null,
        hostname: null,
      };
    });
    const index = new Map(nodes.map((n, i) => [n.address, i]));
    const replicas: number[][] = nodes.map(() => []);
    t.replicas.forEach((list, i) => {
      const k = index.get(t.nodes[i]!.address);
      if (k === undefined) return;
      replicas[k] = list.map((r) => index.get(t.nodes[r]!.address)).filter((x): x is number =>
        x !== undefined
      );
    });
    const moved = new Uint8Array(SLOT_COUNT);
    for (const m of delta.moved) {
      for (const r of m.slots) moved.fill(1, r.start, r.end + 1);
      const k = index.get(m.to)!;
      if (nodes[k]!.role === "replica") {
        // A replica that took slots serves them as a primary now.
        nodes[k] = { ...nodes[k]!, role: "primary", primary: null };
        for (const list of replicas) {
          const j = list.indexOf(k);
          if (j !== -1) list.splice(j, 1);
        }
      }
    }
    const view: ClusterTopology = { nodes, slots: delta.table.slots, replicas, epoch: t.epoch };
    this.#topo = view;
    this.#byIndex = [];
    this.#primaries = this.#computePrimaries();
    this.#cache?.invalidateWhere((key) => moved[keySlot(key)] === 1);
    for (const a of delta.added) {
      const n = nodes[index.get(a)!]!;
      this.#executor(a, n.host, n.port).connect().catch(() => {});
    }
    const change = diffTopology(t, view);
    for (const a of change.added) this.#emit("node-added", { address: a, role: "primary" });
    // Subscriptions first, then the emptied nodes go.
    const dropped = new Set(delta.dropped);
    const moves: Promise<void>[] = [];
    for (const [name, inner] of this.#inner.shard) {
      if (moved[keySlot(name)] !== 1) continue;
      const owner = this.#subscriptionNode("shard", name);
      if (owner !== undefined && owner !== inner.node) moves.push(this.#move("shard", name, owner));
    }
    for (const kind of ["channel", "pattern"] as const) {
      for (const [name, inner] of this.#inner[kind]) {
        if (!dropped.has(inner.node)) continue;
        const owner = this.#subscriptionNode(kind, name);
        if (owner !== undefined && owner !== inner.node) moves.push(this.#move(kind, name, owner));
      }
    }
    const detail: TopologyEventDetail = { ...change, epoch: view.epoch, reason: "smigrated" };
    this.#emit("topology", detail);
    this.#logger.debug(
      `SMIGRATED ${seq} applied: ${delta.movedCount} slots moved (${
        delta.moved.map((m) => `${rangesText(m.slots)} ${m.from ?? "none"} -> ${m.to}`).join("; ")
      })${stale > 0 ? `, ${stale} left to a newer SMIGRATED` : ""}${
        delta.added.length > 0 ? `, connecting to ${delta.added.join(", ")}` : ""
      }${delta.dropped.length > 0 ? `, closing ${delta.dropped.join(", ")}` : ""}`,
    );
    if (dropped.size === 0) return;
    const close = () => {
      for (const a of dropped) {
        if (this.#serves(a) || !this.#nodes.has(a)) continue;
        this.#logger.debug(`"${a}" serves no slot since SMIGRATED ${seq}: closing its connections`);
        // Its keys' cached replies went with the moved slots.
        this.#dropExecutor(a, false);
        if (change.removed.includes(a)) this.#emit("node-removed", { address: a });
      }
    };
    if (moves.length === 0) close();
    else Promise.allSettled(moves).then(close);
  }

  #crossSlot(
    args: RedisArgument[],
    idx: number[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
  ): Promise<unknown> {
    const policy = commandPolicy(args);
    const asValue = (flags & FLAG_ERRORS_AS_VALUES) !== 0;
    const slots = new Map<number, number[]>();
    idx.forEach((pos, k) => {
      const s = keySlot(args[pos]!);
      const list = slots.get(s);
      if (list) list.push(k);
      else slots.set(s, [k]);
    });
    if (policy?.request !== "multi_shard" || this.#c.crossSlot === "refuse") {
      const e = new TypeError(
        `Cannot send "${nameOf(args)}": its keys hash to different slots (${
          rangesOfSlots(slots.keys())
        }); put them in one slot with a hash tag such as "{user1}"`,
      );
      return asValue ? Promise.resolve(e) : Promise.reject(e);
    }
    // One command per slot: the arguments before the first key, then each key with the
    // arguments that follow it up to the next key (MSET's values).
    const step = idx.length > 1 ? idx[1]! - idx[0]! : 1;
    const head = args.slice(0, idx[0]!);
    const parts: { keys: number[]; promise: Promise<unknown> }[] = [];
    for (const [slot, keys] of slots) {
      const sub: RedisArgument[] = [...head];
      for (const k of keys) {
        const at = idx[k]!;
        for (let j = 0; j < step; j++) sub.push(args[at + j]!);
      }
      const job = this.#job(
        sub,
        undefined,
        flags & ~FLAG_ERRORS_AS_VALUES,
        undefined,
        timeout,
        slot,
        undefined,
      );
      parts.push({ keys, promise: this.#send(job) });
    }
    const merged = Promise.all(parts.map((p) => p.promise)).then((replies) => {
      let value: unknown;
      if (policy.response === "agg_sum") value = aggregateReplies(replies, "agg_sum");
      else if (policy.response === "all_succeeded" || policy.response === "one_succeeded") {
        value = replies[0];
      } else {
        const out: unknown[] = new Array(idx.length);
        parts.forEach((p, i) => {
          const r = replies[i];
          if (!Array.isArray(r)) {
            throw new RedisError(`Cannot merge the replies of "${nameOf(args)}": expected arrays`);
          }
          p.keys.forEach((k, j) => (out[k] = r[j]));
        });
        value = out;
      }
      return transform ? transform(value as RespValue) : value;
    });
    return asValue ? merged.catch((e) => e) : merged;
  }

  #fanOut(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
    policy: CommandPolicy,
  ): Promise<unknown> {
    const asValue = (flags & FLAG_ERRORS_AS_VALUES) !== 0;
    const t = this.#topo;
    const targets = this.#primaries.map((i) => t.nodes[i]!.address);
    if (policy.request === "all_nodes") {
      for (const i of this.#primaries) {
        for (const r of t.replicas[i] ?? []) targets.push(t.nodes[r]!.address);
      }
    }
    const run = Promise.allSettled(targets.map((a) =>
      this.#send(
        this.#job(args, undefined, flags & ~FLAG_ERRORS_AS_VALUES, undefined, timeout, -1, a),
      )
    )).then((settled) => {
      const ok = settled.filter((s) => s.status === "fulfilled").map((s) =>
        (s as PromiseFulfilledResult<unknown>).value
      );
      const failed = settled.find((s) => s.status === "rejected") as
        | PromiseRejectedResult
        | undefined;
      if (targets.length === 0) {
        throw new RedisError(`Cannot send "${nameOf(args)}": no primary serves any slot`);
      }
      if (policy.response === "one_succeeded") {
        if (ok.length === 0) throw failed!.reason;
      } else if (failed) throw failed.reason;
      const value = aggregateReplies(ok, policy.response);
      return transform ? transform(value as RespValue) : value;
    });
    return asValue ? run.catch((e) => e) : run;
  }

  /**
   * Connects now: discovers the cluster and opens a connection to every primary.
   *
   * @returns Resolves when every primary's connection is ready.
   */
  async connect(): Promise<void> {
    await this.#discover();
    await Promise.all(this.#primaries.map((i) => this.#execAt(i).connect()));
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
    return this.#dispatch(args, undefined, flags, options.blockMs, options.timeout) as Promise<
      RespValue
    >;
  }

  /**
   * A view of this client whose commands reply bulk strings as `Uint8Array`.
   *
   * @returns The binary view (shares the client's connections).
   */
  binary(): BinaryView {
    // Until the cluster client sits on the client shell: commands and pipelines only.
    return this.#binary ??= new BinaryView({
      _run: (a, t, f, b) => this._run(a, t, f, b),
      pipeline: () => this.pipeline(),
      multi: () => {
        throw new TypeError("Cannot start a binary transaction: this client has no binary multi()");
      },
      _subscribe: () =>
        Promise.reject(new TypeError("Cannot subscribe: this client has no binary pub/sub")),
      _cursor: (page) => cursorIterator(page),
      _scanKeys: (_o, _f, page) => cursorIterator(page),
    });
  }

  /**
   * Starts a pipeline: each command goes to its node (commands of one node leave together),
   * the results come back in order; each command is redirected on its own.
   *
   * @returns A new pipeline.
   */
  pipeline(): Pipeline {
    return new Pipeline((args, transform, flags, blockMs) =>
      this.#dispatch(args, transform, flags, blockMs, undefined)
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
    if (cache !== undefined) {
      return new Transaction((commands) =>
        cache.sendAll(commands, (c) => this.#sendTransaction(c))
      );
    }
    return new Transaction((commands) => this.#sendTransaction(commands));
  }

  #slotOfCommands(commands: readonly { args: RedisArgument[] }[]): number | TypeError {
    const slots = new Set<number>();
    for (const c of commands) {
      const idx = commandKeyIndexes(c.args, true);
      if (idx === undefined) continue;
      for (const i of idx) slots.add(keySlot(c.args[i]!));
    }
    if (slots.size > 1) {
      return new TypeError(
        `Cannot run the transaction: its keys hash to different slots (${
          rangesOfSlots(slots)
        }); put them in one slot with a hash tag such as "{user1}"`,
      );
    }
    return slots.size === 0 ? -1 : [...slots][0]!;
  }

  #sendTransaction(commands: GroupCommand[]): Promise<unknown>[] {
    const settle: { resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
    const promises = commands.map(() =>
      new Promise<unknown>((resolve, reject) => settle.push({ resolve, reject }))
    );
    const slot = this.#slotOfCommands(commands.slice(1, -1));
    const finish = (results: PromiseSettledResult<unknown>[]) => {
      results.forEach((r, i) => {
        if (r.status === "fulfilled") settle[i]!.resolve(r.value);
        else settle[i]!.reject(r.reason);
      });
    };
    const failAll = (e: unknown) => finish(commands.map(() => ({ status: "rejected", reason: e })));
    if (slot instanceof TypeError) {
      failAll(slot);
      return promises;
    }
    const job = this.#job(["MULTI"], undefined, 0, undefined, undefined, slot, undefined);
    const attempt = async (): Promise<void> => {
      await this.#discover();
      for (;;) {
        const address = this.#target(job);
        if (address === undefined) {
          this.#scheduleRefresh();
          await this.#pause(
            job,
            new RedisError(`Cannot run the transaction: no node serves slot ${slot}`),
          );
          continue;
        }
        job.attempts++;
        job.last = address;
        const node = this.#executor(address);
        const results = await Promise.allSettled(node.sendAll(commands));
        // A refusal before EXEC (the queued commands were answered with a redirect): run the
        // whole transaction again where the slot is now.
        const refusal = results.slice(0, -1).map((r) =>
          r.status === "rejected" ? r.reason : undefined
        )
          .find((e) =>
            e instanceof ReplyError && (parseRedirect(e, node.endpoint) || isRetryableRefusal(e))
          );
        const last = results[results.length - 1]!;
        const unwritten = results.every((r) =>
          r.status === "rejected" &&
          (r.reason instanceof ConnectionError || r.reason instanceof ClosedError ||
            r.reason instanceof TimeoutError) &&
          r.reason.written === false
        );
        if ((refusal !== undefined && last.status === "rejected") || unwritten) {
          if (!this.#canRetry(job)) {
            finish(results);
            return;
          }
          const e = (refusal ?? (results[0] as PromiseRejectedResult).reason) as Error;
          const r = e instanceof ReplyError ? parseRedirect(e, node.endpoint) : undefined;
          if (r !== undefined && !r.ask) {
            this.#stats.moved++;
            this.#patch(r.slot, this.#map(r.to));
            continue;
          }
          if (r?.ask) {
            this.#stats.ask++;
            if (this.#shardSlots.has(r.slot)) {
              this.#slotMigrating(r.slot, formatEndpoint(this.#map(r.to)));
            }
          } else if (e instanceof ReplyError) this.#stats.refused++;
          else this.#scheduleRefresh();
          // ASK, TRYAGAIN, ...: the slot is moving; try again once it moved.
          await this.#pause(job, e);
          continue;
        }
        finish(results);
        return;
      }
    };
    attempt().catch(failAll);
    return promises;
  }

  /** Waits like `#later` before the next attempt of a job run by its caller. */
  #pause(job: Job, e: unknown): Promise<void> {
    if (!this.#canRetry(job)) return Promise.reject(e);
    const left = this.#c.maxTotalRetriesDuration - (this.#clock.now() - job.start);
    const attemptsLeft = Math.max(1, this.#c.maxAttempts - job.attempts);
    const ms = Math.max(10, Math.floor(left / (attemptsLeft * (attemptsLeft + 1))));
    return new Promise((resolve, reject) => {
      const entry: RetryTimer = {
        id: undefined,
        fail: () =>
          reject(
            new ClosedError("Cannot send the command: the client is closed", { written: false }),
          ),
      };
      entry.id = this.#clock.setTimer(() => {
        this.#retries.delete(entry);
        resolve();
      }, ms);
      this.#retries.add(entry);
    });
  }

  /**
   * Borrows an exclusive connection of the node serving the keys and `WATCH`es them on it.
   * The keys must hash to one slot.
   *
   * @param keys The keys to watch.
   * @returns A session for reads and the transaction.
   */
  async watch(...keys: RedisArgument[]): Promise<WatchSession> {
    if (keys.length === 0) throw new TypeError("Cannot watch: no key given");
    const slots = new Set(keys.map((k) => keySlot(k)));
    if (slots.size > 1) {
      throw new TypeError(
        `Cannot watch: the keys hash to different slots (${
          rangesOfSlots(slots)
        }); put them in one slot with a hash tag such as "{user1}"`,
      );
    }
    await this.#discover();
    const slot = [...slots][0]!;
    const job = this.#job(["WATCH"], undefined, 0, undefined, undefined, slot, undefined);
    for (;;) {
      const address = this.#target(job);
      if (address === undefined) {
        this.#scheduleRefresh();
        await this.#pause(job, new RedisError(`Cannot watch: no node serves slot ${slot}`));
        continue;
      }
      job.attempts++;
      try {
        return await this.#executor(address).watch(keys);
      } catch (e) {
        const r = e instanceof ReplyError
          ? parseRedirect(e, this.#executor(address).endpoint)
          : undefined;
        if (r && !r.ask && this.#canRetry(job)) {
          this.#stats.moved++;
          this.#patch(r.slot, this.#map(r.to));
          continue;
        }
        if ((r?.ask || isRetryableRefusal(e)) && this.#canRetry(job)) {
          await this.#pause(job, e);
          continue;
        }
        throw e;
      }
    }
  }

  // ------------------------------------------------------------------ pub/sub

  #listener(kind: SubscriptionKind): PubSubListener {
    const m = this.#pubsub;
    if (kind === "pattern") {
      return (message, channel, pattern) => m.onPush(["pmessage", pattern ?? "", channel, message]);
    }
    const type = kind === "shard" ? "smessage" : "message";
    return (message, channel) => m.onPush([type, channel, message]);
  }

  /** Where a subscription of this kind and name belongs now. */
  #subscriptionNode(kind: SubscriptionKind, name: string): string | undefined {
    if (kind === "shard") {
      const i = this.#topo.slots[keySlot(name)]!;
      return i === NO_NODE ? undefined : this.#topo.nodes[i]!.address;
    }
    // Plain channels and patterns (a cluster forwards every message to every node): keep them
    // where they are while that primary serves and is reachable, else the first one that is.
    const primaries = this.#primaries.map((i) => this.#topo.nodes[i]!.address);
    const usable = (a: string) => primaries.includes(a) && !this.#down.has(a);
    const any = [...this.#inner.channel.values(), ...this.#inner.pattern.values()]
      .map((s) => s.node)
      .find(usable);
    if (any) return any;
    return primaries.filter(usable).sort()[0] ?? primaries.sort()[0];
  }

  #pubsubSend(args: string[], subscribe: boolean): Promise<unknown> {
    const kind = KINDS[args[0]!.toUpperCase()]!;
    const names = args.slice(1);
    const wanted = this.#wanted[kind];
    if (subscribe) {
      for (const n of names) {
        if (kind === "shard" && !wanted.has(n)) {
          const slot = keySlot(n);
          this.#shardSlots.set(slot, (this.#shardSlots.get(slot) ?? 0) + 1);
        }
        wanted.add(n);
      }
      const all = Promise.allSettled(names.map((n) => this.#innerSubscribe(kind, n))).then(
        (results) => {
          const failed = results.find((r) => r.status === "rejected");
          if (failed === undefined) return;
          // The subscription fails whole, and forgets every name: the ones that did subscribe
          // are ended too, on their nodes.
          this.#pubsubSend([UNSUBSCRIBE[kind], ...names], false).catch(() => {});
          throw failed.reason;
        },
      );
      if (kind === "shard") all.then(() => this.#armProbe(), () => {});
      return all;
    }
    const map = this.#inner[kind];
    return Promise.all(names.map((n) => {
      if (kind === "shard" && wanted.has(n)) {
        const slot = keySlot(n);
        const left = (this.#shardSlots.get(slot) ?? 1) - 1;
        if (left > 0) this.#shardSlots.set(slot, left);
        else this.#shardSlots.delete(slot);
        this.#dropPre(n);
        this.#endRetiring(n);
        this.#dropShadows(n);
      }
      wanted.delete(n);
      const inner = map.get(n);
      map.delete(n);
      const owner = kind === "shard" ? this.#subscriptionNode("shard", n) : undefined;
      if (
        inner && kind === "shard" && owner !== inner.node &&
        (owner === undefined || !this.#sameShard(owner, inner.node))
      ) {
        // The slot left that node, which ended the subscription itself and would answer
        // SUNSUBSCRIBE with a redirect.
        this.#nodes.get(inner.node)?.pubsub.forget("shard", [n]);
        return undefined;
      }
      return inner?.sub.unsubscribe();
    }));
  }

  async #innerSubscribe(kind: SubscriptionKind, name: string): Promise<void> {
    await this.#discover();
    const job = this.#job(
      ["SSUBSCRIBE"],
      undefined,
      0,
      undefined,
      undefined,
      kind === "shard" ? keySlot(name) : -1,
      undefined,
    );
    for (;;) {
      const address = this.#subscriptionNode(kind, name);
      if (address === undefined) {
        this.#scheduleRefresh();
        await this.#pause(
          job,
          new RedisError(`Cannot subscribe to "${name}": no node serves its slot`),
        );
        continue;
      }
      job.attempts++;
      const node = this.#executor(address);
      try {
        const sub = kind === "shard"
          ? await this.#shardSubscribeOn(address, name)
          : await node.subscribe(
            kind,
            name,
            this.#listener(kind),
            this.#settings.maxBufferedMessages,
          );
        if (!this.#wanted[kind].has(name)) {
          // Unsubscribed while the server confirmed.
          sub.unsubscribe().catch(() => {});
          return;
        }
        const old = this.#inner[kind].get(name);
        this.#inner[kind].set(name, { node: address, sub });
        if (kind === "shard") this.#syncShadows(name);
        if (old) await this.#dropInner(kind, name, old, address);
        return;
      } catch (e) {
        const r = e instanceof ReplyError ? parseRedirect(e, node.endpoint) : undefined;
        if (r && !r.ask && this.#canRetry(job)) {
          this.#stats.moved++;
          this.#patch(r.slot, this.#map(r.to));
          continue;
        }
        if (
          (r?.ask || isRetryableRefusal(e) ||
            ((e instanceof ConnectionError || e instanceof ClosedError) && e.written === false)) &&
          this.#canRetry(job)
        ) {
          await this.#pause(job, e);
          continue;
        }
        throw e;
      }
    }
  }

  /** A node dropped a shard subscription by itself: subscribe where the channel's slot is now. */
  #onShardUnsubscribed(address: string, channel: string): void {
    if (this.#closed) return;
    const shadow = this.#shadows.get(channel)?.get(address);
    if (shadow) {
      // The replica stopped serving the slot (it left the shard).
      this.#shadows.get(channel)!.delete(address);
      shadow.dropped = true;
      this.#nodes.get(address)?.pubsub.forget("shard", [channel]);
      return;
    }
    if (this.#retiring.get(channel)?.node === address) {
      // The old owner caught up with the move: the replaced subscription is over.
      this.#endRetiring(channel);
      return;
    }
    const pre = this.#pre.get(channel);
    if (pre?.node === address) {
      // The node stopped importing the slot (the move was called off, or it reconnected and
      // could not restore the channel): a later check opens it again if the slot still moves.
      this.#pre.delete(channel);
      this.#nodes.get(address)?.pubsub.forget("shard", [channel]);
      return;
    }
    const inner = this.#inner.shard.get(channel);
    if (!inner || inner.node !== address || !this.#wanted.shard.has(channel)) return;
    // The server dropped it: its executor must neither unsubscribe nor restore it.
    this.#nodes.get(address)?.pubsub.forget("shard", [channel]);
    const key = `shard\u0000${channel}`;
    if (this.#moving.has(key)) return;
    const held = this.#pre.has(channel) ? undefined : this.#holdShadow(channel, address);
    if (held) {
      const before = this.#inner.shard.get(channel)!;
      this.#trackShardMove(
        channel,
        this.#confirmTakeover(channel, address, before, held).catch((e) => {
          this.#emit("error", e);
        }),
      );
      return;
    }
    this.#logger.debug(`"${address}" ended the shard subscription "${channel}": subscribing again`);
    this.#trackShardMove(
      channel,
      this.#subscribeElsewhere(channel, address).then((done) =>
        done ? undefined : this.#innerSubscribe("shard", channel)
      ).catch((e) => {
        this.#emit("error", e);
      }),
    );
    this.#scheduleRefresh();
  }

  /**
   * The node a shard channel was on ended it: its slot now belongs to another primary, which one
   * the table may not know yet. Subscribing on every other primary at once takes one round trip
   * (the others answer MOVED, which also patches the table); the first to confirm keeps it.
   *
   * @returns Whether a node took the subscription.
   */
  async #subscribeElsewhere(channel: string, from: string): Promise<boolean> {
    const before = this.#inner.shard.get(channel);
    const pre = this.#pre.get(channel);
    if (pre !== undefined && pre.node !== from) {
      // Subscribed ahead on the node that imported the slot: nothing to do but take it over.
      const sub = await this.#takePre(channel, pre.node);
      if (sub?.active) {
        if (!this.#wanted.shard.has(channel) || this.#inner.shard.get(channel) !== before) {
          sub.unsubscribe().catch(() => {});
          return true;
        }
        this.#inner.shard.set(channel, { node: pre.node, sub });
        this.#syncShadows(channel);
        this.#logger.debug(
          `"${from}" ended the shard subscription "${channel}": "${pre.node}" already carries it`,
        );
        return true;
      }
    }
    const round = await this.#subscribeOnPrimaries(channel, from);
    let won = round.won;
    const slot = keySlot(channel);
    if (won === undefined && round.redirect !== undefined) {
      // The primaries name the owner (after a failover, the promoted replica): ask it alone.
      const to = round.redirect;
      const address = formatEndpoint(to);
      if (address !== from && !this.#closed) {
        won = await this.#subscribeShard(address, channel, { endpoint: to })
          .then((sub) => ({ address, sub }), () => undefined);
      }
    }
    if (won === undefined) {
      if (round.redirect) this.#patch(slot, round.redirect);
      return false;
    }
    if (!this.#wanted.shard.has(channel) || this.#inner.shard.get(channel) !== before) {
      // Unsubscribed, or subscribed again by another path, meanwhile.
      won.sub.unsubscribe().catch(() => {});
      return true;
    }
    const n = this.#executor(won.address).endpoint;
    this.#patch(slot, { host: n.host, port: n.port });
    this.#refreshLater(1_000);
    this.#inner.shard.set(channel, { node: won.address, sub: won.sub });
    this.#syncShadows(channel);
    this.#logger.debug(`Subscribed the shard channel "${channel}" again on "${won.address}"`);
    return true;
  }

  /**
   * Subscribes a shard channel on every primary but `from` at once: the one serving its slot
   * confirms (the first confirmation wins), the others redirect. Different shards deliver
   * different messages, so the short overlap of two confirmations delivers nothing twice.
   */
  async #subscribeOnPrimaries(
    channel: string,
    from: string,
  ): Promise<{ won?: { address: string; sub: Subscription }; redirect?: HostPort }> {
    const t = this.#topo;
    const others = this.#primaries.map((i) => t.nodes[i]!.address).filter((a) => a !== from);
    if (others.length === 0 || this.#closed) return {};
    const listener = this.#listener("shard");
    let redirect: HostPort | undefined;
    const attempts = others.map((a) =>
      this.#subscribeShard(a, channel, { listener })
        .then((sub) => ({ address: a, sub }), (e) => {
          const r = e instanceof ReplyError
            ? parseRedirect(e, this.#executor(a).endpoint)
            : undefined;
          if (r && !r.ask && formatEndpoint(this.#map(r.to)) !== from) {
            redirect ??= this.#map(r.to);
          }
          return undefined;
        })
    );
    const won = await new Promise<{ address: string; sub: Subscription } | undefined>((resolve) => {
      let left = attempts.length;
      let done = false;
      for (const p of attempts) {
        p.then((r) => {
          if (r && !done) {
            done = true;
            resolve(r);
          } else if (r) {
            // A second node confirmed too (a stale owner): keep only the first.
            r.sub.unsubscribe().catch(() => {});
          }
          if (--left === 0 && !done) resolve(undefined);
        });
      }
    });
    return { won, redirect };
  }

  /**
   * The primary ended a channel whose copy on its replica took over: a failover (a replica of
   * that shard serves the slot now) or a slot move to another shard (no pre-subscription
   * caught it). The other primaries are asked in the same round: one that confirms serves the
   * slot, and the subscription goes there; otherwise the copy stays, and the primaries'
   * redirects say which node was promoted.
   */
  async #confirmTakeover(
    channel: string,
    from: string,
    before: InnerSubscription,
    held: { address: string; shadow: ShadowSubscription },
  ): Promise<void> {
    const round = await this.#subscribeOnPrimaries(channel, from);
    const slot = keySlot(channel);
    const { address, shadow } = held;
    if (this.#inner.shard.get(channel) !== before || !this.#wanted.shard.has(channel)) {
      // Unsubscribed, or subscribed by another path, meanwhile.
      round.won?.sub.unsubscribe().catch(() => {});
      shadow.live.held = undefined;
      return;
    }
    if (round.won) {
      // A slot move to another shard: what the copy held are the old owner's last messages,
      // delivered already.
      shadow.live.held = undefined;
      const n = this.#executor(round.won.address).endpoint;
      this.#patch(slot, { host: n.host, port: n.port });
      this.#inner.shard.set(channel, { node: round.won.address, sub: round.won.sub });
      this.#syncShadows(channel);
      this.#logger.debug(
        `The slot of "${channel}" moved to "${round.won.address}": subscribed there`,
      );
      return;
    }
    // A failover: the copy delivers what it held, then everything.
    const sub = shadow.sub;
    if (shadow.dropped || !sub?.active) {
      shadow.live.held = undefined;
      this.#inner.shard.delete(channel);
      await this.#innerSubscribe("shard", channel);
      return;
    }
    this.#shadows.get(channel)?.delete(address);
    const forward = this.#listener("shard");
    const pending = shadow.live.held ?? [];
    shadow.live.held = undefined;
    shadow.live.on = true;
    for (const [message, ch] of pending) forward(message, ch);
    this.#inner.shard.set(channel, { node: address, sub });
    this.#stats.shadowTakeovers++;
    this.#logger.debug(
      `"${from}" ended the shard subscription "${channel}" and no other primary serves its slot (a failover): its copy on the replica "${address}" delivers now`,
    );
    if (round.redirect) this.#patch(slot, round.redirect);
    this.#syncShadows(channel);
    this.#refreshLater(1_000);
  }

  /**
   * A confirmed copy of `channel` on a connected replica of `from`, made to hold its messages
   * (`undefined` when there is none).
   */
  #holdShadow(
    channel: string,
    from: string,
  ): { address: string; shadow: ShadowSubscription } | undefined {
    const map = this.#shadows.get(channel);
    const inner = this.#inner.shard.get(channel);
    if (!map || !inner || inner.node !== from) return undefined;
    for (const [address, shadow] of map) {
      const node = this.#nodes.get(address);
      if (
        shadow.dropped || !shadow.sub?.active || !node || node.closed || this.#down.has(address)
      ) {
        continue;
      }
      shadow.live.held = [];
      return { address, shadow };
    }
    return undefined;
  }

  /** Moves one subscription to `to`: subscribed there first, then dropped where it was. */
  #move(kind: SubscriptionKind, name: string, to: string): Promise<void> {
    const key = `${kind}\u0000${name}`;
    const running = this.#moving.get(key);
    if (running) return running;
    const run = (async () => {
      const old = this.#inner[kind].get(name);
      if (!old || old.node === to) return;
      if (
        kind === "shard" && old.sub.active && !this.#down.has(old.node) &&
        this.#sameShard(old.node, to)
      ) {
        // A node of the slot's own shard (a primary and its replicas deliver the same messages)
        // keeps serving it: switching within the shard could deliver a message twice, or none.
        return;
      }
      try {
        const sub = kind === "shard"
          ? await this.#shardSubscribeOn(to, name)
          : await this.#executor(to).subscribe(
            kind,
            name,
            this.#listener(kind),
            this.#settings.maxBufferedMessages,
          );
        const current = this.#inner[kind].get(name);
        if (current !== old) {
          // Unsubscribed (or moved) meanwhile.
          sub.unsubscribe().catch(() => {});
          return;
        }
        this.#inner[kind].set(name, { node: to, sub });
        if (kind === "shard") this.#syncShadows(name);
        this.#logger.debug(
          `Moved the ${kind} subscription "${name}" from "${old.node}" to "${to}"`,
        );
        await this.#dropInner(kind, name, old, to);
      } catch (e) {
        this.#logger.warn(
          `Cannot move the ${kind} subscription "${name}" to "${to}": ${(e as Error).message}`,
        );
        this.#scheduleRefresh();
        const now = this.#inner[kind].get(name);
        if (now === old && !old.sub.active && this.#wanted[kind].has(name)) {
          // The old node ended it meanwhile: subscribe wherever the slot is.
          this.#inner[kind].delete(name);
          this.#innerSubscribe(kind, name).catch((err) => this.#emit("error", err));
        }
      }
    })().finally(() => {
      this.#moving.delete(key);
      if (kind === "shard" && this.#slotMoves.get(slot) === run) this.#slotMoves.delete(slot);
    });
    const slot = kind === "shard" ? keySlot(name) : -1;
    this.#moving.set(key, run);
    if (kind === "shard") this.#slotMoves.set(slot, run);
    return run;
  }

  /**
   * Ends the subscription that was replaced by one on `to`. A shard subscription moves because
   * its slot left the node, which then ends it by itself and would answer SUNSUBSCRIBE with a
   * redirect: it is forgotten, not unsubscribed.
   */
  async #dropInner(
    kind: SubscriptionKind,
    name: string,
    old: InnerSubscription,
    to: string,
  ): Promise<void> {
    if (kind === "shard" && old.node !== to) {
      const node = this.#nodes.get(old.node);
      if (
        this.#closed || node === undefined || node.closed || !old.sub.active ||
        this.#sameShard(old.node, to)
      ) {
        // Within one shard (a failover), the old node keeps serving the channel as a replica
        // and would deliver the new primary's messages a second time.
        node?.pubsub.forget("shard", [name]);
        return;
      }
      // Until the old node ends it, it may still deliver what was published there.
      this.#endRetiring(name);
      const timer = this.#clock.setTimer(() => {
        if (this.#retiring.get(name)?.timer !== timer) return;
        // The old node never ended it: unsubscribe (a redirect reply is ignored).
        this.#retiring.delete(name);
        old.sub.unsubscribe().catch(() => {});
      }, RETIRE_TIMEOUT);
      this.#retiring.set(name, { node: old.node, timer, sub: old.sub });
      return;
    }
    await old.sub.unsubscribe().catch(() => {});
  }

  /**
   * Subscribes a shard channel on `to`: takes over the subscription opened ahead there while the
   * slot migrated, or sends `SSUBSCRIBE`.
   */
  async #shardSubscribeOn(to: string, name: string): Promise<Subscription> {
    if (this.#closed) {
      throw new ClosedError(`Cannot subscribe "${name}": the client is closed`, { written: false });
    }
    const ahead = await this.#takePre(name, to);
    if (ahead?.active) {
      this.#logger.debug(`The shard channel "${name}" was subscribed ahead on "${to}": taken over`);
      return ahead;
    }
    return this.#subscribeShard(to, name);
  }

  /**
   * Subscribes a shard channel on one node's executor: the one place that does, so a replaced
   * subscription still listening there ("retiring") is ended first (two subscriptions of one
   * channel on one node would deliver every message twice).
   */
  #subscribeShard(
    address: string,
    name: string,
    options: { listener?: PubSubListener; asking?: boolean; endpoint?: HostPort } = {},
  ): Promise<Subscription> {
    this.#endRetiring(name, address);
    const e = options.endpoint;
    return this.#executor(address, e?.host, e?.port).subscribe(
      "shard",
      name,
      options.listener ?? this.#listener("shard"),
      this.#settings.maxBufferedMessages,
      false,
      options.asking ?? false,
    );
  }

  /** Registers a running move of a shard channel: other moves and its slot's commands wait. */
  #trackShardMove(channel: string, run: Promise<void>): void {
    const key = `shard\u0000${channel}`;
    const slot = keySlot(channel);
    this.#moving.set(key, run);
    this.#slotMoves.set(slot, run);
    run.finally(() => {
      if (this.#moving.get(key) === run) this.#moving.delete(key);
      if (this.#slotMoves.get(slot) === run) this.#slotMoves.delete(slot);
    }).catch(() => {});
  }

  /**
   * Forgets the replaced subscription of `name` still listening on its old node (on `node`
   * only, when given): the node ended it, or will answer a new subscribe there.
   */
  #endRetiring(name: string, node?: string): void {
    const r = this.#retiring.get(name);
    if (r === undefined || (node !== undefined && r.node !== node)) return;
    this.#retiring.delete(name);
    this.#clock.clearTimer(r.timer);
    this.#nodes.get(r.node)?.pubsub.forget("shard", [name]);
  }

  /**
   * Keeps a muted copy of a shard subscription on every replica of the primary it is on (none
   * when it is on a replica, or with `failoverShadows: false`), and ends the others.
   */
  #syncShadows(name: string): void {
    const inner = this.#inner.shard.get(name);
    const t = this.#topo;
    const want = new Set<string>();
    if (
      inner && this.#c.failoverShadows && !this.#closed && this.#wanted.shard.has(name)
    ) {
      const i = t.nodes.findIndex((n) => n.address === inner.node);
      if (i !== -1 && t.nodes[i]!.role === "primary") {
        for (const r of t.replicas[i] ?? []) {
          const n = t.nodes[r]!;
          if (n.health !== "fail" && n.address !== inner.node) want.add(n.address);
        }
      }
    }
    let map = this.#shadows.get(name);
    for (const [address] of map ?? []) if (!want.has(address)) this.#dropShadow(name, address);
    if (want.size === 0) return;
    if (!map) this.#shadows.set(name, map = new Map());
    const forward = this.#listener("shard");
    for (const address of want) {
      const had = map.get(address);
      if (had && (had.sub === undefined || had.sub.active)) continue;
      // A copy whose connection ended (the executor closed): open it again.
      if (had) map.delete(address);
      const live: ShadowSubscription["live"] = { on: false };
      const shadow: ShadowSubscription = {
        live,
        dropped: false,
        ready: Promise.resolve(undefined),
      };
      shadow.ready = this.#subscribeShard(address, name, {
        listener: (message, channel) => {
          if (live.on) forward(message, channel);
          else if (live.held && live.held.length < this.#settings.maxBufferedMessages) {
            live.held.push([message, channel]);
          }
        },
      }).then((sub) => {
        if (shadow.dropped) {
          sub.unsubscribe().catch(() => {});
          return undefined;
        }
        shadow.sub = sub;
        return sub;
      }, (e) => {
        if (this.#shadows.get(name)?.get(address) === shadow) {
          this.#shadows.get(name)!.delete(address);
        }
        this.#logger.debug(
          `Cannot keep a copy of "${name}" on the replica "${address}": ${
            (e as Error)?.message ?? String(e)
          }`,
        );
        return undefined;
      });
      map.set(address, shadow);
    }
  }

  /** Ends the muted copy of `name` on `address`. */
  #dropShadow(name: string, address: string): void {
    const map = this.#shadows.get(name);
    const shadow = map?.get(address);
    if (!map || !shadow) return;
    map.delete(address);
    if (map.size === 0) this.#shadows.delete(name);
    shadow.dropped = true;
    shadow.ready.then((sub) => sub?.unsubscribe().catch(() => {}));
  }

  #dropShadows(name: string): void {
    for (const address of [...(this.#shadows.get(name)?.keys() ?? [])]) {
      this.#dropShadow(name, address);
    }
  }

  /**
   * The node a shard subscription was on ended it or was lost: a confirmed muted copy on one of
   * its replicas starts delivering at once (a failover promotes one of them; each one receives
   * what the new primary publishes). `false` when there is none.
   */
  #takeOverShadow(channel: string, from: string): boolean {
    const map = this.#shadows.get(channel);
    const inner = this.#inner.shard.get(channel);
    if (!map || !inner || inner.node !== from) return false;
    for (const [address, shadow] of map) {
      // Only a copy the replica confirmed, and whose node is connected.
      const node = this.#nodes.get(address);
      const sub = shadow.sub;
      if (shadow.dropped || !sub?.active || !node || node.closed || this.#down.has(address)) {
        continue;
      }
      map.delete(address);
      shadow.live.on = true;
      this.#inner.shard.set(channel, { node: address, sub });
      this.#nodes.get(from)?.pubsub.forget("shard", [channel]);
      this.#stats.shadowTakeovers++;
      this.#logger.debug(
        `"${from}" ended or lost the shard subscription "${channel}": its copy on the replica "${address}" delivers now`,
      );
      this.#syncShadows(channel);
      this.#scheduleRefresh();
      return true;
    }
    return false;
  }

  /** Whether two nodes belong to one shard (a primary and its replicas) in the current view. */
  #sameShard(a: string, b: string): boolean {
    const t = this.#topo;
    const i = t.nodes.findIndex((n) => n.address === a);
    const j = t.nodes.findIndex((n) => n.address === b);
    if (i === -1 || j === -1) return false;
    return t.replicas.some((list, k) =>
      (k === i || list.includes(i)) && (k === j || list.includes(j))
    );
  }

  /** The subscription opened ahead on `to`, leaving the map (`undefined` when none). */
  #takePre(name: string, to: string): Promise<Subscription | undefined> {
    const pre = this.#pre.get(name);
    if (pre === undefined || pre.node !== to) return Promise.resolve(undefined);
    this.#pre.delete(name);
    return pre.ready;
  }

  /** Ends a subscription opened ahead (the user unsubscribed, the move was called off). */
  #dropPre(name: string): void {
    const pre = this.#pre.get(name);
    if (pre === undefined) return;
    this.#pre.delete(name);
    pre.dropped = true;
    pre.ready.then((sub) => sub?.unsubscribe().catch(() => {}));
  }

  /**
   * A slot is migrating to `to` (an `ASK` reply): its shard subscriptions are opened there too,
   * behind `ASKING`, before the owner ends them when the slot leaves it. A message is published
   * on one node only, so the two subscriptions never deliver the same one.
   */
  #slotMigrating(slot: number, to: string): void {
    if (!this.#shardSlots.has(slot) || this.#closed || this.#settings.protocol !== 3) return;
    for (const [name, inner] of this.#inner.shard) {
      if (inner.node === to || keySlot(name) !== slot) continue;
      // A move of it is under way (it may have taken the pre-subscription already): a second
      // subscription on the same node would deliver every message twice.
      if (this.#moving.has(`shard\u0000${name}`)) continue;
      const pre = this.#pre.get(name);
      if (pre?.node === to && !pre.dropped) continue;
      if (pre) this.#dropPre(name);
      const entry: PreSubscription = {
        node: to,
        dropped: false,
        round: this.#probeRound,
        ready: Promise.resolve(undefined),
      };
      entry.ready = this.#subscribeShard(to, name, { asking: true }).then((sub) => {
        this.#stats.subscribedAhead++;
        if (entry.dropped) {
          sub.unsubscribe().catch(() => {});
          return undefined;
        }
        this.#logger.debug(
          `Subscribed the shard channel "${name}" ahead on "${to}", which imports slot ${slot}`,
        );
        return sub;
      }, (e) => {
        if (this.#pre.get(name) === entry) this.#pre.delete(name);
        this.#logger.debug(
          `Cannot subscribe "${name}" ahead on "${to}": ${(e as Error)?.message ?? String(e)}`,
        );
        return undefined;
      });
      this.#pre.set(name, entry);
    }
  }

  /**
   * Schedules the next migration check of the shard subscriptions' slots: in `ms`, else after
   * `shardMigrationProbeInterval` (every 10 ms while an SMIGRATING window is open).
   */
  #armProbe(ms?: number): void {
    if (this.#closed || this.#settings.protocol !== 3 || this.#inner.shard.size === 0) return;
    const every = this.#windowsOpen > 0
      ? WINDOW_PROBE_INTERVAL
      : this.#c.shardMigrationProbeInterval;
    const delay = ms ?? every;
    if (every === 0 && ms === undefined) return;
    if (this.#probeTimer !== undefined) {
      if (ms === undefined) return;
      this.#clock.clearTimer(this.#probeTimer);
    }
    this.#probeTimer = this.#clock.setTimer(() => {
      this.#probeTimer = undefined;
      if (this.#probing) return;
      this.#probing = true;
      this.#probe().catch(() => {}).finally(() => {
        this.#probing = false;
        this.#armProbe();
      });
    }, delay);
  }

  /**
   * One migration check: `EXISTS <probe key>` per subscribed slot, pipelined to the node the
   * slot's subscription is on. A migrating slot answers `ASK <importing node>`; a slot that left
   * answers `MOVED`; a number means it stays (a subscription opened ahead for a move that was
   * called off is ended).
   */
  async #probe(): Promise<void> {
    // Asked of the slot's owner in the table (a subscription may sit on a replica of it, which
    // would answer MOVED).
    const bySource = new Map<string, Set<number>>();
    for (const name of this.#inner.shard.keys()) {
      const slot = keySlot(name);
      const owner = this.#topo.slots[slot]!;
      if (owner === NO_NODE) continue;
      const address = this.#topo.nodes[owner]!.address;
      let slots = bySource.get(address);
      if (!slots) bySource.set(address, slots = new Set());
      slots.add(slot);
    }
    const round = ++this.#probeRound;
    await Promise.all([...bySource].map(async ([address, set]) => {
      const node = this.#nodes.get(address);
      if (node === undefined || node.closed || this.#down.has(address)) return;
      const slots = [...set];
      const replies = await Promise.allSettled(
        slots.map((slot) => node.run(["EXISTS", this.#probeKey(slot)], undefined, 0)),
      );
      if (this.#closed) return;
      replies.forEach((r, i) => {
        const slot = slots[i]!;
        if (r.status === "fulfilled") {
          for (const [name, pre] of this.#pre) {
            if (keySlot(name) === slot && pre.node !== address && pre.round < round) {
              this.#logger.debug(
                `Slot ${slot} stays on "${address}": ending the subscription "${name}" opened ahead on "${pre.node}"`,
              );
              this.#dropPre(name);
            }
          }
          return;
        }
        const e = r.reason;
        const red = e instanceof ReplyError ? parseRedirect(e, node.endpoint) : undefined;
        if (red === undefined) {
          if (e instanceof ReplyError && !this.#probeRefused) {
            // An ACL that does not allow EXISTS on the probe key, ...: said once.
            this.#probeRefused = true;
            this.#logger.warn(
              `Cannot check whether slot ${slot} migrates: "${address}" refused EXISTS (${e.message}); shard subscriptions are moved once their slot left its node`,
            );
          }
          return;
        }
        const to = this.#map(red.to);
        if (red.ask) {
          const target = formatEndpoint(to);
          this.#executor(target, to.host, to.port);
          this.#slotMigrating(slot, target);
        } else {
          this.#patch(red.slot, to);
          this.#moveShardSubscriptions(red.slot)?.catch(() => {});
          this.#scheduleRefresh();
        }
      });
    }));
  }

  /** A key of `slot` no one writes: `EXISTS` of it answers `ASK` while the slot migrates. */
  #probeKey(slot: number): string {
    let key = this.#probeKeys.get(slot);
    if (key !== undefined) return key;
    for (let i = 0;; i++) {
      const tag = i.toString(36);
      if (keySlot(tag) === slot) {
        key = `edge-redis:slot-probe:{${tag}}`;
        break;
      }
    }
    this.#probeKeys.set(slot, key);
    return key;
  }

  /** Shard subscriptions of a slot that moved, moved with it; `undefined` when none. */
  #moveShardSubscriptions(slot: number): Promise<void> | undefined {
    const map = this.#inner.shard;
    if (map.size === 0) return undefined;
    const moves: Promise<void>[] = [];
    for (const [name, inner] of map) {
      if (keySlot(name) !== slot) continue;
      const owner = this.#subscriptionNode("shard", name);
      if (owner !== undefined && owner !== inner.node) moves.push(this.#move("shard", name, owner));
    }
    return moves.length > 0 ? Promise.all(moves).then(() => {}) : undefined;
  }

  #reconcileSubscriptions(): void {
    // The replicas of a shard may have changed.
    for (const name of this.#inner.shard.keys()) this.#syncShadows(name);
    for (const kind of ["channel", "pattern", "shard"] as const) {
      for (const [name, inner] of this.#inner[kind]) {
        const owner = this.#subscriptionNode(kind, name);
        if (owner !== undefined && owner !== inner.node) {
          if (kind !== "shard" && this.#nodes.has(inner.node) && !this.#down.has(inner.node)) {
            continue;
          }
          this.#move(kind, name, owner).catch(() => {});
        }
      }
    }
  }

  #subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener?: PubSubListener,
  ): Promise<Subscription> {
    const list = typeof names === "string" ? [names] : [...(names ?? [])];
    if (list.length === 0) {
      return Promise.reject(new TypeError("Cannot subscribe: no channel given"));
    }
    for (const n of list) {
      if (typeof n !== "string" || n.length === 0) {
        return Promise.reject(
          new TypeError("Cannot subscribe: channel names must be non-empty strings"),
        );
      }
    }
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot subscribe: the client is closed"));
    }
    const sub = new Subscription(
      this.#pubsub,
      kind,
      list,
      listener,
      this.#settings.maxBufferedMessages,
    );
    return this.#pubsub.add(sub).then(() => sub);
  }

  /**
   * Subscribes to channels (on one node: a cluster forwards every message to every node).
   *
   * @param channels One channel or several.
   * @param listener Called per message; without it, iterate the subscription.
   * @returns The subscription, once the server confirmed it.
   */
  subscribe(channels: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#subscribe("channel", channels, listener);
  }

  /**
   * Subscribes to glob-style patterns (on one node).
   *
   * @param patterns One pattern or several.
   * @param listener Called per message with the matching pattern.
   * @returns The subscription.
   */
  psubscribe(patterns: string | string[], listener?: PubSubListener): Promise<Subscription> {
    return this.#subscribe("pattern", patterns, listener);
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
    return this.#subscribe("shard", channels, listener);
  }

  // ------------------------------------------------------------------ iterators

  /**
   * Iterates over every key of the cluster (SCAN on every primary in turn).
   *
   * @param options Pattern, count hint, type.
   * @returns An async iterator of key names.
   */
  async *scan(options: ScanIteratorOptions = {}): AsyncIterableIterator<string> {
    await this.#discover();
    const primaries = this.#primaries.map((i) => this.#topo.nodes[i]!.address);
    for (const address of primaries) {
      const node = this.#executor(address);
      const view = new NodeCommands(node);
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
    if (destroy) { for (const n of this.#nodes.values()) n.destroy(); }
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.#clock.clearTimer(this.#periodic);
    this.#periodic = undefined;
    this.#clock.clearTimer(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#clock.clearTimer(this.#laterRefresh);
    this.#laterRefresh = undefined;
    this.#pre.clear();
    this.#shadows.clear();
    for (const id of this.#lostTimers.values()) this.#clock.clearTimer(id);
    this.#lostTimers.clear();
    for (const r of this.#retiring.values()) this.#clock.clearTimer(r.timer);
    this.#retiring.clear();
    for (const r of [...this.#retries]) {
      this.#clock.clearTimer(r.id);
      this.#retries.delete(r);
      r.fail();
    }
    this.#pubsub.endAll();
    this.#maintenance?.close();
    const nodes = [...this.#nodes.values()];
    this.#nodes.clear();
    this.#closing = (async () => {
      await this.#discovering?.catch(() => {});
      await this.#refreshing?.catch(() => {});
      // Nodes created while discovery or refresh finished.
      nodes.push(...this.#nodes.values());
      this.#nodes.clear();
      if (destroy) { for (const n of nodes) n.destroy(); }
      await Promise.all(nodes.map((n) => n.close()));
      this.#emit("close", undefined);
    })();
    return this.#closing;
  }

  /** Closes the client: `await using cluster = new RedisClusterClient(...)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function shuffle<T>(list: T[]): T[] {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
