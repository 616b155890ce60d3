/**
 * A circuit breaker with a time-based sliding window, as a pure state machine: it owns no
 * timer and reads time from an injected clock. Wrap any async call with
 * {@linkcode CircuitBreaker.execute}, or report outcomes yourself with
 * {@linkcode CircuitBreaker.tryAcquire}, {@linkcode CircuitBreaker.onSuccess} and
 * {@linkcode CircuitBreaker.onError}.
 *
 * The window covers the last `slidingWindowMs` milliseconds in `windowBuckets` buckets. The
 * breaker opens when, counting the call that just failed, failures >= `minNumOfFailures` AND
 * the failure rate >= `failureRateThreshold` percent. A threshold of 0 disables its condition
 * (with both disabled, every failure opens the breaker).
 *
 * States: `closed` (calls pass, outcomes are counted), `open` (calls are refused for
 * `openDuration`, then `half-open`), `half-open` (up to `halfOpenMaxCalls` trial calls pass; one
 * failure opens the breaker again, that many successes close it), `forced-open` (refused until
 * {@linkcode CircuitBreaker.reset} or the end of the duration given to
 * {@linkcode CircuitBreaker.forceOpen}).
 *
 * Every error a call throws (or promise it rejects with) counts as a failure, except a
 * `ReplyError` (a server's reply: the service is up) and what `isFailure` says does not count.
 *
 * Every state change starts a new generation ({@linkcode CircuitBreaker.generation}). The
 * outcome of a call granted in an earlier generation is dropped: a slow call that began while
 * the breaker was closed cannot close (or reopen) it while the half-open trial is still running.
 * {@linkcode CircuitBreaker.execute} does this by itself; with the manual API, pass the
 * generation read after {@linkcode CircuitBreaker.tryAcquire} to the outcome method.
 *
 * @example Protect any async call
 * ```ts
 * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
 * const breaker = new CircuitBreaker({ minNumOfFailures: 5, failureRateThreshold: 50 });
 * const value = await breaker.execute(() => Promise.resolve(42));
 * console.log(value, breaker.state); // 42 "closed"
 * ```
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import { CircuitOpenError, ConnectionError, ReplyError, TimeoutError } from "../errors.ts";

/**
 * The state of a {@linkcode CircuitBreaker}.
 *
 * @example
 * ```ts
 * import type { CircuitState } from "@edge/redis/circuit-breaker";
 * const refuses = (s: CircuitState) => s === "open" || s === "forced-open";
 * ```
 */
export type CircuitState = "closed" | "open" | "half-open" | "forced-open";

export type { Clock } from "../_clock.ts";

/**
 * A state change of a {@linkcode CircuitBreaker}.
 *
 * @example
 * ```ts
 * import type { CircuitStateChange } from "@edge/redis/circuit-breaker";
 * const log = (c: CircuitStateChange) => console.log(`${c.from} -> ${c.to} at ${c.at}`);
 * ```
 */
export interface CircuitStateChange {
  /** The state before. */
  from: CircuitState;
  /** The state after. */
  to: CircuitState;
  /** Clock time of the change, in ms. */
  at: number;
}

/**
 * Options of a {@linkcode CircuitBreaker}. Defaults are those of the multi-database clients of
 * Jedis, redis-py, go-redis and node-redis.
 *
 * @example
 * ```ts
 * import type { CircuitBreakerOptions } from "@edge/redis/circuit-breaker";
 * const options: CircuitBreakerOptions = { slidingWindowMs: 1000, minNumOfFailures: 3 };
 * ```
 */
