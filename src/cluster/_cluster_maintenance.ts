/**
 * Maintenance support of a cluster client: the standalone support (handshake, opt-in
 * accounting) plus the client-wide reaction to SMIGRATING / SMIGRATED, carried out on every
 * connection of every node. Standalone notifications (MOVING, MIGRATING, FAILING_OVER, ...) on
 * a cluster connection are logged at warn level and ignored.
 *
 * @module
 */

import { type Clock, systemClock, type TimerId } from "../_clock.ts";
import {
  type ClientMaintenanceState,
  type MaintenanceHost,
  MaintenanceSupport,
  type RegisteredConnection,
} from "../client/maintenance_support.ts";
import type {
  Connection,
  Endpoint,
  HandshakeStep,
  TimeoutPolicy,
} from "../connection/connection.ts";
import { ReplyError } from "../errors.ts";
import { parseMaintenanceNotification, type SlotMigration } from "../maintenance/notification.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import type { MaintenanceOptions } from "../maintenance/options.ts";
import { effectiveTimeout } from "../maintenance/timeouts.ts";
import type { RespValue } from "../resp/types.ts";
import type { Transport } from "../transport/types.ts";
import {
  ClusterMaintenanceCoordinator,
  type CoordinatorDecision,
} from "./_maintenance_coordinator.ts";

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
  readonly #clock: Clock;
  readonly #coordinator: ClusterMaintenanceCoordinator;
  readonly #options: { relaxedTimeout: number; relaxedBlockingTimeout: number };
  readonly #conns = new Map<Connection, RegisteredConnection>();
  /** Sockets whose opt-in the server accepted. */
  readonly #accepted = new WeakSet<Transport>();
  readonly #policy: TimeoutPolicy;
  #timer: TimerId | undefined;
  #ended = false;

  constructor(options: MaintenanceOptions, host: ClusterMaintenanceHost) {
    super(options, host);
    this.#host = host;
    this.#clock = host.clock ?? systemClock;
    const o = this.controller.options;
    this.#options = o;
    this.#coordinator = new ClusterMaintenanceCoordinator(o.relaxedWindowMaxDuration, this.#clock);
    this.#policy = (configured, blocking) =>
      effectiveTimeout(configured, blocking ? o.relaxedBlockingTimeout : o.relaxedTimeout);
  }

  /** The client-wide state (tests, diagnostics). */
  get coordinator(): ClusterMaintenanceCoordinator {
    return this.#coordinator;
  }

  /** Whether every connection is relaxed now. */
  get relaxed(): boolean {
    return this.#coordinator.relaxed;
  }

  override register(conn: Connection, info: RegisteredConnection): void {
    super.register(conn, info);
    this.#conns.set(conn, info);
    if (this.#coordinator.relaxed) conn.setTimeoutPolicy(this.#policy);
  }

  override unregister(conn: Connection): void {
    super.unregister(conn);
    this.#conns.delete(conn);
  }

  override handshake(conn: Connection, transport: Transport, protocol: 2 | 3): HandshakeStep[] {
    const steps = super.handshake(conn, transport, protocol);
    // A connection opened during a window is relaxed from its first byte.
    if (this.#coordinator.relaxed) conn.setTimeoutPolicy(this.#policy);
    return steps.map((step) => ({
      ...step,
      onReply: (v: RespValue) => {
        step.onReply?.(v);
        if (!(v instanceof ReplyError)) this.#accepted.add(transport);
      },
    }));
  }

  override connectTimeout(configured: number, endpoint: Endpoint): number {
    if (!this.#coordinator.relaxed) return super.connectTimeout(configured, endpoint);
    const r = this.#options.relaxedTimeout;
    return configured === 0 || r === 0 ? configured : Math.max(configured, r);
  }

  override onPush(conn: Connection, frame: RespValue[], transport?: Transport): boolean {
    const n = parseMaintenanceNotification(frame);
    if (n === undefined) return false;
    const label = this.#conns.get(conn)?.label ?? "connection";
    if (transport !== undefined && !this.#accepted.has(transport)) {
      this.#host.logger.warn(
        `${label}: ignoring a ${
          String(frame[0])
        } notification: maintenance notifications were not accepted on this connection`,
      );
      return true;
    }
    if (this.#ended) return true;
    const name = n.type === "malformed" ? n.name : n.type;
    if (name !== "SMIGRATING" && name !== "SMIGRATED") {
      this.#host.logger.warn(
        `${label}: ignoring a ${name} notification: it belongs to standalone deployments, not to a cluster in OSS cluster mode`,
      );
      return true;
    }
    let decisions: CoordinatorDecision[];
    if (n.type === "SMIGRATING") {
      this.#host.logger.debug(
        `${label}: SMIGRATING ${n.seq} (${rangesText(n.slots)})`,
      );
      decisions = this.#coordinator.smigrating(n.seq, n.slots);
    } else if (n.type === "SMIGRATED") {
      this.#host.logger.debug(
        `${label}: SMIGRATED ${n.seq} (${n.entries.length} entries)`,
      );
      decisions = this.#coordinator.smigrated(n.seq, n.entries);
    } else if (n.type === "malformed") {
      const seq = typeof frame[1] === "number" && Number.isInteger(frame[1]) ? frame[1] : undefined;
      decisions = this.#coordinator.malformedSmigrated(seq, n.reason);
      if (decisions.some((d) => d.type === "refresh")) {
        this.#host.logger.warn(`${label}: dropping a malformed ${name} notification: ${n.reason}`);
        this.#host.emit("maintenance", {
          type: "malformed",
          name,
          seq,
          reason: n.reason,
          connection: label,
        });
      }
    } else return true;
    this.#carry(decisions, label);
    return true;
  }

  /** A topology refresh started: deltas wait for it. */
  refreshStarted(): void {
    this.#coordinator.refreshStarted();
  }

  /** A topology refresh ended: the deltas that waited are applied now. */
  refreshFinished(): void {
    this.#carry(this.#coordinator.refreshFinished(), undefined);
  }

  override snapshot(commandTimeout: number): ClientMaintenanceState {
    const s = super.snapshot(commandTimeout);
    const until = this.#coordinator.relaxedUntil();
    if (until === undefined) return s;
    const windows = this.#coordinator.windows.map((w) => ({
      kind: "SMIGRATING" as const,
      seq: w.seq,
      openedAt: w.openedAt,
      deadline: w.deadline,
    }));
    return {
      ...s,
      connections: s.connections.map((c) => ({
        ...c,
        relaxedUntil: until,
        windows: [...c.windows, ...windows],
        timeout: effectiveTimeout(commandTimeout, this.#options.relaxedTimeout),
        blockingTimeout: effectiveTimeout(commandTimeout, this.#options.relaxedBlockingTimeout),
      })),
    };
  }

  #carry(decisions: CoordinatorDecision[], label: string | undefined): void {
    if (this.#ended) return;
    for (const d of decisions) {
      switch (d.type) {
        case "window-opened":
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
          this.#host.windowsChanged?.(d.open, d.slots);
          break;
        case "window-closed":
          this.#event({
            type: "window-closed",
            kind: "SMIGRATING",
            scope: "client",
            seq: d.seq,
            reason: d.reason,
            endSeq: d.endSeq,
            open: d.open,
            connection: label,
          });
          this.#host.windowsChanged?.(d.open, undefined);
          break;
        case "window-skipped":
          this.#host.logger.debug(
            `maintenance: SMIGRATING ${d.seq} arrived after its end (SMIGRATED ${d.endSeq}): no window`,
          );
          break;
        case "apply":
          this.#apply(d.seq, d.entries, d.stale, label);
          break;
        case "deferred":
          this.#host.logger.debug(
            `maintenance: SMIGRATED ${d.seq} waits for the running topology refresh`,
          );
          this.#event({ type: "slot-delta", seq: d.seq, phase: "deferred", connection: label });
          break;
        case "refresh":
          this.#host.refresh(d.reason);
          break;
        case "relax":
          this.#host.logger.debug(
            `maintenance: relaxing every connection of the client (${this.#conns.size})`,
          );
          for (const c of this.#conns.keys()) c.setTimeoutPolicy(this.#policy);
          break;
        case "unrelax":
          this.#host.logger.debug("maintenance: timeouts of every connection back to normal");
          for (const c of this.#conns.keys()) c.setTimeoutPolicy(undefined);
          break;
      }
    }
    this.#arm();
  }

  #apply(seq: number, entries: SlotMigration[], stale: number, label: string | undefined): void {
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
    this.#carry(this.#coordinator.applied(seq), label);
  }

  #event(detail: Record<string, unknown>): void {
    this.#host.logger.debug(`maintenance: ${detail.type} ${JSON.stringify(detail)}`);
    this.#host.emit("maintenance", detail);
  }

  #arm(): void {
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    const next = this.#coordinator.nextDeadline();
    if (next === undefined || this.#ended) return;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#carry(this.#coordinator.tick(), undefined);
    }, Math.max(0, next - this.#clock.now()));
  }

  override close(): void {
    this.#ended = true;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    super.close();
  }
}

function rangesText(slots: readonly { start: number; end: number }[]): string {
  return slots.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(",");
}
