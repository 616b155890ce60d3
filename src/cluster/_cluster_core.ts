// The cluster client's core for the client shell: how a command reaches a node of the cluster.
// It wires the parts — the node map, the topology holder, the router, the redirect policy,
// fan-out, transactions and pub/sub — and offers them to the shell as one ClientCore.
import { systemClock } from "../_clock.ts";
import type { ClientCore, ClientEvents, SendCommandOptions } from "../client/client_shell.ts";
import { resolveClientOptions } from "../client/options.ts";
import type { PubSubListener, SubscriptionKind } from "../client/subscription.ts";
import type { WatchSession } from "../client/watch_session.ts";
import type { ClientSideCache } from "../cache/client_side_cache.ts";
import type { TrackingSession } from "../cache/tracking_session.ts";
import { FLAG_BLOCKING, FLAG_READONLY, type Transform } from "../commands/command_runner.ts";
import { commandPolicy } from "../commands/command_keys.ts";
import { reservedCommandError } from "../connection/reserved.ts";
import { silentLogger } from "../logger.ts";
import type { RedisArgument } from "../resp/types.ts";
import { defaultConnector } from "../transport/default.ts";
import { ClusterMaintenanceSupport } from "./_cluster_maintenance.ts";
import { clusterMetrics, smigratedApplied } from "./_cluster_metrics.ts";
import { type ClusterContext, type ClusterInternals, emptyStats, nameOf } from "./_context.ts";
import { FanOut } from "./_fan_out.ts";
import { nodeFactory, NodeMap } from "./_node_map.ts";
import { ClusterPubSub } from "./_pubsub.ts";
import { RedirectPolicy } from "./_redirect_policy.ts";
import { Router } from "./_router.ts";
import { ClusterScan } from "./_scan.ts";
import { TopologyHolder } from "./_topology_holder.ts";
import { Transactions } from "./_transactions.ts";
import type { GroupCommand } from "../client/client_shell.ts";
import type { RedisClusterClientEventName } from "./cluster_client.ts";
import { type RedisClusterClientOptions, resolveClusterOptions } from "./options.ts";
import { addressMapper } from "./topology.ts";

/** The cluster client's {@linkcode ClientCore}. */
export class ClusterCore implements ClientCore {
  /** The state every part shares. */
  readonly ctx: ClusterContext;
  /** Maintenance notifications (SMIGRATING / SMIGRATED and the relaxed timeouts). */
  readonly maintenance: ClusterMaintenanceSupport | undefined;
  /** The client-side cache (`clientSideCache` option), one for every node. */
  readonly cache: ClientSideCache | undefined;
  /** The node map. */
  readonly nodes: NodeMap;
  /** The topology holder. */
  readonly holder: TopologyHolder;
  readonly #router: Router;
  readonly #policy: RedirectPolicy;
  readonly #transactions: Transactions;
  readonly #pubsub: ClusterPubSub;
  #destroyed = false;
  #closing: Promise<void> | undefined;

