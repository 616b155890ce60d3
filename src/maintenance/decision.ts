/**
 * The decisions a {@linkcode MaintenanceController} returns for the connection layer to carry out.
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";
import type { MaintenanceNotificationType, SlotMigration } from "./notification.ts";
import type { SlotRange } from "./slots.ts";

/**
 * The kind of a maintenance window: the start notification that opened it.
 *
 * - `MIGRATING`, `FAILING_OVER`: a connection window, covering only the connection that
 *   received it, until the matching end notification (`MIGRATED`, `FAILED_OVER`) or the
 *   `relaxedWindowMaxDuration` backstop.
 * - `SMIGRATING`: with a `MaintenanceController` (a cluster client's), a client window, covering
 *   every attached connection (each receives its own copy; each seq opens one window), until an
 *   `SMIGRATED` closes it (one window per SMIGRATED) or the `relaxedWindowMaxDuration` backstop.
 *   A `StandaloneMaintenanceController` reads SMIGRATING / SMIGRATED only to their seq and keeps
 *   a connection window, as for `MIGRATING` (no `slots`, no `open`; an SMIGRATED it cannot read
 *   further is not reported `malformed`, it closes the window).
 * - `MOVING`: an endpoint window, covering every connection attached to that endpoint
 *   (including ones attached later) for the announced time.
 */
export type MaintenanceWindowKind = "MIGRATING" | "FAILING_OVER" | "SMIGRATING" | "MOVING";

/**
 * The connection's timeouts are relaxed (or stay relaxed longer) from now until `until` at the
 * latest (a connection window may close earlier, on its end notification; an `unrelax`
 * follows). Carry it out by re-arming the timers of the commands in flight on `connection`
 * with `controller.timeoutFor(connection, ...)`; commands sent later ask the same method.
 */
export interface RelaxDecision<C> {
  /** Discriminant. */
  type: "relax";
  /** The connection. */
  connection: C;
  /** Clock time (ms) at which the relaxation ends at the latest. */
  until: number;
}

/**
 * The connection is no longer inside any window: new commands get the configured timeouts
 * again. Commands already in flight may keep their relaxed timers.
 */
export interface UnrelaxDecision<C> {
  /** Discriminant. */
  type: "unrelax";
  /** The connection. */
  connection: C;
}

/** A window opened. Informational (log it, emit a `maintenance` event); `relax` does the work. */
export interface WindowOpenedDecision<C> {
  /** Discriminant. */
  type: "window-opened";
  /** What opened the window. */
  kind: MaintenanceWindowKind;
  /** Sequence number of the start notification. */
  seq: number;
  /** The endpoint of the receiving connection (for MOVING: the endpoint that moves). */
  endpoint: string;
  /** The connection that received the notification. */
  connection: C;
  /** Clock time (ms) at which the window closes at the latest (window end or backstop). */
  until: number;
  /** MOVING only: the announced target, or `null` when the server gave none. */
  target?: Endpoint | null;
  /** SMIGRATING of a `MaintenanceController` only: the slots that start moving. */
  slots?: SlotRange[];
  /**
   * SMIGRATING of a `MaintenanceController` only: the SMIGRATING windows of the client open now
   * (this one included).
   */
  open?: number;
}

/** A window closed. Informational; `unrelax` decisions follow for connections it leaves unrelaxed. */
export interface WindowClosedDecision<C> {
  /** Discriminant. */
  type: "window-closed";
  /** What had opened the window. */
  kind: MaintenanceWindowKind;
  /** Sequence number of the (last) start notification of the window. */
  seq: number;
  /** The endpoint of the window (MOVING) or of its connection. */
  endpoint: string;
  /**
   * The connection of a connection window (an SMIGRATING window of a
   * `StandaloneMaintenanceController` is one), the connection whose `SMIGRATED` closed a client
   * SMIGRATING window; absent for a MOVING window and for a backstop of a client window.
   */
  connection?: C;
  /**
   * `end`: the matching end notification arrived (its seq in `endSeq`); `backstop`:
   * `relaxedWindowMaxDuration` elapsed first; `expired`: the announced MOVING time elapsed.
   */
  reason: "end" | "backstop" | "expired";
  /** The end notification's seq, when `reason` is `end`. */
  endSeq?: number;
  /** SMIGRATING only: the SMIGRATING windows of the client still open. */
  open?: number;
}

