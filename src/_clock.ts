/**
 * The one clock of the client: the current time and one-shot timers. Everything whose decision
 * depends on time takes a {@linkcode Clock} (the connection, the executor and its pool, the
 * maintenance support, the sentinel monitor, the multi-database client), so tests can drive it
 * by hand. The pure parts (the maintenance controller, the circuit breaker) read only its time:
 * they take `Pick<Clock, "now">` and import the type alone, so their bundles carry none of this
 * file.
 *
 * @module
 */

import { startTimer, stopTimer } from "./_resources.ts";

/** The opaque timer handle {@linkcode Clock.setTimer} returns (internal code names it so). */
export type TimerId = unknown;

/**
 * The current time and one-shot timers.
 *
 * @example
 * ```ts
 * import type { Clock } from "@edge/redis/multi-db";
 * const clock: Clock = {
 *   now: () => Date.now(),
 *   setTimer: (fn, ms) => setTimeout(fn, ms),
 *   clearTimer: (id) => clearTimeout(id as number),
 * };
 * ```
 */
export interface Clock {
  /**
   * The current time.
   *
   * @returns Milliseconds since the epoch (or since any fixed origin); never decreasing.
   */
  now(): number;
  /**
   * Calls `fn` once after `ms` milliseconds.
   *
   * @param fn The callback.
   * @param ms The delay; 0 or negative means as soon as possible.
   * @returns An opaque handle for {@linkcode Clock.clearTimer}.
   */
  setTimer(fn: () => void, ms: number): unknown;
  /**
   * Cancels a timer; ignores `undefined` and timers that already fired.
   *
   * @param id The handle from {@linkcode Clock.setTimer}.
   */
  clearTimer(id: unknown): void;
}

/**
 * The wall clock: `Date.now` and `setTimeout`, each timer counted until it fires or is cleared
 * (the leak accounting of `openResources()`).
 */
export const systemClock: Clock = {
  now: Date.now,
  setTimer: startTimer,
  clearTimer: stopTimer as (id: TimerId | undefined) => void,
};

/**
 * A clock with the wall clock's timers but another time source (tests that only shift time).
 *
 * @param now The time source.
 * @returns The clock.
 */
export function clockWithNow(now: () => number): Clock {
  return { now, setTimer: startTimer, clearTimer: systemClock.clearTimer };
}
