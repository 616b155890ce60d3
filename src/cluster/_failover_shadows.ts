// Failover shadows: a muted copy of each shard subscription on the replicas of the primary it
// is on. A replica receives its primary's messages through replication and keeps the channel
// when it is promoted, so the copy takes over, with no gap, when the primary ends the channel
// or its connection is lost.
import type { TimerId } from "../_clock.ts";
import type { Subscription } from "../client/subscription.ts";
import type { InnerSubscription, ShardHost } from "./_pubsub.ts";
import { keySlot } from "./slot.ts";

/** A muted copy of a shard subscription on one replica. */
export interface ShadowSubscription {
  ready: Promise<Subscription | undefined>;
  /** The subscription once the replica confirmed it. */
  sub?: Subscription;
  /**
   * `recent` keeps its last {@linkcode RECENT_MESSAGES} muted messages (at most
   * {@linkcode RECENT_BYTES} of them, with `recentBytes` their size), `held` all of them from
   * the moment the client decides whether it takes over (it delivers only as the channel's
   * current subscription).
   */
  live: { recent: [Uint8Array, string][]; recentBytes: number; held?: [Uint8Array, string][] };
  dropped: boolean;
}

/** A copy made to hold its messages while the client decides whether it takes over. */
export interface HeldShadow {
  address: string;
  shadow: ShadowSubscription;
}

/**
 * Milliseconds a lost node's shard subscriptions wait before their copies on its replicas take
 * over: the copies first deliver, muted, what the node published just before it went.
 */
export const SHADOW_TAKEOVER_GRACE = 100;

/** Muted messages a copy keeps, to find where the stream it takes over left off. */
export const RECENT_MESSAGES = 1024;

/** Bytes of muted messages a copy keeps, at most (the oldest go first past it). */
export const RECENT_BYTES = 1 << 20;

/**
 * A message's mark: a hash of its length and of its first and last 32 bytes (constant time per
 * message). Two messages with one mark are taken for one.
 *
 * @param m The message.
 * @returns The mark.
 */
export function messageMark(m: Uint8Array | string): number {
  const n = m.length;
  let h = (0x811c9dc5 ^ n) >>> 0;
  const at = typeof m === "string" ? (i: number) => m.charCodeAt(i) : (i: number) => m[i]!;
  const head = Math.min(n, 32);
  for (let i = 0; i < head; i++) h = Math.imul(h ^ at(i), 0x01000193);
  for (let i = Math.max(head, n - 32); i < n; i++) h = Math.imul(h ^ at(i), 0x01000193);
  return h >>> 0;
}

/**
 * Where the messages a copy received become new: after the last one whose mark is among the
 * channel's last delivered messages. A replica receives its primary's messages in the order the
 * primary delivered them, so what comes after the last delivered one is what the primary never
 * delivered (published after the failover, or lost with a killed primary's socket). A message
 * whose mark equals a delivered one's is taken for it: at most once.
 *
 * @param received The copy's messages, oldest first.
 * @param delivered Marks of the channel's last delivered messages.
 * @param unmatched When none of `received` was delivered: `"all"` are new (the copy started
 *   after the last delivered message), or `"none"` (the copy lags behind what was delivered).
 * @returns The index of the first new message in `received`.
 */
export function firstUnseen(
  received: readonly (readonly [Uint8Array, string])[],
  delivered: readonly number[],
  unmatched: "all" | "none",
): number {
  if (delivered.length === 0) return 0;
  const seen = new Set(delivered);
  for (let j = received.length - 1; j >= 0; j--) {
    if (seen.has(messageMark(received[j]![0]))) return j + 1;
  }
  return unmatched === "all" ? 0 : received.length;
}

/**
 * The muted copies of the shard subscriptions, per channel and replica.
 *
 * @example
 * ```ts ignore
 * shadows.sync(channel); // a copy on each replica of the channel's primary
 * shadows.takeOver(channel, "127.0.0.1:7000"); // the primary was lost: a copy delivers
 * ```
 */
export class FailoverShadows {
  readonly #host: ShardHost;
  readonly #shadows = new Map<string, Map<string, ShadowSubscription>>();
  /** Nodes whose connection was lost, with the timer of their shadows' takeover. */
  readonly #lostTimers = new Map<string, TimerId>();

  /** @param host The shard subscriptions the copies shadow. */
  constructor(host: ShardHost) {
    this.#host = host;
  }

  /** The copies of a channel, by replica (tests and the client's checks). */
  of(name: string): ReadonlyMap<string, ShadowSubscription> | undefined {
    return this.#shadows.get(name);
  }

  /**
   * A node's connection was lost: once its last messages came through replication, the copies
   * on its replicas take over its shard subscriptions (unless it is back by then).
   */
  lost(address: string): void {
    const h = this.#host;
    // RESP3 only: over RESP2 the subscriptions are on another connection, whose loss this
    // is not.
    if (this.#lostTimers.has(address) || h.ctx.closed || h.ctx.settings.protocol !== 3) return;
    // The copies on its replicas take over once what the lost node published before it
    // went has come through replication (no replica is promoted that fast).
    this.#lostTimers.set(
      address,
      h.ctx.clock.setTimer(() => {
        this.#lostTimers.delete(address);
        if (h.ctx.closed || !h.nodes.down.has(address)) return;
        for (const [channel, inner] of h.current) {
          if (inner.node === address && h.wanted.has(channel) && !h.isMoving(channel)) {
            this.takeOver(channel, address);
          }
        }
      }, SHADOW_TAKEOVER_GRACE),
    );
  }

