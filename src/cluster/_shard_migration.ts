// Shard migration: while a slot migrates, its shard subscriptions are opened ahead (`ASKING` +
// `SSUBSCRIBE`) on the node importing it, and taken over once the slot lands there, so no
// message is missed between the old owner ending the channel and the new one confirming it. A
// periodic check (`EXISTS` of a probe key per subscribed slot) finds migrations no command
// met.
import type { TimerId } from "../_clock.ts";
import type { Subscription } from "../client/subscription.ts";
import { ReplyError } from "../errors.ts";
import { endpointKeyOf } from "../maintenance/endpoint.ts";
import type { ShardHost } from "./_pubsub.ts";
import { parseRedirect } from "./_redirect.ts";
import { keySlot } from "./slot.ts";
import { NO_NODE } from "./topology.ts";

/**
 * A shard subscription opened ahead (`ASKING` + `SSUBSCRIBE`) on the node importing its slot,
 * taken over as the subscription once the slot lands there.
 */
export interface PreSubscription {
  node: string;
  /** The subscription once the node confirmed; `undefined` when it refused (not importing). */
  ready: Promise<Subscription | undefined>;
  dropped: boolean;
  /** The migration check round it was opened in (an older check's reply does not end it). */
  round: number;
}

/** Milliseconds between migration checks of shard subscriptions during an SMIGRATING window. */
export const WINDOW_PROBE_INTERVAL = 10;

/**
 * The subscriptions opened ahead, and the migration check.
 *
 * @example
 * ```ts ignore
 * migration.migrating(slot, "127.0.0.1:7001"); // an ASK: ASKING + SSUBSCRIBE there
 * await migration.take(channel, "127.0.0.1:7001"); // the slot landed: the subscription
 * ```
 */
export class ShardMigration {
  readonly #host: ShardHost;
  /** Shard subscriptions opened ahead on the node importing their slot, per channel. */
  readonly #pre = new Map<string, PreSubscription>();
  /** Probe keys (a key of the slot no one writes), per slot. */
  readonly #probeKeys = new Map<number, string>();
  #probeTimer: TimerId | undefined;
  #probing = false;
  /** Whether a node refused a probe (warned once). */
  #probeRefused = false;
  /** Migration check rounds sent. */
  #probeRound = 0;
  /** SMIGRATING windows open now (maintenance notifications). */
  #windowsOpen = 0;

  /** @param host The shard subscriptions. */
  constructor(host: ShardHost) {
    this.#host = host;
  }

  /** The subscription opened ahead for `name`, if any. */
  get(name: string): PreSubscription | undefined {
    return this.#pre.get(name);
  }

  /** The subscription opened ahead on `to`, leaving the map (`undefined` when none). */
  take(name: string, to: string): Promise<Subscription | undefined> {
    const pre = this.#pre.get(name);
    if (pre === undefined || pre.node !== to) return Promise.resolve(undefined);
    this.#pre.delete(name);
    return pre.ready;
  }

  /** Ends a subscription opened ahead (the user unsubscribed, the move was called off). */
  drop(name: string): void {
    const pre = this.#pre.get(name);
    if (pre === undefined) return;
    this.#pre.delete(name);
    pre.dropped = true;
    pre.ready.then((sub) => sub?.unsubscribe().catch(() => {}));
  }

  /**
   * A node ended `channel`: when it was opened ahead there, the node stopped importing the slot
   * (the move was called off, or it reconnected and could not restore the channel); a later
   * check opens it again if the slot still moves.
   *
   * @returns Whether it was the node of a subscription opened ahead.
   */
  ended(channel: string, address: string): boolean {
    const pre = this.#pre.get(channel);
    if (pre?.node !== address) return false;
    this.#pre.delete(channel);
    this.#host.nodes.get(address)?.pubsub.forget("shard", [channel]);
    return true;
  }

