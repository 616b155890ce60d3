/**
 * One database of the multi-database client: its client, failure detector, health, weight and
 * grace period, and the snapshot `databases()` returns.
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";
import type { CircuitState } from "../resilience/circuit_breaker.ts";
import type { Clock } from "../_clock.ts";
import type { ResolvedDatabaseConfig, ResolvedMultiDbOptions } from "./config.ts";
import {
  createDatabaseClient,
  type DatabaseClient,
  type DatabaseClientFactory,
} from "./database_client.ts";
import { FailureDetector } from "./failure_detector.ts";

/**
 * The health of a database: `unknown` until its first check completed.
 *
 * @example
 * ```ts
 * import type { DatabaseHealth } from "@edge/redis/multi-db";
 * const known = (h: DatabaseHealth) => h !== "unknown";
 * ```
 */
export type DatabaseHealth = "unknown" | "healthy" | "unhealthy";

/**
 * A database as {@linkcode MultiDbClient.databases} reports it.
 *
 * @example
 * ```ts
 * import type { DatabaseInfo } from "@edge/redis/multi-db";
 * const usable = (d: DatabaseInfo) => d.health === "healthy" && d.circuit === "closed";
 * ```
 */
export interface DatabaseInfo {
  /** Its name (its endpoint unless named). */
  name: string;
  /** Host and port, for a database with one endpoint. */
  endpoint: Endpoint | undefined;
  /** Its weight. */
  weight: number;
  /** Its health, from the last health check. */
  health: DatabaseHealth;
  /** Why the last health check failed, if it did. */
  healthError: string | undefined;
  /** The state of its circuit breaker. */
  circuit: CircuitState;
  /** Whether it serves the commands now. */
  active: boolean;
  /** Until when (ms since the epoch) it is held in its grace period, if it is. */
  graceUntil: number | undefined;
  /** Whether it is inside an announced maintenance window. */
  inMaintenance: boolean;
}

/** After a handoff completed, failures are still attributed to the maintenance this long. */
const HANDOFF_SETTLE_MS = 1000;

/** Internal: One database and its state. */
export class Database {
  readonly name: string;
  readonly config: ResolvedDatabaseConfig;
  readonly detector: FailureDetector;
  weight: number;
  client: DatabaseClient;
  health: "unknown" | "healthy" | "unhealthy";
  healthError: string | undefined;
  /** The last health check failed inside a maintenance window. */
  failedInMaintenance = false;
  /** Clock time until which it is not a failover or failback target. */
  graceUntil = 0;
  /** Clock time of the last command it answered. */
  lastSuccessAt = 0;
  /** Order of configuration (ties between equal weights). */
  readonly order: number;
  readonly clock: Clock;
  readonly #factory: DatabaseClientFactory;
  readonly #onEvent: (db: Database, type: "maintenance" | "handoff", detail: unknown) => void;
  readonly #onLost: ((db: Database) => void) | undefined;
  #maintenanceUntil = 0;
  #listener: ((e: Event) => void) | undefined;
  #lostListener: (() => void) | undefined;
  /** Clock time of the last check asked for out of turn (a lost connection, a failure). */
  urgentCheckAt = -Infinity;

  constructor(
    config: ResolvedDatabaseConfig,
    top: ResolvedMultiDbOptions,
    order: number,
    onEvent: (db: Database, type: "maintenance" | "handoff", detail: unknown) => void,
    onLost?: (db: Database) => void,
  ) {
    this.name = config.name;
    this.config = config;
    this.weight = config.weight;
    this.order = order;
    this.#factory = top.createClient ?? createDatabaseClient;
    const clock = top.clock;
    this.clock = clock;
    this.#onEvent = onEvent;
    this.#onLost = onLost;
    this.health = config.healthCheck === undefined ? "healthy" : "unknown";
    const fd = top.failureDetector;
    this.detector = new FailureDetector({
      slidingWindowMs: fd.slidingWindowMs,
      windowBuckets: fd.windowBuckets,
      minNumOfFailures: fd.minNumOfFailures,
      failureRateThreshold: fd.failureRateThreshold,
      isFailure: fd.isFailure,
      // Open for the grace period, then one trial call (0 would mean "until reset").
      openDuration: Math.max(1, top.gracePeriod),
      halfOpenMaxCalls: 1,
      name: config.name,
      clock,
    }, () => this.inMaintenance());
    this.client = this.#create();
  }

