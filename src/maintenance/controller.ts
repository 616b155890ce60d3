/**
 * The maintenance controller: a pure state machine that turns maintenance notifications and
 * clock time into decisions.
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type {
  MaintenanceDecision,
  MaintenanceWindowKind,
  WindowClosedDecision,
} from "./decision.ts";
import type { Endpoint } from "../endpoint.ts";
import { endpointKeyOf } from "./endpoint.ts";
import {
  type MaintenanceNotification,
  type MalformedMaintenanceNotification,
  parseMaintenanceNotification,
} from "./notification.ts";
import {
  type MaintenanceMode,
  type MaintenanceOptions,
  type ResolvedMaintenanceOptions,
  resolveMaintenanceOptions,
} from "./options.ts";
import {
  SlotMigrationCoordinator,
  type SlotMigrationDecision,
} from "./slot_migration_coordinator.ts";
import { computeDrainCap, effectiveTimeout } from "./timeouts.ts";

export type { Clock } from "../_clock.ts";

/** Options of {@linkcode MaintenanceController.timeoutFor}. */
export interface TimeoutForOptions {
  /** The command blocks (BLPOP, XREAD BLOCK, WAIT, ...): `relaxedBlockingTimeout` applies. */
  blocking?: boolean;
}

/** A connection window as listed by {@linkcode MaintenanceController.snapshot}. */
export interface ConnectionWindowSnapshot {
  /** What opened it. */
  kind: "MIGRATING" | "FAILING_OVER" | "SMIGRATING";
  /** Sequence number of the start notification. */
  seq: number;
  /** Clock time (ms) it opened. */
  openedAt: number;
  /** Clock time (ms) the backstop closes it. */
  deadline: number;
}

/** A connection as listed by {@linkcode MaintenanceController.snapshot}. */
export interface ConnectionSnapshot<C> {
  /** The connection's id. */
  connection: C;
  /** Its endpoint key. */
  endpoint: string;
  /** Clock time (ms) its relaxation ends at the latest, or `undefined` when not relaxed. */
  relaxedUntil: number | undefined;
  /** Whether a handoff / reconnect marked it for replacement. */
  retiring: boolean;
  /** Its open connection windows. */
  windows: ConnectionWindowSnapshot[];
  /** Its effective non-blocking timeout for the `commandTimeout` given to `snapshot`. */
  timeout: number | undefined;
  /** Its effective blocking timeout for the `commandTimeout` given to `snapshot`. */
  blockingTimeout: number | undefined;
}

/** An open MOVING window as listed by {@linkcode MaintenanceController.snapshot}. */
export interface EndpointWindowSnapshot {
  /** The endpoint key that moves. */
  endpoint: string;
  /** Sequence number of the latest MOVING for it. */
  seq: number;
  /** The pinned target, or `null` when the server gave none. */
  target: Endpoint | null;
  /** Clock time (ms) it opened. */
  openedAt: number;
  /** Clock time (ms) it ends. */
  end: number;
  /** Clock time (ms) of the pending reconnect to the configured endpoint, if one is pending. */
  reconnectAt: number | undefined;
}

/** The state of a {@linkcode MaintenanceController}, for observability. */
export interface MaintenanceSnapshot<C> {
  /** Clock time (ms) of the snapshot. */
  at: number;
  /** The resolved options. */
  options: ResolvedMaintenanceOptions;
  /** Open MOVING windows. */
  endpoints: EndpointWindowSnapshot[];
  /** Attached connections. */
  connections: ConnectionSnapshot<C>[];
}

type ConnectionWindowKind = "MIGRATING" | "FAILING_OVER";

interface ConnectionWindow {
  kind: ConnectionWindowKind;
  seq: number;
  openedAt: number;
  deadline: number;
}

interface ConnectionState<C> {
  id: C;
  endpoint: string;
  windows: ConnectionWindow[];
  /** Relaxed until then by a MOVING duplicate for another endpoint (late opt-in). */
  movingUntil: number;
  /** Seqs this connection has handled, with the time they may be forgotten. */
  seen: Map<number, number>;
  retiring: boolean;
  /** The `until` of the last `relax` reported, `undefined` when reported unrelaxed. */
  reported: number | undefined;
}

interface EndpointWindow {
  endpoint: string;
  seq: number;
  target: Endpoint | null;
  openedAt: number;
  end: number;
  reconnectAt: number | undefined;
}

const END_OF: Record<string, ConnectionWindowKind> = {
  MIGRATED: "MIGRATING",
  FAILED_OVER: "FAILING_OVER",
};

/** Most seqs remembered per controller and per connection (bounds memory on a noisy server). */
const MAX_SEEN = 4096;
const MAX_SEEN_PER_CONNECTION = 256;

