// Pub/sub on a cluster: where each subscription lives and how it follows the topology. Plain
// channels and patterns sit on one primary (a cluster forwards every message to every node);
// shard channels sit on their slot's owner and move with the slot — subscribed on the new owner
// before the old one is let go, the replaced one "retiring" until the old node ends it, with
// subscriptions opened ahead during a migration (`_shard_migration.ts`) and muted copies on
// replicas for a failover (`_failover_shadows.ts`). ioredis's ClusterSubscriberGroup.
import type { TimerId } from "../_clock.ts";
import {
  type PubSubListener,
  Subscription,
  type SubscriptionKind,
  SubscriptionManager,
} from "../client/subscription.ts";
import { ClosedError, RedisError, ReplyError } from "../errors.ts";
import { endpointKeyOf } from "../maintenance/endpoint.ts";
import type { Endpoint as HostPort } from "../endpoint.ts";
import type { NodeExecutor } from "../client/node_executor.ts";
import type { ClusterContext } from "./_context.ts";
import { FailoverShadows, firstUnseen, messageMark } from "./_failover_shadows.ts";
import type { NodeMap } from "./_node_map.ts";
import { parseRedirect } from "./_redirect.ts";
import { type RedirectPolicy, SUBSCRIBE_RULES } from "./_redirect_policy.ts";
import { ShardMigration } from "./_shard_migration.ts";
import type { TopologyHolder } from "./_topology_holder.ts";
import { keySlot } from "./slot.ts";

/**
 * The listener of a subscription on a node: messages as the node's bytes (every inner
 * subscription is binary, so a `binary()` subscription gets exactly what was published; text
 * subscriptions decode them once, when delivered).
 */
export type NodeListener = (message: Uint8Array, channel: string, pattern?: string) => void;

/** A subscription of one name on one node. */
export interface InnerSubscription {
  node: string;
  sub: Subscription;
}

/** Options of {@linkcode ShardHost.subscribeShard}. */
export interface ShardSubscribeOptions {
  /**
   * A failover copy's: gets what the copy receives while it may not deliver (it delivers only
   * as the channel's current subscription).
   */
  muted?: NodeListener;
  /** Behind `ASKING` (a node importing the slot). */
  asking?: boolean;
  /** Where the node is, when the topology does not know it yet. */
  endpoint?: HostPort;
}

/** The outcome of subscribing a shard channel on every other primary at once. */
export interface PrimariesRound {
  /** The first node that confirmed. */
  won?: { address: string; sub: Subscription };
  /** Where the others redirected. */
  redirect?: HostPort;
}

/** What the migration check and the failover shadows share with the shard subscriptions. */
export interface ShardHost {
  readonly ctx: ClusterContext;
  readonly holder: TopologyHolder;
  readonly nodes: NodeMap;
  /** The shard subscriptions, by channel. */
  readonly current: Map<string, InnerSubscription>;
  /** The shard channels the client wants. */
  readonly wanted: ReadonlySet<string>;
  /** Slots of the wanted shard channels, with how many channels each. */
  readonly shardSlots: ReadonlyMap<number, number>;
  /** Delivers a shard message to the client's subscriptions. */
  readonly forward: NodeListener;
  /** Marks of the last messages delivered of a shard channel (at most {@linkcode DELIVERED_TAIL}). */
  delivered(channel: string): readonly number[];
  /** Whether a move of the channel's subscription is under way. */
  isMoving(name: string): boolean;
  /** Subscribes a shard channel on one node (the one place that does). */
  subscribeShard(
    address: string,
    name: string,
    options?: ShardSubscribeOptions,
  ): Promise<Subscription>;
  /** Subscribes a shard channel on every primary but `from` (and `exclude`) at once. */
  subscribeOnPrimaries(
    channel: string,
    from: string,
    exclude?: ReadonlySet<string>,
  ): Promise<PrimariesRound>;
  /** Subscribes a shard channel wherever its slot is. */
  resubscribe(channel: string): Promise<void>;
  /** Moves the shard subscriptions of a slot to its owner; `undefined` when none moves. */
  moveSlot(slot: number): Promise<void> | undefined;
}

