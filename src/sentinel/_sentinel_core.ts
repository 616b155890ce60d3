// The sentinel client's core: one executor (the executor core) pointed at the node the sentinels
// name, moved when they name another; every entry point waits for the first discovery, and a
// write refused by a demoted master waits for the move and is sent again.
import { sentinelMetrics } from "./_sentinel_metrics.ts";
import { ExecutorCore } from "../client/executor_core.ts";
import type { ClientCore, ClientEvents, SendCommandOptions } from "../client/client_shell.ts";
import type { ClientMaintenanceState } from "../client/maintenance_support.ts";
import { type GroupCommand, moveExecutor } from "../client/node_executor.ts";
import type { PubSubListener, SubscriptionKind } from "../client/subscription.ts";
import type { WatchSession } from "../client/watch_session.ts";
import type { Transform } from "../commands/command_runner.ts";
import type { Endpoint } from "../connection/connection.ts";
import { FLAG_ERRORS_AS_VALUES } from "../connection/connection.ts";
import { ClosedError, ConnectionError, ReplyError } from "../errors.ts";
import { type Logger, silentLogger } from "../logger.ts";
import type { HostPort } from "../maintenance/endpoint.ts";
import type { RedisArgument } from "../resp/types.ts";
import { type Clock, systemClock } from "../_clock.ts";
import { createProbe, createSessionOpener, type Probe, type SentinelSession } from "./_dial.ts";
import { discoverMaster, discoverReplicas, MAX_SENTINELS, SentinelSet } from "./_discovery.ts";
import { SentinelMonitor } from "./_monitor.ts";
import {
  endpointName,
  entriesOf,
  entryAddress,
  masterAddressOf,
  replicaEntryHealthy,
  roleOf,
  sameEndpoint,
  type SentinelEvent,
} from "./_replies.ts";
import type { RedisSentinelClientOptions, ResolvedSentinelOptions } from "./options.ts";

/** The detail of a `switch` event: the data connections moved. */
export interface SentinelSwitchDetail {
  /** The node left; `undefined` for the first one. */
  from: HostPort | undefined;
  /** The node the data connections go to now. */
  to: HostPort;
  /** Whether `to` is the master or a replica. */
  role: "master" | "replica";
  /** What prompted the move: a sentinel event, a periodic check, a refused write, a lost node. */
  reason: string;
}

/**
 * Switches named within this many ms of the last one followed are coalesced: a flapping
 * `+switch-master` makes a few moves, not one per event.
 */
const SETTLE_MS = 250;

/** Longest wait, in ms, for the commands written to the old node before the move. */
const DRAIN_CAP = 1000;

function isRefusal(v: unknown): v is ReplyError {
  return v instanceof ReplyError && (v.prefix === "READONLY" || v.prefix === "NOREPLICAS");
}

/** The sentinel client's {@linkcode ClientCore}. */
export class SentinelCore implements ClientCore {
  readonly #s: ResolvedSentinelOptions;
  readonly #logger: Logger;
  readonly #events: ClientEvents;
  readonly #exec: ExecutorCore;
  readonly #clock: Clock;
  readonly #sentinels: SentinelSet;
  readonly #probe: Probe;
  readonly #monitor: SentinelMonitor;
  #target: Endpoint | undefined;
  #discovering: Promise<void> | undefined;
  #moving: Promise<void> = Promise.resolve();
  #checking: Promise<void> | undefined;
  /** The switch being followed, and the latest one named while it runs. */
  #following: Promise<void> | undefined;
  #latest: { to: Endpoint; reason: string } | undefined;
  #lastFollowAt = -Infinity;
  #settleWait: { timer: unknown; resolve: () => void } | undefined;
  #refusal: { from: Endpoint; promise: Promise<boolean>; resolve(v: boolean): void } | undefined;
  #refusalTimer: unknown;
  #closed = false;
  #warnedTooMany = false;

