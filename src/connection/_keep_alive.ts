// The keep-alive of a Connection (`pingInterval`): a PING written after that much silence
// (nothing written, nothing read) on the current socket, so a dead network path is noticed also
// on an idle or subscribed connection. The PING times out like any command.
import type { Clock, TimerId } from "../_clock.ts";
import type { Link } from "./_link.ts";

/** The parts of a Connection its keep-alive works with. */
export interface KeepAliveHost {
  /** The time and the timers (unref'd with the connection's `unref`). */
  readonly timers: Clock;
  /** The current socket when the connection is ready, else `undefined`. */
  readyLink(): Link | undefined;
  /** Whether nothing is in flight on `link`, queued, or held by a handoff. */
  quiet(link: Link): boolean;
  /** Writes a PING (its failure is ignored: the deadlines act on it). */
  ping(): void;
}

/** The ping timer of a Connection. */
export class KeepAlive {
  readonly #h: KeepAliveHost;
  readonly #interval: number;
  #timer: TimerId | undefined;
  readonly #cb = (): void => this.#onTimer();

  /**
   * @param host The connection's parts.
   * @param interval `pingInterval`, ms (> 0).
   */
  constructor(host: KeepAliveHost, interval: number) {
    this.#h = host;
    this.#interval = interval;
  }

  /** Starts counting silence on a new socket. */
  start(link: Link): void {
    link.lastIoAt = link.lastReplyAt;
    this.#arm(this.#interval);
  }

  /** Stops the timer (close). */
  stop(): void {
    this.#h.timers.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#h.timers.clearTimer(this.#timer);
    this.#timer = this.#h.timers.setTimer(this.#cb, Math.max(1, ms));
  }

  /** Writes a PING when the current socket was silent for the ping interval. */
  #onTimer(): void {
    this.#timer = undefined;
    const h = this.#h;
    const link = h.readyLink();
    // Re-armed when the next socket is installed.
    if (link === undefined) return;
    const interval = this.#interval;
    const due = link.lastIoAt + interval - h.timers.now();
    if (due > 0) {
      this.#arm(due);
      return;
    }
    if (h.quiet(link)) h.ping();
    this.#arm(interval);
  }
}