  /**
   * Keeps a muted copy of a shard subscription on every replica of the primary it is on (none
   * when it is on a replica, or with `failoverShadows: false`), and ends the others.
   */
  sync(name: string): void {
    const h = this.#host;
    const inner = h.current.get(name);
    const t = h.holder.topology;
    const want = new Set<string>();
    if (inner && h.ctx.options.failoverShadows && !h.ctx.closed && h.wanted.has(name)) {
      const i = t.nodes.findIndex((n) => n.address === inner.node);
      if (i !== -1 && t.nodes[i]!.role === "primary") {
        for (const r of t.replicas[i] ?? []) {
          const n = t.nodes[r]!;
          if (n.health !== "fail" && n.address !== inner.node) want.add(n.address);
        }
      }
      // A view read during a failover names the promoted replica as the slot's owner while the
      // subscription is still on the old primary: the copy there is the one to take over.
      const owner = h.holder.ownerOf(keySlot(name));
      if (owner !== undefined && owner !== inner.node && this.#shadows.get(name)?.has(owner)) {
        want.add(owner);
      }
    }
    let map = this.#shadows.get(name);
    for (const [address] of map ?? []) if (!want.has(address)) this.drop(name, address);
    if (want.size === 0) return;
    if (!map) this.#shadows.set(name, map = new Map());
    const max = h.ctx.settings.maxBufferedMessages;
    for (const address of want) {
      const had = map.get(address);
      if (had && (had.sub === undefined || had.sub.active)) continue;
      // A copy whose connection ended (the executor closed): open it again.
      if (had) map.delete(address);
      const live: ShadowSubscription["live"] = { recent: [], recentBytes: 0 };
      const shadow: ShadowSubscription = {
        live,
        dropped: false,
        ready: Promise.resolve(undefined),
      };
      shadow.ready = h.subscribeShard(address, name, {
        muted: (message, channel) => {
          if (live.held) {
            if (live.held.length < max) live.held.push([message, channel]);
            return;
          }
          const recent = live.recent;
          recent.push([message, channel]);
          live.recentBytes += message.length;
          if (recent.length >= 2 * RECENT_MESSAGES || live.recentBytes > RECENT_BYTES) {
            let drop = Math.max(0, recent.length - RECENT_MESSAGES);
            let bytes = live.recentBytes;
            for (let i = 0; i < drop; i++) bytes -= recent[i]![0].length;
            while (bytes > RECENT_BYTES && drop < recent.length - 1) {
              bytes -= recent[drop++]![0].length;
            }
            recent.splice(0, drop);
            live.recentBytes = bytes;
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
        h.ctx.logger.debug(
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
  drop(name: string, address: string): void {
    const map = this.#shadows.get(name);
    const shadow = map?.get(address);
    if (!map || !shadow) return;
    map.delete(address);
    if (map.size === 0) this.#shadows.delete(name);
    shadow.dropped = true;
    shadow.ready.then((sub) => sub?.unsubscribe().catch(() => {}));
  }

  /** Ends every copy of `name` (the user unsubscribed). */
  dropAll(name: string): void {
    for (const address of [...(this.#shadows.get(name)?.keys() ?? [])]) this.drop(name, address);
  }

  /**
   * A node ended `channel`: when a copy was there, the replica stopped serving the slot (it
   * left the shard) and the copy is over.
   *
   * @returns Whether it was a copy's node.
   */
  ended(channel: string, address: string): boolean {
    const shadow = this.#shadows.get(channel)?.get(address);
    if (!shadow) return false;
    this.#shadows.get(channel)!.delete(address);
    shadow.dropped = true;
    this.#host.nodes.get(address)?.pubsub.forget("shard", [channel]);
    return true;
  }

  /**
   * The first copy of `channel`, while it is on `from`, that its replica confirmed (or, with
   * `pending`, still has to confirm) and whose replica is connected.
   */
  #liveCopy(channel: string, from: string, pending = false): HeldShadow | undefined {
    const nodes = this.#host.nodes;
    const map = this.#shadows.get(channel);
    const inner = this.#host.current.get(channel);
    if (!map || !inner || inner.node !== from) return undefined;
    let unconfirmed: HeldShadow | undefined;
    for (const [address, shadow] of map) {
      const node = nodes.get(address);
      if (shadow.dropped || node === undefined || node.closed || nodes.down.has(address)) continue;
      if (shadow.sub?.active === true) return { address, shadow };
      if (pending && shadow.sub === undefined) unconfirmed ??= { address, shadow };
    }
    return unconfirmed;
  }

  /**
   * A copy of `channel` on a connected replica of `from`, made to hold its messages: a confirmed
   * one, else one whose replica has not confirmed it yet (its messages come after its
   * confirmation, and are held from then on: a new subscription there would miss what the
   * promoted replica published meanwhile). `undefined` when there is none.
   */
  hold(channel: string, from: string): HeldShadow | undefined {
    const found = this.#liveCopy(channel, from, true);
    if (found) found.shadow.live.held = [];
    return found;
  }

  /**
   * The primary ended a channel whose copy on its replica took over: a failover (a replica of
   * that shard serves the slot now) or a slot move to another shard (no pre-subscription
   * caught it). The other primaries are asked in the same round: one that confirms serves the
   * slot, and the subscription goes there; otherwise the copy stays, and the primaries'
   * redirects say which node was promoted.
   */
  async confirmTakeover(
    channel: string,
    from: string,
    before: InnerSubscription,
    held: HeldShadow,
  ): Promise<void> {
    const h = this.#host;
    // The nodes holding a copy are the shard's own (replicas of `from`): asked, the promoted one
    // would confirm like another shard's primary, and its copy's held messages would be lost.
    const copies = new Set(this.#shadows.get(channel)?.keys());
    copies.add(held.address);
    // A copy not confirmed yet is waited for meanwhile (its subscription times out at worst).
    const [round] = await Promise.all([
      h.subscribeOnPrimaries(channel, from, copies),
      held.shadow.ready,
    ]);
    const slot = keySlot(channel);
    const { address, shadow } = held;
    if (h.current.get(channel) !== before || !h.wanted.has(channel)) {
      // Unsubscribed, or subscribed by another path, meanwhile.
      round.won?.sub.unsubscribe().catch(() => {});
      shadow.live.held = undefined;
      return;
    }
    if (round.won) {
      // A slot move to another shard: what the copy held are the old owner's last messages,
      // delivered already.
      shadow.live.held = undefined;
      const n = h.nodes.executor(round.won.address).endpoint;
      h.holder.patch(slot, { host: n.host, port: n.port });
      h.current.set(channel, { node: round.won.address, sub: round.won.sub });
      this.sync(channel);
      h.ctx.logger.debug(
        `The slot of "${channel}" moved to "${round.won.address}": subscribed there`,
      );
      return;
    }
    // A failover: the copy delivers what the old primary did not (what it held, and what it
    // received muted just before, after the last message delivered), then everything. A
    // promoted replica had caught up: when none of it was delivered, it all came after.
    const sub = shadow.sub;
    if (shadow.dropped || !sub?.active) {
      shadow.live.held = undefined;
      h.current.delete(channel);
      await h.resubscribe(channel);
      return;
    }
    this.#shadows.get(channel)?.delete(address);
    const forward = h.forward;
    const pending = [...shadow.live.recent.slice(-RECENT_MESSAGES), ...shadow.live.held ?? []];
    shadow.live.held = undefined;
    shadow.live.recent = [];
    shadow.live.recentBytes = 0;
    const from0 = firstUnseen(pending, h.delivered(channel), "all");
    for (let i = from0; i < pending.length; i++) forward(pending[i]![0], pending[i]![1]);
    h.current.set(channel, { node: address, sub });
    h.ctx.stats.shadowTakeovers++;
    h.ctx.logger.debug(
      `"${from}" ended the shard subscription "${channel}" and no other primary serves its slot (a failover): its copy on the replica "${address}" delivers now, from ${
        pending.length - from0
      } of the ${pending.length} messages it received`,
    );
    if (round.redirect) h.holder.patch(slot, round.redirect);
    this.sync(channel);
    h.holder.refreshLater(1_000);
  }

  /**
   * The node a shard subscription was on ended it or was lost: a confirmed muted copy on one of
   * its replicas starts delivering at once (a failover promotes one of them; each one receives
   * what the new primary publishes). `false` when there is none.
   */
  takeOver(channel: string, from: string): boolean {
    const h = this.#host;
    const found = this.#liveCopy(channel, from);
    if (found === undefined) return false;
    const { address, shadow } = found;
    const sub = shadow.sub!;
    this.#shadows.get(channel)!.delete(address);
    // What the lost node published and its replica received, but its socket never delivered.
    // The replica of a lost node may lag: when none of its messages was delivered, it is behind.
    const recent = shadow.live.recent.slice(-RECENT_MESSAGES);
    shadow.live.recent = [];
    shadow.live.recentBytes = 0;
    const forward = h.forward;
    for (let i = firstUnseen(recent, h.delivered(channel), "none"); i < recent.length; i++) {
      forward(recent[i]![0], recent[i]![1]);
    }
    h.current.set(channel, { node: address, sub });
    h.nodes.get(from)?.pubsub.forget("shard", [channel]);
    h.ctx.stats.shadowTakeovers++;
    h.ctx.logger.debug(
      `"${from}" ended or lost the shard subscription "${channel}": its copy on the replica "${address}" delivers now`,
    );
    this.sync(channel);
    h.holder.scheduleRefresh();
    return true;
  }

  /** Forgets every copy and timer (the client closes). */
  close(): void {
    this.#shadows.clear();
    for (const id of this.#lostTimers.values()) this.#host.ctx.clock.clearTimer(id);
    this.#lostTimers.clear();
  }
}