  constructor(
    s: ResolvedSentinelOptions,
    options: RedisSentinelClientOptions,
    events: ClientEvents,
  ) {
    this.#s = s;
    this.#events = events;
    this.#logger = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    // Nothing dials before the first discovery: every entry point waits for it, then points the
    // executor at the node found.
    this.#exec = new ExecutorCore(options, events, {
      endpoint: s.sentinels[0]!,
      onEvent: (name) => {
        if (name === "reconnecting") this.#onNodeLost();
      },
    });
    if (events.metrics !== undefined) sentinelMetrics(events.metrics);
    this.#sentinels = new SentinelSet(s.sentinels);
    const base = {
      protocol: options.protocol,
      connectTimeout: s.sentinelTimeout,
      commandTimeout: s.sentinelTimeout,
      connector: options.connector,
      logger: options.logger,
      clientName: options.clientName,
      unref: options.unref,
    };
    const sentinelTls = s.sentinelTls === false ? undefined : s.sentinelTls;
    const dial = {
      base,
      sentinel: { username: s.sentinelUsername, password: s.sentinelPassword, tls: sentinelTls },
      node: { username: options.username, password: options.password, tls: options.tls },
    };
    this.#probe = createProbe(dial);
    this.#monitor = new SentinelMonitor({
      masterName: s.masterName,
      sentinels: this.#sentinels,
      open: createSessionOpener(dial),
      interval: s.sentinelCheckInterval,
      unref: options.unref === true,
      onEvent: (e) => this.#onEvent(e),
      check: (session) => this.#periodicCheck(session),
      onSentinelAdded: (e) => this.#sentinelAdded(e),
      onError: (e) => this.#emitError(e),
      logger: this.#logger,
    });
  }

  /** The client-side cache of the data connections. */
  get cache(): ExecutorCore["cache"] {
    return this.#exec.cache;
  }

  /** The node the data connections go to; `undefined` before the first discovery. */
  get target(): Endpoint | undefined {
    return this.#target;
  }

  /** The sentinels known so far. */
  get sentinels(): HostPort[] {
    return this.#sentinels.list();
  }

  /** The maintenance state of the data connections. */
  maintenanceState(): ClientMaintenanceState | undefined {
    return this.#exec.maintenanceState();
  }

  #emit(name: string, detail: unknown): void {
    this.#events.emit(name, detail);
  }

  #emitError(e: Error): void {
    this.#logger.warn(`sentinel: ${e.message}`);
    this.#emit("error", e);
  }

  #sentinelAdded(e: Endpoint): void {
    this.#logger.info(`sentinel: learnt the sentinel ${endpointName(e)}`);
    this.#emit("sentinel-added", { host: e.host, port: e.port });
  }

  #discoveryContext(): Parameters<typeof discoverMaster>[0] {
    return {
      masterName: this.#s.masterName,
      sentinels: this.#sentinels,
      probe: this.#probe,
      onSentinelAdded: (e) => this.#sentinelAdded(e),
      onTooMany: () => {
        if (this.#warnedTooMany) return;
        this.#warnedTooMany = true;
        this.#logger.warn(
          `sentinel: a sentinel named more than ${MAX_SENTINELS} sentinels; the others are ignored`,
        );
      },
    };
  }

  // ---- discovery and moves ----

  /** `#ready()`, given up (rejected with the signal's reason) when `signal` aborts first. */
  #readyOrAbort(signal: AbortSignal | undefined): Promise<void> {
    if (signal === undefined || this.#target !== undefined) return this.#ready();
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#ready().then(resolve, reject).finally(() => {
        signal.removeEventListener("abort", onAbort);
      });
    });
  }

  /** Resolves once a node is known (the first discovery); rejects with what was tried. */
  #ready(): Promise<void> {
    if (this.#target !== undefined) return Promise.resolve();
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot send the command: the client is closed"));
    }
    return this.#discovering ??= this.#firstDiscovery().finally(() => {
      this.#discovering = undefined;
    });
  }

  async #firstDiscovery(): Promise<void> {
    let found: { master: Endpoint; sentinel: Endpoint };
    try {
      found = this.#s.role === "master"
        ? await discoverMaster(this.#discoveryContext())
        : await this.#pickReplica([]);
    } catch (e) {
      // Ended by close(): what waited for it learns that, not which sentinels failed.
      if (this.#closed) {
        throw new ClosedError("Cannot send the command: the client is closed", {
          cause: e,
          written: false,
        });
      }
      throw e;
    }
    if (this.#closed) throw new ClosedError("Cannot send the command: the client is closed");
    this.#target = found.master;
    this.#exec.node.setEndpoint(found.master);
    this.#logger.info(
      `sentinel: ${this.#s.role} of "${this.#s.masterName}" is ${endpointName(found.master)}`,
    );
    this.#emit(
      "switch",
      {
        from: undefined,
        to: { ...found.master },
        role: this.#s.role,
        reason: "discovery",
      } satisfies SentinelSwitchDetail,
    );
    this.#monitor.start(found.sentinel).catch(() => {});
  }

  async #pickReplica(exclude: Endpoint[]): Promise<{ master: Endpoint; sentinel: Endpoint }> {
    const { replicas, sentinel } = await discoverReplicas(this.#discoveryContext(), exclude);
    const keep = replicas.find((r) => sameEndpoint(r, this.#target));
    const pick = keep ?? replicas[Math.floor(Math.random() * replicas.length)]!;
    return { master: pick, sentinel };
  }

  /** Moves the data connections to `to` (serialised with other moves). */
  #moveTo(to: Endpoint, reason: string): Promise<void> {
    const next = this.#moving.then(async () => {
      if (this.#closed || sameEndpoint(this.#target, to)) return;
      const from = this.#target;
      this.#target = to;
      this.#logger.info(
        `sentinel: moving the ${this.#s.role} connections from ${
          from ? endpointName(from) : "-"
        } to ${endpointName(to)} (${reason})`,
      );
      this.#settleRefusal(true);
      // Another node: what was cached from the old one may be gone (writes it took after the
      // promotion are lost), so nothing cached survives the move.
      this.#exec.cache?.invalidateAll();
      try {
        await moveExecutor(this.#exec.node, to, DRAIN_CAP);
      } catch (e) {
        this.#logger.warn(
          `sentinel: the move to ${endpointName(to)} failed: ${(e as Error).message}`,
        );
      }
      this.#emit(
        "switch",
        {
          from: from ? { ...from } : undefined,
          to: { ...to },
          role: this.#s.role,
          reason,
        } satisfies SentinelSwitchDetail,
      );
    });
    this.#moving = next.catch(() => {});
    return next;
  }

  /** Asks the sentinels again (single flight) and moves if they name another node. */
  #rediscover(reason: string, exclude: Endpoint[] = []): Promise<void> {
    if (this.#target === undefined || this.#closed) return Promise.resolve();
    return this.#checking ??= (async () => {
      try {
        const found = this.#s.role === "master"
          ? await discoverMaster(this.#discoveryContext())
          : await this.#pickReplica(exclude);
        if (!sameEndpoint(found.master, this.#target)) await this.#moveTo(found.master, reason);
      } catch (e) {
        if (!this.#closed) this.#emitError(e as Error);
      }
    })().finally(() => {
      this.#checking = undefined;
    });
  }

  /** The monitor's periodic check on its sentinel; rejects only when that sentinel fails. */
  async #periodicCheck(session: SentinelSession): Promise<void> {
    if (this.#target === undefined || this.#closed) return;
    if (this.#s.role === "master") {
      const reply = await session.command([
        "SENTINEL",
        "GET-MASTER-ADDR-BY-NAME",
        this.#s.masterName,
      ]);
      const named = masterAddressOf(reply);
      if (named !== undefined && !sameEndpoint(named, this.#target)) {
        await this.#rediscover("periodic check");
      }
      return;
    }
    const reply = await session.command(["SENTINEL", "REPLICAS", this.#s.masterName]);
    const healthy = entriesOf(reply).filter(replicaEntryHealthy).map(entryAddress);
    if (!healthy.some((e) => sameEndpoint(e, this.#target))) {
      await this.#rediscover("periodic check", this.#target ? [this.#target] : []);
    }
  }

  #onEvent(e: SentinelEvent): void {
    if (this.#target === undefined || this.#closed) return;
    this.#logger.debug(
      e.kind === "switch-master"
        ? `sentinel: +switch-master ${endpointName(e.from)} -> ${endpointName(e.to)}`
        : `sentinel: ${e.channel} ${e.type} ${endpointName(e.address)}`,
    );
    if (this.#s.role === "master") {
      if (e.kind === "switch-master") {
        this.#followSwitch(e.to, "+switch-master").catch(() => {});
      } else if (e.channel === "+promoted-slave") {
        // The failover's leader promoted a replica; its +switch-master comes only once the other
        // replicas are reconfigured.
        this.#followSwitch(e.address, "+promoted-slave").catch(() => {});
      } else if (
        e.channel === "+failover-end" ||
        (e.channel === "+convert-to-slave" || e.channel === "+reboot") &&
          sameEndpoint(e.address, this.#target)
      ) {
        this.#rediscover(e.channel).catch(() => {});
      }
      return;
    }
    // Replica role.
    if (e.kind === "instance" && e.channel === "+sdown" && sameEndpoint(e.address, this.#target)) {
      this.#rediscover("+sdown", [this.#target]).catch(() => {});
    } else if (
      e.kind === "switch-master" && sameEndpoint(e.to, this.#target) ||
      e.kind === "instance" && e.channel === "+promoted-slave" &&
        sameEndpoint(e.address, this.#target)
    ) {
      // The replica read from became the master.
      this.#rediscover(e.kind === "switch-master" ? "+switch-master" : e.channel, [this.#target])
        .catch(() => {});
    } else if (e.kind === "switch-master" || e.channel === "+convert-to-slave") {
      this.#rediscover(e.kind === "switch-master" ? "+switch-master" : e.channel).catch(() => {});
    }
  }

  /** A new master named by an event: verify it with ROLE, then move; else ask everyone. */
  /**
   * Follows the master an event names. Events that arrive while one is being followed are
   * coalesced: only the latest is followed next (a flapping `+switch-master` would otherwise
   * make one move, and new connections, per event).
   */
  #followSwitch(to: Endpoint, reason: string): Promise<void> {
    this.#latest = { to, reason };
    return this.#following ??= (async () => {
      try {
        while (this.#latest !== undefined && !this.#closed) {
          // The first switch is followed at once; one named within SETTLE_MS of the last
          // move waits out the rest of it, and then only the latest named is followed.
          const wait = this.#lastFollowAt + SETTLE_MS - this.#clock.now();
          if (wait > 0) await this.#settle(wait);
          const next = this.#latest;
          if (next === undefined || this.#closed) break;
          this.#latest = undefined;
          this.#lastFollowAt = this.#clock.now();
          await this.#followOne(next.to, next.reason);
        }
      } finally {
        this.#following = undefined;
      }
    })();
  }

  /** Waits `ms`, or until close. */
  #settle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#settleWait = {
        timer: this.#clock.setTimer(() => {
          this.#settleWait = undefined;
          resolve();
        }, ms),
        resolve,
      };
    });
  }

  async #followOne(to: Endpoint, reason: string): Promise<void> {
    if (sameEndpoint(to, this.#target)) return;
    try {
      const [role] = await this.#probe.node(to, [["ROLE"]]);
      if (roleOf(role ?? null).role === "master") {
        await this.#moveTo(to, reason);
        return;
      }
    } catch {
      // Not reachable from here: ask the sentinels.
    }
    await this.#rediscover(reason);
  }

  /** The data connection was lost: the node may be gone; check at once rather than wait. */
  #onNodeLost(): void {
    if (this.#target === undefined || this.#closed) return;
    if (this.#s.role === "replica") {
      this.#rediscover("connection lost").catch(() => {});
    } else {
      this.#monitor.checkNow().catch(() => {});
    }
  }

  // ---- refused writes ----

  /** Resolves `true` once the master changes from `from`, `false` after `failoverWait`. */
  #awaitSwitch(from: Endpoint): Promise<boolean> {
    if (!sameEndpoint(from, this.#target)) return Promise.resolve(true);
    if (this.#s.failoverWait === 0 || this.#closed) return Promise.resolve(false);
    if (this.#refusal && sameEndpoint(this.#refusal.from, from)) return this.#refusal.promise;
    let resolve!: (v: boolean) => void;
    const promise = new Promise<boolean>((r) => resolve = r);
    this.#refusal = { from, promise, resolve };
    this.#refusalTimer = this.#clock.setTimer(() => {
      this.#refusalTimer = undefined;
      this.#settleRefusal(false);
    }, this.#s.failoverWait);
    return promise;
  }

  #settleRefusal(switched: boolean): void {
    const r = this.#refusal;
    if (!r) return;
    this.#refusal = undefined;
    this.#clock.clearTimer(this.#refusalTimer);
    this.#refusalTimer = undefined;
    r.resolve(switched);
  }

  /**
   * A write refused with READONLY / NOREPLICAS was not executed: ask the sentinels, and once a
   * new master is confirmed send it there; otherwise return the refusal.
   */
  async #afterRefusal<T>(refusal: ReplyError, from: Endpoint, again: () => Promise<T>): Promise<T> {
    this.#logger.debug(`sentinel: ${endpointName(from)} refused a write: ${refusal.message}`);
    const waiting = this.#awaitSwitch(from);
    this.#rediscover(refusal.prefix).catch(() => {});
    if (await waiting) return again();
    throw refusal;
  }

  #guard<T>(flags: number, send: () => Promise<T>): Promise<T> {
    if (this.#s.role !== "master") return send();
    const from = this.#target!;
    const p = send();
    if ((flags & FLAG_ERRORS_AS_VALUES) !== 0) {
      return p.then((v) => isRefusal(v) ? this.#afterRefusal(v, from, send) : v);
    }
    return p.catch((e) => {
      if (isRefusal(e)) return this.#afterRefusal(e, from, send);
      throw e;
    });
  }

  // ---- the core: wait for the first discovery, guard refused writes ----

  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    const run = () => this.#guard(flags, () => this.#exec.run(args, transform, flags, blockMs));
    return this.#target !== undefined ? run() : this.#ready().then(run);
  }

  send(args: RedisArgument[], flags: number, options: SendCommandOptions): Promise<unknown> {
    const run = () => this.#guard(0, () => this.#exec.send(args, flags, options));
    return this.#target !== undefined ? run() : this.#readyOrAbort(options.signal).then(run);
  }

  /** A refused write inside a transaction fails it (and starts a rediscovery); never resent. */
  sendAll(commands: GroupCommand[]): Promise<unknown>[] {
    const send = () => {
      const ps = this.#exec.sendAll(commands);
      for (const p of ps) {
        p.then((v) => {
          if (isRefusal(v)) this.#rediscover(v.prefix).catch(() => {});
        }, (e) => {
          if (isRefusal(e)) this.#rediscover(e.prefix).catch(() => {});
        });
      }
      return ps;
    };
    if (this.#target !== undefined) return send();
    const all = this.#ready().then(send);
    return commands.map((_, i) => all.then((ps) => ps[i]));
  }

  async watch(keys: RedisArgument[]): Promise<WatchSession> {
    await this.#ready();
    return this.#exec.watch(keys);
  }

  async subscribe(
    kind: SubscriptionKind,
    names: string[],
    listener: PubSubListener<string> | PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown> {
    await this.#ready();
    return this.#exec.subscribe(kind, names, listener, binary);
  }

  async connect(options?: { signal?: AbortSignal }): Promise<void> {
    const signal = options?.signal;
    try {
      await this.#readyOrAbort(signal);
    } catch (e) {
      if (signal?.aborted && e === signal.reason) {
        throw new ConnectionError("Cannot connect: the attempt was aborted", {
          cause: e,
          written: false,
        });
      }
      throw e;
    }
    await this.#exec.connect(options);
  }

  async close(): Promise<void> {
    this.#shutdown();
    // A discovery under way stops at once (its round is destroyed, later rounds refused)
    // instead of asking one silent sentinel after another.
    await this.#probe.close();
    await Promise.allSettled([this.#discovering, this.#checking, this.#moving, this.#following]);
    await this.#monitor.close();
    await this.#exec.close();
  }

  destroy(): void {
    this.#shutdown();
    this.#probe.close().catch(() => {});
    this.#exec.destroy();
  }

  #shutdown(): void {
    this.#closed = true;
    this.#settleRefusal(false);
    const w = this.#settleWait;
    this.#settleWait = undefined;
    if (w !== undefined) {
      this.#clock.clearTimer(w.timer);
      w.resolve();
    }
  }
}