/**
 * Longest time a replaced shard subscription keeps listening on the node its slot left, waiting
 * for that node to end it (it may learn of the move after the client did).
 */
export const RETIRE_TIMEOUT = 5_000;

/**
 * Messages of each shard channel remembered (as marks) as delivered, for a failover copy's
 * takeover.
 */
export const DELIVERED_TAIL = 1024;

/**
 * Milliseconds after a switch of a shard channel's delivering copy during which a message that
 * another copy already delivered is dropped (a demoted primary, now a replica of the same shard,
 * or a retiring copy, carries the new owner's messages as well). Covers {@linkcode RETIRE_TIMEOUT}.
 */
export const SWITCH_GUARD_MS = 5_000;

/** Messages remembered by one switch guard, at most: past them the guard ends early. */
export const SWITCH_GUARD_MAX = 16_384;

/** Who delivered a message remembered by a switch guard before the switch, or in a replay. */
const BEFORE_SWITCH: object = {};

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

const movingKey = (kind: SubscriptionKind, name: string) => `${kind}\u0000${name}`;

/**
 * One node's subscription of a shard channel (a copy): the current one, a failover copy, one
 * opened ahead, a retiring one, or one being made. `held` keeps what a copy of the current
 * copy's shard receives before it is known whether it becomes the current one.
 */
interface ShardCopy {
  readonly node: string;
  readonly failover: boolean;
  sub?: Subscription;
  held?: [Uint8Array, string][];
}

/**
 * The current shard subscription of each channel. Setting one is what makes a copy deliver: its
 * copies in the same shard are muted from then on, whichever path made the change.
 */
class CurrentShardSubscriptions extends Map<string, InnerSubscription> {
  #onSet: ((name: string, next: InnerSubscription, prev?: InnerSubscription) => void) | undefined;
  constructor(onSet: (name: string, next: InnerSubscription, prev?: InnerSubscription) => void) {
    super();
    this.#onSet = onSet;
  }
  override set(name: string, inner: InnerSubscription): this {
    const prev = super.get(name);
    super.set(name, inner);
    this.#onSet?.(name, inner, prev);
    return this;
  }
}

/**
 * The cluster client's subscriptions and where each one lives.
 *
 * @example
 * ```ts ignore
 * const sub = await pubsub.subscribe("shard", "orders:{eu}", (message) => console.log(message));
 * pubsub.current.get("orders:{eu}")?.node; // the node of its slot
 * ```
 */
