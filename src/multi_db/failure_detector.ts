/**
 * The failure detector of one database: its circuit breaker fed with the outcome of every
 * command, aware of planned maintenance.
 *
 * The maintenance rule: a failure that happens while the database is inside an announced
 * maintenance window (a MOVING handoff in progress or its window still open, a MIGRATING /
 * FAILING_OVER relaxed window, a relaxed connection, or the second after a handoff completed)
 * is not counted: the breaker neither opens nor counts it as a success. Planned maintenance is
 * handled by the smart client handoff of that database's client, not by a failover.
 *
 * @module
 */

import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  isConnectionFailure,
} from "../resilience/circuit_breaker.ts";

/**
 * What a recorded error did.
 *
 * @example
 * ```ts
 * import type { FailureOutcome } from "@edge/redis/multi-db";
 * const counted = (o: FailureOutcome) => o === "counted" || o === "tripped";
 * ```
 */
export type FailureOutcome = "tripped" | "counted" | "ignored" | "success";

/**
 * A circuit breaker that skips failures during planned maintenance.
 *
 * @example
 * ```ts
 * import { FailureDetector } from "@edge/redis/multi-db";
 * import { ConnectionError } from "@edge/redis";
 * let maintenance = true;
 * const detector = new FailureDetector(
 *   { minNumOfFailures: 1, failureRateThreshold: 0 },
 *   () => maintenance,
 * );
 * console.log(detector.record(new ConnectionError("Cannot get the reply"))); // "ignored"
 * maintenance = false;
 * console.log(detector.record(new ConnectionError("Cannot get the reply"))); // "tripped"
 * ```
 */
export class FailureDetector {
  /** The breaker. */
  readonly breaker: CircuitBreaker;
  readonly #inMaintenance: () => boolean;

  /**
   * Creates a detector.
   *
   * @param options The breaker's options; without `isFailure`, only connection errors and
   *   timeouts count ({@linkcode isConnectionFailure}).
   * @param inMaintenance Whether the database is inside an announced maintenance window now.
   */
  constructor(options: CircuitBreakerOptions, inMaintenance: () => boolean) {
    this.breaker = new CircuitBreaker({
      ...options,
      isFailure: options.isFailure ?? isConnectionFailure,
    });
    this.#inMaintenance = inMaintenance;
  }

  /**
   * Asks the breaker for a call.
   *
   * @returns Whether the call may go ahead.
   */
  acquire(): boolean {
    return this.breaker.tryAcquire();
  }

  /**
   * The breaker's generation (read it after {@linkcode FailureDetector.acquire} granted a call).
   *
   * @returns {@linkcode CircuitBreaker.generation}.
   */
  get generation(): number {
    return this.breaker.generation;
  }

  /**
   * Records a success.
   *
   * @param generation The generation the call was granted in (a stale outcome is dropped).
   */
  success(generation?: number): void {
    this.breaker.onSuccess(generation);
  }

  /**
   * Records the error a call failed with.
   *
   * @param error The error.
   * @param generation The generation the call was granted in (a stale outcome is dropped:
   *   `"ignored"`).
   * @returns `"tripped"` when it opened the breaker, `"counted"` when it counted as a failure,
   *   `"ignored"` for a failure during maintenance, `"success"` for an error that does not count.
   */
  record(error: unknown, generation?: number): FailureOutcome {
    const b = this.breaker;
    if (generation !== undefined && generation !== b.generation) return "ignored";
    if (!b.countsAsFailure(error)) {
      b.onSuccess();
      return "success";
    }
    if (this.#inMaintenance()) {
      b.onIgnored();
      return "ignored";
    }
    const before = b.state;
    b.onFailure();
    return b.state === "open" && before !== "open" ? "tripped" : "counted";
  }
}
