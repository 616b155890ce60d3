// The reconnect schedule of a Connection: the first attempt after a lost socket goes at once,
// each later one after an exponential backoff with full jitter; a socket that gets ready starts
// the count again.
import type { Clock, TimerId } from "../_clock.ts";
import { backoffDelay, type BackoffOptions } from "../resilience/backoff.ts";

/** When the next reconnect attempt goes, and its timer. */
export class Reconnect {
  readonly #timers: Clock;
  readonly #backoff: BackoffOptions;
  readonly #attemptCb: () => void;
  #timer: TimerId | undefined;
  /** Attempts since the last socket got ready. */
  attempt = 0;

  /**
   * @param timers The timers (unref'd with the connection's `unref`).
   * @param backoff The backoff between attempts.
   * @param attempt Starts an attempt (called by the timer).
   */
  constructor(timers: Clock, backoff: BackoffOptions, attempt: () => void) {
    this.#timers = timers;
    this.#backoff = backoff;
    this.#attemptCb = () => {
      this.#timer = undefined;
      attempt();
    };
  }

  /** Counts one more attempt and returns its delay, ms (0 for the first). */
  next(): number {
    const delay = this.attempt === 0 ? 0 : backoffDelay(this.attempt - 1, this.#backoff);
    this.attempt++;
    return delay;
  }

  /** Starts the attempt after `delay` ms. */
  start(delay: number): void {
    this.#timer = this.#timers.setTimer(this.#attemptCb, delay);
  }

  /** Cancels a scheduled attempt. */
  cancel(): void {
    this.#timers.clearTimer(this.#timer);
    this.#timer = undefined;
  }
}
