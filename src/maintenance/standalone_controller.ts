/**
 * The maintenance controller without slot migrations: a pure state machine that turns
 * maintenance notifications and clock time into decisions, for a standalone client. The
 * {@linkcode MaintenanceController} of `controller.ts` is this one with the slot-migration part
 * (`_slot_delegation.ts`) installed; only a cluster client's bundle carries that part.
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type { MaintenanceDecision } from "./decision.ts";
import type { Endpoint } from "../endpoint.ts";
import { endpointKeyOf } from "./endpoint.ts";
import {
  type MaintenanceNotification,
  type MalformedMaintenanceNotification,
  parseStandaloneNotification,
  type SlotNotificationHead,
  type SlotsMigratedNotification,
  type SlotsMigratingNotification,
} from "./notification.ts";
import {
  type MaintenanceMode,
  type MaintenanceOptions,
  type ResolvedMaintenanceOptions,
  resolveMaintenanceOptions,
} from "./options.ts";
import type {
  ConnectionSnapshot,
  ConnectionWindowSnapshot,
  MaintenanceSnapshot,
} from "./snapshot.ts";
import { computeDrainCap, effectiveTimeout } from "./timeouts.ts";
import {
  closeConnectionWindow,
  type ConnectionState,
  type DueDecision,
  END_OF,
  expireConnection,
  MAX_SEEN_PER_CONNECTION,
  newConnectionState,
  openConnectionWindow,
  remember,
} from "./_connection_state.ts";
import { type EndpointWindow, MovingWindows } from "./_moving_windows.ts";

export type { Clock } from "../_clock.ts";
export type {
  ConnectionSnapshot,
  ConnectionWindowSnapshot,
  EndpointWindowSnapshot,
  MaintenanceSnapshot,
} from "./snapshot.ts";

/** Options of {@linkcode StandaloneMaintenanceController.timeoutFor}. */
export interface TimeoutForOptions {
  /** The command blocks (BLPOP, XREAD BLOCK, WAIT, ...): `relaxedBlockingTimeout` applies. */
  blocking?: boolean;
}

/** The default clock: `Date.now`. */
export const wallTime: Pick<Clock, "now"> = { now: () => Date.now() };

/**
 * The slot-migration part of a controller (`_slot_delegation.ts` implements it): what a
 * controller does with `SMIGRATING` / `SMIGRATED` when it has one. Internal: a controller gets
 * it from {@linkcode installSlotMigrations}, so that only the bundles that install it (the
 * cluster client, the `./maintenance` entry) carry it.
 */
export interface SlotMigrationPart<C> {
  /** The parser of push frames that reads slots (`parseMaintenanceNotification`). */
  parse(
    frame: readonly unknown[],
  ): MaintenanceNotification | MalformedMaintenanceNotification | undefined;
  /** Whether the client is relaxed by a slot migration. */
  readonly relaxed: boolean;
  /** When the slot migration's relaxation ends at the latest (`undefined`: not relaxed). */
  relaxedUntil(): number | undefined;
  /** When a window's backstop comes due next. */
  nextDeadline(): number | undefined;
  /** A topology refresh started. */
  refreshStarted(): void;
  /** A topology refresh ended: appends the deltas held back. */
  refreshFinished(out: MaintenanceDecision<C>[]): void;
  /** An SMIGRATING / SMIGRATED with a seq `conn` has not handled. */
  notify(
    conn: ConnectionState<C>,
    notification: SlotsMigratingNotification | SlotsMigratedNotification,
    out: MaintenanceDecision<C>[],
  ): void;
  /** A malformed SMIGRATING / SMIGRATED; returns whether it is reported (`malformed`). */
  malformed(
    conn: ConnectionState<C>,
    seq: number | undefined,
    reason: string,
    out: MaintenanceDecision<C>[],
  ): boolean;
  /** Closes the windows whose backstop passed by `now`, into `due`. */
  expire(now: number, due: DueDecision<C>[]): void;
  /** The windows open at `now`, as a connection lists them in a snapshot. */
  windowSnapshots(now: number): ConnectionWindowSnapshot[];
}

let install: <C>(
  controller: StandaloneMaintenanceController<C>,
  part: SlotMigrationPart<C>,
) => void;

/**
 * Gives a controller its slot-migration part (once, right after it is made). Internal: the
 * `MaintenanceController` constructor and nothing else calls it.
 *
 * @param controller The controller, fresh.
 * @param part Its slot-migration part.
 */
export function installSlotMigrations<C>(
  controller: StandaloneMaintenanceController<C>,
  part: SlotMigrationPart<C>,
): void {
  install(controller, part);
}