const wallTime: Pick<Clock, "now"> = { now: () => Date.now() };

function remember(seen: Map<number, number>, seq: number, until: number, max: number): void {
  seen.delete(seq);
  seen.set(seq, until);
  if (seen.size > max) seen.delete(seen.keys().next().value as number);
}

function prune(seen: Map<number, number>, now: number): void {
  for (const [seq, until] of seen) if (until <= now) seen.delete(seq);
}

/**
 * The maintenance controller (smart client handoffs): a pure state machine. Notifications,
 * attach/detach and clock ticks go in; {@linkcode MaintenanceDecision}s come out; queries answer
 * what timeout a command gets and where a new connection should dial. It opens no sockets,
 * sets no timers and reads time only from the injected {@linkcode Clock}.
 *
 * `C` is whatever the caller identifies connections by (a number, a string, the connection
 * object itself); it is only used as a `Map` key and handed back in decisions.
 *
 * Wiring, for the connection layer:
 *
 * 1. One controller per client (per database for a multi-database client).
 * 2. `attach(conn, endpoint)` before each socket's handshake (first connect, reconnect, the
 *    replacement of a handoff), with the endpoint key the connection serves (the configured
 *    `host:port`, also for a socket dialled to a MOVING target): a connection opened during a
 *    MOVING window is relaxed from its first byte. `detach(conn)` when it closes for good.
 * 3. Every RESP3 push frame: `onPush(conn, frame)`; `undefined` means "not maintenance, route it
 *    on" (pub/sub, invalidation), an array means "consumed" (never a command's reply).
 * 4. Carry out the returned decisions, then arm one timer for `nextDeadline()` and call
 *    `tick()` when it fires (and carry out its decisions, and re-arm).
 * 5. Each command's timeout: `timeoutFor(conn, commandTimeout, { blocking })`.
 * 6. New connections: dial `movingTarget(endpoint) ?? configured`.
 *
 * Rules:
 * - `MIGRATING` / `FAILING_OVER` open a window on the receiving connection (the time field is
 *   ignored); the matching `MIGRATED` / `FAILED_OVER` closes its oldest open window of that
 *   kind; the `relaxedWindowMaxDuration` backstop closes it if the end is lost. An end with no
 *   open window is a no-op (servers replay the last end to every connection that opts in).
 * - `SMIGRATING` / `SMIGRATED` go to the client's one {@linkcode SlotMigrationCoordinator}
 *   (the same for a standalone and a cluster client): each seq is handled once per client, an
 *   SMIGRATING opens a client window that relaxes every attached connection, each SMIGRATED
 *   closes one window (the backstop closes a lost one), and an SMIGRATING arriving after its
 *   SMIGRATED opens none.
 * - `MOVING` opens a window on the endpoint of the receiving connection for the announced time:
 *   every connection attached to that endpoint, now or later, is relaxed until it ends. With a
 *   target: a `handoff` decision at once, and `movingTarget` pins the target for the window.
 *   Without one: a `reconnect-configured` decision at half the announced time.
 * - Duplicates: a seq already handled by a connection is ignored on that connection. A MOVING
 *   seq already handled by the controller (the server re-sends it to late opt-ins) makes no
 *   second handoff, but still relaxes the receiving connection until the window ends.
 * - A MOVING with a new seq while the endpoint's window is open: with a target, the pin changes
 *   (`handoff-retarget`, or `handoff` if the window had no target; a pending reconnect is
 *   cancelled); without one, the pin stays. The window end never moves earlier.
 * - `SMIGRATED` entries give one `slot-delta` decision per seq per controller (held back as
 *   `slot-delta-deferred` between `topologyRefreshStarted` and `topologyRefreshFinished`).
 * - Malformed frames give a `malformed` decision (log and drop); a malformed SMIGRATING /
 *   SMIGRATED with a readable seq also closes one SMIGRATING window, once per seq.
 * - Mode `disabled`: no decisions at all, nothing is ever relaxed.
 *
 * Decisions of one call come in this order: what expired since the last call (by time), then
 * the notification's own decisions, then `relax` / `unrelax` changes.
 *
 * @example Drive it with a fake clock
 * ```ts
 * import { MaintenanceController } from "@edge/redis/maintenance";
 *
 * let now = 0;
 * const controller = new MaintenanceController<number>({}, { now: () => now });
 * controller.attach(1, "10.0.0.1:12000");
 * const decisions = controller.onPush(1, ["MOVING", 7, 15, "10.0.0.2:12000"]);
 * // [window-opened, handoff { target: { host: "10.0.0.2", port: 12000 }, retire: [1], ... },
 * //  relax { connection: 1, until: 15000 }]
 * controller.timeoutFor(1, 2_000); // 10000
 * controller.movingTarget("10.0.0.1:12000"); // { host: "10.0.0.2", port: 12000 }
 * now = controller.nextDeadline()!; // 15000
 * controller.tick(); // [window-closed { reason: "expired" }, unrelax { connection: 1 }]
 * ```
 */
