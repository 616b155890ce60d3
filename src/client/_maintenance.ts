// Carries out the maintenance controller's decisions for one client: the handshake step,
// relaxed timeouts, the MOVING handoff of the shared connection, the retirement of exclusive
// connections, and the `maintenance` / `handoff` events.
import { ConnectionError, ReplyError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type {
  Connection,
  Endpoint,
  HandshakeStep,
  TimeoutPolicy,
} from "../connection/connection.ts";
import { formatEndpoint } from "../connection/connection.ts";
import { MaintenanceController } from "../maintenance/controller.ts";
import type { MaintenanceDecision } from "../maintenance/decision.ts";
import type { MaintenanceSnapshot } from "../maintenance/controller.ts";
import { planMaintenanceHandshake } from "../maintenance/handshake.ts";
import type { MaintenanceOptions } from "../maintenance/options.ts";
import type { RespValue } from "../resp/types.ts";
import type { Transport } from "../transport/types.ts";
import { startTimer, stopTimer } from "../_resources.ts";

/** What the client gives the maintenance support. */
export interface MaintenanceHost {
  logger: Logger;
  /** The shared connection. */
  shared(): Connection | undefined;
  /** Retires exclusive connections matching `pred` (idle at once, busy on release). */
  retireExclusive(pred: (c: Connection) => boolean): number;
  emit(name: "maintenance" | "handoff", detail: unknown): void;
}

/**
 * Maintenance state of one client, as `RedisClient.maintenanceState()` returns it: open MOVING
 * windows, and per connection (named `shared`, `exclusive#N`) its windows and timeouts.
 *
 * @example
 * ```ts ignore
 * import type { ClientMaintenanceState } from "@edge/redis";
 * const state: ClientMaintenanceState | undefined = client.maintenanceState();
 * ```
 */
export type ClientMaintenanceState = MaintenanceSnapshot<string>;

export class MaintenanceSupport {
  readonly controller: MaintenanceController<Connection>;
  readonly #host: MaintenanceHost;
  readonly #labels = new WeakMap<Connection, string>();
  readonly #configured: Endpoint;
  readonly #endpointKey: string;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = 0;
  #reconnectTimers = new Set<ReturnType<typeof setTimeout>>();
  #closed = false;

  constructor(options: MaintenanceOptions, configured: Endpoint, host: MaintenanceHost) {
    this.controller = new MaintenanceController<Connection>(options);
    this.#host = host;
    this.#configured = configured;
    this.#endpointKey = formatEndpoint(configured);
  }

  get mode(): string {
    return this.controller.mode;
  }

  /** Registers a connection; returns the hooks it runs with. */
  register(conn: Connection, label: string): void {
    this.#labels.set(conn, label);
    this.#apply(this.controller.attach(conn, this.#endpointKey));
  }

  unregister(conn: Connection): void {
    this.controller.detach(conn);
  }

  /** The handshake step for a new socket of `conn`. */
  handshake(conn: Connection, transport: Transport, protocol: 2 | 3): HandshakeStep[] {
    const options = this.controller.options;
    const where = formatEndpoint({
      host: transport.remoteAddress ?? this.#configured.host,
      port: transport.remotePort ?? this.#configured.port,
    });
    const plan = planMaintenanceHandshake(options, {
      protocol,
      remoteAddress: transport.remoteAddress,
      secure: transport.secure,
      endpoint: where,
    });
    if (plan.action === "skip") return [];
    if (plan.action === "fail") throw new ConnectionError(plan.message);
    // A connection opened during a MOVING window is relaxed from its first byte.
    this.#apply(this.controller.attach(conn, this.#endpointKey));
    return [{
      args: plan.command,
      onReply: (v: RespValue) => {
        if (!(v instanceof ReplyError)) {
          this.#host.logger.debug(
            `${
              this.#labels.get(conn)
            }: maintenance notifications on (${plan.endpointType}) for "${where}"`,
          );
          return;
        }
        if (options.mode === "enabled") {
          throw new ConnectionError(
            `Cannot enable maintenance notifications on "${where}": ${v.message}`,
            { cause: v },
          );
        }
        this.#host.logger.debug(
          `${
            this.#labels.get(conn)
          }: "${where}" does not support maintenance notifications (${v.message}); continuing without them`,
        );
      },
    }];
  }

  /** Where new sockets go: the MOVING target while the window lasts. */
  resolveEndpoint(configured: Endpoint): Endpoint {
    const t = this.controller.movingTarget(this.#endpointKey);
    return t ? { host: t.host, port: t.port } : configured;
  }

  /** Connect timeout of a new socket: relaxed inside a MOVING window. */
  connectTimeout(configured: number): number {
    if (!this.controller.isEndpointInWindow(this.#endpointKey)) return configured;
    const r = this.controller.options.relaxedTimeout;
    return configured === 0 || r === 0 ? 0 : Math.max(configured, r);
  }

  /** Handles a push frame; returns whether it was a maintenance frame. */
  onPush(conn: Connection, frame: RespValue[]): boolean {
    const decisions = this.controller.onPush(conn, frame);
    if (decisions === undefined) return false;
    this.#apply(decisions);
    return true;
  }

  snapshot(commandTimeout: number): ClientMaintenanceState {
    const s = this.controller.snapshot(commandTimeout);
    return {
      ...s,
      connections: s.connections.map((c) => ({
        ...c,
        connection: this.#labels.get(c.connection) ?? "?",
      })),
    } as ClientMaintenanceState;
  }

  #policy(conn: Connection): TimeoutPolicy {
    return (configured, blocking) => this.controller.timeoutFor(conn, configured, { blocking });
  }

  #apply(decisions: MaintenanceDecision<Connection>[]): void {
    if (this.#closed) return;
    for (const d of decisions) {
      switch (d.type) {
        case "relax":
          d.connection.setTimeoutPolicy(this.#policy(d.connection));
          break;
        case "unrelax":
          d.connection.setTimeoutPolicy(undefined);
          break;
        case "window-opened":
        case "window-closed":
          this.#event(d);
          break;
        case "handoff":
        case "handoff-retarget":
          this.#event(d);
          this.#handoff(d.retire, d.drainDeadline, `MOVING ${d.seq}`);
          break;
        case "reconnect-configured": {
          this.#event(d);
          const delay = Math.max(0, d.at - Date.now());
          const id = startTimer(() => {
            this.#reconnectTimers.delete(id);
            this.#handoff(
              d.retire,
              Date.now() + (d.drainDeadline - d.at),
              `MOVING ${d.seq} (no target)`,
            );
          }, delay);
          this.#reconnectTimers.add(id);
          break;
        }
        case "slot-delta":
          this.#event(d);
          break;
        case "malformed":
          this.#host.logger.warn(
            `Dropping a malformed ${d.name} notification: ${d.reason}`,
          );
          this.#event(d);
          break;
      }
    }
    this.#arm();
  }

  #event(d: MaintenanceDecision<Connection>): void {
    const detail: Record<string, unknown> = { ...d };
    if ("connection" in d && d.connection) detail.connection = this.#labels.get(d.connection);
    if ("retire" in d) detail.retire = d.retire.map((c) => this.#labels.get(c));
    this.#host.logger.debug(`maintenance: ${d.type} ${JSON.stringify(detail)}`);
    this.#host.emit("maintenance", detail);
  }

  #handoff(retire: Connection[], drainDeadline: number, reason: string): void {
    const shared = this.#host.shared();
    const set = new Set(retire);
    // Exclusive connections: idle ones close now, busy ones when released.
    this.#host.retireExclusive((c) => set.has(c));
    if (!shared || !set.has(shared)) return;
    const cap = Math.max(0, drainDeadline - Date.now());
    shared.handoff(cap).then((r) => {
      if (!r.replaced) return;
      this.#host.logger.debug(
        `handoff (${reason}): "${formatEndpoint(r.from)}" -> "${
          formatEndpoint(r.to)
        }", drained in ${r.drainMs} ms, ${r.held} commands held`,
      );
      this.#host.emit("handoff", { ...r, reason });
    }, (e: Error) => {
      this.#host.logger.warn(`handoff (${reason}) failed: ${e.message}`);
    });
  }

  #arm(): void {
    const next = this.controller.nextDeadline();
    if (next === undefined) {
      stopTimer(this.#timer);
      this.#timer = undefined;
      return;
    }
    if (this.#timer !== undefined && this.#timerAt <= next) return;
    stopTimer(this.#timer);
    this.#timerAt = next;
    this.#timer = startTimer(() => {
      this.#timer = undefined;
      this.#apply(this.controller.tick());
    }, Math.max(0, next - Date.now()));
  }

  close(): void {
    this.#closed = true;
    stopTimer(this.#timer);
    this.#timer = undefined;
    for (const t of this.#reconnectTimers) stopTimer(t);
    this.#reconnectTimers.clear();
  }
}
