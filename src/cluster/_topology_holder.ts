// The topology holder: the current view (the slot table and its nodes) and everything that
// changes it — the first discovery, refreshes (one at a time, a request during one runs another
// after it), the periodic refresh, a MOVED patched in at once and an SMIGRATED delta applied in
// place (go-redis's clusterStateHolder; node-redis's cluster-slots.ts).
import type { TimerId } from "../_clock.ts";
import type { ClientSideCache } from "../cache/client_side_cache.ts";
import type { NodeExecutor } from "../client/node_executor.ts";
import { ClosedError, ConnectionError, RedisError, ReplyError } from "../errors.ts";
import { endpointKeyOf } from "../maintenance/endpoint.ts";
import type { Endpoint as HostPort } from "../endpoint.ts";
import type { SlotMigration } from "../maintenance/notification.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import type { RespValue } from "../resp/types.ts";
import type { ClusterMaintenanceSupport } from "./_cluster_maintenance.ts";
import type { ClusterContext } from "./_context.ts";
import { type NodeMap, splitAddress } from "./_node_map.ts";
import type { ClusterNodeSnapshot, TopologyEventDetail } from "./cluster_client.ts";
import { keySlot, SLOT_COUNT } from "./slot.ts";
import { applySlotDelta } from "./slot_delta.ts";
import {
  chooseTopology,
  clusterInfoEpoch,
  type ClusterNode,
  type ClusterTopology,
  diffTopology,
  emptyTopology,
  isClusterDisabledError,
  NO_NODE,
  parseClusterShards,
  parseClusterSlots,
  patchSlot,
  unknownPrimary,
} from "./topology.ts";

/** Background refreshes begin at least this many ms apart. */
export const REFRESH_GAP_MS = 100;

/** What the holder asks of the subscriptions when the view changes. */
export interface TopologyHooks {
  /** A view was adopted: subscriptions follow it. */
  adopted(): void;
  /**
   * An SMIGRATED delta moved slots (`moved[slot] === 1`) and emptied nodes: the subscriptions
   * concerned move first.
   *
   * @returns The moves under way (the emptied nodes close once they settled).
   */
  migrated(moved: Uint8Array, dropped: ReadonlySet<string>): Promise<void>[];
}

/** Slot ranges as `0-5,7` (for logs). */
function rangesText(slots: readonly SlotRange[]): string {
  return slots.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(",");
}

function shuffle<T>(list: T[]): T[] {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Errors of a topology reply that could not be parsed, with the text saying which and why. */
const unparsed = new WeakMap<Error, string>();

/** The parse of one node's topology reply; a reply it cannot read says so, naming the node. */
function parseView(
  command: string,
  address: string,
  parse: () => ClusterTopology,
): ClusterTopology {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof TypeError) && !(e instanceof RangeError)) throw e;
    const detail = `the ${command} reply of "${address}" could not be parsed (${
      e.message.replace(/^Cannot read the cluster topology: /, "")
    })`;
    const error = new RedisError(`Cannot read the cluster topology: ${detail}`, { cause: e });
    unparsed.set(error, detail);
    throw error;
  }
}

/** Slots a view assigns. */
function coverage(view: ClusterTopology): number {
  let n = 0;
  for (let s = 0; s < SLOT_COUNT; s++) if (view.slots[s] !== NO_NODE) n++;
  return n;
}

/**
 * The current view, and how it changes.
 *
 * @example
 * ```ts ignore
 * await holder.discover();
 * holder.ownerOf(keySlot("user:1")); // "127.0.0.1:7000"
 * holder.patch(42, { host: "127.0.0.1", port: 7001 }); // a MOVED; a refresh follows
 * ```
 */