/**
 * The maintenance controller of a standalone client (smart client handoffs): a pure state
 * machine, the {@linkcode MaintenanceController} without its slot-migration part, for a bundle
 * that needs no cluster code (a standalone or sentinel client's). Notifications,
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
 * - `SMIGRATING` / `SMIGRATED` (sent by cluster nodes; a standalone client cannot route by
 *   slot) are read as far as their seq: an `SMIGRATING` opens a window on the receiving
 *   connection, as `MIGRATING` does, and the matching `SMIGRATED` closes it; their slots are not
 *   read and give no `slot-delta`. The {@linkcode MaintenanceController} handles them
 *   client-wide instead.
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
 * - Malformed frames give a `malformed` decision (log and drop).
 * - Mode `disabled`: no decisions at all, nothing is ever relaxed.
 *
 * Decisions of one call come in this order: what expired since the last call (by time), then
 * the notification's own decisions, then `relax` / `unrelax` changes.
 *
 * @example Drive it with a fake clock
 * ```ts
 * import { StandaloneMaintenanceController } from "@edge/redis/maintenance";
 *
 * let now = 0;
 * const controller = new StandaloneMaintenanceController<number>({}, { now: () => now });
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
export class StandaloneMaintenanceController<C = string> {
  readonly #options: ResolvedMaintenanceOptions;
  readonly #clock: Pick<Clock, "now">;
  readonly #connections: Map<C, ConnectionState<C>> = new Map();
  /** The MOVING endpoint windows and their handoffs. */
  readonly #moving: MovingWindows<C>;
  /** The SMIGRATING / SMIGRATED windows of a cluster client (`installSlotMigrations`). */
  #slots: SlotMigrationPart<C> | undefined;

  static {
    install = (controller, part) => {
      controller.#slots = part;
    };
  }

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
    this.#moving = new MovingWindows(this.#options, this.#connections);
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
      this.#connections.set(connection, newConnectionState(connection, key));
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
   * frame, handles it like {@linkcode StandaloneMaintenanceController.onNotification}.
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
    const notification = (this.#slots?.parse ?? parseStandaloneNotification)(frame);
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
    notification:
      | MaintenanceNotification
      | SlotNotificationHead
      | MalformedMaintenanceNotification,
    malformedSeq: number | undefined,
  ): MaintenanceDecision<C>[] {
    if (this.#disabled) return [];
    const now = this.#clock.now();
    const out = this.#expire(now);
    const conn = this.#connections.get(connection);
    if (conn === undefined) return out;
    if (notification.type === "malformed") {
      const { name, reason } = notification;
      const slots = this.#slots;
      if (slots === undefined || (name !== "SMIGRATING" && name !== "SMIGRATED")) {
        out.push({ type: "malformed", connection, name, reason });
        return out;
      }
      if (slots.malformed(conn, malformedSeq, reason, out)) {
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
        openConnectionWindow(
          conn,
          notification.type,
          notification.seq,
          now,
          now + this.#options.relaxedWindowMaxDuration,
          out,
        );
        break;
      case "MIGRATED":
      case "FAILED_OVER":
        closeConnectionWindow(conn, END_OF[notification.type]!, notification.seq, out);
        break;
      case "SMIGRATING":
      case "SMIGRATED":
        if (this.#slots !== undefined) {
          // A head only reaches a controller with a part through `onNotification` misuse.
          if (!("head" in notification)) this.#slots.notify(conn, notification, out);
        } else if (notification.type === "SMIGRATING") {
          openConnectionWindow(
            conn,
            "SMIGRATING",
            notification.seq,
            now,
            now + this.#options.relaxedWindowMaxDuration,
            out,
          );
        } else {
          closeConnectionWindow(conn, "SMIGRATING", notification.seq, out);
        }
        break;
      case "MOVING":
        this.#moving.moving(
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
   * it when the timer armed for {@linkcode StandaloneMaintenanceController.nextDeadline} fires; calling
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
   * When the caller should call {@linkcode StandaloneMaintenanceController.tick} next.
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
    let next = this.#moving.nextDeadline();
    for (const c of this.#connections.values()) {
      for (const w of c.windows) next = Math.min(next, w.deadline);
      if (c.movingUntil > 0) next = Math.min(next, c.movingUntil);
    }
    next = Math.min(next, this.#slots?.nextDeadline() ?? Infinity);
    return next === Infinity ? undefined : next;
  }

  /**
   * Tells whether the client is inside a slot migration: an SMIGRATING window is open or a
   * slot delta is held back. Every attached connection is relaxed meanwhile, and so are new
   * sockets (connect timeouts too).
   *
   * @returns `true` while it lasts; always `false` in mode `disabled` and without the
   *   slot-migration part (a `StandaloneMaintenanceController`).
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
    return !this.#disabled && this.#slots?.relaxed === true;
  }

  /**
   * A topology refresh started (cluster clients): `slot-delta` decisions of SMIGRATEDs arriving
   * until {@linkcode StandaloneMaintenanceController.topologyRefreshFinished} are held back
   * (`slot-delta-deferred`), so a refresh answered before the move cannot undo them. Calls nest.
   * Without the slot-migration part (a `StandaloneMaintenanceController`), nothing happens.
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
    if (!this.#disabled) this.#slots?.refreshStarted();
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
    this.#slots?.refreshFinished(out);
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
   * using {@linkcode StandaloneMaintenanceController.timeoutFor}.
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
    const endpoints = this.#disabled ? [] : this.#moving.snapshot(now);
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
          ...this.#slots?.windowSnapshots(now) ?? [],
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
    return this.#disabled ? undefined : this.#moving.open(endpoint, this.#clock.now());
  }

  #relaxUntil(conn: ConnectionState<C>, now: number): number | undefined {
    let until = -Infinity;
    for (const w of conn.windows) if (w.deadline > now) until = Math.max(until, w.deadline);
    if (conn.movingUntil > now) until = Math.max(until, conn.movingUntil);
    until = Math.max(until, this.#moving.endOf(conn.endpoint, now));
    const slots = this.#slots?.relaxedUntil();
    if (slots !== undefined) until = Math.max(until, slots);
    return until === -Infinity ? undefined : until;
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
    const due: DueDecision<C>[] = [];
    this.#moving.expire(now, due);
    for (const c of this.#connections.values()) expireConnection(c, now, due);
    this.#slots?.expire(now, due);
    due.sort((a, b) => a.at - b.at || a.order - b.order);
    const out = due.map((d) => d.decision);
    this.#diff(now, out);
    return out;
  }
}
