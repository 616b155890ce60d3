/**
 * The slot-migration part of the {@linkcode MaintenanceController}: it hands SMIGRATING /
 * SMIGRATED to the client's one {@linkcode SlotMigrationCoordinator} and turns the
 * coordinator's decisions into controller decisions, remembering which endpoint opened each
 * window and which connection delivered each delta held back during a topology refresh. The
 * `MaintenanceController` installs it in its `StandaloneMaintenanceController`; a standalone
 * client's bundle does not carry it.
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type { MaintenanceDecision } from "./decision.ts";
import {
  parseMaintenanceNotification,
  type SlotsMigratedNotification,
  type SlotsMigratingNotification,
} from "./notification.ts";
import {
  SlotMigrationCoordinator,
  type SlotMigrationDecision,
} from "./slot_migration_coordinator.ts";
import type { ConnectionWindowSnapshot } from "./snapshot.ts";
import type { ConnectionState, DueDecision } from "./_connection_state.ts";
import type { SlotMigrationPart } from "./standalone_controller.ts";

/** The controller's side of its {@linkcode SlotMigrationCoordinator}. */
export class SlotMigrationDelegation<C> implements SlotMigrationPart<C> {
  readonly #slots: SlotMigrationCoordinator;
  /** Per open SMIGRATING window (by seq), the endpoint of the connection that opened it. */
  readonly #openers: Map<number, string> = new Map();
  /** Per delta held back during a topology refresh (by seq), the connection that delivered it. */
  readonly #heldFrom: Map<number, C> = new Map();

  /**
   * @param relaxedWindowMaxDuration The backstop of a window, ms.
   * @param clock The client's clock, of which only `now` is read.
   */
  constructor(relaxedWindowMaxDuration: number, clock: Pick<Clock, "now">) {
    this.#slots = new SlotMigrationCoordinator(relaxedWindowMaxDuration, clock);
  }

  /**
   * Parses a push frame, slots included.
   *
   * @param frame The push frame's elements.
   * @returns As `parseMaintenanceNotification`.
   */
  parse(frame: readonly unknown[]): ReturnType<typeof parseMaintenanceNotification> {
    return parseMaintenanceNotification(frame);
  }

  /** Whether the client is relaxed by a slot migration (a window open or a delta unapplied). */
  get relaxed(): boolean {
    return this.#slots.relaxed;
  }

  /**
   * When the slot migration's relaxation ends at the latest.
   *
   * @returns A clock time (ms), or `undefined` when not relaxed.
   */
  relaxedUntil(): number | undefined {
    return this.#slots.relaxedUntil();
  }

  /**
   * When a window's backstop comes due next.
   *
   * @returns A clock time (ms), or `undefined`.
   */
  nextDeadline(): number | undefined {
    return this.#slots.nextDeadline();
  }

  /** A topology refresh started: deltas are held back until it ends. */
  refreshStarted(): void {
    this.#slots.refreshStarted();
  }

  /**
   * Handles an SMIGRATING or SMIGRATED (a seq `conn` has not handled).
   *
   * @param conn The receiving connection.
   * @param n The notification.
   * @param out Where the decisions go.
   */
  notify(
    conn: ConnectionState<C>,
    n: SlotsMigratingNotification | SlotsMigratedNotification,
    out: MaintenanceDecision<C>[],
  ): void {
    this.#forward(
      conn,
      n.type === "SMIGRATING"
        ? this.#slots.smigrating(n.seq, n.slots)
        : this.#slots.smigrated(n.seq, n.entries),
      out,
    );
  }

  /**
   * Handles a malformed SMIGRATING / SMIGRATED: with a readable seq, closes one window, once.
   *
   * @param conn The receiving connection.
   * @param seq Its seq, when readable.
   * @param reason Why it is malformed.
   * @param out Where the decisions go.
   * @returns Whether the coordinator asks for a topology refresh (the caller reports it as a
   *   `malformed` decision).
   */
  malformed(
    conn: ConnectionState<C>,
    seq: number | undefined,
    reason: string,
    out: MaintenanceDecision<C>[],
  ): boolean {
    const ds = this.#slots.malformedSmigrated(seq, reason);
    this.#forward(conn, ds, out);
    return ds.some((d) => d.type === "refresh");
  }

  /**
   * A topology refresh ended: appends the deltas held back, if it was the last one running.
   *
   * @param out Where the decisions go.
   */
  refreshFinished(out: MaintenanceDecision<C>[]): void {
    this.#forward(undefined, this.#slots.refreshFinished(), out);
  }

  /**
   * Closes the windows whose backstop passed by `now`, into `due` (order 1).
   *
   * @param now The clock time (ms).
   * @param due Where the decisions that came due go.
   */
  expire(now: number, due: DueDecision<C>[]): void {
    const slotsDue = this.#slots.nextDeadline();
    if (slotsDue !== undefined && slotsDue <= now) {
      const closed: MaintenanceDecision<C>[] = [];
      this.#forward(undefined, this.#slots.tick(), closed);
      for (const decision of closed) due.push({ at: slotsDue, order: 1, decision });
    }
  }

  /**
   * The windows open at `now`, as a connection lists them in a snapshot.
   *
   * @param now The clock time (ms).
   * @returns Fresh plain data.
   */
  windowSnapshots(now: number): ConnectionWindowSnapshot[] {
    return this.#slots.windows.filter((w) => w.deadline > now).map((w) => ({
      kind: "SMIGRATING" as const,
      seq: w.seq,
      openedAt: w.openedAt,
      deadline: w.deadline,
    }));
  }

  /**
   * Appends the coordinator's decisions as controller decisions. `conn` delivered the
   * notification (`undefined`: a tick or the end of a refresh). Its `relax` / `unrelax` are
   * dropped: the controller reports them per connection. A delta given out counts as applied
   * (the caller applies it before the decisions after it).
   */
  #forward(
    conn: ConnectionState<C> | undefined,
    decisions: SlotMigrationDecision[],
    out: MaintenanceDecision<C>[],
  ): void {
    for (const d of decisions) {
      switch (d.type) {
        case "window-opened": {
          const endpoint = conn?.endpoint ?? "";
          this.#openers.set(d.seq, endpoint);
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
          const endpoint = this.#openers.get(d.seq) ?? conn?.endpoint ?? "";
          this.#openers.delete(d.seq);
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
          this.#forward(undefined, this.#slots.applied(d.seq), out);
          break;
        }
        default:
          // window-skipped (nothing to do), refresh (a `malformed` decision), relax, unrelax.
          break;
      }
    }
  }
}
