/**
 * The one time source of the client: the current time and one-shot timers. Everything whose
 * decision depends on time takes a {@linkcode Clock}, so tests can drive it by hand.
 *
 * @module
 */

import { startTimer, stopTimer } from "./_resources.ts";

/** An opaque timer handle returned by {@linkcode Clock.setTimer}. */
export type TimerId = unknown;

/**
 * The time alone: what the pure parts (the maintenance controller, the circuit breaker) read.
 * Every {@linkcode Clock} is one.
 *
 * @example
 * ```ts ignore
 * let t = 0;
 * const manual: TimeSource = { now: () => t };
 * ```
 */
export interface TimeSource {
  /**
   * The current time.
   *
   * @returns Milliseconds since the epoch (or since any fixed origin); never decreasing.
   */
  now(): number;
}

/**
 * A time source with one-shot timers.
 *
 * @example
 * ```ts ignore
 * import { systemClock } from "./_clock.ts";
 * const id = systemClock.setTimer(() => console.log("later"), 100);
 * systemClock.clearTimer(id);
 * ```
 */
export interface Clock extends TimeSource {
  /**
   * Calls `fn` once after `ms` milliseconds.
   *
   * @param fn The callback.
   * @param ms The delay; 0 or negative means as soon as possible.
   * @returns The handle for {@linkcode Clock.clearTimer}.
   */
  setTimer(fn: () => void, ms: number): TimerId;
  /**
   * Cancels a timer; ignores `undefined` and timers that already fired.
   *
   * @param id The handle from {@linkcode Clock.setTimer}.
   */
  clearTimer(id: TimerId | undefined): void;
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
