// The deadlines of a Connection: one timer for every command (in flight, queued, or held for a
// LOADING retry), the liveness rule (a socket that answers no command while commands time out
// is dead), and the in-step check (after a timeout, an `ECHO <token>` written behind the
// unanswered commands must come back in its place). The Connection lends what it must through a
// DeadlineHost, created once; the per-command path only compares a deadline with `armedAt`.
import type { Clock, TimerId } from "../_clock.ts";
import { ConnectionError, ProtocolError, TimeoutError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { CommandEncoder } from "../resp/command_encoder.ts";
import type { RedisArgument } from "../resp/types.ts";
import { nameOf } from "./_admission.ts";
import type { Deque } from "./_deque.ts";
import type { Link } from "./_link.ts";
import { type Pending, rejectPending } from "./_pending.ts";
import { type Endpoint, formatEndpoint } from "../endpoint.ts";
import { FLAG_BLOCKING, FLAG_GROUP } from "../command_flags.ts";

/** The errors of sockets the liveness rule declared dead (`stoppedAnswering`). */
const STOPPED_ANSWERING = new WeakSet<Error>();

/**
 * Internal: whether `error` is the one a socket was replaced with because it answered no command
 * in time (the liveness rule, which `pingInterval` also feeds): a failed health check.
 */
export function stoppedAnswering(error: Error | undefined): boolean {
  return error !== undefined && STOPPED_ANSWERING.has(error);
}

/** The parts of a Connection its deadlines work with. */
export interface DeadlineHost {
  /** The time and the timers (unref'd with the connection's `unref`). */
  readonly timers: Clock;
  readonly encoder: CommandEncoder;
  readonly logger: Logger;
  readonly label: string;
  /** `commandTimeout`, ms. */
  readonly commandTimeout: number;
  /** `connectTimeout`, ms (the least a command waits for a socket). */
  readonly connectTimeout: number;
  /** Commands waiting to be written. */
  readonly unsent: Deque<Pending>;
  /** Commands a loading server refused, waiting to be sent again. */
  readonly retry: Deque<Pending>;
  /** Sockets being replaced, still answering what was written to them. */
  readonly retiring: ReadonlySet<Link>;
  /**
   * New sockets with commands written behind their handshake, not yet ready: their commands time
   * out like any written one. A socket that closed or became ready is dropped from it here.
   */
  readonly settingUp: Set<Link>;
  /** The current socket, if any. */
  link(): Link | undefined;
  /** The endpoint the connection is (or will be) connected to. */
  endpoint(): Endpoint;
  /** Whether a socket is ready (else a queued command waits at least the connect timeout). */
  ready(): boolean;
  /** Whether queued commands cannot leave now (no socket, a handoff's hold, a full socket, a loading server). */
  stalled(): boolean;
  /** Why queued commands wait now, for the message of one that expires. */
  stallReason(): string;
  /** Whether an in-step check may be written on the current socket (not a subscriber, no hold). */
  mayProbe(): boolean;
  /** Whether the connection is closed for good: no timer is armed again. */
  finished(): boolean;
  /** Closes a socket because of a fault; its in-flight commands fail with `error`. */
  fail(link: Link, error: Error): void;
  /** An error not delivered to a caller. */
  onError(error: Error): void;
}

/** One timer for every deadline of a Connection, and what happens when one passes. */
export class Deadlines {
  readonly #h: DeadlineHost;
  #timer: TimerId | undefined;
  /**
   * When the timer fires; `Infinity` while none is armed. A deadline earlier than this needs
   * {@linkcode Deadlines.arm}.
   */
  armedAt = Infinity;
  #probes = 0;
  readonly #timerCb = (): void => this.#onTimer();

  constructor(host: DeadlineHost) {
    this.#h = host;
  }

  /** Arms the timer for `at`, unless it fires earlier already. */
  arm(at: number): void {
    if (this.armedAt <= at) return;
    const clock = this.#h.timers;
    if (this.#timer !== undefined) clock.clearTimer(this.#timer);
    this.armedAt = at;
    this.#timer = clock.setTimer(this.#timerCb, Math.max(0, at - clock.now()));
  }

  /** Stops the timer (close). */
  clear(): void {
    this.#h.timers.clearTimer(this.#timer);
    this.#timer = undefined;
    this.armedAt = Infinity;
  }

  /**
   * Commands queued while connected get a deadline once they cannot leave: the offline bound
   * when the socket is gone, their own timeout behind a full socket.
   */
  boundUnsent(offline = true): void {
    const now = this.#h.timers.now();
    const u = this.#h.unsent;
    let groupDeadline = 0;
    for (let i = 0; i < u.length; i++) {
      const p = u.at(i)!;
      if (p.done || p.deadline !== 0 || p.timeout === 0) {
        groupDeadline = (p.flags & FLAG_GROUP) !== 0 ? groupDeadline : 0;
        continue;
      }
      // The commands of one transaction share the deadline of its first command.
      p.deadline = groupDeadline ||
        now + (offline ? Math.max(p.timeout, this.#h.connectTimeout) : p.timeout);
      groupDeadline = (p.flags & FLAG_GROUP) !== 0 ? p.deadline : 0;
      if (p.deadline < this.armedAt) this.arm(p.deadline);
    }
  }

  /** Rejects a command that never left the queue with a TimeoutError saying why. */
  expireQueued(p: Pending, why?: string): void {
    const h = this.#h;
    p.done = true;
    const waited = h.ready() ? p.timeout : Math.max(p.timeout, h.connectTimeout);
    rejectPending(
      p,
      new TimeoutError(
        `Command "${nameOf(p.cmd)}" was not sent within ${waited} ms: ${why ?? h.stallReason()}`,
        { written: false },
      ),
    );
  }

  /**
   * Applies a timeout policy to the commands in flight (re-timed from when they were written),
   * and arms the timer for a deadline that came nearer.
   */
  retime(policy: (configured: number, blocking: boolean) => number): void {
    const h = this.#h;
    const retime = (link: Link) => {
      const q = link.inflight;
      for (let i = 0; i < q.length; i++) {
        const p = q.at(i)!;
        if (p.done || p.deadline === 0) continue;
        const writtenAt = p.deadline - p.timeout;
        const t = policy(p.timeout, (p.flags & FLAG_BLOCKING) !== 0);
        p.timeout = t;
        p.deadline = t === 0 ? 0 : writtenAt + t;
      }
      link.mixed = true;
    };
    const current = h.link();
    if (current) retime(current);
    for (const l of h.retiring) retime(l);
    // A shorter deadline than the armed one needs an earlier timer.
    let first = Infinity;
    const earliest = (l: Link) => {
      for (let i = 0; i < l.inflight.length; i++) {
        const p = l.inflight.at(i)!;
        if (!p.done && p.deadline !== 0 && p.deadline < first) first = p.deadline;
      }
    };
    if (current) earliest(current);
    for (const l of h.retiring) earliest(l);
    if (first !== Infinity) this.arm(first);
  }

  #onTimer(): void {
    const h = this.#h;
    this.#timer = undefined;
    this.armedAt = Infinity;
    const now = h.timers.now();
    let next = Infinity;
    const scan = (link: Link): void => {
      const q = link.inflight;
      let timedOut = false;
      for (let i = 0; i < q.length; i++) {
        const p = q.at(i)!;
        if (p.done || p.deadline === 0) continue;
        if (p.deadline <= now) {
          p.done = true;
          timedOut = true;
          rejectPending(
            p,
            new TimeoutError(
              `Command "${nameOf(p.cmd)}" timed out after ${p.timeout} ms on "${
                formatEndpoint(link.endpoint)
              }"`,
            ),
          );
        } else {
          if (p.deadline < next) next = p.deadline;
          // With one timeout for all, later commands have later deadlines.
          if (!link.mixed) break;
        }
      }
      if (link.closed) return;
      // After a timeout, check that replies still match their commands: a marker whose reply
      // is known is written behind the unanswered ones.
      if (timedOut && link === h.link()) this.#writeProbe(link);
      // A socket that answers no command in time while commands time out is dead: pushes (pub/sub
      // messages) and late replies do not keep it alive.
      const head = q.peek();
      if (head && head.done && link.ready && head.deadline !== 0) {
        const silentFor = now - link.lastReplyAt;
        const limit = Math.max(h.commandTimeout, 1000) * 2;
        if (silentFor >= limit) {
          h.logger.warn(
            `${h.label}: "${
              formatEndpoint(link.endpoint)
            }" answered no command for ${silentFor} ms, replacing the connection`,
          );
          const error = new ConnectionError(
            `Cannot get the reply: "${formatEndpoint(link.endpoint)}" stopped answering`,
          );
          STOPPED_ANSWERING.add(error);
          h.fail(link, error);
          return;
        }
        next = Math.min(next, link.lastReplyAt + limit);
      }
    };
    const current = h.link();
    if (current) scan(current);
    for (const l of [...h.retiring]) scan(l);
    for (const l of h.settingUp) {
      if (l.closed || l.ready) h.settingUp.delete(l);
      else scan(l);
    }
    // Commands waiting for a socket, for a full socket to drain, or for a loading server.
    const waiting = h.stalled();
    const u = h.unsent;
    for (let i = 0; waiting && i < u.length; i++) {
      const p = u.at(i)!;
      if (p.done || p.deadline === 0) continue;
      if (p.deadline <= now) {
        this.expireQueued(p);
        // A transaction expires whole.
        while ((p.flags & FLAG_GROUP) !== 0 && i + 1 < u.length) {
          const q = u.at(++i)!;
          if (!q.done) this.expireQueued(q, "another command of its transaction expired");
          if ((q.flags & FLAG_GROUP) === 0) break;
        }
      } else if (p.deadline < next) next = p.deadline;
    }
    const r = h.retry;
    for (let i = 0; i < r.length; i++) {
      const p = r.at(i)!;
      if (p.done || p.deadline === 0) continue;
      if (p.deadline <= now) {
        p.done = true;
        rejectPending(
          p,
          new TimeoutError(
            `Command "${nameOf(p.cmd)}" was not applied within its timeout: "${
              formatEndpoint(h.endpoint())
            }" is loading its data set`,
            { written: false },
          ),
        );
      } else if (p.deadline < next) next = p.deadline;
    }
    if (next !== Infinity && !h.finished()) this.arm(next);
  }

  /**
   * Writes `ECHO <token>` behind the commands in flight. Replies come in order, so the reply in
   * its place must be the token: anything else means replies no longer match their commands
   * (a reply was lost or is extra), and the socket is replaced.
   */
  #writeProbe(link: Link): void {
    const h = this.#h;
    if (link.probe !== undefined || !link.ready || !h.mayProbe()) return;
    const token = `edge-redis-check:${++this.#probes}`;
    link.probe = token;
    const settle = (v: unknown): void => {
      if (link.probe === token) link.probe = undefined;
      if (v === token || v instanceof Error || link.closed) return;
      const err = new ProtocolError(
        `Cannot match the replies from "${
          formatEndpoint(link.endpoint)
        }" to their commands: the replies are out of step`,
      );
      h.logger.error(`${h.label}: ${err.message}, resetting the connection`);
      h.onError(err);
      h.fail(link, err);
    };
    const t = Math.max(h.commandTimeout, 1000);
    const args: RedisArgument[] = ["ECHO", token];
    h.encoder.writeCommand(args);
    link.inflight.push({
      args: undefined,
      cmd: "ECHO",
      resolve: settle,
      reject: settle,
      transform: undefined,
      flags: 0,
      timeout: t,
      deadline: h.timers.now() + t,
      done: false,
      bytes: 0,
      pushes: 0,
      tap: undefined,
    });
    link.mixed = true;
    link.transport.write(h.encoder.take());
  }
}
