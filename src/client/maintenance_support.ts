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
import { endpointKey, formatEndpoint } from "../endpoint.ts";
import { StandaloneMaintenanceController } from "../maintenance/standalone_controller.ts";
import type { MaintenanceDecision } from "../maintenance/decision.ts";
import type { MaintenanceSnapshot } from "../maintenance/snapshot.ts";
import { planMaintenanceHandshake } from "../maintenance/handshake.ts";
import { isMaintenanceFrame } from "../maintenance/notification.ts";
import type { MaintenanceOptions } from "../maintenance/options.ts";
import type { RespValue } from "../resp/types.ts";
import type { Transport } from "../transport/types.ts";
import { type Clock, systemClock, type TimerId } from "../_clock.ts";
import type { ClientMetrics } from "../observability/metrics.ts";

/** What the client gives the maintenance support. */
export interface MaintenanceHost {
  logger: Logger;
  emit(name: "maintenance" | "handoff", detail: unknown): void;
  /** The time source and timers of the windows and delayed handoffs (tests: a manual clock). */
  clock?: Clock;
  /** The client's metrics recorder (relaxed timeouts, notifications). */
  metrics?: ClientMetrics;
}

/** How a connection is registered: its name, what it is for and where it goes. */
export interface RegisteredConnection {
  /** Name in logs and events, e.g. `shared`, `exclusive#2`. */
  label: string;
  /** `shared` and `subscriber` connections hand off; `exclusive` ones retire. */
  role: "shared" | "exclusive" | "subscriber";
  /** The connection's configured endpoint (windows are kept per endpoint). */
  endpoint: Endpoint;
  /** Retires an exclusive connection: at once when idle, when released when busy. */
  retire?: (conn: Connection) => void;
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

/**
 * Carries out the maintenance decisions of one client. One per client, shared by all its
 * executors: each connection is registered with its own endpoint, so a cluster client keeps
 * every node behind one controller. Its controller has no slot-migration part unless one is
 * given (the cluster's support gives a `MaintenanceController`): a standalone client's bundle
 * carries no slot-migration code.
 */
export class MaintenanceSupport {
  readonly controller: StandaloneMaintenanceController<Connection>;
  readonly #host: MaintenanceHost;
  readonly #registered = new WeakMap<Connection, RegisteredConnection>();
  /** Connections whose latest opt-in the server accepted (refused or not asked: absent). */
  readonly #optedIn = new WeakSet<Connection>();
  /** Sockets whose opt-in the server accepted. */
  readonly #optedInSockets = new WeakSet<Transport>();
  #timer: TimerId | undefined;
  #timerAt = 0;
  #reconnectTimers = new Set<TimerId>();
  readonly #clock: Clock;
  #closed = false;
  /** Whether a refused opt-in was logged (once per client, not per connection). */
  #unsupportedLogged = false;

  /**
   * @param options The maintenance options.
   * @param host What the client gives.
   * @param controller The controller, made with `options` and the host's clock; by default a
   *   `StandaloneMaintenanceController`.
   */
  constructor(
    options: MaintenanceOptions,
    host: MaintenanceHost,
    controller?: StandaloneMaintenanceController<Connection>,
  ) {
    this.#clock = host.clock ?? systemClock;
    this.controller = controller ??
      new StandaloneMaintenanceController<Connection>(options, this.#clock);
    this.#host = host;
  }

  /** The connection's name in logs and events, once registered. */
  protected label(conn: Connection): string | undefined {
    return this.#registered.get(conn)?.label;
  }

  /** The connection's pool in metrics: its configured endpoint. */
  #pool(conn: Connection): string {
    return formatEndpoint(this.#registered.get(conn)?.endpoint ?? conn.configuredEndpoint);
  }

  #key(conn: Connection): string {
    const r = this.#registered.get(conn);
    return r ? endpointKey(r.endpoint) : endpointKey(conn.configuredEndpoint);
  }

  get mode(): string {
    return this.controller.mode;
  }

