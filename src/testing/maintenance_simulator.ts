/**
 * The {@linkcode MaintenanceSimulator}: a RESP proxy that plays Redis Software maintenance
 * events in front of real redis-server processes.
 *
 * @module
 */

import { ActionQueue, closedError, sleepOrClosed } from "./_action_queue.ts";
import { parseEndpoint } from "./parse_endpoint.ts";
import { moving, movingReplay, movingTarget, type MovingWindow } from "./_moving_windows.ts";
import { defaultConnector } from "../transport/default.ts";
import { defaultListen, type Listener, type ListenFunction } from "../transport/listen.ts";
import type { Connector } from "../transport/types.ts";
import {
  endFrame,
  hostPort,
  movingFrame,
  type NotificationStyle,
  startFrame,
} from "./_notifications.ts";
import {
  ProxyConnection,
  type ProxyConnection as Conn,
  type ProxyHost,
} from "./_proxy_connection.ts";
import type { SpawnedRedis } from "./_redis_process.ts";
import { type HttpServer, serveHttp } from "./_http_server.ts";
import { handleApi } from "./_http_api.ts";
import { RestMock } from "./rest_mock.ts";
import type { SimulatorFaults } from "./simulator_faults.ts";
import { FaultSwitches } from "./_fault_switches.ts";
import { maintenanceAction, type MaintenanceActionHost } from "./_maintenance_actions.ts";
import { promoteReplica, spawnReplicaOf } from "./_replication.ts";
import type {
  ActionStatus,
  BindOptions,
  BindResult,
  ConnectionInfo,
  Endpoint,
  FailoverOptions,
  FailoverResult,
  MaintenanceSimulatorOptions,
  MigrateOptions,
  MigrateResult,
  NotificationRecord,
  NotificationType,
} from "./types.ts";

interface Bound {
  endpoint: Endpoint;
  key: string;
  listener: Listener;
}

function key(e: Endpoint): string {
  return hostPort(e.host, e.port);
}

/**
 * A RESP proxy that behaves like Redis Software's proxy during maintenance, in front of a real
 * redis-server. Clients connect to {@linkcode MaintenanceSimulator.endpoint}; the simulator
 * forwards every command (one upstream connection per client), answers the maintenance
 * handshake itself and plays events on demand:
 *
 * - {@linkcode MaintenanceSimulator.bind}: endpoint rebind (MOVING), a real new listener,
 *   optionally with data movement to a second redis-server;
 * - {@linkcode MaintenanceSimulator.migrate}: MIGRATING / MIGRATED with stalled or slowed replies;
 * - {@linkcode MaintenanceSimulator.failover}: FAILING_OVER / FAILED_OVER with a real promotion
 *   of a replica redis-server;
 * - {@linkcode MaintenanceSimulator.faults}: latency, blackhole, close-all, pause.
 *
 * Sequence numbers start at 0 and are shared by every event type and every connection.
 *
 * @example Rehearse a rebind in a test
 * ```ts ignore
 * import { MaintenanceSimulator } from "@edge/redis/testing";
 * await using sim = await MaintenanceSimulator.start({ upstream: "127.0.0.1:6379" });
 * // point the client under test at sim.endpoint, then:
 * const result = await sim.bind({ time: 2 }); // MOVING now, old connections closed after 2 s
 * console.log(result.target, sim.connections());
 * ```
 */
export class MaintenanceSimulator {
  /** Opens the upstream connections. */
  readonly connector: Connector;
  /** Whether `CLIENT MAINT_NOTIFICATIONS` is rejected like open-source Redis does. */
  readonly rejectMaintNotifications: boolean;
  /** The management REST mock (served on the HTTP server when `http` is set). */
  readonly rest: RestMock;
  /** Network faults. */
  readonly faults: SimulatorFaults;
  #options: MaintenanceSimulatorOptions;
  #listen: ListenFunction;
  #style: NotificationStyle;
  #upstream: Endpoint;
  #bound: Bound[] = [];
  #conns = new Set<Conn>();
  #seq = 0;
  /** The next seq when the latest bind, migrate or failover started (`waitForEvent`'s floor). */
  #actionSeq = 0;
  #events: NotificationRecord[] = [];
  #eventWaiters: (() => void)[] = [];
  #windows: MovingWindow[] = [];
  #retained: Uint8Array | undefined;
  #spawned: SpawnedRedis[] = [];
  #http: HttpServer | undefined;
  readonly #actions = new ActionQueue();
  #timers = new Set<() => void>();
  #closed = false;
  readonly #faults: FaultSwitches;
  readonly #actionHost: MaintenanceActionHost;
  readonly #debugFn = (message: string): void => this.#debug(message);
  #slow = 0;
  #stallUntil = 0;
  #gate: Promise<Endpoint> | undefined;
  #host: ProxyHost;

