/**
 * Connection windows, for the {@linkcode MaintenanceController}: the state it keeps per attached
 * connection (its MIGRATING / FAILING_OVER windows, the seqs it has handled, its retiring mark,
 * the relaxation last reported for it), and the rules that open, close and expire those windows.
 *
 * @module
 */

import type {
  MaintenanceDecision,
  MaintenanceWindowKind,
  WindowClosedDecision,
} from "./decision.ts";

/**
 * What opens a connection window. `SMIGRATING` only in a controller without slot migrations
 * (a standalone client), where it relaxes the connection that received it, as `MIGRATING` does.
 */
export type ConnectionWindowKind = "MIGRATING" | "FAILING_OVER" | "SMIGRATING";

/** A window open on one connection, until its end notification or its backstop. */
export interface ConnectionWindow {
  /** What opened it. */
  kind: ConnectionWindowKind;
  /** Sequence number of the start notification. */
  seq: number;
  /** Clock time (ms) it opened. */
  openedAt: number;
  /** Clock time (ms) the backstop closes it. */
  deadline: number;
}

/** What the controller knows about one attached connection. */
export interface ConnectionState<C> {
  /** The connection's id. */
  id: C;
  /** The endpoint key it serves. */
  endpoint: string;
  /** Its open connection windows, oldest first. */
  windows: ConnectionWindow[];
  /** Relaxed until then by a MOVING duplicate for another endpoint (late opt-in). */
  movingUntil: number;
  /** Seqs this connection has handled, with the time they may be forgotten. */
  seen: Map<number, number>;
  /** Whether a handoff / reconnect marked it for replacement. */
  retiring: boolean;
  /** The `until` of the last `relax` reported, `undefined` when reported unrelaxed. */
  reported: number | undefined;
}

/** A decision that came due at `at`; `order` breaks ties (reconnects before window ends). */
export interface DueDecision<C> {
  /** Clock time (ms) it came due. */
  at: number;
  /** 0 for a reconnect, 1 for a window end. */
  order: number;
  /** The decision. */
  decision: MaintenanceDecision<C>;
}

/** The start kind an end notification closes. */
export const END_OF: Record<string, ConnectionWindowKind> = {
  MIGRATED: "MIGRATING",
  FAILED_OVER: "FAILING_OVER",
  SMIGRATED: "SMIGRATING",
};

/** Most seqs remembered per controller and per connection (bounds memory on a noisy server). */
export const MAX_SEEN = 4096;
/** Most seqs remembered per connection. */
export const MAX_SEEN_PER_CONNECTION = 256;

/**
 * Remembers `seq` until `until`, forgetting the oldest seq past `max`.
 *
 * @param seen The seqs remembered, with the time each may be forgotten.
 * @param seq The seq.
 * @param until Clock time (ms) it may be forgotten.
 * @param max Most seqs kept.
 */
export function remember(seen: Map<number, number>, seq: number, until: number, max: number): void {
  seen.delete(seq);
  seen.set(seq, until);
  if (seen.size > max) seen.delete(seen.keys().next().value as number);
}

/**
 * Forgets the seqs whose time has come.
 *
 * @param seen The seqs remembered.
 * @param now The clock time (ms).
 */
export function prune(seen: Map<number, number>, now: number): void {
  for (const [seq, until] of seen) if (until <= now) seen.delete(seq);
}

/**
 * The state of a newly attached connection: no window, nothing seen, not retiring.
 *
 * @param id The connection's id.
 * @param endpoint Its endpoint key.
 * @returns The state.
 */
export function newConnectionState<C>(id: C, endpoint: string): ConnectionState<C> {
  return {
    id,
    endpoint,
    windows: [],
    movingUntil: 0,
    seen: new Map(),
    retiring: false,
    reported: undefined,
  };
}

/**
 * Opens a connection window (MIGRATING / FAILING_OVER) and appends its `window-opened`.
 *
 * @param conn The receiving connection.
 * @param kind What opens it.
 * @param seq The start notification's seq.
 * @param now The clock time (ms).
 * @param deadline When its backstop closes it.
 * @param out Where the decision goes.
 */
export function openConnectionWindow<C>(
  conn: ConnectionState<C>,
  kind: ConnectionWindowKind,
  seq: number,
  now: number,
  deadline: number,
  out: MaintenanceDecision<C>[],
): void {
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
 * Closes the connection's oldest open window of `kind` (an end notification) and appends its
 * `window-closed`; without one, a no-op.
 *
 * @param conn The receiving connection.
 * @param kind The kind the end closes.
 * @param endSeq The end notification's seq.
 * @param out Where the decision goes.
 */
export function closeConnectionWindow<C>(
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

/**
 * Settles a connection at `now`: ends a MOVING duplicate's relaxation that is over, closes the
 * windows whose backstop passed (a `window-closed` each, into `due`) and forgets old seqs.
 *
 * @param c The connection.
 * @param now The clock time (ms).
 * @param due Where the decisions that came due go.
 */
export function expireConnection<C>(
  c: ConnectionState<C>,
  now: number,
  due: DueDecision<C>[],
): void {
  if (c.movingUntil > 0 && c.movingUntil <= now) c.movingUntil = 0;
  if (c.windows.length === 0) return;
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

/**
 * Marks the connections of `endpoint` not yet retiring for replacement.
 *
 * @param connections The attached connections.
 * @param endpoint The endpoint key.
 * @returns The ids marked now.
 */
export function retireConnections<C>(
  connections: ReadonlyMap<C, ConnectionState<C>>,
  endpoint: string,
): C[] {
  const ids: C[] = [];
  for (const c of connections.values()) {
    if (c.endpoint === endpoint && !c.retiring) {
      c.retiring = true;
      ids.push(c.id);
    }
  }
  return ids;
}
