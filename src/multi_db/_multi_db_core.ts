// The multi-database client's core: the databases, their health monitors and breakers,
// failover, failback and switching, and how a command reaches the active database.
import { healthChecked, multiDbMetrics } from "./_multi_db_metrics.ts";
import type { ClientCore, ClientEvents, SendCommandOptions } from "../client/client_shell.ts";
import type { WatchSession } from "../client/watch_session.ts";
import type { PubSubListener, SubscriptionKind } from "../client/subscription.ts";
import type { QueuedCommand } from "../client/pipeline.ts";
import type { CacheStats } from "../cache/cache_store.ts";
import { FLAG_BINARY, FLAG_BLOCKING, type Transform } from "../commands/command_runner.ts";
import { FLAG_ERRORS_AS_VALUES } from "../connection/connection.ts";
import { ClosedError, ConnectionError, RedisError, ReplyError } from "../errors.ts";
import { type Logger, silentLogger } from "../logger.ts";
import type { RedisArgument } from "../resp/types.ts";
import {
  checkWeight,
  type DatabaseConfig,
  type MultiDbClientOptions,
  nodeKey,
  resolveDatabaseConfig,
  type ResolvedMultiDbOptions,
  resolveMultiDbOptions,
  type SwitchReason,
} from "./config.ts";
import { CommandExecutor, type Granted, wasNotWritten } from "./command_executor.ts";
import { Database, type DatabaseInfo } from "./database.ts";
import type { DatabaseHealth } from "./database.ts";
import { PermanentlyUnavailableError, TemporarilyUnavailableError } from "./errors.ts";
import { type FailoverCandidate, selectFailbackTarget, selectFailoverTarget } from "./failover.ts";
import type { HealthCheckResult } from "./health_check.ts";
import { HealthMonitor } from "./_health_monitor.ts";
import { MultiDbSubscription } from "./subscription.ts";
import { databaseKey, initialHealth, skipIdleCheck } from "./_initial_health.ts";

type Candidate = FailoverCandidate & { db: Database };

/** The multi-database client's {@linkcode ClientCore}: commands go to the active database. */
export class MultiDbCore implements ClientCore {
  readonly #o: ResolvedMultiDbOptions;
  readonly #logger: Logger;
  readonly #events: ClientEvents;
  readonly #dbs: Database[] = [];
  readonly #monitors = new Map<Database, HealthMonitor>();
  readonly #subs = new Set<MultiDbSubscription>();
  readonly #executor: CommandExecutor;
  readonly #sleeps = new Set<
    { timer: unknown; reject: (e: Error) => void }
  >();
  readonly #closing = new Set<Promise<void>>();
  #order = 0;
  #active: Database | undefined;
  #init: Promise<void> | undefined;
  #initialized = false;
  #closed = false;
  #switching: Promise<void> | undefined;
  #failbackTimer: unknown;
  #attempts = 0;
  #lastAttemptAt = -Infinity;
  #noTargetLoggedAt = -Infinity;
  /** Until when `forceActiveDatabase` holds the other databases out. */
  #forcedUntil = -Infinity;
  /** Bumped each time another database becomes active (cursor walks check it). */
  #generation = 0;

