// The LOADING retry of a Connection: a server loading its data set refuses commands with
// `-LOADING` without applying them, so they are kept and sent again, in order and ahead of the
// rest, after 100 ms; meanwhile new work waits in the queue (with the queue bounds). A command
// of a transaction or the subscribe family, one whose deadline passes, or one refused on a
// socket that is no longer the current one fails with the reply instead.
import type { Clock, TimerId } from "../_clock.ts";
import type { Logger } from "../logger.ts";
import { Deque } from "./_deque.ts";
import type { Link } from "./_link.ts";
import { type Pending, rejectPending } from "./_pending.ts";
import { formatEndpoint } from "../endpoint.ts";
import { FLAG_SUBSCRIBE, FLAG_TRANSACTION } from "../command_flags.ts";

/** Delay before commands refused with LOADING are sent again, ms. */
export const LOADING_RETRY_MS = 100;

/** The parts of a Connection its LOADING retry works with. */
export interface LoadingHost {
  /** The time and the timers (unref'd with the connection's `unref`). */
  readonly timers: Clock;
  readonly logger: Logger;
  readonly label: string;
  /** Whether `link` is the current socket of a ready connection. */
  current(link: Link): boolean;
  /** A kept command's deadline, for the command timer. */
  deadline(at: number): void;
  /** The retry delay passed: the connection puts the kept commands back and flushes. */
  due(): void;
}

/** The commands a loading server refused, and the hold on new work while it loads. */
export class LoadingRetry {
  /** Commands the server refused with LOADING (not applied), to be sent again in order. */
  readonly queue: Deque<Pending> = new Deque<Pending>(16);
  /** The server answered LOADING: new work waits in the queue until the retry. */
  active = false;
  readonly #h: LoadingHost;
  #timer: TimerId | undefined;
  readonly #dueCb = (): void => {
    this.#timer = undefined;
    this.#h.due();
  };

  constructor(host: LoadingHost) {
    this.#h = host;
  }

  /**
   * Keeps a command the server refused with LOADING for another try, unless it belongs to a
   * transaction, its deadline passed, or its socket is no longer the current one.
   *
   * @returns Whether the command was kept (else its refusal is its reply).
   */
  keep(link: Link, p: Pending): boolean {
    const h = this.#h;
    if ((p.flags & (FLAG_TRANSACTION | FLAG_SUBSCRIBE)) !== 0 || p.args === undefined) return false;
    if (!h.current(link)) return false;
    const now = h.timers.now();
    if (p.deadline !== 0) {
      const left = p.deadline - now - LOADING_RETRY_MS;
      if (left <= 0) return false;
      // Sent again with what is left of its timeout.
      p.timeout = left;
    }
    this.queue.push(p);
    if (!this.active) {
      this.active = true;
      h.logger.debug(
        `${h.label}: "${formatEndpoint(link.endpoint)}" is loading its data set, holding commands`,
      );
    }
    if (this.#timer === undefined) this.#timer = h.timers.setTimer(this.#dueCb, LOADING_RETRY_MS);
    if (p.deadline !== 0) h.deadline(p.deadline);
    return true;
  }

  /** Ends the hold and puts the kept commands, in order, in front of `unsent`. */
  release(unsent: Deque<Pending>): void {
    this.#stop();
    const r = this.queue;
    for (let i = r.length - 1; i >= 0; i--) {
      const p = r.at(i)!;
      if (!p.done) unsent.unshift(p);
    }
    while (r.shift() !== undefined);
  }

  /** Ends the hold and rejects every kept command with `e`. */
  rejectAll(e: Error): void {
    let p: Pending | undefined;
    while ((p = this.queue.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      rejectPending(p, e);
    }
    this.#stop();
  }

  #stop(): void {
    this.#h.timers.clearTimer(this.#timer);
    this.#timer = undefined;
    this.active = false;
  }
}
