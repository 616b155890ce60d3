/**
 * Maintenance support of a cluster client: the standalone support (handshake, opt-in
 * accounting, the controller and its timer, relaxed timeouts) whose SMIGRATING / SMIGRATED
 * decisions are carried out client-wide: slot deltas applied to the slot table, a refresh for
 * a delta that cannot be read, the pub/sub migration probes told of windows. The state machine
 * is the controller's one `SlotMigrationCoordinator`: the support gives the standalone support a
 * `MaintenanceController` (the standalone controller with its slot-migration part), so the
 * slot-migration code is in the cluster client's bundle only. Standalone
 * notifications (MOVING, MIGRATING, FAILING_OVER, ...) on a cluster connection are logged at
 * warn level and ignored.
 *
 * @module
 */

import { type MaintenanceHost, MaintenanceSupport } from "../client/maintenance_support.ts";
import type { Connection } from "../connection/connection.ts";
import { MaintenanceController } from "../maintenance/controller.ts";
import type { MaintenanceDecision, SlotDeltaDecision } from "../maintenance/decision.ts";
import { parseMaintenanceNotification, type SlotMigration } from "../maintenance/notification.ts";
import type { MaintenanceOptions } from "../maintenance/options.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import type { RespValue } from "../resp/types.ts";
import type { Transport } from "../transport/types.ts";
import { systemClock } from "../_clock.ts";

/** What the cluster client gives its maintenance support. */
export interface ClusterMaintenanceHost extends MaintenanceHost {
  /**
   * Applies an SMIGRATED delta to the slot table (synchronously: the table is updated when it
   * returns; connections may still be opening and closing).
   *
   * @param seq The SMIGRATED's seq.
   * @param entries The slot moves.
   * @param stale Slots left out because a newer SMIGRATED moved them.
   */
  applyDelta(seq: number, entries: SlotMigration[], stale: number): void;
  /** Re-reads the topology (a delta could not be read). */
  refresh(reason: string): void;
  /**
   * An SMIGRATING window opened (`slots`: the slots it announces) or closed; `open` windows are
   * open now.
   */
  windowsChanged?(open: number, slots: SlotRange[] | undefined): void;
}

/**
 * The maintenance support of a `RedisClusterClient`: one per client, shared by every node's
 * executor. SMIGRATING on any connection relaxes every registered connection (and each one
 * registered or handshaking meanwhile) until the last window closed and its delta is applied.
 */
export class ClusterMaintenanceSupport extends MaintenanceSupport {
  readonly #host: ClusterMaintenanceHost;
  #ended = false;

  constructor(options: MaintenanceOptions, host: ClusterMaintenanceHost) {
    super(options, host, new MaintenanceController<Connection>(options, host.clock ?? systemClock));
    this.#host = host;
  }

  override onPush(conn: Connection, frame: RespValue[], transport?: Transport): boolean {
    const n = parseMaintenanceNotification(frame);
    if (n === undefined) return false;
    // Not accepted on this socket: the standalone support warns and drops it.
    if (!this.accepted(conn, transport)) return super.onPush(conn, frame, transport);
    if (this.#ended) return true;
    const label = this.label(conn) ?? "connection";
    const name = n.type === "malformed" ? n.name : n.type;
    if (name !== "SMIGRATING" && name !== "SMIGRATED") {
      this.#host.logger.warn(
        `${label}: ignoring a ${name} notification: it belongs to standalone deployments, not to a cluster in OSS cluster mode`,
      );
      return true;
    }
    if (n.type === "SMIGRATING") {
      this.#host.logger.debug(`${label}: SMIGRATING ${n.seq} (${rangesText(n.slots)})`);
    } else if (n.type === "SMIGRATED") {
      this.#host.logger.debug(`${label}: SMIGRATED ${n.seq} (${n.entries.length} entries)`);
    }
    return super.onPush(conn, frame, transport);
  }

  /** A topology refresh started: deltas wait for it. */
  refreshStarted(): void {
    this.controller.topologyRefreshStarted();
  }

  /** A topology refresh ended: the deltas that waited are applied now. */
  refreshFinished(): void {
    this.carry(this.controller.topologyRefreshFinished());
  }

  /** SMIGRATING windows and slot deltas here; the rest (relax, unrelax) as a standalone client. */
  protected override carry(decisions: MaintenanceDecision<Connection>[]): void {
    if (this.#ended) return;
    const rest: MaintenanceDecision<Connection>[] = [];
    for (const d of decisions) {
      const label = "connection" in d && d.connection ? this.label(d.connection) : undefined;
      switch (d.type) {
        case "window-opened":
          if (d.kind !== "SMIGRATING") {
            rest.push(d);
            break;
          }
          this.#event({
            type: "window-opened",
            kind: "SMIGRATING",
            scope: "client",
            seq: d.seq,
            slots: d.slots,
            until: d.until,
            open: d.open,
            connection: label,
          });
          this.#host.windowsChanged?.(d.open ?? 0, d.slots);
          break;
        case "window-closed":
          if (d.kind !== "SMIGRATING") {
            rest.push(d);
            break;
          }
          this.#event({
            type: "window-closed",
            kind: "SMIGRATING",
            scope: "client",
            seq: d.seq,
            reason: d.reason === "end" ? "end" : "expired",
            endSeq: d.endSeq,
            open: d.open,
            connection: label,
          });
          this.#host.windowsChanged?.(d.open ?? 0, undefined);
          break;
        case "slot-delta":
          this.#apply(d, label);
          break;
        case "slot-delta-deferred":
          this.#host.logger.debug(
            `maintenance: SMIGRATED ${d.seq} waits for the running topology refresh`,
          );
          this.#event({ type: "slot-delta", seq: d.seq, phase: "deferred", connection: label });
          break;
        case "malformed":
          this.#host.logger.warn(
            `${label ?? "connection"}: dropping a malformed ${d.name} notification: ${d.reason}`,
          );
          this.#host.emit("maintenance", {
            type: "malformed",
            name: d.name,
            seq: d.seq,
            reason: d.reason,
            connection: label,
          });
          this.#host.refresh(d.reason);
          break;
        default:
          rest.push(d);
      }
    }
    super.carry(rest);
  }

  #apply(d: SlotDeltaDecision<Connection>, label: string | undefined): void {
    const { seq, entries, stale } = d;
    try {
      this.#host.applyDelta(seq, entries, stale);
    } catch (e) {
      this.#host.logger.warn(
        `maintenance: cannot apply SMIGRATED ${seq}: ${
          (e as Error).message
        }; refreshing the topology`,
      );
      this.#host.refresh(`SMIGRATED ${seq} could not be applied`);
    }
    this.#event({ type: "slot-delta", seq, phase: "applied", entries, stale, connection: label });
  }

  #event(detail: Record<string, unknown>): void {
    this.#host.logger.debug(`maintenance: ${detail.type} ${JSON.stringify(detail)}`);
    this.#host.emit("maintenance", detail);
  }

  override close(): void {
    this.#ended = true;
    super.close();
  }
}

function rangesText(slots: readonly { start: number; end: number }[]): string {
  return slots.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(",");
}