/**
 * Hand the endpoint off to `target` (MOVING with a target). Carry it out at once:
 *
 * 1. On each connection in `retire`: hold new work in the backlog, let the commands already
 *    written drain until `drainDeadline` at the latest, then open the replacement to `target`
 *    (attach it with the same endpoint key before its handshake: it is relaxed from its first
 *    byte; a connection that swaps its socket in place attaches its id again, which clears its
 *    retiring mark), re-apply session state, flush the backlog in order, close the old socket
 *    (and `detach` a replaced id). Read `movingTarget(endpoint)` when dialling: a
 *    `handoff-retarget` may have changed the target while the drain ran. Idle pooled
 *    connections in `retire` are closed at once; busy exclusive ones when released
 *    (`isRetiring`).
 * 2. Until `windowEnd`, new connections for `endpoint` dial `target` (`movingTarget`).
 */
export interface HandoffDecision<C> {
  /** Discriminant. */
  type: "handoff";
  /** The endpoint key that moves (as given to `attach`). */
  endpoint: string;
  /** Where it moves. */
  target: Endpoint;
  /** Sequence number of the MOVING. */
  seq: number;
  /** Clock time (ms) after which the old connections are replaced even if work is in flight. */
  drainDeadline: number;
  /** Clock time (ms) at which the window ends (the server closes old connections around then). */
  windowEnd: number;
  /** The connections to replace: attached to `endpoint` and not retiring before this decision. */
  retire: C[];
}

/**
 * A second MOVING (new seq) arrived for an endpoint whose handoff window is open: the target
 * changes. Dial `target` instead of `previousTarget` from now on (a replacement being opened to
 * `previousTarget` that is in `retire` must be replaced too). No second drain is needed for
 * connections already retiring; `retire` lists only connections attached since the previous
 * handoff (typically the replacements, now pointing to the old target).
 */
export interface HandoffRetargetDecision<C> {
  /** Discriminant. */
  type: "handoff-retarget";
  /** The endpoint key that moves. */
  endpoint: string;
  /** The new target. */
  target: Endpoint;
  /** The target announced before. */
  previousTarget: Endpoint;
  /** Sequence number of the new MOVING. */
  seq: number;
  /** Clock time (ms) after which the connections in `retire` are replaced regardless. */
  drainDeadline: number;
  /** Clock time (ms) at which the (possibly extended) window ends. */
  windowEnd: number;
  /** Connections attached to `endpoint` that were not retiring before this decision. */
  retire: C[];
}

/**
 * A MOVING without a target reached half its announced time: retire the connections in
 * `retire` exactly like a handoff, but open their replacements to the configured endpoint (DNS
 * is expected to point to the new place by now). Emitted by `tick()` (or any later call) when
 * due, not when the MOVING arrives.
 */
export interface ReconnectConfiguredDecision<C> {
  /** Discriminant. */
  type: "reconnect-configured";
  /** The endpoint key whose connections reconnect. */
  endpoint: string;
  /** Sequence number of the MOVING. */
  seq: number;
  /** Clock time (ms) at which the reconnect was due (MOVING time + announced time / 2). */
  at: number;
  /** Clock time (ms) after which the old connections are replaced even if work is in flight. */
  drainDeadline: number;
  /** Clock time (ms) at which the window ends. */
  windowEnd: number;
  /** The connections to replace: attached to `endpoint` and not retiring before this decision. */
  retire: C[];
}