  /**
   * Creates the client. Nothing connects until the first command or `connect()`, which runs
   * the first health check of every database and applies the `initializationPolicy`.
   *
   * @param options The databases and the failover settings.
   * @throws {TypeError} No databases, duplicate names or endpoints, bad options.
   * @throws {RangeError} A weight or a duration out of range.
   */
  constructor(options: MultiDbClientOptions, events: ClientEvents) {
    this.#events = events;
    this.#o = resolveMultiDbOptions(options);
    this.#logger = options.logger ?? silentLogger;
    if (!Array.isArray(options.databases) || options.databases.length === 0) {
      throw new TypeError("Cannot create the client: no databases given");
    }
    const resolved = options.databases.map((c) => resolveDatabaseConfig(c, this.#o));
    for (const r of resolved) this.#checkUnique(r.name, r.clientOptions, resolved);
    for (const r of resolved) this.#dbs.push(this.#newDatabase(r));
    this.#executor = new CommandExecutor({
      acquire: (blocking) => this.#acquire(blocking),
      record: (db, e, generation) => this.#record(db, e, generation),
      success: (db, blocking, generation) => {
        // A blocking command was let through without the half-open trial: its success says
        // nothing the trial will not (and must not close the breaker under the trial).
        if (!blocking) db.detector.success(generation);
        db.lastSuccessAt = this.#o.clock.now();
        // Served again (also in place, without a switch): the next outage counts from 1.
        if (this.#attempts !== 0) {
          this.#attempts = 0;
          this.#lastAttemptAt = -Infinity;
        }
      },
      current: () => this.#active,
      sleep: (ms) => this.#sleep(ms),
      closed: () => this.#closed,
      size: () => this.#dbs.length,
    }, { retry: this.#o.commandRetry, retryOnFailover: this.#o.retryOnFailover });
    if (events.metrics !== undefined) {
      multiDbMetrics(
        events.metrics,
        () => this.#dbs.map((d) => ({ database: d.name, state: d.detector.breaker.state })),
      );
    }
  }

  #checkUnique(
    name: string,
    o: DatabaseConfig,
    all: readonly { name: string; clientOptions: DatabaseConfig }[],
  ): void {
    const key = databaseKey(o);
    const sameName = all.filter((r) => r.name === name).length +
      this.#dbs.filter((d) => d.name === name).length;
    if (sameName > 1) {
      throw new TypeError(`Cannot add the database "${name}": another database has that name`);
    }
    const sameEndpoint = all.filter((r) => databaseKey(r.clientOptions) === key).length +
      this.#dbs.filter((d) => databaseKey(d.config.clientOptions) === key).length;
    if (sameEndpoint > 1) {
      throw new TypeError(
        `Cannot add the database "${name}": another database has the endpoint ${key}`,
      );
    }
  }

  #newDatabase(r: ReturnType<typeof resolveDatabaseConfig>): Database {
    return new Database(r, this.#o, this.#order++, (db, type, detail) => {
      this.#emit(type, { database: db.name, detail });
    }, (db) => this.#checkSoon(db));
  }

  // ---- state ----

  /** `MultiDbClient.activeDatabase`. */
  get activeDatabase(): string | undefined {
    return this.#active?.name;
  }

  /** `MultiDbClient.databases`. */
  databases(): DatabaseInfo[] {
    const now = this.#o.clock.now();
    return this.#dbs.map((d) => d.info(d === this.#active, now));
  }