  /**
   * A slot is migrating to `to` (an `ASK` reply): its shard subscriptions are opened there too,
   * behind `ASKING`, before the owner ends them when the slot leaves it. A message is published
   * on one node only, so the two subscriptions never deliver the same one.
   */
  migrating(slot: number, to: string): void {
    const h = this.#host;
    if (!h.shardSlots.has(slot) || h.ctx.closed || h.ctx.settings.protocol !== 3) return;
    for (const [name, inner] of h.current) {
      if (inner.node === to || keySlot(name) !== slot) continue;
      // A move of it is under way (it may have taken the pre-subscription already): a second
      // subscription on the same node would deliver every message twice.
      if (h.isMoving(name)) continue;
      const pre = this.#pre.get(name);
      if (pre?.node === to && !pre.dropped) continue;
      if (pre) this.drop(name);
      const entry: PreSubscription = {
        node: to,
        dropped: false,
        round: this.#probeRound,
        ready: Promise.resolve(undefined),
      };
      entry.ready = h.subscribeShard(to, name, { asking: true }).then((sub) => {
        h.ctx.stats.subscribedAhead++;
        if (entry.dropped) {
          sub.unsubscribe().catch(() => {});
          return undefined;
        }
        h.ctx.logger.debug(
          `Subscribed the shard channel "${name}" ahead on "${to}", which imports slot ${slot}`,
        );
        return sub;
      }, (e) => {
        if (this.#pre.get(name) === entry) this.#pre.delete(name);
        h.ctx.logger.debug(
          `Cannot subscribe "${name}" ahead on "${to}": ${(e as Error)?.message ?? String(e)}`,
        );
        return undefined;
      });
      this.#pre.set(name, entry);
    }
  }

  /** SMIGRATING windows opened or closed: slots are about to move, checked now, then often. */
  windowsChanged(open: number): void {
    this.#windowsOpen = open;
    if (open > 0) this.arm(0);
  }

  /**
   * Schedules the next migration check of the shard subscriptions' slots: in `ms`, else after
   * `shardMigrationProbeInterval` (every 10 ms while an SMIGRATING window is open).
   */
  arm(ms?: number): void {
    const h = this.#host;
    if (h.ctx.closed || h.ctx.settings.protocol !== 3 || h.current.size === 0) return;
    const every = this.#windowsOpen > 0
      ? WINDOW_PROBE_INTERVAL
      : h.ctx.options.shardMigrationProbeInterval;
    const delay = ms ?? every;
    if (every === 0 && ms === undefined) return;
    const clock = h.ctx.clock;
    if (this.#probeTimer !== undefined) {
      if (ms === undefined) return;
      clock.clearTimer(this.#probeTimer);
    }
    this.#probeTimer = clock.setTimer(() => {
      this.#probeTimer = undefined;
      if (this.#probing) return;
      this.#probing = true;
      this.probe().catch(() => {}).finally(() => {
        this.#probing = false;
        this.arm();
      });
    }, delay);
  }

  /**
   * One migration check: `EXISTS <probe key>` per subscribed slot, pipelined to the node the
   * slot's subscription is on. A migrating slot answers `ASK <importing node>`; a slot that left
   * answers `MOVED`; a number means it stays (a subscription opened ahead for a move that was
   * called off is ended).
   */
  async probe(): Promise<void> {
    const h = this.#host;
    const t = h.holder.topology;
    // Asked of the slot's owner in the table (a subscription may sit on a replica of it, which
    // would answer MOVED).
    const bySource = new Map<string, Set<number>>();
    for (const name of h.current.keys()) {
      const slot = keySlot(name);
      const owner = t.slots[slot]!;
      if (owner === NO_NODE) continue;
      const address = t.nodes[owner]!.address;
      let slots = bySource.get(address);
      if (!slots) bySource.set(address, slots = new Set());
      slots.add(slot);
    }
    const round = ++this.#probeRound;
    await Promise.all([...bySource].map(async ([address, set]) => {
      const node = h.nodes.get(address);
      if (node === undefined || node.closed || h.nodes.down.has(address)) return;
      const slots = [...set];
      const replies = await Promise.allSettled(
        slots.map((slot) => node.run(["EXISTS", this.#probeKey(slot)], undefined, 0)),
      );
      if (h.ctx.closed) return;
      replies.forEach((r, i) => {
        const slot = slots[i]!;
        if (r.status === "fulfilled") {
          for (const [name, pre] of this.#pre) {
            if (keySlot(name) === slot && pre.node !== address && pre.round < round) {
              h.ctx.logger.debug(
                `Slot ${slot} stays on "${address}": ending the subscription "${name}" opened ahead on "${pre.node}"`,
              );
              this.drop(name);
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
            h.ctx.logger.warn(
              `Cannot check whether slot ${slot} migrates: "${address}" refused EXISTS (${e.message}); shard subscriptions are moved once their slot left its node`,
            );
          }
          return;
        }
        const to = h.ctx.map(red.to);
        if (red.ask) {
          const target = endpointKeyOf(to);
          h.nodes.executor(target, to.host, to.port);
          this.migrating(slot, target);
        } else {
          h.holder.patch(red.slot, to);
          h.moveSlot(red.slot)?.catch(() => {});
          h.holder.scheduleRefresh();
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

  /** Forgets the subscriptions opened ahead and stops the check (the client closes). */
  close(): void {
    this.#host.ctx.clock.clearTimer(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#pre.clear();
  }
}