  #create(): DatabaseClient {
    const client = this.#factory(this.config.clientOptions);
    const listener = (e: Event) => {
      const type = e.type as "maintenance" | "handoff";
      if (type === "handoff") this.#maintenanceUntil = this.clock.now() + HANDOFF_SETTLE_MS;
      this.#onEvent(this, type, (e as CustomEvent).detail);
    };
    client.addEventListener("maintenance", listener);
    client.addEventListener("handoff", listener);
    this.#listener = listener;
    const onLost = this.#onLost;
    if (onLost !== undefined) {
      // The client lost its connection and reconnects: `reconnecting` of a standalone client.
      const lost = () => onLost(this);
      client.addEventListener("reconnecting", lost);
      this.#lostListener = lost;
    }
    return client;
  }

  /** The breaker's state. */
  get circuit(): CircuitState {
    return this.detector.breaker.state;
  }

  /**
   * Replaces the client with a fresh one and closes the old one: commands still waiting in
   * the old client for a connection fail at once as not written (and are retried elsewhere);
   * those written complete or fail on their own.
   *
   * @returns The old client's close.
   */
  replaceClient(): Promise<void> {
    const old = this.client;
    if (this.#listener) {
      old.removeEventListener("maintenance", this.#listener);
      old.removeEventListener("handoff", this.#listener);
    }
    if (this.#lostListener) old.removeEventListener("reconnecting", this.#lostListener);
    this.client = this.#create();
    return old.close().catch(() => {});
  }

  /** Whether it is inside an announced maintenance window (see the failure detector's rule). */
  inMaintenance(now: number = this.clock.now()): boolean {
    if (now < this.#maintenanceUntil) return true;
    const s = this.client.maintenanceState?.();
    if (s === undefined) return false;
    if (s.endpoints.length > 0) return true;
    return s.connections.some((c) =>
      c.windows.length > 0 || (c.relaxedUntil !== undefined && c.relaxedUntil > s.at)
    );
  }

  /** Whether it may become the active database: healthy, breaker not open, out of grace. */
  usable(now: number = this.clock.now()): boolean {
    if (this.health !== "healthy" || now < this.graceUntil) return false;
    const c = this.circuit;
    return c === "closed" || c === "half-open";
  }

  /** Holds it out of use for `ms` (its breaker forced open). */
  hold(ms: number, now: number = this.clock.now()): void {
    if (ms <= 0) return;
    this.graceUntil = Math.max(this.graceUntil, now + ms);
    this.detector.breaker.forceOpen(Math.max(1, this.graceUntil - now));
  }

  info(active: boolean, now: number = this.clock.now()): DatabaseInfo {
    return {
      name: this.name,
      endpoint: this.config.endpoint ? { ...this.config.endpoint } : undefined,
      weight: this.weight,
      health: this.health,
      healthError: this.healthError,
      circuit: this.circuit,
      active,
      graceUntil: this.graceUntil > now ? this.graceUntil : undefined,
      inMaintenance: this.inMaintenance(now),
    };
  }

  close(): Promise<void> {
    if (this.#listener) {
      this.client.removeEventListener("maintenance", this.#listener);
      this.client.removeEventListener("handoff", this.#listener);
    }
    if (this.#lostListener) this.client.removeEventListener("reconnecting", this.#lostListener);
    return this.client.close().catch(() => {});
  }
}