  /** `MultiDbClient.connect`. */
  connect(_options?: { signal?: AbortSignal }): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot connect: the client is closed"));
    }
    return this.#ensureInit();
  }

  #ensureInit(): Promise<void> {
    if (this.#initialized) return Promise.resolve();
    return this.#init ??= this.#initialize().catch((e) => {
      this.#init = undefined;
      throw e;
    });
  }

  async #initialize(): Promise<void> {
    const dbs = [...this.#dbs];
    for (const db of dbs) this.#monitor(db);
    await initialHealth(
      dbs,
      this.#o.initializationPolicy,
      (db) => this.#monitors.get(db)!.checkNow(true),
    );
    if (this.#closed) throw new ClosedError("Cannot connect: the client is closed");
    const target = selectFailoverTarget(this.#candidates(this.#o.clock.now()));
    if (target === undefined) {
      throw new ConnectionError("Cannot connect: no database is usable");
    }
    this.#active = target.db;
    target.db.detector.breaker.reset();
    this.#initialized = true;
    this.#init = undefined;
    for (const db of this.#dbs) this.#monitors.get(db)?.start(this.#interval(db));
    this.#armFailback();
    this.#logger.debug(`multi-db: "${target.db.name}" is active`);
  }

  #interval(db: Database): number {
    return db.config.healthCheck?.interval ?? this.#o.healthCheck.interval;
  }

  #monitor(db: Database): HealthMonitor {
    let m = this.#monitors.get(db);
    if (m === undefined) {
      m = new HealthMonitor(
        db,
        (d, r, ms) => {
          const m = this.#events.metrics;
          if (m?.resiliency) healthChecked(m, d.name, r.healthy, ms);
          this.#onHealth(d, r);
        },
        () =>
          !(skipIdleCheck(
            db,
            this.#active,
            this.#interval(db),
            db.config.healthCheck?.checkActive,
          )),
      );
      this.#monitors.set(db, m);
    }
    return m;
  }

  #candidates(now: number): Candidate[] {
    return this.#dbs.map((db) => ({
      name: db.name,
      weight: db.weight,
      usable: db.usable(now),
      inMaintenance: db.inMaintenance(now),
      order: db.order,
      db,
    }));
  }

  #emit(name: string, detail: unknown): void {
    this.#events.emit(name, detail);
  }

  // ---- health, failover, failback ----

  /**
   * A database's client lost its connection: check its health now rather than at the next
   * interval (at most once per probe delay, 100 ms at least), so an outage of every database is
   * reported within about one health check timeout instead of after the commands' own waits.
   * Not the active database while another one is usable: its breaker and periodic checks decide
   * that failover.
   */
  #checkSoon(db: Database): void {
    if (!this.#initialized || this.#closed) return;
    if (db.config.healthCheck === undefined) return;
    const now = this.#o.clock.now();
    if (db === this.#active && this.#dbs.some((d) => d !== db && d.usable(now))) return;
    const spacing = Math.max(100, db.config.healthCheck.probeDelay);
    if (now - db.urgentCheckAt < spacing) return;
    db.urgentCheckAt = now;
    this.#monitors.get(db)?.checkNow().catch(() => {});
  }

  #onHealth(db: Database, r: HealthCheckResult): void {
    const health: DatabaseHealth = r.healthy ? "healthy" : "unhealthy";
    const changed = db.health !== health;
    db.health = health;
    db.healthError = r.error;
    // A check failed inside a maintenance window says nothing about the database afterwards.
    db.failedInMaintenance = !r.healthy && db.inMaintenance();
    if (changed) {
      this.#logger.debug(
        `multi-db: "${db.name}" is ${health}${r.error ? ` (${r.error})` : ""}`,
      );
      this.#emit("health", { database: db.name, health, error: r.error });
    }
    if (r.healthy) this.#recovered(db);
    if (!this.#initialized || this.#closed || this.#switching) return;
    const active = this.#active;
    // The last database to fail over to is gone: the active one, if it lost its connection
    // too, is checked now (an outage of every database is then reported at once).
    if (changed && !r.healthy && active !== undefined && db !== active) this.#checkSoon(active);
    if (db === active && !r.healthy) {
      if (db.failedInMaintenance) {
        this.#logger.debug(
          `multi-db: "${db.name}" failed its health check inside a maintenance window: staying`,
        );
        return;
      }
      this.#background(
        this.#failover(db, "HEALTH_CHECK").then((moved) => {
          // Nowhere to go: the commands waiting in its client for a connection would wait out
          // their connect timeout. A fresh client fails them at once as not written; the
          // executor then reports that no database is healthy. Not with subscriptions: the
          // client restores them itself once the server is back, a fresh one would not.
          if (!moved && changed && db === this.#active && !this.#closed && this.#subs.size === 0) {
            return db.replaceClient();
          }
        }),
      );
    } else if (r.healthy && active !== undefined && db !== active) {
      // The active database failed earlier with nowhere to go: this one can take over now
      // (unless the active one is only inside planned maintenance).
      const activeUsable = (active.health === "healthy" || this.#planned(active)) &&
        active.circuit === "closed";
      if (!activeUsable) this.#background(this.#failover(active, "HEALTH_CHECK"));
    }
  }

  /**
   * `db` passed its health check. Its breaker may still be open (tripped, or held for the grace
   * period after it was failed away from): while no other database can serve, holding it out
   * would fail every command for the rest of the grace period although it is healthy, so it
   * serves again now. With another database serving, the grace period stands (flap
   * protection); a hold made by `forceActiveDatabase` stands too.
   */
  #recovered(db: Database): void {
    const c = db.circuit;
    if (c === "closed" || c === "half-open" || this.#closed) return;
    const now = this.#o.clock.now();
    if (now < this.#forcedUntil && db !== this.#active) return;
    if (this.#dbs.some((d) => d !== db && d.usable(now))) return;
    this.#logger.debug(
      `multi-db: "${db.name}" is healthy and no other database can serve: its circuit closes`,
    );
    db.graceUntil = 0;
    db.detector.breaker.reset();
  }

  #background(p: Promise<unknown>): void {
    p.catch((e) => {
      if (!this.#closed) this.#emit("error", e);
    });
  }

  /**
   * Switches away from `from` to the best usable database. Resolves whether another database
   * is active now.
   */
  async #failover(from: Database | undefined, reason: SwitchReason): Promise<boolean> {
    if (this.#switching) {
      await this.#switching.catch(() => {});
      return this.#active !== undefined && this.#active !== from;
    }
    if (from !== this.#active) return this.#active !== undefined;
    const tried = new Set<Database>();
    for (;;) {
      if (this.#closed) return false;
      const target = selectFailoverTarget(
        this.#candidates(this.#o.clock.now()).filter((c) => !tried.has(c.db)),
        from?.name,
      );
      if (target === undefined) {
        // Every command asks while nothing is usable: say it once a second at most.
        const now = this.#o.clock.now();
        if (now - this.#noTargetLoggedAt >= 1000) {
          this.#noTargetLoggedAt = now;
          this.#logger.warn(
            `multi-db: cannot fail over from "${from?.name}" (${reason}): no healthy database`,
          );
        }
        return false;
      }
      tried.add(target.db);
      try {
        await this.#switchTo(target.db, reason, true);
        return this.#active !== from;
      } catch (e) {
        // The target failed while its subscriptions were re-made: try the next one.
        this.#logger.warn(
          `multi-db: cannot switch to "${target.db.name}": ${(e as Error).message}`,
        );
        target.db.health = "unhealthy";
        target.db.healthError = (e as Error).message;
      }
    }
  }

  #switchTo(target: Database, reason: SwitchReason, holdPrevious: boolean): Promise<void> {
    const run = async (): Promise<void> => {
      const from = this.#active;
      if (from === target || this.#closed) return;
      // Subscriptions first, in the order they were made, before the database serves commands.
      for (const s of [...this.#subs]) {
        try {
          await s._attach(target.name, target.client);
        } catch (e) {
          // Refused by the server (NOPERM, ...): that subscription cannot be made there; a
          // connection failure fails the switch.
          if (!(e instanceof ReplyError)) throw e;
          this.#subs.delete(s);
          s._end();
          this.#emit("error", e);
        }
      }
      // What its client-side cache holds was not kept up to date while it was not in use.
      target.client.invalidateCache?.();
      this.#active = target;
      this.#generation++;
      target.graceUntil = 0;
      target.detector.breaker.reset();
      this.#attempts = 0;
      this.#lastAttemptAt = -Infinity;
      if (from !== undefined) {
        if (holdPrevious) from.hold(this.#o.gracePeriod);
        // Work still waiting in the old client for a connection comes back at once, as not
        // written, and is retried here; what was written completes or fails there.
        const closing = from.replaceClient();
        this.#closing.add(closing);
        closing.finally(() => this.#closing.delete(closing));
      }
      this.#logger.info(
        `multi-db: switched from "${from?.name ?? "none"}" to "${target.name}" (${reason})`,
      );
      this.#emit("switch", { from: from?.name ?? null, to: target.name, reason });
    };
    const p = run().finally(() => {
      if (this.#switching === p) this.#switching = undefined;
    });
    this.#switching = p;
    return p;
  }

  #armFailback(): void {
    if (!this.#o.failbackSupported || this.#closed) return;
    this.#o.clock.clearTimer(this.#failbackTimer);
    this.#failbackTimer = this.#o.clock.setTimer(() => {
      this.#failbackTimer = undefined;
      this.#failbackCheck();
      this.#armFailback();
    }, this.#o.failbackCheckInterval);
  }

  #failbackCheck(): void {
    if (this.#closed || this.#switching || !this.#initialized) return;
    const active = this.#active;
    const candidates = this.#candidates(this.#o.clock.now());
    const current = candidates.find((c) => c.db === active);
    const target = selectFailbackTarget(candidates, current);
    if (target === undefined) return;
    this.#background(this.#switchTo(target.db, "FAILBACK", false));
  }

  async #acquire(blocking: boolean): Promise<Granted> {
    for (let round = 0;; round++) {
      if (this.#closed) throw new ClosedError("Cannot send the command: the client is closed");
      if (!this.#initialized) await this.#ensureInit();
      while (this.#switching) await this.#switching.catch(() => {});
      const db = this.#active;
      // An active database whose health check failed serves only inside a maintenance window
      // (or while no other is usable: then the failover below reports it).
      if (db !== undefined && this.#serves(db) && this.#grants(db, blocking)) {
        return { db, generation: db.detector.generation };
      }
      if (round > this.#dbs.length) throw this.#unavailable();
      const reason = db !== undefined && !this.#serves(db) ? "HEALTH_CHECK" : "CIRCUIT_BREAKER";
      if (!(await this.#failover(db, reason))) throw this.#unavailable();
    }
  }

  /**
   * Whether `db`'s breaker lets a command through. A blocking command is never the half-open
   * trial (one `BLPOP q 0` would hold it, and every other command be refused, for as long as it
   * blocks): half-open lets it pass beside the trial.
   */
  #grants(db: Database, blocking: boolean): boolean {
    if (blocking && db.detector.breaker.state === "half-open") return true;
    return db.detector.acquire();
  }

  #serves(db: Database): boolean {
    return db.health !== "unhealthy" || this.#planned(db);
  }

  /** Whether a failed health check of `db` is attributed to planned maintenance. */
  #planned(db: Database): boolean {
    return db.failedInMaintenance || db.inMaintenance();
  }

  #unavailable(): ConnectionError {
    const now = this.#o.clock.now();
    const max = this.#o.maxNumFailoverAttempts;
    if (now - this.#lastAttemptAt >= this.#o.delayInBetweenFailoverAttempts) {
      this.#attempts++;
      this.#lastAttemptAt = now;
    }
    const state = this.#dbs.map((d) =>
      `"${d.name}" ${d.health}${d.circuit === "closed" ? "" : `, circuit ${d.circuit}`}`
    ).join("; ");
    if (this.#attempts > max) {
      return new PermanentlyUnavailableError(
        `Cannot send the command: no healthy database after ${max} failover attempts (${state})`,
      );
    }
    return new TemporarilyUnavailableError(
      `Cannot send the command: no healthy database, failover attempt ${this.#attempts} of ${max} (${state})`,
    );
  }

  async #record(db: Database, e: unknown, generation?: number): Promise<void> {
    const outcome = db.detector.record(e, generation);
    if (outcome === "tripped") {
      this.#logger.warn(
        `multi-db: the circuit of "${db.name}" opened: ${(e as Error)?.message ?? String(e)}`,
      );
      if (db === this.#active) await this.#failover(db, "CIRCUIT_BREAKER").catch(() => false);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = {
        timer: this.#o.clock.setTimer(() => {
          this.#sleeps.delete(entry);
          resolve();
        }, ms),
        reject,
      };
      this.#sleeps.add(entry);
    });
  }

  // ---- manual control ----

  /** A database by name, or by endpoint (`host:port`) when it has another name. */
  #find(name: string): Database {
    const db = this.#dbs.find((d) => d.name === name) ??
      this.#dbs.find((d) => {
        const e = d.config.endpoint;
        return e !== undefined && nodeKey(e) === nodeKey(name);
      });
    if (db === undefined) {
      throw new TypeError(
        `Cannot find the database "${name}": no database has that name or endpoint`,
      );
    }
    return db;
  }

  /** `MultiDbClient.setActiveDatabase`. */
  async setActiveDatabase(name: string): Promise<void> {
    if (this.#closed) throw new ClosedError("Cannot switch: the client is closed");
    const db = this.#find(name);
    await this.#ensureInit();
    while (this.#switching) await this.#switching.catch(() => {});
    if (db.health === "unhealthy") {
      throw new RedisError(
        `Cannot switch to "${name}": it is unhealthy (${db.healthError ?? "health check failed"})`,
      );
    }
    await this.#switchTo(db, "FORCED", false);
  }

  /** `MultiDbClient.forceActiveDatabase`. */
  async forceActiveDatabase(name: string, durationMs: number): Promise<void> {
    if (typeof durationMs !== "number" || !Number.isFinite(durationMs) || durationMs <= 0) {
      throw new RangeError(
        `Cannot force "${name}" for ${String(durationMs)} ms: expected a duration above 0`,
      );
    }
    if (this.#closed) throw new ClosedError("Cannot switch: the client is closed");
    const db = this.#find(name);
    await this.#ensureInit();
    while (this.#switching) await this.#switching.catch(() => {});
    await this.#switchTo(db, "FORCED", false);
    const now = this.#o.clock.now();
    for (const d of this.#dbs) if (d !== db) d.hold(durationMs, now);
    this.#forcedUntil = Math.max(this.#forcedUntil, now + durationMs);
  }

  /** `MultiDbClient.addDatabase`. */
  addDatabase(config: DatabaseConfig): string {
    if (this.#closed) throw new ClosedError("Cannot add the database: the client is closed");
    const r = resolveDatabaseConfig(config, this.#o);
    this.#checkUnique(r.name, r.clientOptions, [r]);
    const db = this.#newDatabase(r);
    this.#dbs.push(db);
    if (this.#initialized) {
      const m = this.#monitor(db);
      m.checkNow().finally(() => m.start(this.#interval(db)));
    }
    return db.name;
  }

  /** `MultiDbClient.removeDatabase`. */
  async removeDatabase(name: string): Promise<void> {
    const db = this.#find(name);
    if (this.#dbs.length === 1) {
      throw new TypeError(`Cannot remove the database "${name}": it is the only one`);
    }
    while (this.#switching) await this.#switching.catch(() => {});
    if (db === this.#active) {
      const target = selectFailoverTarget(this.#candidates(this.#o.clock.now()), db.name) ??
        this.#candidates(this.#o.clock.now()).filter((c) => c.db !== db)
          .sort((a, b) => b.weight - a.weight)[0];
      await this.#switchTo(target!.db, "FORCED", false);
    }
    const i = this.#dbs.indexOf(db);
    if (i !== -1) this.#dbs.splice(i, 1);
    this.#monitors.get(db)?.stop();
    this.#monitors.delete(db);
    await db.close();
  }

  /** `MultiDbClient.setWeight`. */
  setWeight(name: string, weight: number): void {
    const db = this.#find(name);
    db.weight = checkWeight(name, weight);
  }

  // ---- the core ----

  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    return this.#executor.run(
      (db) => db.client._run(args, transform, flags, blockMs),
      (flags & FLAG_BLOCKING) !== 0,
    );
  }

  send(args: RedisArgument[], flags: number, options: SendCommandOptions): Promise<unknown> {
    const o: SendCommandOptions = (flags & FLAG_BINARY) !== 0 && !options.binary
      ? { ...options, binary: true }
      : options;
    return this.#executor.run(
      (db) => db.client.sendCommand(args, o),
      options.blockMs !== undefined,
    );
  }

  /** Replays a recorded pipeline on the active database; whole again only if nothing was written. */
  runPipeline(q: QueuedCommand[]): Promise<unknown[]> {
    if (q.length === 0) return Promise.resolve([]);
    return this.#executor.run(async (db) => {
      const client = db.client;
      const settled = await Promise.allSettled(
        q.map((c) => client._run(c.args, c.transform, c.flags | FLAG_ERRORS_AS_VALUES, c.blockMs)),
      );
      const results = settled.map((s) => s.status === "fulfilled" ? s.value : s.reason);
      // Nothing of it was written: the whole pipeline may run again (here or elsewhere).
      if (results.every((r) => r instanceof Error && wasNotWritten(r))) throw results[0];
      for (const r of results) {
        if (r instanceof Error && db.detector.breaker.countsAsFailure(r)) await this.#record(db, r);
      }
      return results;
    });
  }

  /** Replays a recorded transaction on the active database's client. */
  runTransaction(q: QueuedCommand[], flags: number): Promise<unknown[] | null> {
    return this.#executor.run((db) => {
      const tx = db.client.multi();
      if (flags !== 0) tx._withFlags?.(flags);
      for (const c of q) tx._run(c.args, c.transform, c.flags, c.blockMs);
      return tx.exec();
    });
  }

  /** A `WATCH` session stays on the database it started on: a failover ends it. */
  watch(keys: RedisArgument[]): Promise<WatchSession> {
    return this.#executor.run((db) => db.client.watch(...keys));
  }

  async subscribe(
    kind: SubscriptionKind,
    names: string[],
    listener: PubSubListener<string> | PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown> {
    if (this.#closed) throw new ClosedError("Cannot subscribe: the client is closed");
    const sub = new MultiDbSubscription(
      kind,
      names,
      listener as PubSubListener | undefined,
      (s) => this.#subs.delete(s),
      binary,
    );
    this.#subs.add(sub);
    try {
      await this.#executor.run((db) => sub._attach(db.name, db.client));
    } catch (e) {
      this.#subs.delete(sub);
      sub._end();
      throw e;
    }
    return sub;
  }

  /**
   * A cursor belongs to the database that issued it: a walk that would continue on another
   * database after a switch fails instead of completing short (or with duplicates).
   */
  cursorGuard(): () => void {
    const generation = this.#generation;
    const from = this.#active?.name;
    return () => {
      if (this.#generation === generation) return;
      throw new ConnectionError(
        `Cannot continue the scan: the active database changed${
          from === undefined ? "" : ` from "${from}"`
        } to "${this.#active?.name}" during the walk; start a new scan`,
        { written: false },
      );
    };
  }

  cacheStats(): CacheStats | undefined {
    return this.#active?.client.cacheStats?.();
  }

  invalidateCache(): void {
    for (const d of this.#dbs) d.client.invalidateCache?.();
  }

  /** Closes: health checks and timers stop, subscriptions end, every database's client closes. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#o.clock.clearTimer(this.#failbackTimer);
    this.#failbackTimer = undefined;
    for (const m of this.#monitors.values()) m.stop();
    for (const d of this.#dbs) {
      (d.config.healthCheck?.strategy as { close?: () => void } | undefined)?.close?.();
    }
    for (const s of this.#sleeps) {
      this.#o.clock.clearTimer(s.timer);
      s.reject(new ClosedError("Cannot retry the command: the client is closed"));
    }
    this.#sleeps.clear();
    for (const s of this.#subs) s._end();
    this.#subs.clear();
    await Promise.all([...this.#dbs.map((d) => d.close()), ...this.#closing]);
  }

  destroy(): void {}
}