export interface CircuitBreakerOptions {
  /**
   * Length of the sliding window, in ms.
   * @default {2000}
   */
  slidingWindowMs?: number;
  /**
   * Number of buckets the window is divided in; outcomes expire one bucket at a time.
   * @default {10}
   */
  windowBuckets?: number;
  /**
   * Failures in the window needed to open the breaker; 0 disables this condition.
   * @default {1000}
   */
  minNumOfFailures?: number;
  /**
   * Failure rate in the window, in percent (0-100), needed to open the breaker; 0 disables
   * this condition.
   * @default {10}
   */
  failureRateThreshold?: number;
  /**
   * How long the breaker stays open before letting trial calls through (half-open), in ms;
   * 0 keeps it open until {@linkcode CircuitBreaker.reset}.
   * @default {60000}
   */
  openDuration?: number;
  /**
   * Trial calls allowed at once while half-open; that many successes close the breaker.
   * @default {10}
   */
  halfOpenMaxCalls?: number;
  /**
   * Which errors count as failures. Other errors count as successes (the call reached a live
   * service). A `ReplyError` (a server reply such as `WRONGTYPE`) never counts as a failure.
   * The default counts every error; {@linkcode isConnectionFailure} counts only this library's
   * connection errors and timeouts (what the multi-database client uses).
   * @default {() => true}
   */
  isFailure?: (error: unknown) => boolean;
  /**
   * Where time comes from: the client's one {@linkcode Clock}, of which the breaker reads only
   * `now` (it sets no timers), e.g. `{ now: () => t }` in a test.
   * @default {Date}
   */
  clock?: Pick<Clock, "now">;
  /**
   * A name for error messages.
   * @default {"circuit"}
   */
  name?: string;
  /** Called on every state change. */
  onStateChange?: (change: CircuitStateChange) => void;
}

/**
 * Counts of the sliding window, as {@linkcode CircuitBreaker.metrics} returns them.
 *
 * @example
 * ```ts
 * import type { CircuitMetrics } from "@edge/redis/circuit-breaker";
 * const busy = (m: CircuitMetrics) => m.calls > 100;
 * ```
 */
export interface CircuitMetrics {
  /** The current state. */
  state: CircuitState;
  /** Calls recorded in the window. */
  calls: number;
  /** Failures recorded in the window. */
  failures: number;
  /** `failures / calls` in percent, 0 with no calls. */
  failureRate: number;
}

/**
 * Whether an error counts as a failure by default: every error does (a breaker wrapping
 * `fetch` counts its `TypeError`s). {@linkcode CircuitBreaker.countsAsFailure} still excludes
 * a `ReplyError`.
 *
 * @param _error The error.
 * @returns `true`.
 *
 * @example
 * ```ts
 * import { defaultIsFailure } from "@edge/redis/circuit-breaker";
 * console.log(defaultIsFailure(new TypeError("fetch failed"))); // true
 * ```
 */
export function defaultIsFailure(_error: unknown): boolean {
  return true;
}

/**
 * Whether an error is a connection failure of this library: a `ConnectionError` or a
 * `TimeoutError`. The multi-database client's breakers count only these (an `isFailure` of its
 * own replaces it).
 *
 * @param error The error.
 * @returns `true` for connection errors and timeouts.
 *
 * @example
 * ```ts
 * import { CircuitBreaker, isConnectionFailure } from "@edge/redis/circuit-breaker";
 * import { ReplyError } from "@edge/redis";
 * const breaker = new CircuitBreaker({ isFailure: isConnectionFailure });
 * console.log(breaker.countsAsFailure(new Error("boom"))); // false
 * console.log(isConnectionFailure(new ReplyError("WRONGTYPE no"))); // false
 * ```
 */
export function isConnectionFailure(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof TimeoutError;
}

function check(name: string, v: number | undefined, dflt: number, min: number, max = Infinity) {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
    throw new RangeError(
      `Cannot use ${name} ${String(v)}: expected a number from ${min}${
        max === Infinity ? "" : ` to ${max}`
      }`,
    );
  }
  return v;
}

const wallTime: Pick<Clock, "now"> = { now: () => Date.now() };

/**
 * A circuit breaker over a time-based sliding window. See the module documentation for the
 * rules.
 *
 * @example Report outcomes yourself
 * ```ts
 * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
 * import { ConnectionError } from "@edge/redis";
 * let t = 0;
 * const breaker = new CircuitBreaker({
 *   minNumOfFailures: 2,
 *   failureRateThreshold: 50,
 *   clock: { now: () => t },
 * });
 * breaker.onSuccess();
 * breaker.onError(new ConnectionError("Cannot connect"));
 * breaker.onError(new ConnectionError("Cannot connect")); // 2 of 3 failed: opens
 * console.log(breaker.state); // "open"
 * ```
 */
