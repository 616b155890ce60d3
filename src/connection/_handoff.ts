// The handoff of a connection to a new socket (maintenance MOVING, sentinel switch): hold new
// work, drain what was written (capped), open and set up the replacement (bounded), install it,
// and go once more when the target moved again meanwhile. The Connection lends its internals
// through a HandoffHost, created once.
import type { Clock, TimerId } from "../_clock.ts";
import type { Endpoint } from "../endpoint.ts";
import { formatEndpoint } from "../endpoint.ts";
import type { Link } from "./_link.ts";

/** What a handoff did. */
export interface HandoffResult {
  /** The endpoint left. */
  from: Endpoint;
  /** The endpoint of the replacement. */
  to: Endpoint;
  /** Milliseconds spent waiting for written commands to be answered. */
  drainMs: number;
  /** Commands held in the backlog while draining, flushed to the replacement. */
  held: number;
  /** Whether the socket was replaced (false when not connected, or the replacement failed). */
  replaced: boolean;
}

/** The parts of a Connection a handoff works with. */
export interface HandoffHost {
  now(): number;
  /** Resolves once a connect attempt in progress finished (either way). */
  settled(): Promise<void>;
  /** The current socket when the connection is ready, else `undefined`. */
  readyLink(): Link | undefined;
  /** The current socket, ready or not. */
  link(): Link | undefined;
  /** Whether the connection is ready. */
  ready(): boolean;
  /** Whether the connection can still take a replacement (ready, or waiting to reconnect). */
  accepting(): boolean;
  endpoint(): Endpoint;
  /** Where a new socket goes now. */
  target(): Endpoint;
  /** Holds new work in the backlog (or lets it go). */
  hold(on: boolean): void;
  /** Commands in the backlog. */
  held(): number;
  /** Resolves once `link` has nothing in flight or `cap` ms passed. */
  drained(link: Link, cap: number): Promise<void>;
  /** Opens and sets up a socket to `to`, within a bounded time. */
  open(to: Endpoint): Promise<Link>;
  /** Retires the current socket and installs `link`. */
  install(link: Link): void;
  /** A target that could not be reached (ignored when it is the configured endpoint). */
  unreachable(to: Endpoint): void;
  warn(message: string): void;
}

/** Runs one handoff at a time; a call during a handoff joins it (and retargets it). */
export class Handoffs {
  readonly #host: HandoffHost;
  #running: Promise<HandoffResult> | undefined;
  #again: { drainCap: number; target?: Endpoint } | undefined;

  constructor(host: HandoffHost) {
    this.#host = host;
  }

  /** Whether a handoff is in progress. */
  get active(): boolean {
    return this.#running !== undefined;
  }

  /** Starts a handoff, or joins the one in progress (which then goes once more). */
  run(drainCap: number, target: Endpoint | undefined): Promise<HandoffResult> {
    if (this.#running) {
      // A retarget while the replacement is being opened: go once more when it is installed.
      this.#again = { drainCap, target };
      return this.#running;
    }
    const p = this.#loop(drainCap, target).finally(() => {
      this.#running = undefined;
    });
    this.#running = p;
    return p;
  }

  async #loop(drainCap: number, target: Endpoint | undefined): Promise<HandoffResult> {
    let r = await this.#once(drainCap, target);
    for (let rounds = 0; this.#again !== undefined && rounds < 8; rounds++) {
      const again: { drainCap: number; target?: Endpoint } = this.#again;
      this.#again = undefined;
      const want = again.target ?? this.#host.target();
      const at = this.#host.link()?.endpoint;
      if (at !== undefined && at.host === want.host && at.port === want.port) continue;
      const next = await this.#once(again.drainCap, again.target);
      r = { ...next, from: r.from, drainMs: r.drainMs + next.drainMs, held: r.held + next.held };
    }
    this.#again = undefined;
    return r;
  }

  async #once(drainCap: number, target: Endpoint | undefined): Promise<HandoffResult> {
    const h = this.#host;
    // MOVING during the handshake of a socket to the old endpoint: hand off once it is ready.
    await h.settled();
    const old = h.readyLink();
    const from = h.endpoint();
    const start = h.now();
    if (!old) {
      // Not connected: the next socket goes where resolveEndpoint says.
      return { from, to: target ?? h.target(), drainMs: 0, held: 0, replaced: false };
    }
    h.hold(true);
    try {
      await h.drained(old, drainCap);
      const drainMs = h.now() - start;
      const held = h.held();
      const to = target ?? h.target();
      if (!h.ready() || old.closed && h.link() !== old) {
        return { from, to, drainMs, held, replaced: false };
      }
      let link: Link;
      try {
        link = await h.open(to);
      } catch (e) {
        h.warn(
          `cannot open the replacement connection to "${formatEndpoint(to)}": ${
            (e as Error).message
          }; staying on "${formatEndpoint(from)}"`,
        );
        // Keep serving on the old socket until the server closes it; later sockets go to the
        // configured endpoint, not to the unreachable target.
        h.unreachable(to);
        return { from, to: from, drainMs, held, replaced: false };
      }
      if (!h.accepting()) {
        link.closed = true;
        link.transport.close();
        return { from, to, drainMs, held, replaced: false };
      }
      h.install(link);
      return { from, to, drainMs, held, replaced: true };
    } finally {
      h.hold(false);
    }
  }
}

/**
 * Resolves once `link` has no command in flight (or is closed), or after `cap` ms (a handoff's
 * drain).
 *
 * @param link The socket being left.
 * @param cap Longest wait, ms.
 * @param clock The timers.
 * @returns Resolves either way.
 */
export function waitDrained(link: Link, cap: number, clock: Clock): Promise<void> {
  if (link.closed || link.inflight.length === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let timer: TimerId | undefined;
    const done = (): void => {
      clock.clearTimer(timer);
      resolve();
    };
    (link.drained ??= []).push(done);
    timer = clock.setTimer(() => {
      timer = undefined;
      const i = link.drained?.indexOf(done) ?? -1;
      if (i !== -1) link.drained!.splice(i, 1);
      resolve();
    }, cap);
  });
}
