/**
 * The tracking wiring of one executor for its client's {@linkcode ClientSideCache}:
 *
 * - RESP3: `CLIENT TRACKING ON` (with `BCAST PREFIX ...` in broadcast mode) is a session step
 *   of the shared connection, so every new socket (reconnect, handoff, sentinel switch) turns
 *   it on before it takes queued work; `invalidate` pushes drop the keys they name, a null one
 *   drops everything.
 * - RESP2: the executor's subscriber connection subscribes to `__redis__:invalidate`; its
 *   `CLIENT ID` is read as a session step on every new socket, and once its subscription is
 *   confirmed the shared connection is switched to `CLIENT TRACKING ON REDIRECT <id>`.
 *
 * Every new socket and every lost one flushes the whole cache (invalidations may have been
 * missed); while a connection does not track, nothing is answered from memory.
 *
 * @module
 */

import type { Clock, TimerId } from "../_clock.ts";
import { ReplyError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { ClientSideCache } from "./client_side_cache.ts";

/** The channel RESP2 invalidations are published on. */
export const INVALIDATE_CHANNEL = "__redis__:invalidate";

// The cache sits below the connection and the client: it declares the little it needs of them
// here, and the executor (src/client/node_executor.ts) satisfies these shapes.

/** The role of one of the executor's connections (the executor's `TrackedRole`). */
export type TrackedRole = "shared" | "exclusive" | "subscriber";

/**
 * A command every new socket of a role runs before queued work (the shape of the connection's
 * `TrackingStep`).
 */
export interface TrackingStep {
  /** The command. */
  args: RedisArgument[];
  /** Called with the reply (an error reply arrives as a `ReplyError` value). */
  onReply?: (reply: RespValue) => void;
  /** Subscribe family: answered by this many confirmation pushes (or an error reply). */
  pushes?: number;
}

/** What a tracking session needs from its executor (a subset of `NodeExecutor`). */
export interface TrackingNode {
  /** Runs a command on the shared connection. */
  run(args: RedisArgument[], transform: undefined, flags: number): Promise<unknown>;
  /** Subscribes (RESP2: on the dedicated subscriber connection). */
  subscribe(
    kind: "channel",
    names: string[],
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  /**
   * When the ready socket of the role's connection last read a reply (or opened), or
   * `undefined` without one.
   */
  lastReplyAt?(role: TrackedRole): number | undefined;
  /**
   * The executor's time and timers (unref'd: they never keep the process alive), for the
   * watch over the connection carrying invalidations.
   */
  readonly timers?: Clock;
}

/** The executor options a tracking session fills in. */
export interface TrackingHooks {
  /** Session steps per connection role. */
  session: (role: TrackedRole) => TrackingStep[];
  /** Push frames, seen first. */
  onPush: (frame: RespValue[], role: TrackedRole) => boolean;
  /** A connection lost its socket or closed. */
  onLost: (role: TrackedRole) => void;
  /**
   * The ping interval of a role's connections where the session needs one (the liveness probe
   * of the connection carrying invalidations), or `undefined`.
   */
  pingInterval: (role: TrackedRole) => number | undefined;
}

const TEXT = new TextDecoder();

function text(v: RespValue | undefined): string | undefined {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return TEXT.decode(v);
  return undefined;
}

function noop(): void {}

/**
 * One executor's tracking state.
 *
 * @example
 * ```ts ignore
 * const tracking = cache.tracking(options.protocol);
 * const node = new NodeExecutor({ ...settings, ...tracking.executorHooks() });
 * tracking.attach(node);
 * ```
 */
export class TrackingSession {
  readonly #cache: ClientSideCache;
  readonly #protocol: 2 | 3;
  readonly #logger: Logger;
  #node: TrackingNode | undefined;
  /** Idle until its first socket (not counted), then on or off. */
  #state: "idle" | "on" | "off" = "idle";
  #closed = false;
  /** Bumped whenever tracking is (re)applied; a late failure of an older one is ignored. */
  #activation = 0;
  /** RESP2: the id of the connection invalidations are redirected to, once known. */
  #redirectId: number | undefined;
  #subscribed = false;
  #subscribing: Promise<unknown> | undefined;
  /** The watch over the invalidation connection (while on, with `maxStaleness`). */
  #watch: TimerId | undefined;
  /** The invalidation connection read nothing for `maxStaleness` (reported to the cache). */
  #overdue = false;

  /**
   * @internal Created by `ClientSideCache.tracking()`.
   *
   * @ignore
   */
  constructor(cache: ClientSideCache, protocol: 2 | 3, logger: Logger) {
    this.#cache = cache;
    this.#protocol = protocol;
    this.#logger = logger;
  }

  /** Whether the shared connection tracks now. */
  get active(): boolean {
    return this.#state === "on";
  }

  /**
   * Gives the session its executor (after the executor was built with `executorHooks()`).
   *
   * @param node The executor.
   */
  attach(node: TrackingNode): void {
    this.#node = node;
  }

  /** The role of the connection that carries the invalidations. */
  get #carrier(): TrackedRole {
    return this.#protocol === 3 ? "shared" : "subscriber";
  }

  /**
   * Watches the connection carrying invalidations while the session is on: a timer at the
   * moment it will have read nothing for `maxStaleness` (its last reply plus that). Then the
   * session is overdue (the cache is flushed and bypassed) and looks again every quarter of it
   * until a reply arrived. Costs nothing per hit; like invalidations, it needs the event loop
   * to turn (a loop of hits that never yields is not bounded).
   */
  #arm(ms: number): void {
    const timers = this.#node?.timers;
    if (timers === undefined) return;
    timers.clearTimer(this.#watch);
    this.#watch = timers.setTimer(() => this.#check(), Math.max(1, ms));
  }

  #check(): void {
    this.#watch = undefined;
    const node = this.#node;
    const timers = node?.timers;
    const maxStale = this.#cache.options.maxStaleness;
    if (this.#state !== "on" || this.#closed || timers === undefined) return;
    const heard = node?.lastReplyAt?.(this.#carrier);
    // No ready socket: the loss (`onLost`) turns the session off and flushes.
    if (heard === undefined) return;
    const left = heard + maxStale - timers.now();
    if (left > 0) {
      this.#setOverdue(false);
      this.#arm(left);
      return;
    }
    this.#setOverdue(true);
    this.#arm(maxStale / 4);
  }

  #setOverdue(overdue: boolean): void {
    if (this.#overdue === overdue) return;
    this.#overdue = overdue;
    this.#cache._sessionOverdue(overdue);
  }

  /** Stops the watch (the session is off or closed); an overdue session is no longer one. */
  #unwatch(): void {
    this.#node?.timers?.clearTimer(this.#watch);
    this.#watch = undefined;
    this.#setOverdue(false);
  }

  /**
   * The executor options of this session, composed with another owner's (the other owner's
   * steps first; a push the session does not take goes to the other owner's `onPush`).
   *
   * @param base Hooks of another owner (the sentinel client, ...).
   * @returns `session`, `onPush` and `onLost` for the executor.
   */
  executorHooks(base?: Partial<TrackingHooks>): TrackingHooks {
    const baseSession = base?.session;
    const basePush = base?.onPush;
    const baseLost = base?.onLost;
    const maxStale = this.#cache.options.maxStaleness;
    const probe = maxStale > 0 ? Math.max(1, Math.floor(maxStale / 2)) : undefined;
    return {
      pingInterval: (role) => (role === this.#carrier ? probe : undefined),
      session: baseSession
        ? (role) => [...baseSession(role), ...this.session(role)]
        : (role) => this.session(role),
      onPush: basePush
        ? (frame, role) => this.onPush(frame, role) || basePush(frame, role)
        : (frame, role) => this.onPush(frame, role),
      onLost: baseLost
        ? (role) => {
          this.onLost(role);
          baseLost(role);
        }
        : (role) => this.onLost(role),
    };
  }

  /**
   * Every change (and every new socket) flushes the cache, except the executor's first socket
   * turning tracking on: nothing was read through it before (a cluster node joining does not
   * drop what the other nodes' reads cached).
   */
  #setActive(active: boolean): void {
    if (this.#closed) return;
    const next = active ? "on" : "off";
    const first = this.#state === "idle" && active;
    if (next !== this.#state) {
      this.#cache._sessionChanged(this.#state === "off", next === "off");
      this.#state = next;
    }
    if (!first) this.#cache.invalidateAll();
    if (!active) this.#unwatch();
    else if (this.#cache.options.maxStaleness > 0) this.#arm(this.#cache.options.maxStaleness);
  }

  #trackingArgs(redirect: number | undefined): RedisArgument[] {
    const args: RedisArgument[] = ["CLIENT", "TRACKING", "ON"];
    if (redirect !== undefined) args.push("REDIRECT", redirect);
    const o = this.#cache.options;
    if (o.mode === "broadcast") {
      args.push("BCAST");
      for (const p of o.prefixes) args.push("PREFIX", p);
    }
    return args;
  }

  #step(redirect: number | undefined): TrackingStep {
    const gen = ++this.#activation;
    return {
      args: this.#trackingArgs(redirect),
      onReply: (v) => {
        if (v instanceof ReplyError) this.#refused(gen, v);
      },
    };
  }

  #refused(gen: number, e: Error): void {
    if (gen !== this.#activation) return;
    this.#logger.warn(`Cannot turn client-side caching on: ${e.message}`);
    this.#setActive(false);
  }

  /**
   * Session steps of a new socket of `role`; a new shared (or RESP2 subscriber) socket also
   * flushes the cache.
   *
   * @param role The connection's role.
   * @returns The steps.
   */
  session(role: TrackedRole): TrackingStep[] {
    if (role === "exclusive") return [];
    if (this.#protocol === 3) {
      if (role !== "shared") return [];
      const step = this.#step(undefined);
      this.#setActive(true);
      return [step];
    }
    if (role === "subscriber") {
      this.#redirectId = undefined;
      this.#subscribed = false;
      this.#setActive(false);
      return [{
        args: ["CLIENT", "ID"],
        onReply: (v) => {
          if (typeof v === "number") this.#redirectId = v;
          else this.#logger.warn(`Cannot read the id of the invalidation connection: ${String(v)}`);
        },
      }];
    }
    // RESP2 shared connection.
    if (this.#redirectId !== undefined && this.#subscribed) {
      const step = this.#step(this.#redirectId);
      this.#setActive(true);
      return [step];
    }
    this.#setActive(false);
    this.#subscribe();
    return [];
  }

  #subscribe(): void {
    const node = this.#node;
    if (this.#subscribing !== undefined || node === undefined || this.#closed) return;
    this.#subscribing = node.subscribe("channel", [INVALIDATE_CHANNEL], noop).catch((e) => {
      this.#subscribing = undefined;
      if (!this.#closed) {
        this.#logger.warn(`Cannot subscribe to ${INVALIDATE_CHANNEL}: ${(e as Error).message}`);
      }
    });
  }

  /** RESP2: the invalidation connection is subscribed; point the shared connection at it. */
  #redirect(): void {
    const node = this.#node;
    const id = this.#redirectId;
    if (node === undefined || id === undefined || this.#closed) return;
    const gen = ++this.#activation;
    // Re-enabling with BCAST prefixes a connection already has is refused: turn it off first.
    // Both are queued together, so no read runs between them.
    node.run(["CLIENT", "TRACKING", "OFF"], undefined, 0).catch(noop);
    node.run(this.#trackingArgs(id), undefined, 0).catch((e) => this.#refused(gen, e as Error));
    this.#setActive(true);
  }

  /**
   * Handles a push frame: invalidations (RESP3 `invalidate`, RESP2 messages of
   * `__redis__:invalidate`), and on RESP2 the confirmation of that subscription.
   *
   * @param frame The push frame.
   * @param role The role of the connection it came on.
   * @returns Whether the frame was an invalidation (taken).
   */
  onPush(frame: RespValue[], role: TrackedRole): boolean {
    const kind = frame[0];
    if (typeof kind !== "string") return false;
    if (this.#protocol === 3) {
      if (kind !== "invalidate") return false;
      this.#invalidate(frame[1]);
      return true;
    }
    if (role !== "subscriber" || text(frame[1]) !== INVALIDATE_CHANNEL) return false;
    if (kind === "message") {
      this.#invalidate(frame[2]);
      return true;
    }
    if (kind === "subscribe" && !this.#subscribed) {
      this.#subscribed = true;
      this.#redirect();
    }
    return false;
  }

  #invalidate(payload: RespValue | undefined): void {
    if (payload === null || payload === undefined) {
      this.#cache.invalidateAll();
      return;
    }
    if (!Array.isArray(payload)) {
      const one = text(payload);
      if (one !== undefined) this.#cache.invalidateKeys([one]);
      return;
    }
    const keys: string[] = [];
    for (const k of payload) {
      const t = text(k);
      if (t !== undefined) keys.push(t);
    }
    this.#cache.invalidateKeys(keys);
  }

  /**
   * A connection of the executor lost its socket or closed: the cache is flushed and nothing
   * is answered from memory until tracking is on again.
   *
   * @param role The connection's role.
   */
  onLost(role: TrackedRole): void {
    if (role === "exclusive") return;
    if (role === "subscriber") {
      if (this.#protocol === 3) return;
      this.#redirectId = undefined;
      this.#subscribed = false;
    }
    this.#setActive(false);
  }

  /**
   * The executor is gone for good (a cluster node removed): the session no longer holds the
   * cache back. Flushes the cache unless told otherwise.
   *
   * @param flush Whether to drop every cached reply; `false` when the keys its node served were
   *   dropped already (a cluster node left empty by a slot migration whose slots were dropped).
   * @default {flush} true
   */
  close(flush = true): void {
    if (this.#closed) return;
    this.#cache._sessionChanged(this.#state === "off", false);
    if (flush) this.#cache.invalidateAll();
    this.#unwatch();
    this.#closed = true;
  }
}