  private constructor(options: MaintenanceSimulatorOptions) {
    this.#options = options;
    this.connector = options.connector ?? defaultConnector;
    this.#listen = options.listener ?? defaultListen;
    this.rejectMaintNotifications = options.rejectMaintNotifications ?? false;
    this.#style = options.notificationStyle ?? "reference";
    this.#upstream = parseEndpoint(options.upstream, { host: "127.0.0.1", port: 6379 });
    this.rest = new RestMock(options.rest, () => this.endpoints());
    this.faults = this.#faults = new FaultSwitches(this.#conns);
    this.#actionHost = {
      bind: (o) => this.bind(o),
      migrate: (o) => this.migrate(o),
      failover: (o) => this.failover(o),
      faults: this.#faults,
      endBlackhole: () => this.#faults.endBlackhole(),
      timers: this.#timers,
    };
    this.#host = this.#makeHost();
  }

  /**
   * Starts a simulator: binds its endpoint (and the HTTP API when `http` is set).
   *
   * @param options The upstream redis-server and where to listen.
   * @returns The running simulator.
   * @throws {Error} When an address cannot be bound.
   *
   * @example
   * ```ts ignore
   * import { MaintenanceSimulator } from "@edge/redis/testing";
   * const sim = await MaintenanceSimulator.start({
   *   upstream: { host: "127.0.0.1", port: 6379 },
   *   listen: { host: "127.0.0.1", port: 16379 },
   *   http: "127.0.0.1:18080",
   * });
   * console.log(sim.endpoint, sim.http);
   * await sim.close();
   * ```
   */
  static async start(options: MaintenanceSimulatorOptions): Promise<MaintenanceSimulator> {
    const sim = new MaintenanceSimulator(options);
    const listen = parseEndpoint(options.listen ?? {}, { host: "127.0.0.1", port: 0 });
    await sim.#bindListener(listen);
    if (options.http !== undefined) {
      const h = parseEndpoint(options.http, { host: "127.0.0.1", port: 0 });
      try {
        sim.#http = await serveHttp(h.host, h.port, (req) => handleApi(sim, req));
      } catch (e) {
        await sim.close();
        throw e;
      }
    }
    return sim;
  }

  /** The simulator's first endpoint: where clients connect. */
  get endpoint(): Endpoint {
    return { ...this.#bound[0]!.endpoint };
  }

  /** The HTTP API's address, when started with `http`. */
  get http(): Endpoint | undefined {
    return this.#http === undefined ? undefined : { host: this.#http.host, port: this.#http.port };
  }

  /** The redis-server the endpoints currently forward to. */
  get upstream(): Endpoint {
    return { ...this.#upstream };
  }

  /**
   * Every endpoint the simulator listens on: the first one and each bind target.
   *
   * @returns The endpoints, oldest first.
   *
   * @example
   * ```ts ignore
   * console.log(sim.endpoints()); // [{ host: "127.0.0.1", port: 16379 }, ...]
   * ```
   */
  endpoints(): Endpoint[] {
    return this.#bound.map((b) => ({ ...b.endpoint }));
  }

  /**
   * Process ids of the redis-server processes the simulator started (replicas for data
   * movement and failover); all of them are stopped by {@linkcode MaintenanceSimulator.close}.
   *
   * @returns The pids, running or not.
   *
   * @example
   * ```ts ignore
   * await sim.failover({ time: 1 });
   * console.log(sim.spawnedPids()); // [12345]
   * ```
   */
  spawnedPids(): number[] {
    return this.#spawned.map((s) => s.pid);
  }

  /**
   * A snapshot of every open client connection.
   *
   * @returns One entry per connection.
   *
   * @example
   * ```ts ignore
   * for (const c of sim.connections()) console.log(c.id, c.optedIn, c.endpointType, c.protocol);
   * ```
   */
  connections(): ConnectionInfo[] {
    const now = Date.now();
    return [...this.#conns].filter((c) => !c.isClosing).map((c) => ({
      id: c.id,
      endpoint: key(c.endpoint),
      remote: hostPort(c.client.remoteAddress ?? "?", c.client.remotePort ?? 0),
      tls: c.client.secure,
      upstream: key(c.upstream),
      optedIn: c.optedIn,
      endpointType: c.optedIn ? c.endpointType : null,
      protocol: c.protocol,
      db: c.db,
      inFlight: c.inFlight,
      bytesIn: c.bytesIn,
      bytesOut: c.bytesOut,
      moved: c.moved,
      ask: c.ask,
      ageMs: now - c.createdAt,
    }));
  }

  /**
   * Every notification announced so far, oldest first.
   *
   * @returns A copy of the log.
   *
   * @example
   * ```ts ignore
   * console.log(sim.events().map((e) => `${e.type} ${e.seq}`));
   * ```
   */
  events(): NotificationRecord[] {
    return this.#events.map((e) => ({ ...e }));
  }

  /**
   * Resolves with the first announced notification of `type` whose seq is at least `minSeq`
   * (also one announced before the call). By default `minSeq` is where the latest `bind`,
   * `migrate` or `failover` started, so a notification of an earlier one is never returned:
   * after a second `bind`, `waitForEvent("MOVING")` waits for that bind's MOVING. Pass a seq
   * (a result's `seq`, or 0 for any since the start) to choose.
   *
   * @param type The notification type.
   * @param minSeq Lowest sequence number to accept.
   *   @default {the first seq of the latest bind, migrate or failover started (0 before any)}
   * @param timeoutMs Reject after this long. @default {30_000}
   * @returns The notification record.
   *
   * @example Act while a rebind window is open
   * ```ts ignore
   * const done = sim.bind({ time: 2 });
   * const moving = await sim.waitForEvent("MOVING");
   * console.log(moving.seq, moving.target);
   * await done;
   * const first = await sim.waitForEvent("MOVING", 0); // the oldest MOVING, however many binds
   * ```
   */
  waitForEvent(
    type: NotificationType,
    minSeq: number = this.#actionSeq,
    timeoutMs = 30_000,
  ): Promise<NotificationRecord> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const e = this.#events.find((x) => x.type === type && x.seq >= minSeq);
        if (e === undefined) return false;
        resolve({ ...e });
        return true;
      };
      if (check()) return;
      if (this.#closed) {
        reject(new Error(`Cannot see a ${type} notification: the simulator is closed`));
        return;
      }
      const t = setTimeout(() => {
        this.#eventWaiters = this.#eventWaiters.filter((w) => w !== waiter);
        reject(new Error(`Cannot see a ${type} notification: none within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = () => {
        if (check() || this.#closed) {
          clearTimeout(t);
          this.#eventWaiters = this.#eventWaiters.filter((w) => w !== waiter);
          reject(new Error(`Cannot see a ${type} notification: the simulator was closed`));
        }
      };
      this.#eventWaiters.push(waiter);
    });
  }

  // ---- events ------------------------------------------------------------------------------

  /**
   * Rebinds the endpoint: opens a listener on the target, sends MOVING to every opted-in
   * connection of the other endpoints (the target written per connection's endpoint type; null
   * for `none` and for a bare `ON`), re-sends it with the remaining time to connections that
   * opt in during the window, and closes every old connection when the window ends.
   *
   * The old endpoints keep accepting connections, standing for the DNS name: connections
   * accepted there before `dnsDelay` (half the window by default) are old ones (MOVING on
   * opt-in, closed at the end); connections accepted later count as reaching the new place (DNS
   * has followed): no MOVING, not closed. This lets a client with a `none` endpoint type
   * reconnect to its configured endpoint at half the window, as the reference clients do.
   *
   * With `dataMovement`, a second redis-server replicates the current upstream from the start
   * and is promoted when the window ends; from then on every endpoint forwards to it (live
   * connections of the target are moved to it after their in-flight replies have arrived).
   *
   * @param options The window and the target.
   * @returns What was done, once the window has ended.
   *
   * @example
   * ```ts ignore
   * const { seq, target, closed } = await sim.bind({ time: 2, dataMovement: true });
   * ```
   */
  async bind(options: BindOptions = {}): Promise<BindResult> {
    this.#assertOpen();
    this.#actionSeq = this.#seq;
    const time = options.time ?? 15;
    let replica: SpawnedRedis | undefined;
    if (options.dataMovement === true) replica = await this.#spawnReplica();
    const from = new Set(this.#bound.map((b) => b.key));
    const target = await this.#bindTarget(options.target);
    const seq = this.#seq++;
    const window: MovingWindow = {
      seq,
      endAt: Date.now() + time * 1000,
      dnsAt: Date.now() + (options.dnsDelay ?? time / 2) * 1000,
      target: target.endpoint,
      from,
    };
    this.#windows.push(window);
    let notified = 0;
    for (const c of this.#conns) {
      if (moving(window, c) && c.optedIn && c.protocol === 3 && !c.isClosing) {
        c.inject(
          movingFrame(
            seq,
            time,
            movingTarget(c, target.endpoint, this.#options.hostNames),
            this.#style,
          ),
        );
        notified++;
      }
    }
    this.#record({
      type: "MOVING",
      seq,
      time,
      target: { ...target.endpoint },
      at: Date.now(),
      notified,
    });
    const ok = await sleepOrClosed(time * 1000, this.#timers);
    this.#windows = this.#windows.filter((w) => w !== window);
    if (!ok) throw closedError();
    let closed = 0;
    for (const c of [...this.#conns]) {
      if (moving(window, c) && !c.isClosing) {
        c.close();
        closed++;
      }
    }
    if (replica !== undefined) {
      const to = { host: replica.host, port: replica.port };
      const from = this.#upstream;
      await this.#switchAll(to, () => promoteReplica(this.connector, to, from, this.#debugFn));
    }
    return { seq, target: { ...target.endpoint }, upstream: this.upstream, notified, closed };
  }

  /**
   * Plays a shard migration: MIGRATING to every opted-in connection, then (optionally) every
   * reply held for `stallMs` or delayed by `slowMs`, then MIGRATED after `time` seconds (or
   * after the stall, if longer). The MIGRATED is retained and replayed to connections that opt
   * in later.
   *
   * @param options Duration, shard ids, stall and slowdown.
   * @returns The sequence numbers, once MIGRATED has been sent.
   *
   * @example
   * ```ts ignore
   * const { migratingSeq, migratedSeq } = await sim.migrate({ time: 1, stallMs: 500 });
   * ```
   */
  async migrate(options: MigrateOptions = {}): Promise<MigrateResult> {
    this.#assertOpen();
    this.#actionSeq = this.#seq;
    const time = options.time ?? 2;
    const shards = options.shardIds ?? ["1"];
    const json = JSON.stringify(shards);
    const migratingSeq = this.#seq++;
    const notified = this.#broadcast(
      startFrame("MIGRATING", migratingSeq, time, json, this.#style),
    );
    this.#record({
      type: "MIGRATING",
      seq: migratingSeq,
      time,
      shardIds: shards,
      at: Date.now(),
      notified,
    });
    const stall = options.stallMs ?? 0;
    const slow = options.slowMs ?? 0;
    if (stall > 0) this.#stallUntil = Math.max(this.#stallUntil, Date.now() + stall);
    if (slow > 0) this.#slow += slow;
    let ok: boolean;
    try {
      ok = await sleepOrClosed(Math.max(time * 1000, stall), this.#timers);
    } finally {
      if (slow > 0) this.#slow -= slow;
      this.#faults.kickAll();
    }
    if (!ok) throw closedError();
    const migratedSeq = this.#seq++;
    const frame = endFrame("MIGRATED", migratedSeq, json, this.#style);
    this.#retained = frame;
    const n = this.#broadcast(frame);
    this.#record({
      type: "MIGRATED",
      seq: migratedSeq,
      shardIds: shards,
      at: Date.now(),
      notified: n,
    });
    return { migratingSeq, migratedSeq, notified };
  }

  /**
   * Plays a failover with a real promotion: a replica of the current upstream is started and
   * synchronised (or the given one is used), FAILING_OVER goes to every opted-in connection,
   * after `time` seconds the replica is promoted (`REPLICAOF NO ONE`) and every connection is
   * moved to it, then FAILED_OVER (retained and replayed to connections that opt in later).
   *
   * In-flight commands: at the switch every connection holds its new commands and waits for
   * the replies of the commands already sent to the old upstream (up to 5 s, else that
   * connection is closed); only then is the replica promoted, so no acknowledged write is lost.
   * Each connection then opens a connection to the new upstream, re-applies its session
   * (HELLO/AUTH, SELECT, CLIENT TRACKING, subscriptions) and sends what it held. Connections
   * accepted during the switch wait for the new upstream.
   *
   * @param options Duration, shard ids and an optional existing replica.
   * @returns The sequence numbers and the new upstream.
   *
   * @example
   * ```ts ignore
   * const { upstream } = await sim.failover({ time: 1 });
   * ```
   */
  async failover(options: FailoverOptions = {}): Promise<FailoverResult> {
    this.#assertOpen();
    this.#actionSeq = this.#seq;
    const time = options.time ?? 2;
    const shards = options.shardIds ?? ["1"];
    const json = JSON.stringify(shards);
    let replica: Endpoint;
    if (options.replica !== undefined) replica = parseEndpoint(options.replica);
    else {
      const r = await this.#spawnReplica();
      replica = { host: r.host, port: r.port };
    }
    const failingOverSeq = this.#seq++;
    const notified = this.#broadcast(
      startFrame("FAILING_OVER", failingOverSeq, time, json, this.#style),
    );
    this.#record({
      type: "FAILING_OVER",
      seq: failingOverSeq,
      time,
      shardIds: shards,
      at: Date.now(),
      notified,
    });
    if (!await sleepOrClosed(time * 1000, this.#timers)) throw closedError();
    const from = this.#upstream;
    await this.#switchAll(
      replica,
      () => promoteReplica(this.connector, replica, from, this.#debugFn),
    );
    const failedOverSeq = this.#seq++;
    const frame = endFrame("FAILED_OVER", failedOverSeq, json, this.#style);
    this.#retained = frame;
    const n = this.#broadcast(frame);
    this.#record({
      type: "FAILED_OVER",
      seq: failedOverSeq,
      shardIds: shards,
      at: Date.now(),
      notified: n,
    });
    return { failingOverSeq, failedOverSeq, upstream: { ...replica }, notified };
  }

  // ---- HTTP actions ------------------------------------------------------------------------

  /**
   * Starts an action the way the fault injector's `POST /action` does and returns its id at
   * once; {@linkcode MaintenanceSimulator.actionStatus} reports its progress.
   *
   * @param type `bind`, `migrate`, `failover`, `network_failure`, `dmc_restart`, `sleep` or
   * `sequence_of_actions`.
   * @param parameters The action's parameters (snake_case or camelCase).
   * @returns The action id.
   * @throws {TypeError} For an unknown action type.
   *
   * @example
   * ```ts ignore
   * const id = sim.startAction("migrate", { time: 1, shard_ids: ["1"] });
   * console.log(sim.actionStatus(id)?.status); // "running"
   * ```
   */
  startAction(type: string, parameters: Record<string, unknown> = {}): string {
    this.#assertOpen();
    // Actions run one after another, like the fault injector's queue.
    return this.#actions.start(maintenanceAction(this.#actionHost, type, parameters));
  }

  /**
   * The state of an action started with {@linkcode MaintenanceSimulator.startAction}.
   *
   * @param id The action id.
   * @returns Its status, or `undefined` for an unknown id.
   *
   * @example
   * ```ts ignore
   * console.log(sim.actionStatus(id)); // { status: "success", output: {...}, error: null }
   * ```
   */
  actionStatus(id: string): ActionStatus | undefined {
    return this.#actions.status(id);
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /**
   * Stops everything: listeners, the HTTP server, every connection, running actions and the
   * redis-server processes the simulator started. Idempotent.
   *
   * @returns Once all of it is gone.
   *
   * @example
   * ```ts ignore
   * await sim.close();
   * ```
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const cancel of [...this.#timers]) cancel();
    this.#timers.clear();
    this.#faults.dispose();
    await Promise.all(this.#bound.map((b) => b.listener.close()));
    await this.#http?.close();
    for (const c of [...this.#conns]) c.destroy();
    this.#conns.clear();
    await Promise.all(this.#spawned.map((s) => s.stop()));
    for (const w of [...this.#eventWaiters]) w();
  }

  /** Same as {@linkcode MaintenanceSimulator.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  #assertOpen(): void {
    if (this.#closed) throw new Error("Cannot run the action: the simulator is closed");
  }

  async #bindListener(at: Endpoint): Promise<Bound> {
    const holder: { bound?: Bound } = {};
    const listener = await this.#listen({ ...at, tls: this.#options.tls }, (t) => {
      if (this.#closed || holder.bound === undefined) {
        t.destroy();
        return;
      }
      const c = new ProxyConnection(
        this.#host,
        t,
        holder.bound.endpoint,
        this.#upstream,
        this.#gate,
      );
      this.#conns.add(c);
    });
    const endpoint = { host: at.host, port: listener.port };
    const bound: Bound = { endpoint, key: key(endpoint), listener };
    holder.bound = bound;
    this.#bound.push(bound);
    return bound;
  }

  async #bindTarget(target: Endpoint | string | undefined): Promise<Bound> {
    const first = this.#bound[0]!.endpoint;
    if (target !== undefined) {
      return this.#bindListener(parseEndpoint(target, { host: first.host, port: 0 }));
    }
    if (first.host === "127.0.0.1") {
      try {
        return await this.#bindListener({ host: "127.0.0.2", port: first.port });
      } catch {
        // 127.0.0.2 not usable here (or taken): fall back to another port.
      }
    }
    return this.#bindListener({ host: first.host, port: 0 });
  }

  #broadcast(frame: Uint8Array): number {
    let n = 0;
    for (const c of this.#conns) {
      if (c.optedIn && c.protocol === 3 && !c.isClosing) {
        c.inject(frame);
        n++;
      }
    }
    return n;
  }

  #record(e: NotificationRecord): void {
    this.#events.push(e);
    for (const w of [...this.#eventWaiters]) w();
  }

  /** A replica of the current upstream, in sync, stopped on close. */
  #spawnReplica(): Promise<SpawnedRedis> {
    return spawnReplicaOf(this.#upstream, {
      connector: this.connector,
      command: this.#options.redisServer,
      timers: this.#timers,
      started: (r) => {
        this.#spawned.push(r);
        return !this.#closed;
      },
      debug: this.#debugFn,
    });
  }

  /**
   * Moves every connection to `to`: all of them stop sending, their in-flight replies drain,
   * then `promote` runs (no write can reach the old upstream any more), then they reconnect.
   * Connections accepted meanwhile wait for the new upstream.
   */
  async #switchAll(to: Endpoint, promote: () => Promise<void>): Promise<void> {
    let open!: (e: Endpoint) => void;
    this.#gate = new Promise<Endpoint>((r) => open = r);
    const conns = [...this.#conns];
    const held = await Promise.all(conns.map((c) => c.hold()));
    try {
      await promote();
      this.#upstream = { ...to };
    } finally {
      this.#gate = undefined;
      open(this.#upstream);
      await Promise.all(conns.map((c, i) => held[i] ? c.release(this.#upstream) : undefined));
    }
  }

  #makeHost(): ProxyHost {
    return {
      connector: this.connector,
      rejectMaintNotifications: this.rejectMaintNotifications,
      latencyMs: () => this.#faults.latencyMs + this.#slow,
      holdUntil: () => this.#faults.paused ? Infinity : this.#stallUntil,
      blackholed: () => this.#faults.blackholed,
      paused: () => this.#faults.paused,
      optInReplay: (conn) => this.#optInReplay(conn),
      closed: (conn) => {
        this.#conns.delete(conn);
      },
      debug: (message) => this.#debug(message),
    };
  }

  #optInReplay(conn: Conn): Uint8Array[] {
    const out = this.#retained === undefined ? [] : [this.#retained];
    const replay = movingReplay(this.#windows, conn, Date.now(), this.#options.hostNames);
    for (const r of replay) out.push(movingFrame(r.seq, r.remaining, r.target, this.#style));
    return out;
  }

  #debug(message: string): void {
    this.#options.logger?.debug(`[simulator] ${message}`);
  }
}