export class ClusterPubSub implements ShardHost {
  readonly ctx: ClusterContext;
  readonly holder: TopologyHolder;
  readonly nodes: NodeMap;
  readonly #policy: RedirectPolicy;
  readonly #manager: SubscriptionManager;
  readonly #inner: Record<SubscriptionKind, Map<string, InnerSubscription>> = {
    channel: new Map(),
    pattern: new Map(),
    shard: new CurrentShardSubscriptions((name, next, prev) => this.#onCurrent(name, next, prev)),
  };
  /** Every node subscription of each shard channel (see {@linkcode ShardCopy}). */
  readonly #copies = new Map<string, Set<ShardCopy>>();
  /** The last messages delivered of each shard channel. */
  readonly #tails = new Map<string, number[]>();
  /**
   * Per shard channel whose delivering copy switched less than {@linkcode SWITCH_GUARD_MS} ago:
   * the marks of what was delivered, each with the copy that delivered it.
   */
  readonly #guards = new Map<
    string,
    { until: number; by: Map<number, object>; dropped: number; sameShard: boolean }
  >();
  /**
   * Nodes a failover copy took a channel over between: one shard, whatever a view read during
   * the failover says.
   */
  readonly #peers = new Map<string, Set<string>>();
  /** Names the client's subscriptions want, per kind. */
  readonly #wanted: Record<SubscriptionKind, Set<string>> = {
    channel: new Set(),
    pattern: new Set(),
    shard: new Set(),
  };
  readonly #moving = new Map<string, Promise<void>>();
  /** Slots whose shard subscriptions are moving: commands for them wait (no message gap). */
  readonly slotMoves: Map<number, Promise<unknown>>;
  readonly shardSlots: Map<number, number> = new Map();
  /**
   * Shard subscriptions replaced by one on their slot's new owner, still listening on the old
   * node until it ends them (a message is published on one node only: no duplicates).
   */
  readonly #retiring = new Map<string, { node: string; timer: TimerId; sub: Subscription }>();
  readonly current: Map<string, InnerSubscription>;
  readonly wanted: ReadonlySet<string>;
  /** Delivers a shard message a copy (`source`) received, unless a switch guard drops it. */
  readonly #deliverFrom: (message: Uint8Array, channel: string, source: object) => void;
  readonly forward: NodeListener;
  /** Subscriptions opened ahead during migrations. */
  readonly migration: ShardMigration;
  /** Muted copies on replicas. */
  readonly shadows: FailoverShadows;

  /**
   * @param ctx The client's shared state.
   * @param holder The topology.
   * @param nodes The node map.
   * @param policy Decides the retries of a subscribe.
   * @param slotMoves The map of moving slots the router reads.
   */
  constructor(
    ctx: ClusterContext,
    holder: TopologyHolder,
    nodes: NodeMap,
    policy: RedirectPolicy,
    slotMoves: Map<number, Promise<unknown>>,
  ) {
    this.ctx = ctx;
    this.holder = holder;
    this.nodes = nodes;
    this.#policy = policy;
    this.slotMoves = slotMoves;
    this.#manager = new SubscriptionManager(
      (args, subscribe) => this.#send(args, subscribe),
      (e) => ctx.emit("error", e),
    );
    this.current = this.#inner.shard;
    this.wanted = this.#wanted.shard;
    const deliver = this.#listener("shard");
    const tails = this.#tails;
    const guards = this.#guards;
    this.#deliverFrom = (message, channel, source) => {
      const mark = messageMark(message);
      if (guards.size !== 0) {
        const g = guards.get(channel);
        if (g !== undefined) {
          if (ctx.clock.now() > g.until || g.by.size >= SWITCH_GUARD_MAX) {
            guards.delete(channel);
          } else {
            // Another copy's message that a third delivered already is a copy of it: dropped.
            // The current copy's stream goes on from the switch: it passes, but for a message
            // of the same shard delivered before the switch, the first time (a late copy of it).
            const current = (source as ShardCopy).sub !== undefined &&
              this.#inner.shard.get(channel)?.sub === (source as ShardCopy).sub;
            const by = g.by.get(mark);
            if (
              by !== undefined && by !== source &&
              (!current || (g.sameShard && by === BEFORE_SWITCH))
            ) {
              if (current) g.by.set(mark, source);
              if (g.dropped++ === 0) {
                ctx.logger.debug(
                  `Shard channel "${channel}": a copy delivered again what another delivered after the switch; dropped`,
                );
              }
              return;
            }
            g.by.set(mark, source);
          }
        }
      }
      let tail = tails.get(channel);
      if (tail === undefined) tails.set(channel, tail = []);
      tail.push(mark);
      if (tail.length >= 2 * DELIVERED_TAIL) tail.splice(0, DELIVERED_TAIL);
      deliver(message, channel);
    };
    this.forward = (message, channel) => this.#deliverFrom(message, channel, BEFORE_SWITCH);
    this.migration = new ShardMigration(this);
    this.shadows = new FailoverShadows(this);
  }

  delivered(channel: string): readonly number[] {
    return this.#tails.get(channel)?.slice(-DELIVERED_TAIL) ?? [];
  }

  isMoving(name: string): boolean {
    return this.#moving.has(movingKey("shard", name));
  }

  resubscribe(channel: string): Promise<void> {
    return this.#innerSubscribe("shard", channel);
  }

  // ------------------------------------------------------------------ the client's subscriptions

  /**
   * Subscribes the client to channels, patterns or shard channels.
   *
   * @returns The subscription, once every name is confirmed.
   */
  subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener?: PubSubListener<string> | PubSubListener<Uint8Array>,
    binary = false,
  ): Promise<Subscription> {
    // The names were validated by the client shell, the one place that does.
    const list = typeof names === "string" ? [names] : [...names];
    if (this.ctx.closed) {
      return Promise.reject(new ClosedError("Cannot subscribe: the client is closed"));
    }
    const max = this.ctx.settings.maxBufferedMessages;
    const sub = new Subscription(
      this.#manager,
      kind,
      list,
      listener as PubSubListener | undefined,
      max,
      binary,
    );
    return this.#manager.add(sub).then(() => sub);
  }

  #listener(kind: SubscriptionKind): NodeListener {
    const m = this.#manager;
    if (kind === "pattern") {
      return (message, channel, pattern) => m.onPush(["pmessage", pattern ?? "", channel, message]);
    }
    const type = kind === "shard" ? "smessage" : "message";
    return (message, channel) => m.onPush([type, channel, message]);
  }

  /** Where a subscription of this kind and name belongs now. */
  #subscriptionNode(kind: SubscriptionKind, name: string): string | undefined {
    if (kind === "shard") return this.holder.ownerOf(keySlot(name));
    // Plain channels and patterns (a cluster forwards every message to every node): keep them
    // where they are while that primary serves and is reachable, else the first one that is.
    const primaries = this.holder.primaryAddresses();
    const down = this.nodes.down;
    const usable = (a: string) => primaries.includes(a) && !down.has(a);
    const any = [...this.#inner.channel.values(), ...this.#inner.pattern.values()]
      .map((s) => s.node)
      .find(usable);
    if (any) return any;
    return primaries.filter(usable).sort()[0] ?? primaries.sort()[0];
  }

  #send(args: string[], subscribe: boolean): Promise<unknown> {
    const kind = KINDS[args[0]!.toUpperCase()]!;
    const names = args.slice(1);
    const wanted = this.#wanted[kind];
    if (subscribe) {
      for (const n of names) {
        if (kind === "shard" && !wanted.has(n)) {
          const slot = keySlot(n);
          this.shardSlots.set(slot, (this.shardSlots.get(slot) ?? 0) + 1);
        }
        wanted.add(n);
      }
      const all = Promise.allSettled(names.map((n) => this.#innerSubscribe(kind, n))).then(
        (results) => {
          const failed = results.find((r) => r.status === "rejected");
          if (failed === undefined) return;
          // The subscription fails whole, and forgets every name: the ones that did subscribe
          // are ended too, on their nodes.
          this.#send([UNSUBSCRIBE[kind], ...names], false).catch(() => {});
          throw failed.reason;
        },
      );
      if (kind === "shard") all.then(() => this.migration.arm(), () => {});
      return all;
    }
    const map = this.#inner[kind];
    return Promise.all(names.map((n) => {
      if (kind === "shard" && wanted.has(n)) {
        const slot = keySlot(n);
        const left = (this.shardSlots.get(slot) ?? 1) - 1;
        if (left > 0) this.shardSlots.set(slot, left);
        else this.shardSlots.delete(slot);
        this.migration.drop(n);
        this.#endRetiring(n);
        this.shadows.dropAll(n);
        this.#copies.delete(n);
        this.#peers.delete(n);
        this.#tails.delete(n);
      }
      wanted.delete(n);
      const inner = map.get(n);
      map.delete(n);
      const owner = kind === "shard" ? this.#subscriptionNode("shard", n) : undefined;
      if (
        inner && kind === "shard" && owner !== inner.node &&
        (owner === undefined || !this.holder.sameShard(owner, inner.node))
      ) {
        // The slot left that node, which ended the subscription itself and would answer
        // SUNSUBSCRIBE with a redirect.
        this.nodes.get(inner.node)?.pubsub.forget("shard", [n]);
        return undefined;
      }
      return inner?.sub.unsubscribe();
    }));
  }

  async #innerSubscribe(kind: SubscriptionKind, name: string): Promise<void> {
    await this.holder.discover();
    const p = this.#policy;
    const job = p.job(
      ["SSUBSCRIBE"],
      undefined,
      0,
      undefined,
      undefined,
      kind === "shard" ? keySlot(name) : -1,
      undefined,
    );
    await p.run(
      job,
      SUBSCRIBE_RULES,
      () => this.#subscriptionNode(kind, name),
      () => new RedisError(`Cannot subscribe to "${name}": no node serves its slot`),
      async (node, address) => {
        const sub = kind === "shard"
          ? await this.#shardSubscribeOn(address, name)
          : await subscribeBytes(node, kind, name, this.#listener(kind), this.ctx);
        if (!this.#wanted[kind].has(name)) {
          // Unsubscribed while the server confirmed.
          sub.unsubscribe().catch(() => {});
          return;
        }
        const old = this.#inner[kind].get(name);
        this.#inner[kind].set(name, { node: address, sub });
        if (kind === "shard") this.shadows.sync(name);
        if (old) await this.#dropInner(kind, name, old, address);
      },
    );
  }

  // ------------------------------------------------------------------ a node ended a channel

  /** A node dropped a shard subscription by itself: subscribe where the channel's slot is now. */
  shardEnded(address: string, channel: string): void {
    if (this.ctx.closed) return;
    if (this.shadows.ended(channel, address)) return;
    if (this.#retiring.get(channel)?.node === address) {
      // The old owner caught up with the move: the replaced subscription is over.
      this.#endRetiring(channel);
      return;
    }
    if (this.migration.ended(channel, address)) return;
    const inner = this.#inner.shard.get(channel);
    if (!inner || inner.node !== address || !this.#wanted.shard.has(channel)) return;
    // The server dropped it: its executor must neither unsubscribe nor restore it.
    this.nodes.get(address)?.pubsub.forget("shard", [channel]);
    if (this.isMoving(channel)) return;
    const held = this.migration.get(channel) ? undefined : this.shadows.hold(channel, address);
    if (held) {
      const before = this.#inner.shard.get(channel)!;
      this.#trackShardMove(
        channel,
        this.shadows.confirmTakeover(channel, address, before, held).catch((e) => {
          this.ctx.emit("error", e);
        }),
      );
      return;
    }
    this.ctx.logger.debug(
      `"${address}" ended the shard subscription "${channel}": subscribing again`,
    );
    this.#trackShardMove(
      channel,
      this.#subscribeElsewhere(channel, address).then((done) =>
        done ? undefined : this.#innerSubscribe("shard", channel)
      ).catch((e) => {
        this.ctx.emit("error", e);
      }),
    );
    this.holder.scheduleRefresh();
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
    const pre = this.migration.get(channel);
    if (pre !== undefined && pre.node !== from) {
      // Subscribed ahead on the node that imported the slot: nothing to do but take it over.
      const sub = await this.migration.take(channel, pre.node);
      if (sub?.active) {
        if (!this.#wanted.shard.has(channel) || this.#inner.shard.get(channel) !== before) {
          sub.unsubscribe().catch(() => {});
          return true;
        }
        this.#inner.shard.set(channel, { node: pre.node, sub });
        this.shadows.sync(channel);
        this.ctx.logger.debug(
          `"${from}" ended the shard subscription "${channel}": "${pre.node}" already carries it`,
        );
        return true;
      }
    }
    const round = await this.subscribeOnPrimaries(channel, from);
    let won = round.won;
    const slot = keySlot(channel);
    if (won === undefined && round.redirect !== undefined) {
      // The primaries name the owner (after a failover, the promoted replica): ask it alone.
      const to = round.redirect;
      const address = endpointKeyOf(to);
      if (address !== from && !this.ctx.closed) {
        won = await this.subscribeShard(address, channel, { endpoint: to })
          .then((sub) => ({ address, sub }), () => undefined);
      }
    }
    if (won === undefined) {
      if (round.redirect) this.holder.patch(slot, round.redirect);
      return false;
    }
    if (!this.#wanted.shard.has(channel) || this.#inner.shard.get(channel) !== before) {
      // Unsubscribed, or subscribed again by another path, meanwhile.
      won.sub.unsubscribe().catch(() => {});
      return true;
    }
    const n = this.nodes.executor(won.address).endpoint;
    this.holder.patch(slot, { host: n.host, port: n.port });
    this.holder.refreshLater(1_000);
    this.#inner.shard.set(channel, { node: won.address, sub: won.sub });
    this.shadows.sync(channel);
    this.ctx.logger.debug(`Subscribed the shard channel "${channel}" again on "${won.address}"`);
    return true;
  }

  /**
   * Subscribes a shard channel on every primary but `from` at once: the one serving its slot
   * confirms (the first confirmation wins), the others redirect. Different shards deliver
   * different messages, so the short overlap of two confirmations delivers nothing twice.
   */
  async subscribeOnPrimaries(
    channel: string,
    from: string,
    exclude?: ReadonlySet<string>,
  ): Promise<PrimariesRound> {
    const others = this.holder.primaryAddresses().filter((a) => a !== from && !exclude?.has(a));
    if (others.length === 0 || this.ctx.closed) return {};
    const map = this.ctx.map;
    let redirect: HostPort | undefined;
    const attempts = others.map((a) =>
      this.subscribeShard(a, channel)
        .then((sub) => ({ address: a, sub }), (e) => {
          // Only which node the others name is read here: the policy decides no retry.
          const r = e instanceof ReplyError
            ? parseRedirect(e, this.nodes.executor(a).endpoint)
            : undefined;
          if (r && !r.ask && endpointKeyOf(map(r.to)) !== from) redirect ??= map(r.to);
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

  // ------------------------------------------------------------------ moves

  /** Moves one subscription to `to`: subscribed there first, then dropped where it was. */
  #move(kind: SubscriptionKind, name: string, to: string): Promise<void> {
    const key = movingKey(kind, name);
    const running = this.#moving.get(key);
    if (running) return running;
    const run = (async () => {
      const old = this.#inner[kind].get(name);
      if (!old || old.node === to) return;
      if (
        kind === "shard" && old.sub.active && !this.nodes.down.has(old.node) &&
        (this.holder.sameShard(old.node, to) || this.shadows.of(name)?.has(to) === true)
      ) {
        // A node of the slot's own shard (a primary and its replicas deliver the same messages)
        // keeps serving it: switching within the shard could deliver a message twice, or none.
        // When `to` holds a failover copy, it was the old node's replica (a view read during a
        // failover may not say so yet): the copy takes over once the old node ends the channel
        // or is lost.
        return;
      }
      try {
        const sub = kind === "shard"
          ? await this.#shardSubscribeOn(to, name)
          : await subscribeBytes(
            this.nodes.executor(to),
            kind,
            name,
            this.#listener(kind),
            this.ctx,
          );
        const current = this.#inner[kind].get(name);
        if (current !== old) {
          // Unsubscribed (or moved) meanwhile.
          sub.unsubscribe().catch(() => {});
          return;
        }
        this.#inner[kind].set(name, { node: to, sub });
        if (kind === "shard") this.shadows.sync(name);
        this.ctx.logger.debug(
          `Moved the ${kind} subscription "${name}" from "${old.node}" to "${to}"`,
        );
        await this.#dropInner(kind, name, old, to);
      } catch (e) {
        this.ctx.logger.warn(
          `Cannot move the ${kind} subscription "${name}" to "${to}": ${(e as Error).message}`,
        );
        this.holder.scheduleRefresh();
        const now = this.#inner[kind].get(name);
        if (now === old && !old.sub.active && this.#wanted[kind].has(name)) {
          // The old node ended it meanwhile: subscribe wherever the slot is.
          this.#inner[kind].delete(name);
          this.#innerSubscribe(kind, name).catch((err) => this.ctx.emit("error", err));
        }
      }
    })().finally(() => {
      this.#moving.delete(key);
      if (kind === "shard" && this.slotMoves.get(slot) === run) this.slotMoves.delete(slot);
    });
    const slot = kind === "shard" ? keySlot(name) : -1;
    this.#moving.set(key, run);
    if (kind === "shard") this.slotMoves.set(slot, run);
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
      const node = this.nodes.get(old.node);
      if (
        this.ctx.closed || node === undefined || node.closed || !old.sub.active ||
        this.#sameShard(name, old.node, to)
      ) {
        // Within one shard (a failover), the old node keeps serving the channel as a replica
        // and would deliver the new primary's messages a second time.
        node?.pubsub.forget("shard", [name]);
        return;
      }
      // Until the old node ends it, it may still deliver what was published there.
      this.#endRetiring(name);
      const timer = this.ctx.clock.setTimer(() => {
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
    if (this.ctx.closed) {
      throw new ClosedError(`Cannot subscribe "${name}": the client is closed`, { written: false });
    }
    const ahead = await this.migration.take(name, to);
    if (ahead?.active) {
      this.ctx.logger.debug(
        `The shard channel "${name}" was subscribed ahead on "${to}": taken over`,
      );
      return ahead;
    }
    return this.subscribeShard(to, name);
  }

  /**
   * Subscribes a shard channel on one node's executor: the one place that does, so a replaced
   * subscription still listening there ("retiring") is ended first (two subscriptions of one
   * channel on one node would deliver every message twice).
   */
  subscribeShard(
    address: string,
    name: string,
    options: ShardSubscribeOptions = {},
  ): Promise<Subscription> {
    this.#endRetiring(name, address);
    const muted = options.muted;
    const copy: ShardCopy = { node: address, failover: muted !== undefined, held: [] };
    let copies = this.#copies.get(name);
    if (copies === undefined) this.#copies.set(name, copies = new Set());
    for (const c of copies) if (c.sub !== undefined && !c.sub.active) copies.delete(c);
    copies.add(copy);
    const max = this.ctx.settings.maxBufferedMessages;
    const deliverFrom = this.#deliverFrom;
    const listener: NodeListener = (message, channel) => {
      if (this.#mayDeliver(copy, channel)) deliverFrom(message, channel, copy);
      else if (muted) muted(message, channel);
      else if (copy.held && copy.held.length < max) copy.held.push([message, channel]);
    };
    const e = options.endpoint;
    return subscribeBytes(
      this.nodes.executor(address, e?.host, e?.port),
      "shard",
      name,
      listener,
      this.ctx,
      options.asking ?? false,
    ).then((sub) => {
      copy.sub = sub;
      return sub;
    }, (err) => {
      this.#copies.get(name)?.delete(copy);
      throw err;
    });
  }

  /**
   * Whether a copy delivers what it receives: the current copy does; a copy on another shard
   * (opened ahead, retiring) does, since each message is published on one shard only; a copy in
   * the current copy's shard never does (a primary and its replicas carry the same messages).
   */
  #mayDeliver(copy: ShardCopy, channel: string): boolean {
    const cur = this.#inner.shard.get(channel);
    if (copy.sub !== undefined && cur?.sub === copy.sub) return true;
    if (copy.failover) return false;
    return cur === undefined || !this.#sameShard(channel, copy.node, cur.node);
  }

  /**
   * Whether two nodes carry the same messages of `channel`: one node, a shard of the view, or a
   * node holding a failover copy of the channel (a replica of its current node).
   */
  #sameShard(channel: string, a: string, b: string): boolean {
    if (a === b || this.holder.sameShard(a, b)) return true;
    const peers = this.#peers.get(channel);
    if (peers !== undefined && peers.has(a) && peers.has(b)) return true;
    const copies = this.shadows.of(channel);
    return copies !== undefined && (copies.has(a) || copies.has(b));
  }

  /**
   * A copy became the current subscription of `name`: it delivers what it held after the last
   * message delivered, unless the copy it replaces is of its shard and still delivering (that
   * one delivered it); the others' held messages are dropped, and ended copies forgotten.
   */
  #onCurrent(name: string, next: InnerSubscription, prev?: InnerSubscription): void {
    const switched = prev !== undefined && prev.sub !== next.sub;
    const sameShard = switched && this.#sameShard(name, prev.node, next.node);
    const overlap = sameShard && prev.sub.active;
    const copies = this.#copies.get(name);
    let held: [Uint8Array, string][] | undefined;
    let failover = false;
    if (copies !== undefined) {
      for (const c of copies) {
        if (c.sub === next.sub) {
          held = c.held;
          c.held = undefined;
          failover = c.failover;
        } else if (c.sub !== undefined && !c.sub.active) {
          copies.delete(c);
        } else if (c.sub !== undefined) {
          c.held = undefined;
        }
      }
    }
    // For a while, a message another copy delivered already is dropped: whatever still listens
    // of the old owner's shard may carry the new owner's messages too.
    if (switched) this.#guard(name, failover || sameShard);
    if (copies === undefined) return;
    if (prev !== undefined && prev.node !== next.node) {
      if (failover) {
        const peers = this.#peers.get(name) ?? new Set();
        this.#peers.set(name, peers.add(prev.node).add(next.node));
      } else if (!this.#sameShard(name, prev.node, next.node)) {
        this.#peers.delete(name);
      }
    }
    if (held === undefined || overlap) return;
    // Whatever path made the switch, nothing already delivered is delivered again.
    for (let i = firstUnseen(held, this.delivered(name), "all"); i < held.length; i++) {
      this.forward(held[i]![0], held[i]![1]);
    }
  }

  /**
   * Starts the switch guard of `name`. `sameShard`: the new copy is of the old one's shard (a
   * failover), so it may receive late what the old one delivered (a shard message reaches the
   * other nodes of its shard over the cluster bus, and can come after the new primary's own).
   */
  #guard(name: string, sameShard: boolean): void {
    const by = new Map<number, object>();
    for (const mark of this.delivered(name)) by.set(mark, BEFORE_SWITCH);
    this.#guards.set(name, {
      until: this.ctx.clock.now() + SWITCH_GUARD_MS,
      by,
      dropped: 0,
      sameShard,
    });
  }

  /** Registers a running move of a shard channel: other moves and its slot's commands wait. */
  #trackShardMove(channel: string, run: Promise<void>): void {
    const key = movingKey("shard", channel);
    const slot = keySlot(channel);
    this.#moving.set(key, run);
    this.slotMoves.set(slot, run);
    run.finally(() => {
      if (this.#moving.get(key) === run) this.#moving.delete(key);
      if (this.slotMoves.get(slot) === run) this.slotMoves.delete(slot);
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
    this.ctx.clock.clearTimer(r.timer);
    this.nodes.get(r.node)?.pubsub.forget("shard", [name]);
  }

  /** Shard subscriptions of a slot that moved, moved with it; `undefined` when none. */
  moveSlot(slot: number): Promise<void> | undefined {
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

  /** A view was adopted: every subscription goes where it belongs now. */
  reconcile(): void {
    // The replicas of a shard may have changed.
    for (const name of this.#inner.shard.keys()) this.shadows.sync(name);
    for (const kind of ["channel", "pattern", "shard"] as const) {
      for (const [name, inner] of this.#inner[kind]) {
        const owner = this.#subscriptionNode(kind, name);
        if (owner !== undefined && owner !== inner.node) {
          if (kind !== "shard" && this.nodes.has(inner.node) && !this.nodes.down.has(inner.node)) {
            continue;
          }
          this.#move(kind, name, owner).catch(() => {});
        }
      }
    }
  }

  /**
   * An SMIGRATED delta: shard subscriptions of the moved slots move, channel and pattern
   * subscriptions leave the emptied nodes.
   *
   * @returns The moves under way.
   */
  migrated(moved: Uint8Array, dropped: ReadonlySet<string>): Promise<void>[] {
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
    return moves;
  }

  /** Ends every subscription and timer (the client closes). */
  close(): void {
    this.#copies.clear();
    this.#peers.clear();
    this.#tails.clear();
    this.migration.close();
    this.shadows.close();
    for (const r of this.#retiring.values()) this.ctx.clock.clearTimer(r.timer);
    this.#retiring.clear();
  }

  /** Ends the client's subscriptions (after `close()`'s timers). */
  endAll(): void {
    this.#manager.endAll();
  }
}

/**
 * Subscribes one name on one node with messages as bytes (the one way the cluster subscribes on
 * a node). The inner subscription is typed as a text one: only its `active`/`unsubscribe()` are
 * used, its messages go to `listener`.
 */
function subscribeBytes(
  node: NodeExecutor,
  kind: SubscriptionKind,
  name: string,
  listener: NodeListener,
  ctx: ClusterContext,
  asking = false,
): Promise<Subscription> {
  return node.subscribe<Uint8Array>(
    kind,
    name,
    listener,
    ctx.settings.maxBufferedMessages,
    true,
    asking,
  ) as unknown as Promise<Subscription>;
}
