/**
 * The {@linkcode ClusterMaintenanceSimulator}: a real Redis Cluster on loopback with a RESP proxy
 * in front of every node, playing the cluster maintenance notifications (SMIGRATING /
 * SMIGRATED) around real slot migrations.
 *
 * @module
 */

import { ActionQueue, closedError, sleepOrClosed } from "./_action_queue.ts";
import { defaultConnector } from "../transport/default.ts";
import { defaultListen, type Listener, type ListenFunction } from "../transport/listen.ts";
import type { Connector } from "../transport/types.ts";
import {
  formatSlots,
  hostPort,
  type NotificationStyle,
  smigratedFrame,
  smigratingFrame,
} from "./_notifications.ts";
import { ProxyConnection, type ProxyHost } from "./_proxy_connection.ts";
import { type RedisCluster, type RedisClusterNode, startRedisCluster } from "./_redis_cluster.ts";
import { type HttpServer, serveHttp } from "./_http_server.ts";
import { handleApi } from "./_http_api.ts";
import { parseEndpoint } from "./parse_endpoint.ts";
import { clusterAction, type ClusterActionHost } from "./_cluster_actions.ts";
import { migrationPairs, planSlotMigration } from "./_slot_migration_plan.ts";
import type {
  ActionStatus,
  ClusterNodeInfo,
  ClusterSimulatorOptions,
  ConnectionInfo,
  Endpoint,
  NotificationRecord,
  NotificationType,
  RedirectInfo,
  SlotMigrateOptions,
  SlotMigrateResult,
  SlotMigrationEntry,
} from "./types.ts";

/** One node's proxy. */
interface NodeProxy {
  index: number;
  endpoint: Endpoint;
  key: string;
  upstream: Endpoint;
  listener: Listener;
  conns: Set<ProxyConnection>;
  host: ProxyHost;
}

/** MOVED / ASK records kept (the older half is dropped beyond it). */
const REDIRECT_LOG_LIMIT = 200_000;

/**
 * A real Redis Cluster (redis-server 7.0 processes, `cluster-enabled yes`) on loopback, with a
 * RESP proxy in front of every node. The nodes announce their proxies' addresses
 * (`cluster-announce-ip` / `cluster-announce-port`), so `CLUSTER SHARDS`, `CLUSTER SLOTS`, MOVED
 * and ASK all name the proxies, and every client connection goes through one. The proxies answer
 * the maintenance handshake themselves and count, per connection, the MOVED and ASK replies they
 * forward.
 *
 * {@linkcode ClusterMaintenanceSimulator.slotMigrate} plays a slot migration the way Redis
 * Software announces it: SMIGRATING to the opted-in connections, then a real migration
 * (`CLUSTER SETSLOT IMPORTING/MIGRATING`, `MIGRATE ... KEYS`, `SETSLOT NODE` on every primary),
 * a fourth node joining for `add` and `remove-add`, then SMIGRATED with one
 * `[source, destination, slots]` entry per pair. Sequence numbers start at 0 and are shared by
 * every node and connection. Emptied nodes stay up (`cluster-allow-replica-migration no`), so a
 * test can check that the client closed its connections to them.
 *
 * @example Move slots under a client
 * ```ts ignore
 * import { ClusterMaintenanceSimulator } from "@edge/redis/testing";
 * await using sim = await ClusterMaintenanceSimulator.start({ primaries: 3 });
 * // point the cluster client under test at sim.seeds, start a load, then:
 * const r = await sim.slotMigrate({ effect: "slot-shuffle", slots: "0-99" });
 * console.log(r.entries, sim.redirects({ since: Date.now() }));
 * ```
 */
