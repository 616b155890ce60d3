/**
 * The multi-database client: one client per database, the active one chosen by weight and
 * health, behind a circuit breaker; failover, failback, health checks, pub/sub failover, and
 * maintenance-aware switching.
 *
 * @module
 */

import { ClientEvents, ClientShell } from "../client/client_shell.ts";
import type { DatabaseConfig, MultiDbClientOptions, SwitchReason } from "./config.ts";
import type { DatabaseHealth, DatabaseInfo } from "./database.ts";
import { MultiDbCore } from "./_multi_db_core.ts";
import type { MultiDbSubscription } from "./subscription.ts";

/**
 * Detail of the `switch` event.
 *
 * @example
 * ```ts
 * import type { SwitchEventDetail } from "@edge/redis/multi-db";
 * const log = (d: SwitchEventDetail) => console.log(`${d.from} -> ${d.to} (${d.reason})`);
 * ```
 */
export interface SwitchEventDetail {
  /** The database switched away from, `null` when there was none. */
  from: string | null;
  /** The database now active. */
  to: string;
  /** Why. */
  reason: SwitchReason;
}

/**
 * Detail of the `health` event.
 *
 * @example
 * ```ts
 * import type { HealthEventDetail } from "@edge/redis/multi-db";
 * const log = (d: HealthEventDetail) => console.log(d.database, d.health, d.error ?? "");
 * ```
 */
export interface HealthEventDetail {
  /** The database. */
  database: string;
  /** Its new health. */
  health: DatabaseHealth;
  /** Why the check failed, if it did. */
  error: string | undefined;
}

/**
 * Detail of the `maintenance` and `handoff` events: a database client's event.
 *
 * @example
 * ```ts
 * import type { DatabaseEventDetail } from "@edge/redis/multi-db";
 * const log = (d: DatabaseEventDetail) => console.log(d.database, d.detail);
 * ```
 */
export interface DatabaseEventDetail {
  /** The database whose client sent it. */
  database: string;
  /** The client's event detail. */
  detail: unknown;
}

/**
 * The events of a {@linkcode MultiDbClient}, each a `CustomEvent`.
 *
 * - `switch`: the active database changed.
 * - `health`: a database's health changed.
 * - `maintenance`, `handoff`: a database's client reported a maintenance event or a handoff.
 * - `error`: a background step failed (the detail is the error).
 * - `close`: the client closed.
 *
 * @example
 * ```ts
 * import type { MultiDbClientEventMap } from "@edge/redis/multi-db";
 * type SwitchEvent = MultiDbClientEventMap["switch"]; // CustomEvent<SwitchEventDetail>
 * ```
 */
export interface MultiDbClientEventMap {
  /** The active database changed. */
  switch: CustomEvent<SwitchEventDetail>;
  /** A database's health changed. */
  health: CustomEvent<HealthEventDetail>;
  /** A database's client reported a maintenance event. */
  maintenance: CustomEvent<DatabaseEventDetail>;
  /** A database's client handed its connection off (MOVING). */
  handoff: CustomEvent<DatabaseEventDetail>;
  /** A background step failed. */
  error: CustomEvent<unknown>;
  /** The client closed. */
  close: CustomEvent<undefined>;
}

/**
 * A listener of one event of the {@linkcode MultiDbClientEventMap}: a function or an object.
 *
 * @example
 * ```ts
 * import type { MultiDbClientEventMap, MultiDbEventListener } from "@edge/redis/multi-db";
 * const onSwitch: MultiDbEventListener<MultiDbClientEventMap["switch"]> = (e) =>
 *   console.log(e.detail.to);
 * ```
 */
export type MultiDbEventListener<E extends Event> =
  | ((event: E) => void)
  | { handleEvent(event: E): void };

/**
 * Options of the `scan` family of iterators.
 *
 * @example
 * ```ts
 * import type { MultiDbScanOptions } from "@edge/redis/multi-db";
 * const users: MultiDbScanOptions = { match: "user:*", count: 500 };
 * ```
 */
export interface MultiDbScanOptions {
  /** Only names matching this glob-style pattern. */
  match?: string;
  /** A hint of how many to fetch per round trip. */
  count?: number;
  /** Only keys of this type (`scan` only). */
  type?: string;
}