  constructor(options: RedisClusterClientOptions, events: ClientEvents) {
    const c = resolveClusterOptions(options);
    const seed = c.seeds[0]!;
    const settings = resolveClientOptions({ ...c.node, host: seed.host, port: seed.port });
    const logger = options.logger ?? silentLogger;
    const ctx: ClusterContext = this.ctx = {
      options: c,
      settings,
      clock: options.clock ?? (options as ClusterInternals).clock ?? systemClock,
      logger,
      map: addressMapper(options.nodeAddressMap),
      stats: emptyStats(),
      closed: false,
      emit: (name, detail) => events.emit(name, detail),
      metrics: events.metrics,
    };
    const metrics = events.metrics;
    const mode = options.maintenanceNotifications?.mode ?? "auto";
    if (mode === "enabled" && settings.protocol !== 3) {
      throw new TypeError(
        'Cannot enable maintenance notifications with protocol 2: they need RESP3 (set protocol: 3 or mode: "auto")',
      );
    }
    this.maintenance = mode !== "disabled" && settings.protocol === 3
      ? new ClusterMaintenanceSupport(options.maintenanceNotifications ?? {}, {
        logger,
        clock: ctx.clock,
        emit: (name, detail) => ctx.emit(name as RedisClusterClientEventName, detail),
        applyDelta: metrics?.resiliency
          ? (seq, entries, stale) => {
            const start = performance.now();
            this.holder.applyDelta(seq, entries, stale);
            let slots = 0;
            for (const e of entries) for (const r of e.slots) slots += r.end - r.start + 1;
            smigratedApplied(metrics, slots, performance.now() - start);
          }
          : (seq, entries, stale) => this.holder.applyDelta(seq, entries, stale),
        metrics,
        refresh: (reason) => {
          logger.debug(`Refreshing the topology: ${reason}`);
          this.holder.scheduleRefresh();
        },
        // Slots are about to move: check the subscribed ones now, then often.
        windowsChanged: (open) => this.#pubsub.migration.windowsChanged(open),
      })
      : undefined;
    this.cache = settings.clientSideCache?._create({ logger, ownersMove: true });
    const tracking = new Map<string, TrackingSession>();
    const connector = options.connector ?? defaultConnector;
    this.nodes = new NodeMap(
      ctx,
      nodeFactory(
        ctx,
        connector,
        this.maintenance,
        this.cache,
        tracking,
        (address) => this.holder.topology.nodes.find((n) => n.address === address)?.id,
      ),
      () => this.holder.topology,
      {
        shardEnded: (address, channel) => this.#pubsub.shardEnded(address, channel),
        lost: (address) => this.#pubsub.shadows.lost(address),
        unreachable: () => this.holder.scheduleRefresh(),
      },
      tracking,
    );
    this.holder = new TopologyHolder(ctx, this.nodes, this.cache, this.maintenance);
    const slotMoves = new Map<number, Promise<unknown>>();
    this.#router = new Router(ctx, this.holder, this.nodes, slotMoves);
    this.#policy = new RedirectPolicy(ctx, this.holder, this.nodes, this.#router, {
      slotMoves,
      migrating: (slot, to) => this.#pubsub.migration.migrating(slot, to),
      moved: (slot) => this.#pubsub.moveSlot(slot),
    });
    this.#router.attach(
      this.#policy,
      new FanOut(ctx, this.holder, this.#policy),
      new ClusterScan(this.holder, this.#policy),
    );
    this.#transactions = new Transactions(this.holder, this.#router, this.#policy);
    this.#pubsub = new ClusterPubSub(ctx, this.holder, this.nodes, this.#policy, slotMoves);
    this.holder.setHooks({
      adopted: () => this.#pubsub.reconcile(),
      migrated: (moved, dropped) => this.#pubsub.migrated(moved, dropped),
    });
    metrics?.setEndpoint(undefined);
    metrics?.source({
      connections: () => {
        const out = [];
        for (const a of this.nodes.addresses()) {
          const n = this.nodes.get(a);
          if (n !== undefined && !n.closed) out.push(n.sample());
        }
        return out;
      },
    });
    if (metrics !== undefined) clusterMetrics(metrics, () => ctx.stats);
  }

  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    return this.#router.dispatch(args, transform, flags, blockMs, undefined);
  }

  /**
   * A raw command, routed by its keys like the typed methods; keyless ones follow their
   * request policy (`all_shards`: every primary, replies combined), or go to one primary.
   */
  send(args: RedisArgument[], flags: number, options: SendCommandOptions): Promise<unknown> {
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
    const f = flags | (policy?.blocking ? FLAG_BLOCKING : 0) |
      (policy?.readonly ? FLAG_READONLY : 0);
    return this.#router.dispatch(args, undefined, f, options.blockMs, options.timeout);
  }

  /** A transaction: every key in one slot, on that slot's primary. */
  sendAll(commands: GroupCommand[]): Promise<unknown>[] {
    return this.#transactions.send(commands);
  }

  watch(keys: RedisArgument[]): Promise<WatchSession> {
    return this.#transactions.watch(keys);
  }

  subscribe(
    kind: SubscriptionKind,
    names: string[],
    listener: PubSubListener<string> | PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown> {
    return this.#pubsub.subscribe(kind, names, listener, binary);
  }

  /** Discovers the cluster and connects to every primary. */
  async connect(): Promise<void> {
    await this.holder.discover();
    await Promise.all(this.holder.primaries.map((i) => this.nodes.at(i).connect()));
  }

  destroy(): void {
    this.#destroyed = true;
    this.nodes.destroyAll();
  }

  /**
   * Closes: commands waiting for a retry fail with `ClosedError`, in-flight ones complete (or,
   * after `destroy()`, are rejected), then every connection closes.
   */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.ctx.closed = true;
    this.holder.close();
    this.#pubsub.close();
    this.#policy.close();
    this.#pubsub.endAll();
    this.maintenance?.close();
    const nodes = this.nodes.takeAll();
    const closeAll = (list: typeof nodes) => {
      if (this.#destroyed) { for (const n of list) n.destroy(); }
      return Promise.all(list.map((n) => n.close()));
    };
    this.#closing = (async () => {
      // The nodes close first: that aborts their connect attempts, so a seed that never
      // answers holds neither the discovery nor this close for its connect timeout.
      const first = closeAll(nodes);
      await this.holder.settled();
      // Nodes created while discovery or refresh finished.
      await Promise.all([first, closeAll(this.nodes.takeAll())]);
    })();
    return this.#closing;
  }
}
