// Runs the periodic health checks of one database on its own timer.
import type { Database } from "./database.ts";
import { type HealthCheckResult, runHealthCheck } from "./health_check.ts";

export class HealthMonitor {
  readonly #db: Database;
  readonly #onResult: (db: Database, result: HealthCheckResult, ms: number) => void;
  readonly #shouldRun: () => boolean;
  readonly #ac = new AbortController();
  #timer: unknown;
  #running: Promise<HealthCheckResult> | undefined;
  #stopped = false;
  #scheduled = false;

  constructor(
    db: Database,
    onResult: (db: Database, result: HealthCheckResult, ms: number) => void,
    shouldRun: () => boolean,
  ) {
    this.#db = db;
    this.#onResult = onResult;
    this.#shouldRun = shouldRun;
  }

  /** Checks every interval, the first one after `delay` ms. */
  start(delay: number): void {
    if (this.#db.config.healthCheck === undefined) return; // always healthy: nothing to check
    this.#scheduled = true;
    this.#schedule(delay);
  }

  #schedule(ms: number): void {
    if (this.#stopped || !this.#scheduled) return;
    const clock = this.#db.clock;
    clock.clearTimer(this.#timer);
    this.#timer = clock.setTimer(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      if (!this.#shouldRun()) {
        this.#schedule(this.#interval());
        return;
      }
      this.checkNow().finally(() => this.#schedule(this.#interval()));
    }, ms);
  }

  #interval(): number {
    return this.#db.config.healthCheck?.interval ?? 5000;
  }

  /**
   * Runs a check now (or joins the one running) and reports its result. `initial`: the first
   * check at start, which a first passing probe decides (the client serves at once).
   */
  checkNow(initial = false): Promise<HealthCheckResult> {
    if (this.#running) return this.#running;
    const hc = this.#db.config.healthCheck;
    if (hc === undefined || this.#stopped) {
      return Promise.resolve({ healthy: hc === undefined, error: undefined });
    }
    const db = this.#db;
    const client = db.client;
    const start = db.clock.now();
    const p = runHealthCheck(
      hc.strategy,
      { database: db.name, endpoint: db.config.endpoint, client },
      hc,
      this.#ac.signal,
      db.clock,
      initial,
    ).then((r) => {
      // A result about a client replaced meanwhile (or a stopped monitor) says nothing.
      if (!this.#stopped && db.client === client) this.#onResult(db, r, db.clock.now() - start);
      return r;
    }).finally(() => {
      this.#running = undefined;
    });
    this.#running = p;
    return p;
  }

  stop(): void {
    this.#stopped = true;
    this.#db.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#ac.abort();
  }
}