export class ClusterMaintenanceSimulator {
  /** Opens the upstream connections. */
  readonly connector: Connector;
  /** Whether `CLIENT MAINT_NOTIFICATIONS` is rejected like open-source Redis does. */
  readonly rejectMaintNotifications: boolean;
  #options: ClusterSimulatorOptions;
  #listen: ListenFunction;
  #style: NotificationStyle;
  #cluster!: RedisCluster;
  #proxies: NodeProxy[] = [];
  #seq = 0;
  /** The next seq when the latest slot migration started (`waitForEvent`'s floor). */
  #actionSeq = 0;
  #events: NotificationRecord[] = [];
  #eventWaiters: (() => void)[] = [];
  #http: HttpServer | undefined;
  readonly #actions = new ActionQueue();
  #migrations: Promise<unknown> = Promise.resolve();
  #redirects: RedirectInfo[] = [];
  #timers = new Set<() => void>();
  #closed = false;
  readonly #actionHost: ClusterActionHost = {
    slotMigrate: (o) => this.slotMigrate(o),
    closeAll: () => this.#closeAll(),
    timers: this.#timers,
  };

  private constructor(options: ClusterSimulatorOptions) {
    this.#options = options;
    this.connector = options.connector ?? defaultConnector;
    this.#listen = options.listener ?? defaultListen;
    this.rejectMaintNotifications = options.rejectMaintNotifications ?? false;
    this.#style = options.notificationStyle ?? "reference";
  }

  /**
   * Starts the cluster and its proxies (and the HTTP API when `http` is set).
   *
   * @param options Primaries, addresses, HTTP API.
   * @returns The running simulator, once every node agrees on the slot map.
   * @throws {Error} When redis-server cannot be started or an address cannot be bound.
   *
   * @example
   * ```ts ignore
   * import { ClusterMaintenanceSimulator } from "@edge/redis/testing";
   * const sim = await ClusterMaintenanceSimulator.start({ primaries: 3, http: "127.0.0.1:0" });
   * console.log(sim.seeds, sim.http);
   * await sim.close();
   * ```
   */
  static async start(options: ClusterSimulatorOptions = {}): Promise<ClusterMaintenanceSimulator> {
    try {
      return await ClusterMaintenanceSimulator.#startOnce(options);
    } catch (e) {
      // On a loaded machine a fresh node can reset its first connections, or its port can still
      // be another test's server a moment before (which answers cluster commands with an error);
      // everything was closed, so once more on fresh ports. Bad options fail at once.
      if (e instanceof RangeError || e instanceof TypeError) throw e;
      return await ClusterMaintenanceSimulator.#startOnce(options);
    }
  }

  static async #startOnce(options: ClusterSimulatorOptions): Promise<ClusterMaintenanceSimulator> {
    const sim = new ClusterMaintenanceSimulator(options);
    const host = options.host ?? "127.0.0.1";
    try {
      sim.#cluster = await startRedisCluster({
        primaries: options.primaries ?? 3,
        replicasPerPrimary: options.replicasPerPrimary ?? 0,
        host,
        args: options.args,
        command: options.redisServer,
        connector: sim.connector,
        announce: (n) => sim.#addProxy(n.index, host, { host: n.host, port: n.port }),
      });
      if (options.http !== undefined) {
        const h = parseEndpoint(options.http, { host: "127.0.0.1", port: 0 });
        sim.#http = await serveHttp(h.host, h.port, (req) => handleApi(sim, req));
      }
    } catch (e) {
      await sim.close();
      throw e;
    }
    return sim;
  }

  /** `redis://host:port` of every node's proxy: the seeds for a cluster client. */
  get seeds(): string[] {
    return this.#live().map((p) => `redis://${p.key}`);
  }

  /** The HTTP API's address, when started with `http`. */
  get http(): Endpoint | undefined {
    return this.#http === undefined ? undefined : { host: this.#http.host, port: this.#http.port };
  }

  /**
   * The proxies of the cluster's nodes, in node order.
   *
   * @returns One endpoint per node.
   *
   * @example
   * ```ts ignore
   * console.log(sim.endpoints()); // [{ host: "127.0.0.1", port: 40001 }, ...]
   * ```
   */
  endpoints(): Endpoint[] {
    return this.#live().map((p) => ({ ...p.endpoint }));
  }

  /**
   * The nodes: id, proxy, real address, slots (as of the last migration or refresh).
   *
   * @returns One entry per node.
   *
   * @example
   * ```ts ignore
   * for (const n of sim.nodes()) console.log(n.endpoint.port, n.slots, n.connections);
   * ```
   */
  nodes(): ClusterNodeInfo[] {
    return this.#cluster.nodes.map((n) => {
      const p = this.#proxies.find((x) => x.index === n.index)!;
      return {
        index: n.index,
        id: n.id,
        role: n.role,
        primaryId: n.primaryId ?? null,
        endpoint: { ...p.endpoint },
        upstream: { host: n.host, port: n.port },
        pid: n.pid,
        slots: formatSlots(this.#cluster.slotsOf(n)),
        connections: [...p.conns].filter((c) => !c.isClosing).length,
      };
    });
  }

  /**
   * A snapshot of every open client connection on every node's proxy, with the MOVED and ASK
   * replies each one was forwarded.
   *
   * @returns One entry per connection.
   *
   * @example
   * ```ts ignore
   * const redirected = sim.connections().filter((c) => c.moved + c.ask > 0);
   * ```
   */
  connections(): ConnectionInfo[] {
    const now = Date.now();
    const out: ConnectionInfo[] = [];
    for (const p of this.#proxies) {
      for (const c of p.conns) {
        if (c.isClosing) continue;
        out.push({
          id: c.id,
          endpoint: p.key,
          remote: hostPort(c.client.remoteAddress ?? "?", c.client.remotePort ?? 0),
          tls: c.client.secure,
          upstream: hostPort(c.upstream.host, c.upstream.port),
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
        });
      }
    }
    return out;
  }

  /**
   * Every MOVED and ASK reply the proxies forwarded, oldest first, also those of connections
   * closed since (the latest 100 000 at least).
   *
   * @param filter `since`: only those forwarded at or after this time (ms since the epoch);
   * `slots`: only those naming one of these slots.
   * @returns The redirects.
   *
   * @example No redirect for the moved slots after SMIGRATED
   * ```ts ignore
   * const r = await sim.slotMigrate({ effect: "slot-shuffle" });
   * const done = sim.events().find((e) => e.seq === r.smigratedSeq)!.at;
   * console.log(sim.redirects({ since: done, slots: [0, 1, 2] }).length); // 0
   * ```
   */
  redirects(filter: { since?: number; slots?: Iterable<number> } = {}): RedirectInfo[] {
    const since = filter.since ?? 0;
    const slots = filter.slots === undefined ? undefined : new Set(filter.slots);
    return this.#redirects
      .filter((r) => r.at >= since && (slots === undefined || slots.has(r.slot)))
      .map((r) => ({ ...r }));
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
    return this.#events.map((e) => ({
      ...e,
      entries: e.entries?.map((x) => ({ ...x })),
    }));
  }

  /**
   * Resolves with the first announced notification of `type` whose seq is at least `minSeq`
   * (also one announced before the call). By default `minSeq` is where the latest
   * `slotMigrate` started, so a notification of an earlier migration is never returned. Pass a
   * seq (a result's `smigratingSeq`, or 0 for any since the start) to choose.
   *
   * @param type `SMIGRATING` or `SMIGRATED`.
   * @param minSeq Lowest sequence number to accept.
   *   @default {the first seq of the latest slotMigrate started (0 before any)}
   * @param timeoutMs Reject after this long. @default {30_000}
   * @returns The notification record.
   *
   * @example
   * ```ts ignore
   * const done = sim.slotMigrate({ effect: "add" });
   * console.log((await sim.waitForEvent("SMIGRATING")).slots);
   * await done;
   * ```
   */
  waitForEvent(
    type: NotificationType,
    minSeq: number = this.#actionSeq,
    timeoutMs = 30_000,
  ): Promise<NotificationRecord> {
    return new Promise((resolve, reject) => {
      const find = () => this.#events.find((x) => x.type === type && x.seq >= minSeq);
      const first = find();
      if (first !== undefined) return resolve({ ...first });
      if (this.#closed) {
        return reject(new Error(`Cannot see a ${type} notification: the simulator is closed`));
      }
      const t = setTimeout(() => {
        this.#eventWaiters = this.#eventWaiters.filter((w) => w !== waiter);
        reject(new Error(`Cannot see a ${type} notification: none within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = () => {
        const e = find();
        if (e === undefined && !this.#closed) return;
        clearTimeout(t);
        this.#eventWaiters = this.#eventWaiters.filter((w) => w !== waiter);
        if (e !== undefined) resolve({ ...e });
        else reject(new Error(`Cannot see a ${type} notification: the simulator was closed`));
      };
      this.#eventWaiters.push(waiter);
    });
  }

  /**
   * Plays a slot migration: SMIGRATING (every moving slot) to the opted-in RESP3 connections,
   * the real migration of each slot, then SMIGRATED with one entry per source and destination
   * (proxy addresses). `add` and `remove-add` first start a new node on its own proxy and MEET
   * it into the cluster (it owns no slot until the migration). Calls run one after another.
   *
   * @param options The effect, the slots, pauses, who is notified.
   * @returns The sequence numbers, the entries and what changed, once SMIGRATED was sent.
   * @throws {RangeError} For an unknown effect, bad slots or a bad target.
   *
   * @example
   * ```ts ignore
   * const { entries, added, emptied } = await sim.slotMigrate({ effect: "remove-add" });
   * ```
   */
  slotMigrate(options: SlotMigrateOptions = {}): Promise<SlotMigrateResult> {
    this.#actionSeq = this.#seq;
    // One migration at a time: a second call waits for the first to finish.
    const run = this.#migrations.catch(() => {}).then(() => this.#slotMigrate(options));
    this.#migrations = run;
    return run;
  }

  async #slotMigrate(options: SlotMigrateOptions): Promise<SlotMigrateResult> {
    this.#assertOpen();
    const { plan, moving, sourceOf, involved, added } = await planSlotMigration(
      this.#cluster,
      options,
      (t) => this.#nodeBy(t),
    );
    const c = this.#cluster;

    // SMIGRATING
    const smigratingSeq = this.#seq++;
    const slotsText = formatSlots(moving);
    const notified = this.#broadcast(
      smigratingFrame(smigratingSeq, slotsText, this.#style),
      options.notify === "involved" ? involved : undefined,
    );
    this.#record({
      type: "SMIGRATING",
      seq: smigratingSeq,
      slots: slotsText,
      at: Date.now(),
      notified,
    });
    if (!await sleepOrClosed(options.delayMs ?? 0, this.#timers)) throw closedError();

    // the real migration, one destination after another
    let keys = 0;
    for (const [dst, slots] of plan) {
      this.#assertOpen();
      const r = await c.migrateSlots(slots, dst, {
        keysPerBatch: options.keysPerBatch,
        pauseBetweenKeysMs: options.pauseBetweenKeysMs,
        beforeFinalize: async () => {
          const ms = options.finalizeDelayMs ?? 0;
          if (ms > 0 && !await sleepOrClosed(ms, this.#timers)) throw closedError();
        },
      });
      keys += r.keys;
    }
    this.#assertOpen();

    // SMIGRATED: one entry per source and destination pair
    const entries: SlotMigrationEntry[] = migrationPairs(plan, sourceOf).map((e) => ({
      source: this.#addressOf(e.src),
      destination: this.#addressOf(e.dst),
      slots: formatSlots(e.slots),
    }));
    const smigratedSeq = this.#seq++;
    const copies = options.smigratedCopies ?? 1;
    let n = 0;
    for (let k = 0; k < copies; k++) {
      n = this.#broadcast(
        smigratedFrame(smigratedSeq, entries, this.#style, options.entryShape ?? "triplets"),
        options.notify === "involved" ? involved : undefined,
      );
    }
    this.#record({
      type: "SMIGRATED",
      seq: smigratedSeq,
      slots: slotsText,
      entries: entries.map((e) => ({ ...e })),
      at: Date.now(),
      notified: n,
    });
    const emptied = [...new Set(sourceOf.values())]
      .filter((id) => c.slotsOf(id).length === 0)
      .map((id) => this.#addressOf(id));
    return {
      smigratingSeq,
      smigratedSeq,
      entries,
      keys,
      notified,
      added: added === undefined ? null : this.#addressOf(added.id),
      emptied,
    };
  }

  /**
   * Starts an action the way the fault injector's `POST /action` does and returns its id at
   * once; {@linkcode ClusterMaintenanceSimulator.actionStatus} reports its progress.
   *
   * @param type `slot_migrate` (parameters `effect`, `slots`, `target`, `delay_ms`,
   * `keys_per_batch`, `pause_between_keys_ms`, `finalize_delay_ms`, `notify`, `entry_shape`,
   * `smigrated_copies`),
   * `dmc_restart` (closes every client connection), `sleep` or `sequence_of_actions`.
   * @param parameters The action's parameters (snake_case or camelCase).
   * @returns The action id.
   * @throws {TypeError} For an unknown action type.
   *
   * @example
   * ```ts ignore
   * const id = sim.startAction("slot_migrate", { effect: "add" });
   * ```
   */
  startAction(type: string, parameters: Record<string, unknown> = {}): string {
    this.#assertOpen();
    // Actions run one after another, like the fault injector's queue.
    return this.#actions.start(clusterAction(this.#actionHost, type, parameters));
  }

  /**
   * The state of an action started with {@linkcode ClusterMaintenanceSimulator.startAction}.
   *
   * @param id The action id.
   * @returns Its status, or `undefined` for an unknown id.
   *
   * @example
   * ```ts ignore
   * console.log(sim.actionStatus(id)?.status);
   * ```
   */
  actionStatus(id: string): ActionStatus | undefined {
    return this.#actions.status(id);
  }

  /**
   * Stops everything: the HTTP server, the proxies, every connection, running actions and the
   * cluster's redis-server processes. Idempotent.
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
    await this.#http?.close();
    await Promise.all(this.#proxies.map((p) => p.listener.close()));
    for (const p of this.#proxies) for (const c of [...p.conns]) c.destroy();
    // Stopping the cluster ends a running migration (its next step fails), then let it settle.
    await this.#cluster?.stop();
    await this.#actions.idle();
    await this.#migrations.catch(() => {});
    for (const p of this.#proxies) for (const c of [...p.conns]) c.destroy();
    for (const w of [...this.#eventWaiters]) w();
  }

  /** Same as {@linkcode ClusterMaintenanceSimulator.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  #assertOpen(): void {
    if (this.#closed) throw new Error("Cannot run the action: the simulator is closed");
  }

  #live(): NodeProxy[] {
    if (!this.#cluster) return [];
    const idx = new Set(this.#cluster.nodes.map((n) => n.index));
    return this.#proxies.filter((p) => idx.has(p.index)).sort((a, b) => a.index - b.index);
  }

  async #addProxy(index: number, host: string, upstream: Endpoint): Promise<Endpoint> {
    const conns = new Set<ProxyConnection>();
    const proxyHost: ProxyHost = {
      connector: this.connector,
      rejectMaintNotifications: this.rejectMaintNotifications,
      latencyMs: () => 0,
      holdUntil: () => 0,
      blackholed: () => false,
      paused: () => false,
      optInReplay: () => [],
      closed: (conn) => {
        conns.delete(conn);
      },
      redirected: (conn, r) => {
        this.#redirects.push({
          connection: conn.id,
          endpoint: hostPort(conn.endpoint.host, conn.endpoint.port),
          ...r,
        });
        if (this.#redirects.length > REDIRECT_LOG_LIMIT) {
          this.#redirects = this.#redirects.slice(-REDIRECT_LOG_LIMIT / 2);
        }
      },
      debug: (m) => this.#debug(m),
    };
    const holder: { p?: NodeProxy } = {};
    const listener = await this.#listen({ host, port: 0 }, (t) => {
      const p = holder.p;
      if (this.#closed || p === undefined) {
        t.destroy();
        return;
      }
      conns.add(new ProxyConnection(p.host, t, p.endpoint, p.upstream));
    });
    const endpoint = { host, port: listener.port };
    const p: NodeProxy = {
      index,
      endpoint,
      key: hostPort(host, listener.port),
      upstream,
      listener,
      conns,
      host: proxyHost,
    };
    holder.p = p;
    this.#proxies.push(p);
    if (this.#closed) await listener.close();
    return endpoint;
  }

  #addressOf(id: string): string {
    const n = this.#cluster.node(id);
    const p = n === undefined ? undefined : this.#proxies.find((x) => x.index === n.index);
    if (p === undefined) throw new Error(`Cannot find the proxy of node ${id}`);
    return p.key;
  }

  #nodeBy(target: number | string): RedisClusterNode {
    const nodes = this.#cluster.nodes;
    const n = typeof target === "number"
      ? nodes.find((x) => x.index === target)
      : nodes.find((x) => this.#addressOf(x.id) === target || x.id === target);
    if (n === undefined || n.role !== "primary") {
      throw new RangeError(`Cannot migrate slots: "${target}" is not a primary of the cluster`);
    }
    return n;
  }

  /**
   * Writes a raw RESP3 push frame to every opted-in RESP3 connection of every node: fault
   * scenarios (a late, reordered or malformed notification).
   *
   * @param frame The frame's bytes, or its text (`">3\r\n+SMIGRATED\r\n..."`).
   * @returns The number of connections written to.
   *
   * @example
   * ```ts ignore
   * sim.inject(">3\r\n+SMIGRATED\r\n:9\r\n*1\r\n*3\r\n+a:1\r\n+b:2\r\n+99999\r\n");
   * ```
   */
  inject(frame: Uint8Array | string): number {
    this.#assertOpen();
    return this.#broadcast(typeof frame === "string" ? new TextEncoder().encode(frame) : frame);
  }

  /** Writes `frame` to every opted-in RESP3 connection (of the `only` nodes, by id). */
  #broadcast(frame: Uint8Array, only?: Set<string>): number {
    let n = 0;
    const ids = only === undefined ? undefined : new Set(
      this.#cluster.nodes.filter((x) => only.has(x.id)).map((x) => x.index),
    );
    for (const p of this.#proxies) {
      if (ids !== undefined && !ids.has(p.index)) continue;
      for (const c of p.conns) {
        if (c.optedIn && c.protocol === 3 && !c.isClosing) {
          c.inject(frame);
          n++;
        }
      }
    }
    return n;
  }

  /** Closes every client connection of every node (a proxy restart); returns how many. */
  #closeAll(): number {
    let closed = 0;
    for (const px of this.#proxies) {
      for (const c of [...px.conns]) {
        if (!c.isClosing) {
          c.close();
          closed++;
        }
      }
    }
    return closed;
  }

  #record(e: NotificationRecord): void {
    this.#events.push(e);
    for (const w of [...this.#eventWaiters]) w();
  }

  #debug(message: string): void {
    this.#options.logger?.debug(`[cluster simulator] ${message}`);
  }
}