export class CircuitBreaker {
  readonly #windowMs: number;
  readonly #bucketMs: number;
  readonly #buckets: number;
  readonly #minFailures: number;
  readonly #rate: number;
  readonly #openDuration: number;
  readonly #halfOpenMax: number;
  readonly #isFailure: (error: unknown) => boolean;
  readonly #clock: Pick<Clock, "now">;
  readonly #name: string;
  readonly #onChange: ((change: CircuitStateChange) => void) | undefined;
  // Ring of buckets: epoch (bucket number since the clock's epoch), calls, failures.
  readonly #epochs: Float64Array;
  readonly #calls: Float64Array;
  readonly #fails: Float64Array;
  #state: CircuitState = "closed";
  /** Clock time the open / forced-open state ends (Infinity = never). */
  #until = Infinity;
  #halfOpenInFlight = 0;
  #halfOpenSuccesses = 0;
  #generation = 0;

  /**
   * Creates a closed breaker.
   *
   * @param options Window, thresholds, durations, error classification, clock.
   */
  constructor(options: CircuitBreakerOptions = {}) {
    this.#windowMs = check("slidingWindowMs", options.slidingWindowMs, 2000, 1);
    const buckets = check("windowBuckets", options.windowBuckets, 10, 1, 1000);
    if (!Number.isInteger(buckets)) {
      throw new RangeError(`Cannot use windowBuckets ${buckets}: expected an integer`);
    }
    this.#buckets = buckets;
    this.#bucketMs = this.#windowMs / buckets;
    this.#minFailures = check("minNumOfFailures", options.minNumOfFailures, 1000, 0);
    this.#rate = check("failureRateThreshold", options.failureRateThreshold, 10, 0, 100);
    this.#openDuration = check("openDuration", options.openDuration, 60_000, 0);
    this.#halfOpenMax = Math.floor(check("halfOpenMaxCalls", options.halfOpenMaxCalls, 10, 1));
    if (options.isFailure !== undefined && typeof options.isFailure !== "function") {
      throw new TypeError("Cannot use isFailure: expected a function");
    }
    this.#isFailure = options.isFailure ?? defaultIsFailure;
    this.#clock = options.clock ?? wallTime;
    this.#name = options.name ?? "circuit";
    this.#onChange = options.onStateChange;
    this.#epochs = new Float64Array(buckets).fill(-Infinity);
    this.#calls = new Float64Array(buckets);
    this.#fails = new Float64Array(buckets);
  }

  /** The current state (an open breaker whose duration passed reads as `half-open`). */
  get state(): CircuitState {
    this.#advance();
    return this.#state;
  }

  /**
   * The generation: a number that changes on every state change. Read it after
   * {@linkcode CircuitBreaker.tryAcquire} granted a call and give it to the outcome method, so
   * that an outcome arriving after the state changed is dropped.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker();
   * if (breaker.tryAcquire()) {
   *   const generation = breaker.generation;
   *   breaker.onSuccess(generation);
   * }
   * ```
   */
  get generation(): number {
    this.#advance();
    return this.#generation;
  }

  /** The name given in the options. */
  get name(): string {
    return this.#name;
  }

