/**
 * The observability snapshot of a {@linkcode MaintenanceController}: plain data describing its
 * open windows and attached connections at one clock time.
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";
import type { ResolvedMaintenanceOptions } from "./options.ts";

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
