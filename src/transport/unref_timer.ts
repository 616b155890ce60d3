/**
 * Timers that do not keep the process alive, on every runtime.
 *
 * @module
 */

import type { Clock } from "../_clock.ts";

/**
 * Lets the process exit while `timer` is pending: `Deno.unrefTimer` on Deno, the timer's own
 * `unref()` on Node.js and Bun. Does nothing where neither exists.
 *
 * @param timer What `setTimeout` or `setInterval` returned.
 */
export function unrefTimer(timer: ReturnType<typeof setTimeout>): void {
  const deno = (globalThis as { Deno?: { unrefTimer?(id: number): void } }).Deno;
  if (typeof timer === "number") {
    deno?.unrefTimer?.(timer);
    return;
  }
  (timer as { unref?(): void }).unref?.();
}

/**
 * `clock` with timers that do not keep the process alive (each `setTimer` is unref'd).
 *
 * @param clock The clock to wrap.
 * @returns A clock of the same time whose timers are unref'd.
 */
export function unrefClock(clock: Clock): Clock {
  return {
    now: () => clock.now(),
    setTimer: (fn, ms) => {
      const id = clock.setTimer(fn, ms);
      unrefTimer(id as ReturnType<typeof setTimeout>);
      return id;
    },
    clearTimer: (id) => clock.clearTimer(id),
  };
}