export class TopologyHolder {
  readonly #ctx: ClusterContext;
  readonly #nodes: NodeMap;
  readonly #cache: ClientSideCache | undefined;
  readonly #maintenance: ClusterMaintenanceSupport | undefined;
  #hooks: TopologyHooks = { adopted: () => {}, migrated: () => [] };
  /** The current view. */
  topology: ClusterTopology = emptyTopology();
  /** Indexes of the primaries serving at least one slot. */
  primaries: number[] = [];
  /** Whether a first view was adopted. */
  ready = false;
  #discovering: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  #periodic: TimerId | undefined;
  /** A follow-up refresh (`refreshLater`). */
  #laterRefresh: TimerId | undefined;
  /** Per slot no node serves now: the address of the last node that served it. */
  #lastOwner = new Map<number, string>();
  /** When the last refresh began, and the timer of a rate-limited one. */
  #lastRefreshAt = -Infinity;
  #gapTimer: TimerId | undefined;

  /**
   * @param ctx The client's shared state.
   * @param nodes The node map (executors of nodes that leave are closed).
   * @param cache The client-side cache: replies of slots that move are dropped.
   * @param maintenance Told when refreshes start and finish (SMIGRATED deltas wait for them).
   */
  constructor(
    ctx: ClusterContext,
    nodes: NodeMap,
    cache?: ClientSideCache,
    maintenance?: ClusterMaintenanceSupport,
  ) {
    this.#ctx = ctx;
    this.#nodes = nodes;
    this.#cache = cache;
    this.#maintenance = maintenance;
  }

  /** Sets what the subscriptions do when the view changes. */
  setHooks(hooks: TopologyHooks): void {
    this.#hooks = hooks;
  }

  /** Resolves once the discovery, then the refresh, under way settled (close waits for them). */
  async settled(): Promise<void> {
    await this.#discovering?.catch(() => {});
    await this.#refreshing?.catch(() => {});
  }