export class MaintenanceController<C = string> {
  readonly #options: ResolvedMaintenanceOptions;
  readonly #clock: Pick<Clock, "now">;
  readonly #connections: Map<C, ConnectionState<C>> = new Map();
  readonly #windows: Map<string, EndpointWindow> = new Map();
  readonly #seen: Map<number, number> = new Map();
  readonly #slots: SlotMigrationCoordinator;
  /** Per open SMIGRATING window (by seq), the endpoint of the connection that opened it. */
  readonly #slotOpeners: Map<number, string> = new Map();
  /** Per delta held back during a topology refresh (by seq), the connection that delivered it. */
  readonly #heldFrom: Map<number, C> = new Map();

  /**
   * Creates a controller.
   *
   * @param options The maintenance options (validated with `resolveMaintenanceOptions`).
   * @param clock Where the time comes from: the client's one {@linkcode Clock}, of which the
   *   controller reads only `now` (it never reads the time any other way and sets no timers),
   *   e.g. `{ now: () => t }` in a test.
   * @default {clock} `Date.now`
   * @throws {TypeError | RangeError} When the options are invalid.
   */
  constructor(options?: MaintenanceOptions, clock: Pick<Clock, "now"> = wallTime) {
    this.#options = resolveMaintenanceOptions(options);
    this.#clock = clock;
    this.#slots = new SlotMigrationCoordinator(this.#options.relaxedWindowMaxDuration, clock);
  }

  /** The resolved options. */
  get options(): ResolvedMaintenanceOptions {
    return this.#options;
  }

  /** The mode; `disabled` makes the controller inert. */
  get mode(): MaintenanceMode {
    return this.#options.mode;
  }