/**
 * An `SMIGRATED` carried slot moves to apply to the slot table: apply them before carrying out
 * the decisions after it (the controller counts the delta as applied once given out; an
 * `unrelax` may follow). Emitted once per seq per controller, whichever connection delivers it
 * first, whether or not a window was open; while a topology refresh runs
 * (`topologyRefreshStarted`) it is held back (`slot-delta-deferred`) and given out by
 * `topologyRefreshFinished`. Slots a newer SMIGRATED already moved are left out.
 */
export interface SlotDeltaDecision<C> {
  /** Discriminant. */
  type: "slot-delta";
  /** Sequence number of the SMIGRATED. */
  seq: number;
  /** The connection that delivered it first. */
  connection: C;
  /** The slot moves (never empty: an SMIGRATED without entries only closes a window). */
  entries: SlotMigration[];
  /** How many slots were left out because a newer SMIGRATED already moved them. */
  stale: number;
}

/**
 * An `SMIGRATED` arrived while a topology refresh runs: its `slot-delta` is held back until
 * `topologyRefreshFinished` (every connection stays relaxed meanwhile). Informational.
 */
export interface SlotDeltaDeferredDecision<C> {
  /** Discriminant. */
  type: "slot-delta-deferred";
  /** Sequence number of the SMIGRATED. */
  seq: number;
  /** The connection that delivered it first. */
  connection: C;
}

/**
 * A maintenance push frame was malformed: log `reason` (at warn level) and drop the frame. It
 * is never a command's reply. A malformed `SMIGRATING` / `SMIGRATED` means the slots moved in a
 * way that cannot be read: a cluster client re-reads its topology. With a readable `seq` it
 * closes one SMIGRATING window and comes once per seq (not for the other connections' copies).
 */
export interface MalformedDecision<C> {
  /** Discriminant. */
  type: "malformed";
  /** The connection that received it. */
  connection: C;
  /** The maintenance name the frame carried. */
  name: MaintenanceNotificationType;
  /** What is wrong with it. */
  reason: string;
  /** SMIGRATING / SMIGRATED only: its sequence number, when readable. */
  seq?: number;
}

/**
 * A decision of the {@linkcode MaintenanceController}, discriminated on `type`. `C` is the type
 * the caller uses to identify connections.
 *
 * | type | act? | what to do |
 * | --- | --- | --- |
 * | `relax` | yes | re-arm in-flight timers of `connection` with `timeoutFor` |
 * | `unrelax` | optional | nothing needed: later commands get the configured timeouts |
 * | `handoff` | yes | drain and replace `retire` towards `target`, dial `target` for the window |
 * | `handoff-retarget` | yes | dial the new `target`; replace `retire` |
 * | `reconnect-configured` | yes | drain and replace `retire` towards the configured endpoint |
 * | `slot-delta` | cluster | apply `entries` to the slot table |
 * | `slot-delta-deferred` | no | informational: a delta waits for the running topology refresh |
 * | `malformed` | log | warn with `reason`; cluster: re-read the topology for `SMIGRATED` |
 * | `window-opened`, `window-closed` | no | informational (events, debug logs) |
 *
 * @example Carry out decisions
 * ```ts
 * import type { MaintenanceDecision } from "@edge/redis/maintenance";
 * function apply(decisions: MaintenanceDecision<string>[]): void {
 *   for (const d of decisions) {
 *     switch (d.type) {
 *       case "relax": console.log(`re-arm timers of ${d.connection}`); break;
 *       case "handoff": console.log(`move ${d.endpoint} to ${d.target.host}:${d.target.port}`); break;
 *       case "malformed": console.warn(`Dropped a maintenance frame: ${d.reason}`); break;
 *       default: break;
 *     }
 *   }
 * }
 * ```
 */
export type MaintenanceDecision<C> =
  | RelaxDecision<C>
  | UnrelaxDecision<C>
  | WindowOpenedDecision<C>
  | WindowClosedDecision<C>
  | HandoffDecision<C>
  | HandoffRetargetDecision<C>
  | ReconnectConfiguredDecision<C>
  | SlotDeltaDecision<C>
  | SlotDeltaDeferredDecision<C>
  | MalformedDecision<C>;