/**
 * A client for several equivalent databases (Active-Active replicas, or independent servers),
 * serving every command from one active database: the healthy one of highest weight.
 *
 * - **Failover**: when the active database's circuit breaker opens (too many connection
 *   errors and timeouts in the sliding window) or its health check fails, the healthy database
 *   of highest weight takes over. The one failed away from is held out for `gracePeriod`.
 * - **Failback**: every `failbackCheckInterval`, a healthy database of strictly higher weight,
 *   out of its grace period and outside any maintenance window, takes over again.
 * - **No healthy database**: commands fail with `TemporarilyUnavailableError`; after
 *   `maxNumFailoverAttempts` attempts `delayInBetweenFailoverAttempts` apart, with
 *   `PermanentlyUnavailableError`, until a health check finds a healthy database.
 * - **Commands**: one that failed before being written (it cannot have run) is retried, at once
 *   on the database failed over to; one whose outcome is unknown fails with its error
 *   (`ConnectionError`, `TimeoutError`) and is never run twice. A pipeline or transaction is
 *   re-run whole only when nothing of it was written.
 * - **Pub/sub**: subscriptions are re-made on the new active database, in the order they were
 *   made, before it serves commands; the subscription objects keep delivering.
 * - **Maintenance**: each database's client keeps its smart client handoffs. A failure while a
 *   database is inside an announced maintenance window (a MOVING handoff, a relaxed window)
 *   does not count towards its breaker, a failed health check then does not fail over, and a
 *   database inside a window is not a failback target until the window closes.
 *
 * @example
 * ```ts ignore
 * import { MultiDbClient } from "@edge/redis/multi-db";
 * await using client = new MultiDbClient({
 *   databases: [
 *     { url: "redis://east.example.com:6379", weight: 1 },
 *     { url: "redis://west.example.com:6379", weight: 0.5 },
 *   ],
 * });
 * client.addEventListener("switch", (e) => console.log(e.detail.from, "->", e.detail.to, e.detail.reason));
 * await client.set("k", "v");
 * console.log(await client.get("k"), client.activeDatabase);
 * ```
 */
export class MultiDbClient extends ClientShell<MultiDbClientEventMap, MultiDbSubscription> {
  readonly #core: MultiDbCore;

  /**
   * Creates the client. Nothing connects until the first command or `connect()`, which runs
   * the first health check of every database and applies the `initializationPolicy`.
   *
   * @param options The databases and the failover settings.
   * @throws {TypeError} No databases, duplicate names or endpoints, bad options.
   * @throws {RangeError} A weight or a duration out of range.
   */
  constructor(options: MultiDbClientOptions) {
    const events = new ClientEvents(options, "multi-db");
    const core = new MultiDbCore(options, events);
    super(core, events);
    this.#core = core;
  }

  /** The name of the active database, `undefined` before the client is initialised. */
  get activeDatabase(): string | undefined {
    return this.#core.activeDatabase;
  }

  /**
   * Every database with its health, breaker state, weight and maintenance state.
   *
   * @returns One snapshot per database, in configuration order.
   *
   * @example
   * ```ts ignore
   * for (const d of client.databases()) console.log(d.name, d.health, d.circuit, d.weight, d.active);
   * ```
   */
  databases(): DatabaseInfo[] {
    return this.#core.databases();
  }

  /**
   * Makes a database active now (reason `FORCED`). It must be healthy.
   *
   * @param name The database's name, or its endpoint (`host:port`).
   * @returns Resolves once it is active (its subscriptions re-made).
   */
  setActiveDatabase(name: string): Promise<void> {
    return this.#core.setActiveDatabase(name);
  }

  /**
   * Makes a database active and holds every other one out of use for `durationMs` (their
   * breakers forced open): no failover nor failback meanwhile.
   *
   * @param name The database's name.
   * @param durationMs How long the others are held, in ms.
   * @returns Resolves once it is active.
   */
  forceActiveDatabase(name: string, durationMs: number): Promise<void> {
    return this.#core.forceActiveDatabase(name, durationMs);
  }

  /**
   * Adds a database. It is checked at once and becomes a failover and failback target.
   *
   * @param config The database, as in the `databases` option.
   * @returns Its name.
   * @throws {TypeError} A duplicate name or endpoint, or bad options.
   */
  addDatabase(config: DatabaseConfig): string {
    return this.#core.addDatabase(config);
  }

  /**
   * Removes a database and closes its client. Removing the active one switches to the best
   * other one first (reason `FORCED`).
   *
   * @param name The database's name.
   * @returns Resolves when its client is closed.
   */
  removeDatabase(name: string): Promise<void> {
    return this.#core.removeDatabase(name);
  }

  /**
   * Changes a database's weight. Failback picks it up at its next check.
   *
   * @param name The database's name.
   * @param weight The new weight, a finite number above 0.
   */
  setWeight(name: string, weight: number): void {
    this.#core.setWeight(name, weight);
  }
}
