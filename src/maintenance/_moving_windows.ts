/**
 * MOVING endpoint windows, for the {@linkcode MaintenanceController}: per endpoint key, the open
 * MOVING window (its pinned target, its end, a pending reconnect to the configured endpoint),
 * the MOVING seqs the controller has handled, and the handoff decisions they give.
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";
import type { MaintenanceDecision } from "./decision.ts";
import type { ResolvedMaintenanceOptions } from "./options.ts";
import type { EndpointWindowSnapshot } from "./snapshot.ts";
import { computeDrainCap } from "./timeouts.ts";
import {
  type ConnectionState,
  type DueDecision,
  MAX_SEEN,
  prune,
  remember,
  retireConnections,
} from "./_connection_state.ts";

/** A MOVING window open on one endpoint. */
export interface EndpointWindow {
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

/**
 * The MOVING windows of one controller. It shares the controller's connection map, to mark the
 * connections of a moving endpoint as retiring.
 */
export class MovingWindows<C> {
  readonly #options: ResolvedMaintenanceOptions;
  readonly #connections: ReadonlyMap<C, ConnectionState<C>>;
  readonly #windows: Map<string, EndpointWindow> = new Map();
  /** MOVING seqs handled by the controller, with the time they may be forgotten. */
  readonly #seen: Map<number, number> = new Map();

  /**
   * @param options The controller's resolved options.
   * @param connections The controller's attached connections.
   */
  constructor(
    options: ResolvedMaintenanceOptions,
    connections: ReadonlyMap<C, ConnectionState<C>>,
  ) {
    this.#options = options;
    this.#connections = connections;
  }

  /**
   * The window of `endpoint` if it has not ended by `now`.
   *
   * @param endpoint The endpoint key.
   * @param now The clock time (ms).
   * @returns The open window, or `undefined`.
   */
  open(endpoint: string, now: number): EndpointWindow | undefined {
    const w = this.#windows.get(endpoint);
    return w !== undefined && w.end > now ? w : undefined;
  }

  /**
   * When the window of `endpoint` ends, if it is open at `now`.
   *
   * @param endpoint The endpoint key.
   * @param now The clock time (ms).
   * @returns Its end (ms), or `-Infinity` when none is open.
   */
  endOf(endpoint: string, now: number): number {
    const ew = this.#windows.get(endpoint);
    return ew !== undefined && ew.end > now ? ew.end : -Infinity;
  }

  /**
   * The earliest window end or pending reconnect.
   *
   * @returns A clock time (ms), or `Infinity` when nothing is pending.
   */
  nextDeadline(): number {
    let next = Infinity;
    for (const w of this.#windows.values()) {
      next = Math.min(next, w.end, w.reconnectAt ?? Infinity);
    }
    return next;
  }

  /**
   * The windows open at `now`, as plain data.
   *
   * @param now The clock time (ms).
   * @returns One entry per open window.
   */
  snapshot(now: number): EndpointWindowSnapshot[] {
    const endpoints: EndpointWindowSnapshot[] = [];
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
    return endpoints;
  }

  /**
   * Handles a MOVING received on `conn` (a seq it has not handled): opens the endpoint's window,
   * or updates the open one, and appends the decisions (`window-opened`, `handoff`,
   * `handoff-retarget`). A seq the controller already handled only relaxes `conn`.
   *
   * @param conn The receiving connection.
   * @param seq The MOVING's seq.
   * @param durationMs The announced time, ms.
   * @param target The announced target, or `null`.
   * @param now The clock time (ms).
   * @param out Where the decisions go.
   */
  moving(
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
          retire: retireConnections(this.#connections, endpoint),
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
        retire: retireConnections(this.#connections, endpoint),
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

  /**
   * Settles the windows at `now`: fires the due reconnects (`reconnect-configured`, order 0)
   * and closes the ended windows (`window-closed` with reason `expired`, order 1), into `due`;
   * forgets old seqs.
   *
   * @param now The clock time (ms).
   * @param due Where the decisions that came due go.
   */
  expire(now: number, due: DueDecision<C>[]): void {
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
            retire: retireConnections(this.#connections, endpoint),
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
    prune(this.#seen, now);
  }
}
