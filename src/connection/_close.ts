// The graceful close of a Connection: one promise for every `close()` call, settled when the
// connection finishes closing, and the `closeTimeout` bound after which whatever is still
// unanswered is given up. The connection itself decides when it is done and tears down.
import type { Clock, TimerId } from "../_clock.ts";

/** The default of `closeTimeout`, ms. */
export const DEFAULT_CLOSE_TIMEOUT = 3000;

/** The promise of a graceful close and its bound. */
export class Closing {
  readonly #timers: Clock;
  #promise: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  #timer: TimerId | undefined;

  /** @param timers The timers (unref'd with the connection's `unref`). */
  constructor(timers: Clock) {
    this.#timers = timers;
  }

  /** The promise of the close under way, if `close()` was called. */
  get promise(): Promise<void> | undefined {
    return this.#promise;
  }

  /** Creates the promise every `close()` call returns. */
  begin(): Promise<void> {
    return this.#promise ??= new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
  }

  /** Calls `giveUp` after `ms` ms unless the close finished by then. */
  bound(ms: number, giveUp: () => void): void {
    this.#timer = this.#timers.setTimer(() => {
      this.#timer = undefined;
      giveUp();
    }, ms);
  }

  /** Stops the bound (the close finished, or the connection was destroyed). */
  stop(): void {
    this.#timers.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /** Settles the promise of `close()`, if any. */
  settle(): void {
    const r = this.#resolve;
    this.#resolve = undefined;
    r?.();
  }
}