  /** Registers a connection (relaxed at once when its endpoint is inside a window). */
  register(conn: Connection, info: RegisteredConnection): void {
    this.#registered.set(conn, info);
    this.carry(this.controller.attach(conn, endpointKey(info.endpoint)));
  }

  unregister(conn: Connection): void {
    if (this.#host.metrics?.basic) this.#host.metrics.relaxed(conn, false, this.#pool(conn));
    this.controller.detach(conn);
  }

  /** The handshake step for a new socket of `conn`. */
  handshake(conn: Connection, transport: Transport, protocol: 2 | 3): HandshakeStep[] {
    const options = this.controller.options;
    const where = formatEndpoint({
      host: transport.remoteAddress ?? conn.configuredEndpoint.host,
      port: transport.remotePort ?? conn.configuredEndpoint.port,
    });
    const plan = planMaintenanceHandshake(options, {
      protocol,
      remoteAddress: transport.remoteAddress,
      secure: transport.secure,
      endpoint: where,
    });
    if (plan.action === "skip") {
      // Not asked on this socket: its pushes are not acted on.
      this.#optedIn.delete(conn);
      return [];
    }
    if (plan.action === "fail") throw new ConnectionError(plan.message, { written: false });
    // A connection opened during a MOVING window is relaxed from its first byte.
    this.carry(this.controller.attach(conn, this.#key(conn)));
    return [{
      args: plan.command,
      // Opted in or not, a command behind it means the same (only pushes are acted on or not);
      // but "enabled" promises no command runs on a socket without notifications.
      commandsMayFollow: options.mode !== "enabled",
      onReply: (v: RespValue) => {
        if (!(v instanceof ReplyError)) {
          this.#optedIn.add(conn);
          this.#optedInSockets.add(transport);
          this.#host.logger.debug(
            `${
              this.label(conn)
            }: maintenance notifications on (${plan.endpointType}) for "${where}"`,
          );
          return;
        }
        this.#optedIn.delete(conn);
        if (options.mode === "enabled") {
          throw new ConnectionError(
            `Cannot enable maintenance notifications on "${where}": ${v.message}`,
            { cause: v, written: false },
          );
        }
        // Once per client: every connection to a server without the feature would say it again.
        if (this.#unsupportedLogged) return;
        this.#unsupportedLogged = true;
        this.#host.logger.debug(
          `${
            this.label(conn)
          }: "${where}" does not support maintenance notifications (${v.message}); continuing without them (logged once per client)`,
        );
      },
    }];
  }

  /** Where new sockets for `configured` go while its MOVING window lasts, if one is open. */
  movingTarget(configured: Endpoint): Endpoint | undefined {
    const t = this.controller.movingTarget(endpointKey(configured));
    return t ? { host: t.host, port: t.port } : undefined;
  }

  /** Where new sockets go: the MOVING target while the window lasts. */
  resolveEndpoint(configured: Endpoint): Endpoint {
    return this.movingTarget(configured) ?? configured;
  }

  /**
   * Connect timeout of a new socket to `endpoint`: relaxed inside a MOVING window of the
   * endpoint and inside a slot migration (an SMIGRATING window of the client). A relaxed
   * timeout of 0 (no command timeout during windows) does not make connecting unbounded: the
   * configured connect timeout stays.
   */
  connectTimeout(configured: number, endpoint: Endpoint): number {
    if (
      !this.controller.inSlotMigration() &&
      !this.controller.isEndpointInWindow(endpointKey(endpoint))
    ) return configured;
    const r = this.controller.options.relaxedTimeout;
    return configured === 0 || r === 0 ? configured : Math.max(configured, r);
  }

  /**
   * Handles a push frame; returns whether it was a maintenance frame. Maintenance frames are
   * acted on only on connections whose opt-in the server accepted: a MOVING on any other
   * connection would send the credentials to whatever host it names.
   *
   * @param conn The connection.
   * @param frame The push frame.
   * @param transport The socket it arrived on (the Connection's `onPush` hook passes it); without
   *   it, the connection's latest opt-in decides.
   * @returns Whether the frame was a maintenance notification (taken, whether acted on or not).
   */
  onPush(conn: Connection, frame: RespValue[], transport?: Transport): boolean {
    if (!this.accepted(conn, transport)) {
      if (!isMaintenanceFrame(frame)) return false;
      this.#host.logger.warn(
        `${this.label(conn) ?? "connection"}: ignoring a ${
          String(frame[0])
        } notification: maintenance notifications were not accepted on this connection`,
      );
      return true;
    }
    const decisions = this.controller.onPush(conn, frame);
    if (decisions === undefined) return false;
    const m = this.#host.metrics;
    if (m?.resiliency) m.notification(String(frame[0]), this.#pool(conn));
    this.carry(decisions);
    return true;
  }

  /** Whether the server accepted the opt-in on `transport` (without it: `conn`'s latest). */
  protected accepted(conn: Connection, transport: Transport | undefined): boolean {
    return transport !== undefined ? this.#optedInSockets.has(transport) : this.#optedIn.has(conn);
  }

  snapshot(commandTimeout: number): ClientMaintenanceState {
    const s = this.controller.snapshot(commandTimeout);
    return {
      ...s,
      connections: s.connections.map((c) => ({
        ...c,
        connection: this.label(c.connection) ?? "?",
      })),
    } as ClientMaintenanceState;
  }

  #policy(conn: Connection): TimeoutPolicy {
    return (configured, blocking) => this.controller.timeoutFor(conn, configured, { blocking });
  }

  /** Carries out the controller's decisions (then re-arms the timer for the next deadline). */
  protected carry(decisions: MaintenanceDecision<Connection>[]): void {
    if (this.#closed) return;
    for (const d of decisions) {
      switch (d.type) {
        case "relax":
          d.connection.setTimeoutPolicy(this.#policy(d.connection));
          if (this.#host.metrics?.basic) {
            this.#host.metrics.relaxed(d.connection, true, this.#pool(d.connection));
          }
          break;
        case "unrelax":
          d.connection.setTimeoutPolicy(undefined);
          if (this.#host.metrics?.basic) {
            this.#host.metrics.relaxed(d.connection, false, this.#pool(d.connection));
          }
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
          const delay = Math.max(0, d.at - this.#clock.now());
          const id = this.#clock.setTimer(() => {
            this.#reconnectTimers.delete(id);
            this.#handoff(
              d.retire,
              this.#clock.now() + (d.drainDeadline - d.at),
              `MOVING ${d.seq} (no target)`,
            );
          }, delay);
          this.#reconnectTimers.add(id);
          break;
        }
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
    if ("connection" in d && d.connection) detail.connection = this.label(d.connection);
    if ("retire" in d) detail.retire = d.retire.map((c) => this.label(c));
    this.#host.logger.debug(`maintenance: ${d.type} ${JSON.stringify(detail)}`);
    this.#host.emit("maintenance", detail);
  }

  #handoff(retire: Connection[], drainDeadline: number, reason: string): void {
    const cap = Math.max(0, drainDeadline - this.#clock.now());
    for (const conn of retire) {
      const info = this.#registered.get(conn);
      if (info === undefined || conn.closed) continue;
      // Exclusive connections: idle ones close now, busy ones when released.
      if (info.role === "exclusive") info.retire?.(conn);
      else this.#handoffOne(conn, cap, reason);
    }
  }

  #handoffOne(conn: Connection, cap: number, reason: string): void {
    conn.handoff(cap).then((r) => {
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
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
      return;
    }
    if (this.#timer !== undefined && this.#timerAt <= next) return;
    this.#clock.clearTimer(this.#timer);
    this.#timerAt = next;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.carry(this.controller.tick());
    }, Math.max(0, next - this.#clock.now()));
  }

  close(): void {
    this.#closed = true;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    for (const t of this.#reconnectTimers) this.#clock.clearTimer(t);
    this.#reconnectTimers.clear();
  }
}