  /** Stops the timers (the client closes). */
  close(): void {
    const clock = this.#ctx.clock;
    clock.clearTimer(this.#periodic);
    this.#periodic = undefined;
    clock.clearTimer(this.#laterRefresh);
    this.#laterRefresh = undefined;
    clock.clearTimer(this.#gapTimer);
    this.#gapTimer = undefined;
  }

  // ------------------------------------------------------------------ reading views

  /** Reads one node's view. */
  async #readView(node: NodeExecutor, timeout: number): Promise<ClusterTopology> {
    const [shards, info] = await Promise.allSettled([
      node.run(["CLUSTER", "SHARDS"], undefined, 0, undefined, timeout),
      node.run(["CLUSTER", "INFO"], undefined, 0, undefined, timeout),
    ]);
    const options = {
      answeredBy: node.endpoint,
      tls: this.#ctx.settings.tls !== undefined,
      mapAddress: this.#ctx.map,
      epoch: info.status === "fulfilled" ? clusterInfoEpoch(info.value as RespValue) : 0,
    };
    const address = endpointKeyOf(node.endpoint);
    if (shards.status === "fulfilled") {
      return parseView(
        "CLUSTER SHARDS",
        address,
        () => parseClusterShards(shards.value as RespValue, options),
      );
    }
    const e = shards.reason;
    if (isClusterDisabledError(e)) throw e;
    if (!(e instanceof ReplyError)) throw e;
    // Before Redis 7.0: CLUSTER SLOTS.
    const slots = await node.run(["CLUSTER", "SLOTS"], undefined, 0, undefined, timeout);
    return parseView(
      "CLUSTER SLOTS",
      address,
      () => parseClusterSlots(slots as RespValue, options),
    );
  }

  #queryTimeout(): number {
    const t = this.#ctx.settings.commandTimeout;
    return t === 0 ? 5000 : Math.min(t, 5000);
  }

  /** First discovery: the seeds in parallel; the first view wins, a full refresh follows. */
  discover(): Promise<void> {
    if (this.ready) return Promise.resolve();
    if (this.#ctx.closed) {
      return Promise.reject(new ClosedError("Cannot send the command: the client is closed"));
    }
    if (this.#discovering) return this.#discovering;
    const attempt = this.#discoverOnce();
    this.#discovering = attempt;
    attempt.then(() => {
      this.#discovering = undefined;
    }, () => {
      this.#discovering = undefined;
    });
    return attempt;
  }

  async #discoverOnce(): Promise<void> {
    const ctx = this.#ctx;
    const seeds = ctx.options.seeds.map((s) => ({ ...s, address: endpointKeyOf(s) }));
    const reasons: string[] = [];
    let notCluster: { address: string; error: unknown } | undefined;
    let unreadable: Error | undefined;
    const timeout = this.#queryTimeout();
    const view = await new Promise<ClusterTopology | undefined>((resolve) => {
      let pending = seeds.length;
      let done = false;
      for (const s of seeds) {
        const node = this.#nodes.executor(s.address, s.host, s.port);
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
            else if (e instanceof ConnectionError && isClusterDisabledError(e.cause)) {
              // The node check of the handshake.
              notCluster ??= { address: s.address, error: e.cause };
            } else if (unparsed.has(e)) unreadable ??= e;
            this.#nodes.drop(s.address);
            if (--pending === 0 && !done) {
              done = true;
              resolve(undefined);
            }
          });
      }
    });
    if (ctx.closed) throw new ClosedError("Cannot discover the cluster: the client is closed");
    if (view === undefined) {
      for (const s of seeds) this.#nodes.drop(s.address);
      if (notCluster) {
        throw new RedisError(
          `Cannot discover the cluster topology: "${notCluster.address}" is not a cluster node (cluster support disabled)`,
          { cause: notCluster.error },
        );
      }
      if (unreadable) {
        throw new RedisError(
          `Cannot discover the cluster topology: ${unparsed.get(unreadable)}${
            reasons.length > 1 ? ` (every seed: ${reasons.join("; ")})` : ""
          }`,
          { cause: unreadable },
        );
      }
      throw new ConnectionError(
        `Cannot discover the cluster topology: no seed node answered (${reasons.join("; ")})`,
        { written: false },
      );
    }
    if (view.nodes.length === 0 || coverage(view) === 0) {
      throw new RedisError(
        "Cannot discover the cluster topology: the cluster has no slot assigned",
      );
    }
    this.adopt(view, "refresh");
    this.ready = true;
    const seedAddresses = new Set(seeds.map((s) => s.address));
    if (!view.nodes.some((n) => seedAddresses.has(n.address))) {
      ctx.logger.warn(
        `No seed node appears in the topology it announced (${
          view.nodes.map((n) => n.address).join(", ")
        }): if those addresses are not reachable from here, set nodeAddressMap`,
      );
    }
    if (view.nodes.length > 1) this.scheduleRefresh();
    this.#armPeriodic();
  }

  // ------------------------------------------------------------------ changing the view

  /** Indexes of the primaries serving at least one slot. */
  #computePrimaries(): number[] {
    const seen = new Uint8Array(this.topology.nodes.length);
    const out: number[] = [];
    const slots = this.topology.slots;
    for (let s = 0; s < SLOT_COUNT; s++) {
      const i = slots[s]!;
      if (i !== NO_NODE && seen[i] === 0) {
        seen[i] = 1;
        out.push(i);
      }
    }
    return out;
  }

  /** Adopts a view: new executors on demand, executors of nodes gone closed, events. */
  adopt(view: ClusterTopology, reason: "refresh" | "moved"): void {
    const before = this.topology;
    const change = diffTopology(before, view);
    if (this.#cache !== undefined && before.nodes.length > 0) this.#dropMovedSlots(before, view);
    this.#noteLostSlots(before, view);
    this.topology = view;
    this.#nodes.reindex();
    this.primaries = this.#computePrimaries();
    const keep = new Set(view.nodes.filter((n) => n.health !== "fail").map((n) => n.address));
    for (const address of this.#nodes.addresses()) {
      if (!keep.has(address)) this.#nodes.drop(address);
    }
    const empty = before.nodes.length === 0;
    for (const a of change.added) {
      const n = view.nodes.find((x) => x.address === a)!;
      this.#ctx.emit("node-added", { address: a, role: n.role });
    }
    for (const a of change.removed) this.#ctx.emit("node-removed", { address: a });
    if (
      empty || change.added.length > 0 || change.removed.length > 0 || change.slotsMoved > 0 ||
      change.changed.length > 0
    ) {
      const detail: TopologyEventDetail = { ...change, epoch: view.epoch, reason };
      this.#ctx.emit("topology", detail);
    }
    this.#hooks.adopted();
  }

  /** Remembers who served the slots a new view leaves without an owner. */
  #noteLostSlots(before: ClusterTopology, after: ClusterTopology): void {
    const last = this.#lastOwner;
    for (let s = 0; s < SLOT_COUNT; s++) {
      if (after.slots[s] !== NO_NODE) {
        if (last.size > 0) last.delete(s);
        continue;
      }
      const a = before.slots[s]!;
      if (a !== NO_NODE) last.set(s, before.nodes[a]!.address);
    }
  }

  /**
   * Says that no node serves a slot, naming the node that served it last when one did.
   *
   * @param slot The slot.
   * @returns `no node serves slot 42 (last served by "127.0.0.1:7000")`.
   */
  noNodeServes(slot: number): string {
    const last = this.#lastOwner.get(slot);
    return `no node serves slot ${slot}${last === undefined ? "" : ` (last served by "${last}")`}`;
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

  /** A MOVED: the slot goes to its new owner at once, a refresh follows. */
  patch(slot: number, to: HostPort): void {
    const before = this.topology.nodes.length;
    const owner = this.topology.slots[slot]!;
    const now = patchSlot(this.topology, slot, to);
    if (owner !== now && this.#cache !== undefined) {
      // The old owner no longer sends invalidations for the keys of this slot.
      this.#cache.invalidateWhere((key) => keySlot(key) === slot);
    }
    if (this.topology.nodes.length !== before) this.primaries = this.#computePrimaries();
    else if (!this.primaries.includes(this.topology.slots[slot]!)) {
      this.primaries = this.#computePrimaries();
    }
    this.scheduleRefresh();
  }

  /**
   * An SMIGRATED delta: the slot table changes in place (no CLUSTER SLOTS read). New owners get
   * an executor at once; shard subscriptions of the moved slots move (subscribed on the new
   * owner before the old one is let go), channel and pattern subscriptions leave emptied nodes;
   * cached replies of the moved slots are dropped, only those; nodes left without a slot are
   * closed once their subscriptions moved (in-flight replies still arrive; work they did not
   * write comes back unwritten and goes to the new owner).
   */
  applyDelta(seq: number, entries: SlotMigration[], stale: number): void {
    const ctx = this.#ctx;
    if (ctx.closed) return;
    if (!this.ready) {
      ctx.logger.debug(`SMIGRATED ${seq} before the first discovery: it reads the new table`);
      return;
    }
    const t = this.topology;
    const delta = applySlotDelta(
      {
        nodes: t.nodes.map((n) => n.address),
        slots: t.slots,
        replicaReads: t.nodes.filter((n) => n.role === "replica").map((n) => n.address),
      },
      entries,
      { mapAddress: ctx.map },
    );
    for (const m of delta.malformed) {
      ctx.logger.warn(`SMIGRATED ${seq}: entry ${m.index} not applied: ${m.reason}`);
    }
    if (delta.malformed.length > 0) this.scheduleRefresh();
    if (delta.movedCount === 0 && delta.added.length === 0 && delta.dropped.length === 0) {
      ctx.logger.debug(`SMIGRATED ${seq}: the table already routes these slots there`);
      return;
    }
    const old = new Map(t.nodes.map((n, i) => [n.address, i]));
    const nodes: ClusterNode[] = delta.table.nodes.map((a) => {
      const i = old.get(a);
      if (i !== undefined) return t.nodes[i]!;
      return unknownPrimary(a, splitAddress(a));
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
    this.topology = view;
    this.#nodes.reindex();
    this.primaries = this.#computePrimaries();
    this.#cache?.invalidateWhere((key) => moved[keySlot(key)] === 1);
    for (const a of delta.added) {
      const n = nodes[index.get(a)!]!;
      this.#nodes.executor(a, n.host, n.port).connect().catch(() => {});
    }
    const change = diffTopology(t, view);
    for (const a of change.added) ctx.emit("node-added", { address: a, role: "primary" });
    // Subscriptions first, then the emptied nodes go.
    const dropped = new Set(delta.dropped);
    const moves = this.#hooks.migrated(moved, dropped);
    const detail: TopologyEventDetail = { ...change, epoch: view.epoch, reason: "smigrated" };
    ctx.emit("topology", detail);
    ctx.logger.debug(
      `SMIGRATED ${seq} applied: ${delta.movedCount} slots moved (${
        delta.moved.map((m) => `${rangesText(m.slots)} ${m.from ?? "none"} -> ${m.to}`).join("; ")
      })${stale > 0 ? `, ${stale} left to a newer SMIGRATED` : ""}${
        delta.added.length > 0 ? `, connecting to ${delta.added.join(", ")}` : ""
      }${delta.dropped.length > 0 ? `, closing ${delta.dropped.join(", ")}` : ""}`,
    );
    if (dropped.size === 0) return;
    const close = () => {
      for (const a of dropped) {
        if (this.serves(a) || !this.#nodes.has(a)) continue;
        ctx.logger.debug(`"${a}" serves no slot since SMIGRATED ${seq}: closing its connections`);
        // Its keys' cached replies went with the moved slots.
        this.#nodes.drop(a, false);
        if (change.removed.includes(a)) ctx.emit("node-removed", { address: a });
      }
    };
    if (moves.length === 0) close();
    else Promise.allSettled(moves).then(close);
  }

  // ------------------------------------------------------------------ refreshes

  /** One refresh at a time; a request during one runs another right after it. */
  refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return this.#refreshing;
    }
    const clock = this.#ctx.clock;
    clock.clearTimer(this.#gapTimer);
    this.#gapTimer = undefined;
    this.#maintenance?.refreshStarted();
    const run = (async () => {
      try {
        this.#refreshAgain = false;
        this.#lastRefreshAt = clock.now();
        await this.#refreshOnce();
      } finally {
        this.#refreshing = undefined;
        this.#armPeriodic();
        // SMIGRATED deltas that arrived meanwhile are newer than what was read: applied now.
        this.#maintenance?.refreshFinished();
        // Asked for during this one: one more, no sooner than REFRESH_GAP_MS after it began.
        if (this.#refreshAgain && !this.#ctx.closed) {
          this.#refreshAgain = false;
          this.scheduleRefresh();
        }
      }
    })();
    this.#refreshing = run;
    return run;
  }

  /**
   * A refresh in the background (errors become `error` events); nothing before discovery.
   * Rate-limited: at most one every `REFRESH_GAP_MS` (a MOVED storm of many workers, or a
   * stream of malformed SMIGRATED, asks for one per reply), however often it is asked for.
   */
  scheduleRefresh(): void {
    const ctx = this.#ctx;
    if (ctx.closed || !this.ready) return;
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    if (this.#gapTimer !== undefined) return;
    const wait = this.#lastRefreshAt + REFRESH_GAP_MS - ctx.clock.now();
    if (wait > 0) {
      this.#gapTimer = ctx.clock.setTimer(() => {
        this.#gapTimer = undefined;
        this.scheduleRefresh();
      }, wait);
      return;
    }
    this.refresh().catch((e) => {
      if (!ctx.closed) ctx.emit("error", e);
    });
  }

  async #refreshOnce(): Promise<void> {
    const ctx = this.#ctx;
    if (ctx.closed) return;
    const topo = this.topology;
    const down = this.#nodes.down;
    // Ask up to three nodes, reachable ones first: the primaries, then replicas, then seeds.
    // Primaries serving slots first, then replicas: a node left empty by a slot migration is
    // asked (and connected to) only when no other is left.
    const serving = new Set(this.primaries.map((i) => topo.nodes[i]!.address));
    const known = topo.nodes.filter((n) => n.health !== "fail").map((n) => n.address);
    const seeds = ctx.options.seeds.map((s) => endpointKeyOf(s));
    const replicaSet = new Set(
      topo.nodes.filter((n) => n.role === "replica").map((n) => n.address),
    );
    const preferred = [
      ...shuffle(known.filter((a) => serving.has(a))),
      ...shuffle(known.filter((a) => replicaSet.has(a))),
    ];
    const order = [...new Set([...preferred, ...shuffle(known), ...seeds])];
    const had = new Set(this.#nodes.addresses());
    const up = order.filter((a) => !down.has(a));
    const preferredUp = preferred.filter((a) => !down.has(a));
    // Nodes known to be down are asked only when no other is left: a query to them would wait
    // for its timeout.
    const ask = (preferredUp.length > 0 ? preferredUp : up.length > 0 ? up : order).slice(0, 3);
    const timeout = this.#queryTimeout();
    const results = await Promise.allSettled(
      ask.map((a) => this.#readView(this.#nodes.executor(a), timeout)),
    );
    if (ctx.closed) return;
    const views: ClusterTopology[] = [];
    const reasons: string[] = [];
    let unreadable: Error | undefined;
    results.forEach((r, i) => {
      if (r.status === "fulfilled") {
        if (coverage(r.value) > 0) views.push(r.value);
      } else {
        reasons.push(`${ask[i]}: ${(r.reason as Error)?.message ?? String(r.reason)}`);
        if (unparsed.has(r.reason)) unreadable ??= r.reason;
      }
    });
    for (const a of ask) {
      // Seeds that are not part of the cluster any more are not kept connected.
      if (
        !this.topology.nodes.some((n) => n.address === a) &&
        !views.some((v) => v.nodes.some((n) => n.address === a))
      ) {
        this.#nodes.drop(a);
      }
    }
    if (views.length === 0 && unreadable) {
      throw new RedisError(
        `Cannot refresh the cluster topology: ${unparsed.get(unreadable)}${
          reasons.length > 1 ? ` (every node asked: ${reasons.join("; ")})` : ""
        }`,
        { cause: unreadable },
      );
    }
    if (views.length === 0) {
      throw new ConnectionError(
        `Cannot refresh the cluster topology: no node answered (${reasons.join("; ")})`,
      );
    }
    ctx.stats.refreshes++;
    const chosen = chooseTopology(views, this.topology.epoch);
    if (chosen) this.adopt(chosen, "refresh");
    // Nodes connected only to be asked that serve nothing (an emptied primary) are let go.
    for (const a of ask) {
      if (!had.has(a) && !this.serves(a)) this.#nodes.drop(a, false); // nothing read there
    }
  }

  #armPeriodic(): void {
    const ctx = this.#ctx;
    const every = ctx.options.topologyRefreshInterval;
    if (ctx.closed || every === 0 || !this.ready) return;
    ctx.clock.clearTimer(this.#periodic);
    this.#periodic = ctx.clock.setTimer(() => {
      this.#periodic = undefined;
      this.scheduleRefresh();
    }, every);
  }

  /** Schedules one more topology refresh in `ms` (one pending at a time). */
  refreshLater(ms: number): void {
    if (this.#ctx.closed || this.#laterRefresh !== undefined) return;
    this.#laterRefresh = this.#ctx.clock.setTimer(() => {
      this.#laterRefresh = undefined;
      this.scheduleRefresh();
    }, ms);
  }

  // ------------------------------------------------------------------ questions

  /** Whether a node serves slots, or is a replica of the current view. */
  serves(address: string): boolean {
    const t = this.topology;
    const i = t.nodes.findIndex((n) => n.address === address);
    if (i === -1) return false;
    return t.nodes[i]!.role === "replica" || this.primaries.includes(i);
  }

  /** Whether two nodes belong to one shard (a primary and its replicas) in the current view. */
  sameShard(a: string, b: string): boolean {
    const t = this.topology;
    const i = t.nodes.findIndex((n) => n.address === a);
    const j = t.nodes.findIndex((n) => n.address === b);
    if (i === -1 || j === -1) return false;
    return t.replicas.some((list, k) =>
      (k === i || list.includes(i)) && (k === j || list.includes(j))
    );
  }

  /** The addresses of the primaries serving slots. */
  primaryAddresses(): string[] {
    const nodes = this.topology.nodes;
    return this.primaries.map((i) => nodes[i]!.address);
  }

  /** The primary of a slot, or `undefined`. */
  ownerOf(slot: number): string | undefined {
    const i = this.topology.slots[slot]!;
    return i === NO_NODE ? undefined : this.topology.nodes[i]!.address;
  }

  /** The nodes of the current view, primaries with their slots. */
  snapshot(): ClusterNodeSnapshot[] {
    const t = this.topology;
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
}
