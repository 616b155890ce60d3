// The monitor: one subscription to the event channels of one sentinel, moved to the next
// sentinel when that one goes away, and a periodic check that catches a switch whose message
// was lost (a sentinel that died mid-failover, a subscription being re-established).
import { type Endpoint, formatEndpoint, sameEndpoint } from "../endpoint.ts";
import { ConnectionError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { type Clock, systemClock, type TimerId } from "../_clock.ts";
import { unrefTimer } from "../transport/unref_timer.ts";
import type { SentinelSession, SessionOpener } from "./_dial.ts";
import type { SentinelSet } from "./_discovery.ts";
import { parseSentinelEvent, type SentinelEvent } from "./_replies.ts";

/** The sentinel event channels the monitor listens to. */
export const MONITOR_CHANNELS: readonly string[] = [
  "+switch-master",
  "+promoted-slave",
  "+sdown",
  "-sdown",
  "+odown",
  "-odown",
  "+failover-end",
  "+reboot",
  "+slave",
  "+sentinel",
  "+convert-to-slave",
];

/** Settings of a {@linkcode SentinelMonitor}. */
export interface MonitorOptions {
  /** The monitored master's name; other masters' events are ignored. */
  masterName: string;
  /** The known sentinels; `+sentinel` events add to it. */
  sentinels: SentinelSet;
  /** Opens a session to a sentinel. */
  open: SessionOpener;
  /** Milliseconds between periodic checks. */
  interval: number;
  /** The periodic timer does not keep the process alive (the client's `unref`). */
  unref?: boolean;
  /** Time and timers of the periodic check (tests drive it by hand). @default systemClock */
  clock?: Clock;
  /** An event about the monitored master. */
  onEvent(event: SentinelEvent): void;
  /**
   * The periodic check, on the current session (also run right after a re-subscription). A
   * rejection counts as that sentinel failing: the monitor moves to the next one.
   */
  check(session: SentinelSession): Promise<void>;
  /** A sentinel learnt from a `+sentinel` event. */
  onSentinelAdded(endpoint: Endpoint): void;
  /** A failure no caller sees (no sentinel reachable for the subscription). */
  onError(error: Error): void;
  /** Where to log. */
  logger: Logger;
}

/** Subscribes to one sentinel's events at a time and checks periodically. */
export class SentinelMonitor {
  readonly #o: MonitorOptions;
  #session: SentinelSession | undefined;
  #connecting: Promise<void> | undefined;
  #timer: TimerId | undefined;
  #checking: Promise<void> | undefined;
  #closed = false;
  #subscribedOnce = false;

  readonly #clock: Clock;

  /** @param options The settings. */
  constructor(options: MonitorOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** The sentinel subscribed to, if any. */
  get sentinel(): Endpoint | undefined {
    return this.#session?.endpoint;
  }

  /**
   * Starts: subscribes (trying `prefer` first) and arms the periodic check.
   *
   * @param prefer The sentinel to try first (the one that answered discovery).
   * @returns Resolves once subscribed, or once every sentinel was tried.
   */
  start(prefer?: Endpoint): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#arm();
    const order = this.#o.sentinels.list();
    if (prefer) {
      const i = order.findIndex((e) => sameEndpoint(e, prefer));
      if (i > 0) order.unshift(...order.splice(i, 1));
    }
    return this.#connect(order);
  }

  /** Runs the periodic check now (a refused write, a suspected switch). */
  checkNow(): Promise<void> {
    return this.#check();
  }

  #arm(): void {
    if (this.#closed) return;
    this.#clock.clearTimer(this.#timer);
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      const next = this.#session ? this.#check() : this.#connect(this.#o.sentinels.list());
      next.finally(() => this.#arm());
    }, this.#o.interval);
    // Only a wall-clock timer is a runtime timer that can be unref'd.
    if (this.#o.unref && this.#clock === systemClock) {
      unrefTimer(this.#timer as ReturnType<typeof setTimeout>);
    }
  }

  #connect(order: Endpoint[]): Promise<void> {
    if (this.#connecting) return this.#connecting;
    const p = this.#connectLoop(order).finally(() => {
      this.#connecting = undefined;
    });
    this.#connecting = p;
    return p;
  }

  async #connectLoop(order: Endpoint[]): Promise<void> {
    const tried: string[] = [];
    for (const e of order) {
      if (this.#closed) return;
      let s: SentinelSession | undefined;
      try {
        s = await this.#o.open(e);
        if (this.#closed) {
          await s.close();
          return;
        }
        const session = s;
        session.onLost((err) => this.#lost(session, err));
        await session.subscribe([...MONITOR_CHANNELS], (message, channel) => {
          if (this.#session === session) this.#onMessage(channel, message);
        });
        if (this.#closed) {
          await session.close();
          return;
        }
      } catch (err) {
        tried.push(`${formatEndpoint(e)}: ${(err as Error).message}`);
        await s?.close().catch(() => {});
        continue;
      }
      this.#session = s;
      this.#o.logger.debug(`sentinel: subscribed to the events of ${formatEndpoint(e)}`);
      const again = this.#subscribedOnce;
      this.#subscribedOnce = true;
      // Events may have been missed while no subscription was in place.
      if (again) await this.#check();
      return;
    }
    if (this.#closed) return;
    this.#o.onError(
      new ConnectionError(
        `Cannot subscribe to the sentinel events: no sentinel answered (${tried.join("; ")})`,
      ),
    );
  }

  #lost(session: SentinelSession, error: Error | undefined): void {
    if (this.#session !== session || this.#closed) return;
    this.#session = undefined;
    this.#o.logger.debug(
      `sentinel: lost the connection to ${formatEndpoint(session.endpoint)}${
        error ? `: ${error.message}` : ""
      }`,
    );
    session.close().catch(() => {});
    this.#connect(this.#o.sentinels.after(session.endpoint)).catch(() => {});
  }

  #check(): Promise<void> {
    if (this.#checking) return this.#checking;
    const session = this.#session;
    if (!session || this.#closed) return Promise.resolve();
    const p = this.#o.check(session).catch((e) => {
      this.#o.logger.debug(
        `sentinel: the check on ${formatEndpoint(session.endpoint)} failed: ${
          (e as Error).message
        }`,
      );
      this.#lost(session, e as Error);
    }).finally(() => {
      this.#checking = undefined;
    });
    this.#checking = p;
    return p;
  }

  #onMessage(channel: string, message: string): void {
    const ev = parseSentinelEvent(channel, message, this.#o.masterName);
    if (ev === undefined) return;
    if (ev.kind === "instance" && ev.channel === "+sentinel" && ev.type === "sentinel") {
      if (this.#o.sentinels.add(ev.address)) this.#o.onSentinelAdded(ev.address);
    }
    this.#o.onEvent(ev);
  }

  /** Stops: unsubscribes, closes the session, disarms the timer. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    const s = this.#session;
    this.#session = undefined;
    await Promise.allSettled([this.#connecting, this.#checking]);
    await s?.close().catch(() => {});
  }
}