  get #disabled(): boolean {
    return this.#options.mode === "disabled";
  }

  /**
   * Registers a connection, or tells the controller that an attached one opened a new socket.
   * Call it before every socket's handshake: the first one, a reconnect, and the replacement
   * socket of a handoff done in place (same id, new socket).
   *
   * Attaching an attached connection again clears its retiring mark (the new socket dialled
   * the current target, or the configured endpoint once a reconnect was due) and moves it to
   * `endpoint`; its open windows, seen seqs and relaxation are kept.
   *
   * @param connection The connection's id.
   * @param endpoint The endpoint key the connection serves: the configured `host:port` (a
   *   replacement dialled to a MOVING target keeps its original key). Normalised with
   *   `formatEndpoint`.
   * @returns A `relax` decision when the endpoint is inside a MOVING window, else `[]` (plus any
   *   decision that came due since the last call).
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("conn-1", "127.0.0.1:6379"); // []
   * ```
   */
  attach(connection: C, endpoint: string | Endpoint): MaintenanceDecision<C>[] {
    const key = endpointKeyOf(endpoint);
    const existing = this.#connections.get(connection);
    if (existing !== undefined) {
      existing.endpoint = key;
      existing.retiring = false;
    } else {
      this.#connections.set(connection, {
        id: connection,
        endpoint: key,
        windows: [],
        movingUntil: 0,
        seen: new Map(),
        retiring: false,
        reported: undefined,
      });
    }
    if (this.#disabled) return [];
    return this.#expire(this.#clock.now());
  }

  /**
   * Forgets a connection (closed, retired, failed). Its windows close silently; endpoint
   * windows stay. Unknown ids are ignored.
   *
   * @param connection The connection's id.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("conn-1", "127.0.0.1:6379");
   * controller.detach("conn-1");
   * ```
   */
  detach(connection: C): void {
    this.#connections.delete(connection);
  }

  /**
   * Handles a RESP3 push frame received on a connection: parses it and, for a maintenance
   * frame, handles it like {@linkcode MaintenanceController.onNotification}.
   *
   * @param connection The connection that received it.
   * @param frame The push frame's elements as decoded (`RespValue[]`).
   * @returns `undefined` when the frame is not a maintenance frame (route it to pub/sub, the
   *   invalidation handler, ...); otherwise the decisions (possibly `[]`: consumed, nothing to
   *   do). A maintenance frame is never a command's reply.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("c", "127.0.0.1:6379");
   * controller.onPush("c", ["message", "news", "hi"]); // undefined
   * controller.onPush("c", ["MIGRATED", 3, '["1"]']);  // [] (no window open)
   * ```
   */
  onPush(connection: C, frame: readonly unknown[]): MaintenanceDecision<C>[] | undefined {
    const notification = parseMaintenanceNotification(frame);
    if (notification === undefined) return undefined;
    const seq = frame[1];
    return this.#handle(
      connection,
      notification,
      notification.type === "malformed" && typeof seq === "number" && Number.isInteger(seq)
        ? seq
        : undefined,
    );
  }

  /**
   * Handles a parsed maintenance notification received on a connection.
   *
   * @param connection The connection that received it. Notifications on a connection that is
   *   not attached are ignored (a frame buffered after `detach`).
   * @param notification The notification, or a malformed one (gives a `malformed` decision).
   * @returns The decisions, in order; `[]` for duplicates, ends without a window, and in mode
   *   `disabled`.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * let now = 0;
   * const controller = new MaintenanceController<string>({}, { now: () => now });
   * controller.attach("c", "127.0.0.1:6379");
   * controller.onNotification("c", { type: "MIGRATING", seq: 2, time: 10, shardIds: null });
   * // [window-opened { kind: "MIGRATING", until: 60000 }, relax { connection: "c", until: 60000 }]
   * controller.onNotification("c", { type: "MIGRATED", seq: 3, shardIds: null });
   * // [window-closed { reason: "end", endSeq: 3 }, unrelax { connection: "c" }]
   * ```
   */
  onNotification(
    connection: C,
    notification: MaintenanceNotification | MalformedMaintenanceNotification,
  ): MaintenanceDecision<C>[] {
    return this.#handle(connection, notification, undefined);
  }

  #handle(
    connection: C,
    notification: MaintenanceNotification | MalformedMaintenanceNotification,
    malformedSeq: number | undefined,
  ): MaintenanceDecision<C>[] {
    if (this.#disabled) return [];
    const now = this.#clock.now();
    const out = this.#expire(now);
    const conn = this.#connections.get(connection);
    if (conn === undefined) return out;
    if (notification.type === "malformed") {
      const { name, reason } = notification;
      if (name !== "SMIGRATING" && name !== "SMIGRATED") {
        out.push({ type: "malformed", connection, name, reason });
        return out;
      }
      const ds = this.#slots.malformedSmigrated(malformedSeq, reason);
      this.#fromSlots(conn, ds, out);
      if (ds.some((d) => d.type === "refresh")) {
        out.push({
          type: "malformed",
          connection,
          name,
          reason,
          ...(malformedSeq === undefined ? {} : { seq: malformedSeq }),
        });
      }
      out.push(...this.#expire(now));
      return out;
    }
    if (conn.seen.has(notification.seq)) return out;
    const keep = now + this.#options.relaxedWindowMaxDuration;
    remember(conn.seen, notification.seq, keep, MAX_SEEN_PER_CONNECTION);
    switch (notification.type) {
      case "MIGRATING":
      case "FAILING_OVER":
        this.#openConnectionWindow(conn, notification.type, notification.seq, now, out);
        break;
      case "MIGRATED":
      case "FAILED_OVER":
        this.#closeConnectionWindow(conn, END_OF[notification.type]!, notification.seq, out);
        break;
      case "SMIGRATING":
        this.#fromSlots(conn, this.#slots.smigrating(notification.seq, notification.slots), out);
        break;
      case "SMIGRATED":
        this.#fromSlots(conn, this.#slots.smigrated(notification.seq, notification.entries), out);
        break;
      case "MOVING":
        this.#moving(
          conn,
          notification.seq,
          notification.time * 1000,
          notification.target,
          now,
          out,
        );
        break;
    }
    // Relax changes; and a window opened already over (MOVING with time 0) settles now.
    out.push(...this.#expire(now));
    return out;
  }

  /**
   * Closes what has expired by now (MOVING windows, backstops) and fires due reconnects. Call
   * it when the timer armed for {@linkcode MaintenanceController.nextDeadline} fires; calling
   * it at other times is harmless.
   *
   * @returns The decisions that came due.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.tick(); // []
   * ```
   */
  tick(): MaintenanceDecision<C>[] {
    if (this.#disabled) return [];
    return this.#expire(this.#clock.now());
  }

  /**
   * When the caller should call {@linkcode MaintenanceController.tick} next.
   *
   * @returns The earliest clock time (ms) at which something comes due (a window end, a
   *   backstop, a reconnect), or `undefined` when nothing is pending. May be in the past: call
   *   `tick()` at once then.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.nextDeadline(); // undefined
   * ```
   */
  nextDeadline(): number | undefined {
    if (this.#disabled) return undefined;
    let next = Infinity;
    for (const w of this.#windows.values()) {
      next = Math.min(next, w.end, w.reconnectAt ?? Infinity);
    }
    for (const c of this.#connections.values()) {
      for (const w of c.windows) next = Math.min(next, w.deadline);
      if (c.movingUntil > 0) next = Math.min(next, c.movingUntil);
    }
    next = Math.min(next, this.#slots.nextDeadline() ?? Infinity);
    return next === Infinity ? undefined : next;
  }

  /**
   * Tells whether the client is inside a slot migration: an SMIGRATING window is open or a
   * slot delta is held back. Every attached connection is relaxed meanwhile, and so are new
   * sockets (connect timeouts too).
   *
   * @returns `true` while it lasts; always `false` in mode `disabled`.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("c", "127.0.0.1:7000");
   * controller.onPush("c", ["SMIGRATING", 1, "0-99"]);
   * controller.inSlotMigration(); // true
   * ```
   */
  inSlotMigration(): boolean {
    return !this.#disabled && this.#slots.relaxed;
  }

  /**
   * A topology refresh started (cluster clients): `slot-delta` decisions of SMIGRATEDs arriving
   * until {@linkcode MaintenanceController.topologyRefreshFinished} are held back
   * (`slot-delta-deferred`), so a refresh answered before the move cannot undo them. Calls nest.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.topologyRefreshStarted();
   * controller.topologyRefreshFinished(); // []
   * ```
   */
  topologyRefreshStarted(): void {
    if (!this.#disabled) this.#slots.refreshStarted();
  }

  /**
   * A topology refresh ended (adopted or failed).
   *
   * @returns When it was the last one running: a `slot-delta` for each delta held back during
   *   it, oldest seq first, and the `unrelax` decisions that follow.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.topologyRefreshStarted();
   * controller.topologyRefreshFinished(); // []
   * ```
   */
  topologyRefreshFinished(): MaintenanceDecision<C>[] {
    if (this.#disabled) return [];
    const now = this.#clock.now();
    const out = this.#expire(now);
    this.#fromSlots(undefined, this.#slots.refreshFinished(), out);
    out.push(...this.#expire(now));
    return out;
  }

  /**
   * Tells whether a connection's timeouts are relaxed now.
   *
   * @param connection The connection's id.
   * @returns `true` inside any window covering the connection.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("c", "127.0.0.1:6379");
   * controller.isRelaxed("c"); // false
   * ```
   */
  isRelaxed(connection: C): boolean {
    return this.relaxedUntil(connection) !== undefined;
  }

  /**
   * When a connection's relaxation ends at the latest.
   *
   * @param connection The connection's id.
   * @returns A clock time (ms), or `undefined` when the connection is not relaxed (or unknown).
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.relaxedUntil("nobody"); // undefined
   * ```
   */
  relaxedUntil(connection: C): number | undefined {
    if (this.#disabled) return undefined;
    const conn = this.#connections.get(connection);
    return conn === undefined ? undefined : this.#relaxUntil(conn, this.#clock.now());
  }

  /**
   * The timeout a command on a connection gets now: the configured one, or inside a window the
   * looser of it and the relaxed one (0 = none is the loosest; never tighter).
   *
   * @param connection The connection's id (unknown ids get `configured`).
   * @param configured The command's configured timeout, ms; 0 = none.
   * @param options `blocking: true` for blocking commands (uses `relaxedBlockingTimeout`).
   * @returns The effective timeout, ms; 0 = none.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("c", "127.0.0.1:6379");
   * controller.timeoutFor("c", 2_000); // 2000 (not relaxed)
   * ```
   */
  timeoutFor(connection: C, configured: number, options?: TimeoutForOptions): number {
    if (!this.isRelaxed(connection)) return configured;
    return this.#relaxed(configured, options?.blocking === true);
  }

  /**
   * The timeout for a command of a connection to `endpoint` that is not attached yet: relaxed
   * while the endpoint is inside a MOVING window. Prefer attaching before the handshake and
   * using {@linkcode MaintenanceController.timeoutFor}.
   *
   * @param endpoint The endpoint key.
   * @param configured The configured timeout, ms; 0 = none.
   * @param options `blocking: true` for blocking commands.
   * @returns The effective timeout, ms; 0 = none.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.timeoutForEndpoint("127.0.0.1:6379", 2_000); // 2000
   * ```
   */
  timeoutForEndpoint(
    endpoint: string | Endpoint,
    configured: number,
    options?: TimeoutForOptions,
  ): number {
    if (!this.isEndpointInWindow(endpoint)) return configured;
    return this.#relaxed(configured, options?.blocking === true);
  }

  /**
   * Where a new connection for `endpoint` should dial while a MOVING window with a target is
   * open.
   *
   * @param endpoint The endpoint key.
   * @returns The pinned target, or `undefined` (dial the configured endpoint).
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.movingTarget("127.0.0.1:6379"); // undefined
   * ```
   */
  movingTarget(endpoint: string | Endpoint): Endpoint | undefined {
    const w = this.#openWindow(endpointKeyOf(endpoint));
    return w?.target === null || w === undefined ? undefined : { ...w.target };
  }

  /**
   * Tells whether `endpoint` is inside a MOVING window (its connections, new ones included, are
   * relaxed).
   *
   * @param endpoint The endpoint key.
   * @returns `true` while the window lasts.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.isEndpointInWindow("127.0.0.1:6379"); // false
   * ```
   */
  isEndpointInWindow(endpoint: string | Endpoint): boolean {
    return this.#openWindow(endpointKeyOf(endpoint)) !== undefined;
  }

  /**
   * Tells whether a handoff or reconnect marked the connection for replacement. A pool retires
   * such a connection when it is released (idle ones are in the decision's `retire` list).
   *
   * @param connection The connection's id.
   * @returns `true` once marked, until detached or attached again (a new socket).
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.isRetiring("c"); // false
   * ```
   */
  isRetiring(connection: C): boolean {
    return this.#connections.get(connection)?.retiring ?? false;
  }

  /**
   * The drain cap of a handoff for `endpoint` computed now: half the relaxed timeout, bounded
   * by half of what is left of the endpoint's MOVING window, never below 1000 ms. Recompute it
   * after anything slow (a DNS lookup) that ate into the window.
   *
   * @param endpoint The endpoint key; without an open window only the relaxed timeout bounds it.
   * @returns The cap, ms.
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController({ relaxedTimeout: 10_000 });
   * controller.drainCap("127.0.0.1:6379"); // 5000
   * ```
   */
  drainCap(endpoint: string | Endpoint): number {
    const now = this.#clock.now();
    const w = this.#openWindow(endpointKeyOf(endpoint));
    return computeDrainCap(this.#options.relaxedTimeout, w === undefined ? Infinity : w.end - now);
  }

  /**
   * The controller's state now, for observability (a debug endpoint, a log line).
   *
   * @param commandTimeout A configured command timeout (ms); when given, each connection lists
   *   its effective timeouts for it.
   * @returns A snapshot (plain data; safe to keep).
   *
   * @example
   * ```ts
   * import { MaintenanceController } from "@edge/redis/maintenance";
   * const controller = new MaintenanceController();
   * controller.attach("c", "127.0.0.1:6379");
   * const s = controller.snapshot(2_000);
   * console.log(s.connections[0]?.timeout); // 2000
   * ```
   */
  snapshot(commandTimeout?: number): MaintenanceSnapshot<C> {
    const now = this.#clock.now();
    const endpoints: EndpointWindowSnapshot[] = [];
    if (!this.#disabled) {
      for (const w of this.#windows.values()) {
        if (w.end <= now) continue;
        endpoints.push({
          endpoint: w.endpoint,
          seq: w.seq,
          target: w.target === null ? null : { ...w.target },
          openedAt: w.openedAt,
          end: w.end,
          reconnectAt: w.reconnectAt,
        });
      }
    }
    const connections: ConnectionSnapshot<C>[] = [];
    for (const c of this.#connections.values()) {
      const relaxedUntil = this.#disabled ? undefined : this.#relaxUntil(c, now);
      const relaxed = relaxedUntil !== undefined;
      connections.push({
        connection: c.id,
        endpoint: c.endpoint,
        relaxedUntil,
        retiring: c.retiring,
        windows: this.#disabled ? [] : [
          ...c.windows.filter((w) => w.deadline > now).map((w) => ({ ...w })),
          ...this.#slots.windows.filter((w) => w.deadline > now).map((w) => ({
            kind: "SMIGRATING" as const,
            seq: w.seq,
            openedAt: w.openedAt,
            deadline: w.deadline,
          })),
        ],
        timeout: commandTimeout === undefined
          ? undefined
          : relaxed
          ? this.#relaxed(commandTimeout, false)
          : commandTimeout,
        blockingTimeout: commandTimeout === undefined
          ? undefined
          : relaxed
          ? this.#relaxed(commandTimeout, true)
          : commandTimeout,
      });
    }
    return { at: now, options: this.#options, endpoints, connections };
  }

  // --- internals -------------------------------------------------------------------------

  #relaxed(configured: number, blocking: boolean): number {
    return effectiveTimeout(
      configured,
      blocking ? this.#options.relaxedBlockingTimeout : this.#options.relaxedTimeout,
    );
  }

  #openWindow(endpoint: string): EndpointWindow | undefined {
    if (this.#disabled) return undefined;
    const w = this.#windows.get(endpoint);
    return w !== undefined && w.end > this.#clock.now() ? w : undefined;
  }

  #relaxUntil(conn: ConnectionState<C>, now: number): number | undefined {
    let until = -Infinity;
    for (const w of conn.windows) if (w.deadline > now) until = Math.max(until, w.deadline);
    if (conn.movingUntil > now) until = Math.max(until, conn.movingUntil);
    const ew = this.#windows.get(conn.endpoint);
    if (ew !== undefined && ew.end > now) until = Math.max(until, ew.end);
    const slots = this.#slots.relaxedUntil();
    if (slots !== undefined) until = Math.max(until, slots);
    return until === -Infinity ? undefined : until;
  }

  #openConnectionWindow(
    conn: ConnectionState<C>,
    kind: ConnectionWindowKind,
    seq: number,
    now: number,
    out: MaintenanceDecision<C>[],
  ): void {
    const deadline = now + this.#options.relaxedWindowMaxDuration;
    conn.windows.push({ kind, seq, openedAt: now, deadline });
    out.push({
      type: "window-opened",
      kind,
      seq,
      endpoint: conn.endpoint,
      connection: conn.id,
      until: deadline,
    });
  }

  /**
   * Appends the coordinator's decisions as controller decisions. `conn` delivered the
   * notification (`undefined`: a tick or the end of a refresh). Its `relax` / `unrelax` are
   * dropped: `#diff` reports them per connection. A delta given out counts as applied (the
   * caller applies it before the decisions after it).
   */
  #fromSlots(
    conn: ConnectionState<C> | undefined,
    decisions: SlotMigrationDecision[],
    out: MaintenanceDecision<C>[],
  ): void {
    for (const d of decisions) {
      switch (d.type) {
        case "window-opened": {
          const endpoint = conn?.endpoint ?? "";
          this.#slotOpeners.set(d.seq, endpoint);
          out.push({
            type: "window-opened",
            kind: "SMIGRATING",
            seq: d.seq,
            endpoint,
            connection: conn?.id as C,
            until: d.until,
            slots: d.slots,
            open: d.open,
          });
          break;
        }
        case "window-closed": {
          const endpoint = this.#slotOpeners.get(d.seq) ?? conn?.endpoint ?? "";
          this.#slotOpeners.delete(d.seq);
          const end = d.reason === "end";
          out.push({
            type: "window-closed",
            kind: "SMIGRATING",
            seq: d.seq,
            endpoint,
            ...(end && conn !== undefined ? { connection: conn.id } : {}),
            reason: end ? "end" : "backstop",
            ...(d.endSeq === undefined ? {} : { endSeq: d.endSeq }),
            open: d.open,
          });
          break;
        }
        case "deferred":
          if (conn !== undefined) this.#heldFrom.set(d.seq, conn.id);
          out.push({ type: "slot-delta-deferred", seq: d.seq, connection: conn?.id as C });
          break;
        case "apply": {
          const from = conn?.id ?? this.#heldFrom.get(d.seq) as C;
          this.#heldFrom.delete(d.seq);
          out.push({
            type: "slot-delta",
            seq: d.seq,
            connection: from,
            entries: d.entries,
            stale: d.stale,
          });
          this.#fromSlots(undefined, this.#slots.applied(d.seq), out);
          break;
        }
        default:
          // window-skipped (nothing to do), refresh (a `malformed` decision), relax, unrelax.
          break;
      }
    }
  }

  #closeConnectionWindow(
    conn: ConnectionState<C>,
    kind: ConnectionWindowKind,
    endSeq: number,
    out: MaintenanceDecision<C>[],
  ): void {
    const index = conn.windows.findIndex((w) => w.kind === kind);
    if (index === -1) return; // no open window: a replayed or lost-start end, a no-op
    const [w] = conn.windows.splice(index, 1);
    out.push({
      type: "window-closed",
      kind,
      seq: w!.seq,
      endpoint: conn.endpoint,
      connection: conn.id,
      reason: "end",
      endSeq,
    });
  }

  #retire(endpoint: string): C[] {
    const ids: C[] = [];
    for (const c of this.#connections.values()) {
      if (c.endpoint === endpoint && !c.retiring) {
        c.retiring = true;
        ids.push(c.id);
      }
    }
    return ids;
  }

  #moving(
    conn: ConnectionState<C>,
    seq: number,
    durationMs: number,
    target: Endpoint | null,
    now: number,
    out: MaintenanceDecision<C>[],
  ): void {
    const end = now + durationMs;
    const rt = this.#options.relaxedTimeout;
    const known = this.#seen.get(seq) !== undefined;
    remember(
      this.#seen,
      seq,
      Math.max(end, now + this.#options.relaxedWindowMaxDuration),
      MAX_SEEN,
    );
    if (known) {
      // Re-sent to a connection that opted in late: no second handoff, but relax it.
      let until = end;
      for (const w of this.#windows.values()) {
        if (w.seq === seq && w.end > now) until = w.end;
      }
      const own = this.#windows.get(conn.endpoint);
      if (own === undefined || own.end <= now) conn.movingUntil = Math.max(conn.movingUntil, until);
      return;
    }
    const endpoint = conn.endpoint;
    const open = this.#windows.get(endpoint);
    if (open === undefined || open.end <= now) {
      const w: EndpointWindow = {
        endpoint,
        seq,
        target,
        openedAt: now,
        end,
        reconnectAt: target === null ? now + durationMs / 2 : undefined,
      };
      this.#windows.set(endpoint, w);
      out.push({
        type: "window-opened",
        kind: "MOVING",
        seq,
        endpoint,
        connection: conn.id,
        until: end,
        target: target === null ? null : { ...target },
      });
      if (target !== null) {
        out.push({
          type: "handoff",
          endpoint,
          target: { ...target },
          seq,
          drainDeadline: now + computeDrainCap(rt, end - now),
          windowEnd: end,
          retire: this.#retire(endpoint),
        });
      }
      return;
    }
    // A new MOVING while the endpoint's window is open.
    open.seq = seq;
    open.end = Math.max(open.end, end);
    if (target !== null) {
      const previous = open.target;
      open.target = { ...target };
      open.reconnectAt = undefined;
      const common = {
        endpoint,
        target: { ...target },
        seq,
        drainDeadline: now + computeDrainCap(rt, open.end - now),
        windowEnd: open.end,
        retire: this.#retire(endpoint),
      };
      out.push(
        previous === null
          ? { type: "handoff", ...common }
          : { type: "handoff-retarget", previousTarget: { ...previous }, ...common },
      );
    } else if (open.target === null && open.reconnectAt === undefined) {
      // The previous reconnect already happened: this is a new event, reconnect again.
      open.reconnectAt = now + durationMs / 2;
    }
  }

  /** Appends `relax` / `unrelax` for every connection whose relaxation changed. */
  #diff(now: number, out: MaintenanceDecision<C>[]): void {
    for (const c of this.#connections.values()) {
      const until = this.#relaxUntil(c, now);
      if (until === undefined) {
        if (c.reported !== undefined) {
          c.reported = undefined;
          out.push({ type: "unrelax", connection: c.id });
        }
      } else if (c.reported === undefined || until > c.reported) {
        c.reported = until;
        out.push({ type: "relax", connection: c.id, until });
      }
    }
  }

  /** Settles everything due at `now`: reconnects, MOVING ends, backstops; then relax changes. */
  #expire(now: number): MaintenanceDecision<C>[] {
    const due: { at: number; order: number; decision: MaintenanceDecision<C> }[] = [];
    for (const [endpoint, w] of this.#windows) {
      if (w.reconnectAt !== undefined && w.reconnectAt <= now) {
        const at = w.reconnectAt;
        w.reconnectAt = undefined;
        due.push({
          at,
          order: 0,
          decision: {
            type: "reconnect-configured",
            endpoint,
            seq: w.seq,
            at,
            drainDeadline: now +
              computeDrainCap(this.#options.relaxedTimeout, Math.max(0, w.end - now)),
            windowEnd: w.end,
            retire: this.#retire(endpoint),
          },
        });
      }
      if (w.end <= now) {
        this.#windows.delete(endpoint);
        due.push({
          at: w.end,
          order: 1,
          decision: {
            type: "window-closed",
            kind: "MOVING",
            seq: w.seq,
            endpoint,
            reason: "expired",
          },
        });
      }
    }
    for (const c of this.#connections.values()) {
      if (c.movingUntil > 0 && c.movingUntil <= now) c.movingUntil = 0;
      if (c.windows.length === 0) continue;
      const kept: ConnectionWindow[] = [];
      for (const w of c.windows) {
        if (w.deadline > now) {
          kept.push(w);
          continue;
        }
        const closed: WindowClosedDecision<C> = {
          type: "window-closed",
          kind: w.kind as MaintenanceWindowKind,
          seq: w.seq,
          endpoint: c.endpoint,
          connection: c.id,
          reason: "backstop",
        };
        due.push({ at: w.deadline, order: 1, decision: closed });
      }
      c.windows = kept;
      prune(c.seen, now);
    }
    prune(this.#seen, now);
    const slotsDue = this.#slots.nextDeadline();
    if (slotsDue !== undefined && slotsDue <= now) {
      const closed: MaintenanceDecision<C>[] = [];
      this.#fromSlots(undefined, this.#slots.tick(), closed);
      for (const decision of closed) due.push({ at: slotsDue, order: 1, decision });
    }
    due.sort((a, b) => a.at - b.at || a.order - b.order);
    const out = due.map((d) => d.decision);
    this.#diff(now, out);
    return out;
  }
}