  /**
   * Clock time at which an `open` or `forced-open` state ends, or `undefined` when it does not
   * end by itself or the breaker is not open.
   */
  get openUntil(): number | undefined {
    this.#advance();
    if (this.#state !== "open" && this.#state !== "forced-open") return undefined;
    return this.#until === Infinity ? undefined : this.#until;
  }

  /**
   * The counts of the sliding window.
   *
   * @returns State, calls, failures and failure rate.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * console.log(new CircuitBreaker().metrics()); // { state: "closed", calls: 0, failures: 0, failureRate: 0 }
   * ```
   */
  metrics(): CircuitMetrics {
    const state = this.state;
    const { calls, failures } = this.#totals(this.#clock.now());
    return { state, calls, failures, failureRate: calls === 0 ? 0 : (failures * 100) / calls };
  }

  /**
   * Asks to make a call. Closed: always granted. Half-open: granted while fewer than
   * `halfOpenMaxCalls` trial calls are unanswered. Open, forced-open: refused.
   *
   * Every granted call must be followed by exactly one of {@linkcode CircuitBreaker.onSuccess},
   * {@linkcode CircuitBreaker.onFailure}, {@linkcode CircuitBreaker.onError} or
   * {@linkcode CircuitBreaker.onIgnored}.
   *
   * @returns Whether the call may go ahead.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker();
   * if (breaker.tryAcquire()) breaker.onSuccess();
   * ```
   */
  tryAcquire(): boolean {
    this.#advance();
    switch (this.#state) {
      case "closed":
        return true;
      case "half-open":
        if (this.#halfOpenInFlight >= this.#halfOpenMax) return false;
        this.#halfOpenInFlight++;
        return true;
      default:
        return false;
    }
  }

  /**
   * Records a successful call.
   *
   * @param generation The {@linkcode CircuitBreaker.generation} the call was granted in; an
   *   outcome of an earlier generation is dropped. Omitted: the current one.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * new CircuitBreaker().onSuccess();
   * ```
   */
  onSuccess(generation?: number): void {
    this.#advance();
    if (this.#stale(generation)) return;
    if (this.#state === "half-open") {
      this.#halfOpenInFlight = Math.max(0, this.#halfOpenInFlight - 1);
      if (++this.#halfOpenSuccesses >= this.#halfOpenMax) this.#transition("closed");
      return;
    }
    if (this.#state === "closed") this.#record(false);
  }

  /**
   * Records a failed call, whatever the error. Opens the breaker when the thresholds are met
   * (counting this failure), or when half-open.
   *
   * @param generation The {@linkcode CircuitBreaker.generation} the call was granted in; an
   *   outcome of an earlier generation is dropped. Omitted: the current one.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker({ minNumOfFailures: 1, failureRateThreshold: 0 });
   * breaker.onFailure();
   * console.log(breaker.state); // "open"
   * ```
   */
  onFailure(generation?: number): void {
    this.#advance();
    if (this.#stale(generation)) return;
    if (this.#state === "half-open") {
      this.#halfOpenInFlight = Math.max(0, this.#halfOpenInFlight - 1);
      this.#open();
      return;
    }
    if (this.#state !== "closed") return;
    const now = this.#record(true);
    const { calls, failures } = this.#totals(now);
    const enough = this.#minFailures === 0 || failures >= this.#minFailures;
    const rate = this.#rate === 0 || failures * 100 >= this.#rate * calls;
    if (enough && rate) this.#open();
  }

  /**
   * Records the outcome of a call that threw: a failure when `isFailure(error)` says so (never
   * for a `ReplyError`), a success otherwise.
   *
   * @param error What the call threw.
   * @param generation The {@linkcode CircuitBreaker.generation} the call was granted in; an
   *   outcome of an earlier generation is dropped. Omitted: the current one.
   * @returns Whether it counts as a failure (also when dropped as stale).
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * import { ReplyError } from "@edge/redis";
   * console.log(new CircuitBreaker().onError(new ReplyError("WRONGTYPE no"))); // false
   * ```
   */
  onError(error: unknown, generation?: number): boolean {
    if (this.countsAsFailure(error)) {
      this.onFailure(generation);
      return true;
    }
    this.onSuccess(generation);
    return false;
  }

  /**
   * Whether `error` would count as a failure.
   *
   * @param error The error.
   * @returns `isFailure(error)`, and `false` for every `ReplyError`.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * import { TimeoutError } from "@edge/redis";
   * console.log(new CircuitBreaker().countsAsFailure(new TimeoutError("Command timed out"))); // true
   * ```
   */
  countsAsFailure(error: unknown): boolean {
    return !(error instanceof ReplyError) && this.#isFailure(error);
  }

  /**
   * Gives back a granted call without recording an outcome (an error that says nothing about
   * the service, such as a failure during planned maintenance).
   *
   * @param generation The {@linkcode CircuitBreaker.generation} the call was granted in; a call
   *   of an earlier generation holds no permit. Omitted: the current one.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker();
   * if (breaker.tryAcquire()) breaker.onIgnored();
   * ```
   */
  onIgnored(generation?: number): void {
    this.#advance();
    if (this.#stale(generation)) return;
    if (this.#state === "half-open") {
      this.#halfOpenInFlight = Math.max(0, this.#halfOpenInFlight - 1);
    }
  }

  /**
   * Runs `fn` through the breaker: refused with a `CircuitOpenError` when the breaker does not
   * grant the call, otherwise its outcome is recorded and returned (or rethrown). Every
   * rejection (and a synchronous throw) counts as a failure unless `isFailure` says otherwise
   * or it is a `ReplyError`; an outcome that arrives after the state changed is dropped.
   *
   * @param fn The call.
   * @returns What `fn` resolved with.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker({ name: "billing" });
   * const r = await breaker.execute(() => fetch("data:,ok").then((r) => r.text()));
   * ```
   */
  async execute<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.tryAcquire()) {
      throw new CircuitOpenError(
        `Cannot run the call: the circuit "${this.#name}" is ${this.#state}`,
      );
    }
    const generation = this.#generation;
    let value: T;
    try {
      value = await fn();
    } catch (e) {
      this.onError(e, generation);
      throw e;
    }
    this.onSuccess(generation);
    return value;
  }

  /**
   * Holds the breaker open: every call is refused until {@linkcode CircuitBreaker.reset}, or
   * for `durationMs` after which it turns half-open.
   *
   * @param durationMs How long, in ms; omitted or 0 for until `reset()`.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker();
   * breaker.forceOpen(60_000);
   * console.log(breaker.state); // "forced-open"
   * ```
   */
  forceOpen(durationMs?: number): void {
    const d = check("durationMs", durationMs, 0, 0);
    this.#advance();
    this.#until = d === 0 ? Infinity : this.#clock.now() + d;
    this.#transition("forced-open");
  }

  /**
   * Closes the breaker and clears the window.
   *
   * @example
   * ```ts
   * import { CircuitBreaker } from "@edge/redis/circuit-breaker";
   * const breaker = new CircuitBreaker();
   * breaker.forceOpen();
   * breaker.reset();
   * console.log(breaker.state); // "closed"
   * ```
   */
  reset(): void {
    this.#advance();
    this.#transition("closed");
  }

  /** Whether an outcome of `generation` belongs to an earlier state (and is dropped). */
  #stale(generation: number | undefined): boolean {
    return generation !== undefined && generation !== this.#generation;
  }

  #open(): void {
    this.#until = this.#openDuration === 0 ? Infinity : this.#clock.now() + this.#openDuration;
    this.#transition("open");
  }

  /** An open / forced-open breaker whose time is up turns half-open. */
  #advance(): void {
    if ((this.#state === "open" || this.#state === "forced-open") && this.#until !== Infinity) {
      const now = this.#clock.now();
      if (now >= this.#until) this.#transition("half-open", now);
    }
  }

  #transition(to: CircuitState, at: number = this.#clock.now()): void {
    const from = this.#state;
    this.#halfOpenInFlight = 0;
    this.#halfOpenSuccesses = 0;
    if (to === "closed" || to === "half-open") {
      this.#until = Infinity;
      this.#epochs.fill(-Infinity);
      this.#calls.fill(0);
      this.#fails.fill(0);
    }
    this.#state = to;
    this.#generation++;
    if (from !== to) this.#onChange?.({ from, to, at });
  }

  /** Counts one call in the current bucket; returns the clock time used. */
  #record(failed: boolean): number {
    const now = this.#clock.now();
    const epoch = Math.floor(now / this.#bucketMs);
    const i = ((epoch % this.#buckets) + this.#buckets) % this.#buckets;
    if (this.#epochs[i] !== epoch) {
      this.#epochs[i] = epoch;
      this.#calls[i] = 0;
      this.#fails[i] = 0;
    }
    this.#calls[i]!++;
    if (failed) this.#fails[i]!++;
    return now;
  }

  #totals(now: number): { calls: number; failures: number } {
    const epoch = Math.floor(now / this.#bucketMs);
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < this.#buckets; i++) {
      const e = this.#epochs[i]!;
      if (e > epoch - this.#buckets && e <= epoch) {
        calls += this.#calls[i]!;
        failures += this.#fails[i]!;
      }
    }
    return { calls, failures };
  }
}
