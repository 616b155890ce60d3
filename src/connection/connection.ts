/**
 * One logical, multiplexed connection to one Redis endpoint: auto-pipelining, timeouts that
 * never desynchronise the reply stream, reconnect with backoff, session restore, and the
 * replacement of its socket (the maintenance handoff).
 *
 * The states of a {@linkcode Connection} (`#state`):
 *
 * ```text
 *   IDLE ── send() / connect() ──► CONNECTING ── handshake done ──► READY
 *    ▲                              │       ▲                        │
 *    └──── first attempt failed ────┘       │ backoff elapsed        │ socket lost
 *                                           │                        ▼
 *                                           └─────────────────── WAITING
 *                                              (an attempt that fails goes back to WAITING)
 *   READY ── handoff() ──► READY on the replacement socket (the old one drains, then closes)
 *   any ── close() ──► CLOSING ── nothing due, or closeTimeout passed ──► CLOSED
 *   any ── destroy(), or the socket lost with reconnect: false ──────► CLOSED
 * ```
 *
 * - IDLE: no socket, none being opened; the first command starts the lazy connect.
 * - CONNECTING: a socket is being dialled and set up (`_open.ts`); commands wait in the queue.
 * - READY: the current socket (`#link`) takes the queue at the next microtask, unless a gate
 *   of the queue is shut: `blocked` (above the transport's high-water mark, until it drains),
 *   `hold` (a handoff drains the old socket, `_handoff.ts`), or the LOADING hold
 *   (`_loading_retry.ts`).
 * - WAITING: the socket was lost; the next attempt is scheduled (`_reconnect.ts`).
 * - CLOSING: new commands are refused; what is due completes (`_close.ts`).
 * - CLOSED: everything is settled; no socket, no timer.
 *
 * Commands behind the handshake (`pipelineHandshake`, the executor's shared connection only):
 * a new socket of the connection's own (its first, or one after a ready socket such as a Workers
 * rebind; not the reconnect after a fault, `#afterFault`, nor a handoff's replacement)
 * writes the first queued commands in the same write as its handshake, so a fresh socket's first
 * command costs one round trip, not two (`SendQueue.takeEarly`, `_open.ts`). When:
 *
 * - only if every handshake step says a command after it keeps its meaning whatever the step's
 *   reply (`HandshakeStep.commandsMayFollow`): HELLO/AUTH as the `default` user (a failed AUTH
 *   as another user would run the command as `default` where that user needs no password),
 *   CLIENT SETNAME, CLIENT SETINFO, the maintenance opt-in in mode "auto" (in "enabled" no
 *   command may run on a socket without notifications). Never behind SELECT (a failed one
 *   would run the command on database 0) or any session step: CLIENT TRACKING (a read answered
 *   before tracking is confirmed could be cached untracked), pub/sub re-subscribes, a cluster
 *   replica's READONLY, the cluster node check (the command could run on the wrong node);
 * - not while work is held: a handoff's hold (MOVING), a LOADING hold or commands it refused
 *   (they go first), a relaxed maintenance window;
 * - the prefix of the queue up to the first blocking, subscribe-family, transaction (MULTI,
 *   WATCH state) or no-reply command; those wait for the ready socket, as before. Exclusive
 *   connections (WATCH sessions, blocking commands) and subscribers never do it.
 *
 * Each such command gets its own reply whatever the handshake's outcome: a command the server
 * ran after a failed AUTH or an unknown HELLO is answered with its reply (never reported as not
 * run: a caller would retry an INCR); after a failed step, NOAUTH and LOADING mean not run: the
 * command goes back in front of the queue (a first connect then fails it unwritten with the
 * handshake's error, a reconnect keeps it for the next socket, as for any queued command). A
 * failed handshake's error surfaces once those replies are in. When the handshake succeeds the
 * socket is installed synchronously with its last reply (`#adopt`), so the replies behind it
 * find a READY connection (LOADING goes to the LOADING retry as for any command, and a caller
 * never sees a reply before the connection is ready). While the socket is set up, their
 * deadlines hold (`#settingUp`, scanned by `Deadlines`): a server slow to answer the write (a
 * `DEBUG SLEEP` behind the handshake) times them out as usual. A command unanswered when its socket goes
 * during the handshake was written: `ConnectionError` (`TimeoutError` after a connect timeout,
 * `ClosedError` after `close()`), never sent twice, except after a `maxclients` refusal (the
 * server read nothing). On Workers, an attempt superseded by another request's (`#rebind`) that
 * wrote commands, or whose handshake is not written yet while its request's commands are queued
 * (they are set aside for it, `#aside`), runs on and is retired, so they are answered in their
 * own request: workerd settles a promise from the request whose socket read the reply, and may
 * run the caller's code on in that request (its Response then fails to send).
 *
 * The parts, each in its own file, each seeing only what its host interface lends it:
 * admission, queue and flush, the write half of the per-command path (`_send_queue.ts`, its
 * checks in `_admission.ts`); reply matching, the reply half (`_reply_matcher.ts`, the pub/sub
 * confirmations in `_pubsub_replies.ts`); the LOADING retry (`_loading_retry.ts`); the
 * sockets: retiring ones, where to dial, a lost one (`_sockets.ts`; dialling and the handshake
 * in `_open.ts`); the reconnect schedule (`_reconnect.ts`); deadlines, liveness and the
 * in-step ECHO check (`_deadlines.ts`); the keep-alive (`_keep_alive.ts`); the handoff
 * (`_handoff.ts`); the close (`_close.ts`). This file keeps the state machine: `#to()` is the
 * one place a state changes, and it gives the queue and the reply matcher their view of it
 * (as `#install`/`#lost` give them the current socket).
 *
 * @module
 */

import { ClosedError, ConnectionError } from "../errors.ts";
import { CommandEncoder } from "../resp/command_encoder.ts";
import type { RedisArgument } from "../resp/types.ts";
import { FLAG_NO_REPLY, FLAG_PING } from "../command_flags.ts";
import type { Transform } from "../resp/types.ts";
import { type Endpoint, formatEndpoint } from "../endpoint.ts";
import { Deque } from "./_deque.ts";
import type { Link } from "./_link.ts";
import { type EarlyCommands, openLink, type OpenSettings, untilAborted } from "./_open.ts";
import { type HandoffHost, type HandoffResult, Handoffs, waitDrained } from "./_handoff.ts";
import { planHandshake } from "./_handshake.ts";
import { noop, type Pending, rejectPending } from "./_pending.ts";
import { asUnwritten, cannotConnect } from "./_admission.ts";
import { Deadlines } from "./_deadlines.ts";
import { LoadingRetry } from "./_loading_retry.ts";
import { ReplyMatcher } from "./_reply_matcher.ts";
import { SendQueue } from "./_send_queue.ts";
import { Reconnect } from "./_reconnect.ts";
import { KeepAlive } from "./_keep_alive.ts";
import { Closing, DEFAULT_CLOSE_TIMEOUT } from "./_close.ts";
import { rejectInflight, Sockets } from "./_sockets.ts";
import type { ConnectionOptions, TimeoutPolicy } from "./connection_options.ts";
import { type Clock, clockWithNow, systemClock } from "../_clock.ts";
import { unrefClock } from "../transport/unref_timer.ts";
import { ioContextProbe } from "../transport/io_context.ts";

export {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_ERRORS_AS_VALUES,
  FLAG_GROUP,
  FLAG_NO_REPLY,
  FLAG_NONE,
  FLAG_RAW,
  FLAG_READONLY,
  FLAG_SUBSCRIBE,
} from "../command_flags.ts";
export { type Endpoint, endpointKey, formatEndpoint, parseEndpoint } from "../endpoint.ts";
export type { ConnectionHooks, ConnectionOptions, TimeoutPolicy } from "./connection_options.ts";
export { DEFAULT_CLOSE_TIMEOUT } from "./_close.ts";
export { argumentsError, encodedBytes } from "./_admission.ts";
export { stoppedAnswering } from "./_deadlines.ts";

export type { HandshakeStep } from "./_handshake.ts";

export type { HandoffResult } from "./_handoff.ts";

const STATE_IDLE = 0;
const STATE_CONNECTING = 1;
const STATE_READY = 2;
const STATE_WAITING = 3; // between reconnect attempts
const STATE_CLOSING = 4;
const STATE_CLOSED = 5;

/**
 * A multiplexed connection to one endpoint. Commands issued in one tick are written in one
 * batch; replies resolve the commands in order. Survives socket loss: commands not yet written
 * wait for the next socket (bounded), commands written but unanswered fail with
 * `ConnectionError` and are never sent twice.
 *
 * This is the building block of every client kind (internal); applications use `RedisClient`.
 * Its states are drawn at the top of this file.
 *
 * While READY, new commands are written at the next microtask, except while one of these
 * holds, when they wait in the queue (with the queue bounds): the socket is above its
 * high-water mark (until it drains; each waits at most its own timeout), a handoff is draining
 * the old socket, or the server answered LOADING (until the retry after 100 ms; each waits at
 * most its own timeout). Commands that never left the queue
 * fail with `written: false`.
 *
 * @example
 * ```ts ignore
 * const conn = new Connection({ endpoint: { host: "127.0.0.1", port: 6379 }, ...settings });
 * await conn.send(["SET", "k", "v"], undefined, 0);
 * await conn.close();
 * ```
 */
export class Connection {
  readonly #o: ConnectionOptions;
  readonly #clock: Clock;
  /** The clock with its timers unref'd when `unref` is set (on the wall clock). */
  readonly #timers: Clock;
  readonly #encoder = new CommandEncoder(16 * 1024);
  /** Admission, the queue and the flush: the write half of the per-command path. */
  readonly #queue: SendQueue;
  /** Commands waiting to be written, in order (the queue's). */
  readonly #unsent = new Deque<Pending>(256);
  /** The current socket. */
  #link: Link | undefined;
  /** The retiring sockets, where the next one goes, a lost socket. */
  readonly #sockets: Sockets;
  /** Replies and pushes to their commands; keeps a copy of `#link` and of closing. */
  readonly #replies: ReplyMatcher;
  #state = STATE_IDLE;
  /** The server answered LOADING: new work is held, what it refused is retried. */
  readonly #loading: LoadingRetry;
  readonly #closing: Closing;
  readonly #deadlines: Deadlines;
  /** `undefined` with `reconnect: false`. */
  readonly #reconnect: Reconnect | undefined;
  #everReady = false;
  /**
   * The last socket was lost or an attempt failed, and no socket has been ready since: the next
   * socket writes no command behind its handshake. A server that accepts and then says nothing
   * (a dying node, a proxy whose backend is gone) would otherwise leave those commands written,
   * never to be retried; the commands queued across a fault wait for a ready socket, unwritten,
   * as they always did. A Workers rebind is no fault: its socket pipelines.
   */
  #afterFault = false;
  #lastError: Error | undefined;
  #connectPromise: Promise<void> | undefined;
  /** Connection attempts in progress: each entry aborts one. */
  readonly #opening = new Set<(e: Error, unlessWritten?: boolean) => void>();
  readonly #handoffs: Handoffs = new Handoffs(this.#handoffHost());
  readonly #openSettings: OpenSettings;
  readonly #label: string;
  /** Sockets and timers do not keep the process alive (see `ConnectionOptions.unref`). */
  readonly #unref: boolean;
  readonly #pingInterval: number;
  /** `undefined` without a ping interval. */
  readonly #keepAlive: KeepAlive | undefined;
  /**
   * Cloudflare Workers: whether the current request is the one the current socket (or attempt)
   * belongs to (`io_context.ts`); `undefined` on other runtimes and before the first attempt.
   */
  #owner: (() => boolean) | undefined;
  /** Counts connect attempts: a superseded attempt's outcome is ignored. */
  #attempt = 0;
  /**
   * Cloudflare Workers: the current attempt's commands set aside by `#rebind` (those its
   * request queued), and whether its handshake may still carry them (not written yet).
   */
  #aside: { list: Deque<Pending>; open: boolean } | undefined;
  /** New sockets with commands behind their handshake, not yet ready (for their deadlines). */
  readonly #settingUp = new Set<Link>();
  /** The commands a new socket may write behind its handshake; `undefined` without `pipelineHandshake`. */
  readonly #early: EarlyCommands | undefined;

  /**
   * Creates a connection; it opens its socket on the first command or on `connect()`.
   *
   * @param options The settings.
   */
  constructor(options: ConnectionOptions) {
    this.#o = options;
    const clock = options.clock ?? (options.now ? clockWithNow(options.now) : systemClock);
    this.#clock = clock;
    this.#sockets = new Sockets(options.endpoint, options.connectTimeout, options.hooks, {
      current: () => this.#link,
      lost: (link, error) => this.#lost(link, error),
      retired: () => this.#checkClosed(),
    });
    this.#label = options.label ?? "connection";
    this.#unref = options.unref === true;
    this.#pingInterval = options.pingInterval ?? 0;
    this.#timers = this.#unref && clock === systemClock ? unrefClock(clock) : clock;
    this.#loading = new LoadingRetry({
      timers: this.#timers,
      logger: options.logger,
      label: this.#label,
      current: (link) => link === this.#link && this.#state === STATE_READY,
      deadline: (at) => {
        if (at < this.#deadlines.armedAt) this.#deadlines.arm(at);
      },
      due: () => this.#releaseRetry(),
    });
    this.#deadlines = this.#makeDeadlines();
    this.#replies = new ReplyMatcher({
      clock,
      logger: options.logger,
      label: this.#label,
      hooks: options.hooks,
      subscriber: options.subscriber === true,
      unref: this.#unref,
      keepAlive: this.#pingInterval > 0,
      loading: this.#loading,
      afterReply: (link) => this.#afterReply(link),
      fail: (link, error) => this.#sockets.fail(link, error),
    });
    this.#closing = new Closing(this.#timers);
    this.#reconnect = options.reconnect === false
      ? undefined
      : new Reconnect(this.#timers, options.reconnect, () => {
        if (this.#state !== STATE_WAITING) return;
        this.connect().catch(() => {});
      });
    this.#keepAlive = this.#pingInterval > 0
      ? new KeepAlive({
        timers: this.#timers,
        readyLink: () => (this.#state === STATE_READY ? this.#link : undefined),
        quiet: (link) =>
          link.inflight.length === 0 && this.#unsent.length === 0 && !this.#queue.hold,
        ping: () => {
          const t = this.#o.commandTimeout || this.#pingInterval;
          this.send(["PING"], undefined, FLAG_PING, t).catch(noop);
        },
      }, this.#pingInterval)
      : undefined;
    this.#queue = new SendQueue({
      unsent: this.#unsent,
      clock,
      encoder: this.#encoder,
      deadlines: this.#deadlines,
      loading: this.#loading,
      replies: this.#replies,
      commandTimeout: options.commandTimeout,
      maxQueueLength: options.maxQueueLength,
      maxQueueBytes: options.maxQueueBytes,
      unref: this.#unref,
      keepAlive: this.#pingInterval > 0,
      tap: options.hooks?.onCommandError,
      endpoint: () => this.endpoint,
      connectTimeout: () => this.#sockets.connectTimeout(this.#sockets.configured),
      connect: () => {
        this.connect().catch(noop);
      },
    });
    this.#openSettings = this.#makeOpenSettings();
    this.#early = options.pipelineHandshake === true
      ? {
        // Not while work is held (a handoff, a loading server, refused commands first) or a
        // maintenance window relaxes the timeouts.
        take: (link) => this.#takeEarly(link, undefined),
        giveBack: (commands) => this.#giveBack(commands),
      }
      : undefined;
  }

  /**
   * Moves queued commands (`from`: the queue, or those set aside for a superseded attempt)
   * behind `link`'s handshake, unless work is held (a handoff, a loading server, refused
   * commands first) or a maintenance window relaxes the timeouts.
   */
  #takeEarly(link: Link, from: Deque<Pending> | undefined): number {
    if (
      this.#queue.hold || this.#loading.active || this.#loading.queue.length > 0 ||
      this.#queue.policy !== undefined
    ) return 0;
    const n = this.#queue.takeEarly(link, from);
    // Their deadlines hold while the socket is set up.
    if (n > 0) this.#settingUp.add(link);
    return n;
  }

  /** The endpoint the connection is (or will be) connected to. */
  get endpoint(): Endpoint {
    return this.#link?.endpoint ?? this.#sockets.configured;
  }

  /**
   * When the ready socket last read a timely reply (or opened), by the connection's clock;
   * `undefined` while not ready.
   */
  get lastReplyAt(): number | undefined {
    return this.#state === STATE_READY ? this.#link?.lastReplyAt : undefined;
  }

  /** The configured endpoint. */
  get configuredEndpoint(): Endpoint {
    return this.#sockets.configured;
  }

  /**
   * Changes the configured endpoint (the sentinel client's master switch): later sockets,
   * reconnects included, dial it; a handoff target remembered as unreachable is forgotten.
   * The current socket stays (move it with `handoff`).
   *
   * @param endpoint The new endpoint.
   */
  setEndpoint(endpoint: Endpoint): void {
    this.#sockets.configure(endpoint);
  }

  /** Whether the handshake completed on the current socket. */
  get ready(): boolean {
    return this.#state === STATE_READY;
  }

  /** Whether the connection is closed or closing. */
  get closed(): boolean {
    return this.#state >= STATE_CLOSING;
  }

  /** Commands written and awaiting their reply (all sockets). */
  get inflightCount(): number {
    return (this.#link ? this.#link.inflight.length : 0) + this.#sockets.retiringInflight;
  }

  /** Commands waiting to be written (those a loading server refused included). */
  get queuedCount(): number {
    return this.#unsent.length + this.#loading.queue.length;
  }

  /** Whether the connection has no command queued or in flight. */
  get idle(): boolean {
    return this.#unsent.length === 0 && this.#loading.queue.length === 0 &&
      this.inflightCount === 0;
  }

  /**
   * Opens the socket and runs the handshake, if not done yet.
   *
   * @param options `signal`: gives up. An attempt this call started is stopped (the dial
   *   included) and fails like any failed attempt; joining an attempt already in progress, only
   *   this call stops waiting. Either way this call rejects with
   *   `ConnectionError("Cannot connect to ...: aborted")` whose `cause` is the signal's reason.
   * @returns Resolves when ready; rejects with the connection error of this attempt.
   */
  connect(options?: { signal?: AbortSignal }): Promise<void> {
    if (this.#owner !== undefined && !this.#owner()) this.#rebind();
    if (this.#state === STATE_READY) return Promise.resolve();
    if (this.#state >= STATE_CLOSING) {
      return Promise.reject(new ClosedError("Cannot connect: the connection is closed"));
    }
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(this.#aborted(signal));
    if (this.#connectPromise) {
      return signal
        ? untilAborted(this.#connectPromise, signal, () => this.#aborted(signal))
        : this.#connectPromise;
    }
    if (this.#state === STATE_WAITING) this.#reconnect?.cancel();
    const p: Promise<void> = this.#open(signal).finally(() => {
      if (this.#connectPromise === p) this.#connectPromise = undefined;
    });
    this.#connectPromise = p;
    return p;
  }

  /**
   * Cloudflare Workers: a command (or `connect()`) from a request other than the one the socket
   * (or the attempt) belongs to. workerd would refuse that request's I/O on the socket, and the
   * socket's reads and timers end with the request that opened it; so the socket is retired (its
   * commands in flight are answered in their own request) or the attempt superseded (its outcome
   * ignored; the commands its request queued that its handshake can still carry stay with it),
   * the deadline timer is armed again from this request (a timer of an ended request never
   * fires), and the state is WAITING: the caller connects from this request, and the other
   * commands still queued go on that socket.
   */
  /** `#rebind`, then the connect from this request (none from IDLE: the command starts it). */
  #rebound(): void {
    this.#rebind();
    if (this.#state === STATE_WAITING) this.connect().catch(noop);
  }

  #rebind(): void {
    this.#owner = undefined;
    const state = this.#state;
    const d = this.#deadlines;
    const at = d.armedAt;
    if (at !== Infinity) {
      d.clear();
      d.arm(at);
    }
    if (state === STATE_READY) {
      const link = this.#link!;
      this.#link = this.#replies.current = this.#queue.link = undefined;
      this.#queue.blocked = false;
      this.#keepAlive?.stop();
      this.#sockets.retire(link);
      this.#to(STATE_WAITING);
    } else if (state === STATE_CONNECTING) {
      // The commands queued so far are the superseded attempt's request's: they stay with it
      // and are written behind its handshake (their replies then settle them in that request;
      // from this request's socket, workerd would settle them here, in the wrong request).
      const aside = this.#aside;
      this.#aside = undefined;
      if (aside?.open === true) this.#queue.setAsideEarly(aside.list);
      this.#attempt++;
      this.#connectPromise = undefined;
      const superseded = cannotConnect(
        formatEndpoint(this.#sockets.target()),
        "the attempt was started by another request (Cloudflare Workers); a new one starts " +
          "from this request",
      );
      // An attempt that wrote commands behind its handshake runs on (`#setAside`).
      for (const abort of [...this.#opening]) abort(superseded, true);
      this.#to(STATE_WAITING);
    } else if (state === STATE_WAITING) {
      // Its timer may belong to an ended request: the caller connects now.
      this.#reconnect?.cancel();
    }
  }

  #aborted(signal: AbortSignal): ConnectionError {
    return cannotConnect(formatEndpoint(this.#sockets.target()), "aborted", signal.reason);
  }

  // ---- admission, queue and flush (in _send_queue.ts) ----

  /**
   * Sends a command.
   *
   * @param args The command and its arguments.
   * @param transform Converts the reply.
   * @param flags `FLAG_*` bits; with `FLAG_RAW` the commands that change the connection's state
   *   for every caller are refused (see `reservedCommandError`).
   * @param timeout Send-to-reply timeout in ms (0 = none); the configured one when undefined.
   * @param signal Gives up: rejects with the signal's `reason`. A command not yet written is
   *   never written; one already written keeps its place (its reply is discarded, like after a
   *   timeout), so the stream stays in step.
   * @returns The transformed reply; rejects with `ReplyError`, `TimeoutError`, `ConnectionError` or `ClosedError`.
   */
  send(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout?: number,
    signal?: AbortSignal,
  ): Promise<unknown> {
    if (this.#owner !== undefined && !this.#owner()) this.#rebound();
    return this.#queue.send(args, transform, flags, timeout, signal);
  }

  /**
   * Sends several commands back to back (a transaction): either every one is queued, or none is
   * and each promise rejects with the same error. While no socket takes them, the commands share
   * one deadline: they expire, or are written, together.
   *
   * @param commands The commands, in order.
   * @returns One promise per command.
   */
  sendAll(
    commands: { args: RedisArgument[]; transform: Transform | undefined; flags: number }[],
  ): Promise<unknown>[] {
    if (this.#owner !== undefined && !this.#owner()) this.#rebound();
    return this.#queue.sendAll(commands);
  }

  /**
   * Writes a command that gets no reply slot (subscribe family on RESP3), in order with the rest.
   *
   * @param args The command.
   * @returns Resolves once written to a socket.
   */
  sendNoReply(args: RedisArgument[]): Promise<void> {
    return this.send(args, undefined, FLAG_NO_REPLY, 0) as Promise<void>;
  }

  /**
   * Makes push frames (and on a RESP2 subscriber connection, its pub/sub arrays) decode their
   * strings as `Uint8Array`, for binary subscriptions; the frame's type (its first element) is
   * still handed on as a `string`. Applies to the current socket and every later one.
   *
   * @param on Whether binary subscriptions exist.
   */
  setPushBinary(on: boolean): void {
    const links = [...this.#sockets.retiring];
    if (this.#link) links.unshift(this.#link);
    this.#replies.setPushBinary(on, links);
  }

  // ---- reply matching (the rest in _reply_matcher.ts) ----

  /** Puts the commands refused with LOADING back in front of the queue, in order, and flushes. */
  #releaseRetry(): void {
    this.#loading.release(this.#unsent);
    this.#queue.scheduleFlush();
  }

  /** A retiring socket closes once drained; a closing connection finishes once idle. */
  #afterReply(link: Link): void {
    if (link !== this.#link) this.#sockets.afterReply(link);
    if (this.#state === STATE_CLOSING) queueMicrotask(() => this.#checkClosed());
  }

  // ---- socket lifecycle and reconnect ----

  /** Moves to another state (reply matching and the queue keep their view of it). */
  #to(state: number): void {
    this.#state = state;
    this.#replies.closing = state === STATE_CLOSING;
    const q = this.#queue;
    q.ready = state === STATE_READY;
    q.idle = state === STATE_IDLE;
    q.closed = state >= STATE_CLOSING;
  }

  /** The current socket went (a fault, or the peer closed it). */
  #lost(link: Link, error: Error | undefined): void {
    this.#link = this.#replies.current = this.#queue.link = undefined;
    this.#queue.blocked = false;
    if (this.#state >= STATE_CLOSING) {
      this.#finishClose();
      return;
    }
    if (this.#state === STATE_READY) {
      this.#o.logger.debug(
        `${this.#label}: connection to "${formatEndpoint(link.endpoint)}" lost${
          error ? `: ${error.message}` : ""
        }`,
      );
      this.#deadlines.boundUnsent();
      this.#scheduleReconnect(error);
    }
  }

  #scheduleReconnect(error: Error | undefined): void {
    const r = this.#reconnect;
    if (r === undefined) {
      this.#destroy(
        new ConnectionError(
          `Cannot send: the connection to "${formatEndpoint(this.endpoint)}" was lost`,
          { cause: error },
        ),
      );
      return;
    }
    this.#lastError = error;
    this.#afterFault = true;
    this.#to(STATE_WAITING);
    const delay = r.next();
    this.#o.hooks?.onReconnecting?.(delay, r.attempt, error);
    r.start(delay);
  }

  async #open(signal?: AbortSignal): Promise<void> {
    this.#to(STATE_CONNECTING);
    const endpoint = this.#sockets.target();
    const attempt = ++this.#attempt;
    this.#owner = ioContextProbe();
    let early = this.#afterFault ? undefined : this.#early;
    let aside: { list: Deque<Pending>; open: boolean } | undefined;
    if (early !== undefined && this.#owner !== undefined) {
      // Workers: once superseded (`#rebind`), this attempt writes only the commands set aside
      // for it, never those queued since by another request.
      const shared = early;
      const own: { list: Deque<Pending>; open: boolean } = { list: new Deque(16), open: true };
      aside = own;
      this.#aside = own;
      early = {
        take: (link) => {
          own.open = false;
          if (own.list.length > 0) return this.#takeEarly(link, own.list);
          return attempt === this.#attempt ? shared.take(link) : 0;
        },
        giveBack: shared.giveBack,
        reserved: () => own.list.length > 0,
      };
    }
    try {
      // A target other than the configured endpoint (MOVING, sentinel) is always dialled with a
      // bound. (Only a failed handoff marks its target unreachable: a reconnect to where
      // resolveEndpoint points keeps trying there.)
      // The socket is taken synchronously with its handshake's last reply (`#adopt`): the
      // replies behind the handshake, read right after, find it installed.
      let refused: Error | undefined;
      await openLink(
        endpoint,
        this.#sockets.dialTimeout(endpoint, false),
        this.#openSettings,
        signal,
        early,
        (link) => {
          // Superseded: what its handshake did not carry goes on it now, from its own request.
          if (aside !== undefined && aside.list.length > 0 && attempt !== this.#attempt) {
            this.#queue.writeAside(link, aside.list);
          }
          refused = this.#adopt(link, attempt);
        },
      );
      if (refused !== undefined) throw refused;
    } catch (e) {
      const err = e as Error;
      if (attempt !== this.#attempt) return;
      this.#lastError = err;
      if (this.#state >= STATE_CLOSING) throw err;
      // An abort the caller asked for is not reported as an error.
      if (!signal?.aborted) this.#o.hooks?.onError?.(err);
      if (!this.#everReady || this.#o.reconnect === false) {
        // Never connected: fail fast, queued work included.
        this.#to(STATE_IDLE);
        this.#rejectUnsent(err);
      } else {
        this.#scheduleReconnect(err);
      }
      throw err;
    } finally {
      if (aside !== undefined) {
        if (this.#aside === aside) this.#aside = undefined;
        // Not written (the attempt failed): queued again.
        if (aside.list.length > 0) this.#giveBack(aside.list.drain());
      }
    }
  }

  /**
   * Takes the ready socket of attempt `attempt`: installs it, or sets it aside (superseded by an
   * attempt from another request, or a handoff installed its replacement meanwhile).
   *
   * @returns The error the attempt fails with, if any (the connection closed meanwhile).
   */
  #adopt(link: Link, attempt: number): Error | undefined {
    this.#settingUp.delete(link);
    try {
      if (attempt !== this.#attempt) {
        // Superseded by an attempt from another request (`#rebind`): what it wrote behind its
        // handshake is answered on it, in its own request.
        this.#setAside(link);
        return undefined;
      }
      if (this.#state >= STATE_CLOSING) {
        link.closed = true;
        link.transport.close();
        const e = new ClosedError("Cannot connect: the connection was closed meanwhile");
        rejectInflight(link, e);
        return e;
      }
      if (this.#link !== undefined && !this.#link.closed) {
        // A handoff installed its replacement meanwhile: keep that one.
        this.#setAside(link);
        return undefined;
      }
      this.#install(link);
      return undefined;
    } catch (e) {
      // Not into the reply matcher that called it: the attempt fails with it.
      return e as Error;
    }
  }

  /**
   * A ready socket that will not be the current one: closed, or, while commands written behind
   * its handshake are unanswered, retired (it closes once they are answered).
   */
  #setAside(link: Link): void {
    this.#giveBackNotRun(link);
    if (link.inflight.length > 0) {
      this.#sockets.retire(link);
      return;
    }
    link.closed = true;
    link.transport.close();
  }

  /** Queues again what the server did not run of the commands behind `link`'s handshake. */
  #giveBackNotRun(link: Link): void {
    const notRun = link.notRun;
    if (notRun === undefined) return;
    link.notRun = undefined;
    this.#giveBack(notRun);
  }

  /**
   * Commands written behind a handshake that the server did not run: back in front of the
   * queue, or, once the connection is closing, rejected as never sent.
   */
  #giveBack(commands: Pending[]): void {
    if (this.#state < STATE_CLOSING) {
      this.#queue.giveBack(commands);
      return;
    }
    const e = new ClosedError("Cannot send the command: the connection was closed", {
      written: false,
    });
    for (const p of commands) {
      if (p.done) continue;
      p.done = true;
      rejectPending(p, e);
    }
  }

  /** Makes `link` the current socket and flushes the backlog. */
  #install(link: Link): void {
    if (link.early > 0) {
      this.#giveBackNotRun(link);
      // Their deadlines were armed while the socket was not current: arm them again.
      const q = link.inflight;
      for (let i = 0; i < q.length; i++) {
        const p = q.at(i)!;
        if (!p.done && p.deadline !== 0 && p.deadline < this.#deadlines.armedAt) {
          this.#deadlines.arm(p.deadline);
        }
      }
    }
    this.#link = this.#replies.current = this.#queue.link = link;
    this.#to(STATE_READY);
    this.#everReady = true;
    this.#afterFault = false;
    if (this.#reconnect) this.#reconnect.attempt = 0;
    link.lastReplyAt = this.#clock.now();
    if (this.#unref && link.inflight.length === 0) link.transport.unref?.();
    this.#keepAlive?.start(link);
    // Commands a loading server refused on the previous socket go first.
    if (this.#loading.queue.length > 0 || this.#loading.active) this.#releaseRetry();
    this.#o.hooks?.onReady?.(link.endpoint);
    this.#queue.flushSoon();
  }

  /** What opening a socket needs, created once. */
  #makeOpenSettings(): OpenSettings {
    const o = this.#o;
    const replies = this.#replies;
    return {
      clock: this.#timers,
      connector: o.connector,
      tls: o.tls,
      encoder: this.#encoder,
      opening: this.#opening,
      events: {
        onReply: (l, v) => replies.onReply(l, v),
        onPush: (l, f) => replies.onPush(l, f),
        onData: (l, chunk) => replies.onData(l, chunk),
        onDrain: (l) => {
          if (this.#link === l && this.#queue.blocked) {
            this.#queue.blocked = false;
            this.#queue.flush();
          }
        },
        onClose: (l, err) => this.#sockets.closed(l, err),
      },
      onConnect: (endpoint) => o.hooks?.onConnect?.(endpoint),
      plan: (link) =>
        planHandshake(
          o,
          formatEndpoint(link.endpoint),
          o.hooks?.handshake?.(link.transport, o.protocol),
          o.hooks?.session?.(),
        ),
    };
  }

  /** Rejects every command still waiting to be written (and those held for a LOADING retry). */
  #rejectUnsent(error: Error): void {
    const e = asUnwritten(error);
    this.#loading.rejectAll(e);
    let p: Pending | undefined;
    while ((p = this.#unsent.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      rejectPending(p, e);
    }
    this.#queue.unsentBytes = 0;
  }

  // ---- deadlines ----

  /** The deadlines part, with what it may see of the connection. */
  #makeDeadlines(): Deadlines {
    const o = this.#o;
    return new Deadlines({
      timers: this.#timers,
      encoder: this.#encoder,
      logger: o.logger,
      label: this.#label,
      commandTimeout: o.commandTimeout,
      connectTimeout: o.connectTimeout,
      unsent: this.#unsent,
      retry: this.#loading.queue,
      retiring: this.#sockets.retiring,
      settingUp: this.#settingUp,
      link: () => this.#link,
      endpoint: () => this.endpoint,
      ready: () => this.#state === STATE_READY,
      stalled: () =>
        this.#state !== STATE_READY || this.#queue.hold || this.#queue.blocked ||
        this.#loading.active,
      stallReason: () => {
        const where = formatEndpoint(this.endpoint);
        const last = this.#lastError;
        // Over TLS the dial includes the handshake; a plain port never completes it.
        const why = last
          ? ` (${last.message})`
          : this.#state === STATE_CONNECTING && this.#openSettings.tls
          ? ` (the TLS handshake with ${where} has not completed; is the server TLS-enabled?)`
          : "";
        return this.#state !== STATE_READY
          ? `no connection to "${where}"${why}`
          : this.#loading.active
          ? `"${where}" is loading its data set`
          : this.#queue.blocked
          ? `the socket to "${where}" is full (the server does not read)`
          : `the connection to "${where}" is being replaced`;
      },
      mayProbe: () => !o.subscriber && !this.#queue.hold,
      finished: () => this.#state === STATE_CLOSED,
      fail: (link, error) => this.#sockets.fail(link, error),
      onError: (error) => o.hooks?.onError?.(error),
    });
  }

  /**
   * Sets (or clears) the timeout policy: every command written from now on gets the timeout it
   * returns, and so do the commands in flight (re-timed from when they were written).
   *
   * @param policy The policy, or `undefined` for the configured timeouts.
   */
  setTimeoutPolicy(policy: TimeoutPolicy | undefined): void {
    this.#queue.policy = policy;
    if (policy !== undefined) this.#deadlines.retime(policy);
  }

  // ---- handoff (maintenance MOVING) ----

  /**
   * Replaces the socket (maintenance MOVING): new work is held in the backlog, what was
   * written drains (at most `drainCap` ms), the replacement is opened to `target` (or to
   * where `resolveEndpoint` says, evaluated after the drain, so a retarget during the drain is
   * honoured) and set up within a bounded time, the backlog is flushed to it in order, and the
   * old socket closes once its last reply arrived. When the replacement cannot be opened, the
   * connection stays on the old socket and later sockets go to the configured endpoint. A second
   * call during a handoff joins the first (and goes on to its target).
   *
   * @param drainCap Longest wait, in ms, for written commands to be answered.
   * @param target Where to go; `undefined` asks `resolveEndpoint` at the time of opening.
   * @returns Details of the handoff.
   */
  handoff(drainCap: number, target?: Endpoint): Promise<HandoffResult> {
    return this.#handoffs.run(drainCap, target);
  }

  /** The internals a handoff works with. */
  #handoffHost(): HandoffHost {
    return {
      now: () => this.#clock.now(),
      settled: () =>
        this.#state === STATE_CONNECTING && this.#connectPromise
          ? this.#connectPromise.then(noop, noop)
          : Promise.resolve(),
      readyLink: () => (this.#state === STATE_READY ? this.#link : undefined),
      link: () => this.#link,
      ready: () => this.#state === STATE_READY,
      accepting: () => this.#state === STATE_READY || this.#state === STATE_WAITING,
      endpoint: () => this.endpoint,
      target: () => this.#sockets.target(),
      hold: (on) => {
        this.#queue.hold = on;
        if (!on) this.#queue.scheduleFlush();
      },
      held: () => this.#unsent.length,
      drained: (link, cap) => waitDrained(link, cap, this.#clock),
      // Always bounded: a target that never answers must not hold the backlog forever.
      open: (to) => openLink(to, this.#sockets.dialTimeout(to, true), this.#openSettings),
      install: (link) => {
        // Retire the current socket: the old one, or one a reconnect installed meanwhile.
        const cur = this.#link;
        if (cur !== undefined) {
          this.#link = this.#replies.current = this.#queue.link = undefined;
          this.#sockets.retire(cur);
        }
        this.#reconnect?.cancel();
        this.#queue.hold = false;
        this.#queue.blocked = false;
        this.#install(link);
      },
      unreachable: (to) => this.#sockets.unreachable(to),
      warn: (m) => this.#o.logger.warn(`${this.#label}: ${m}`),
    };
  }

  // ---- close ----

  /**
   * Closes gracefully: new commands are refused, queued and in-flight ones complete (each within
   * its own timeout), then the socket is closed. After `closeTimeout` ms whatever is still
   * unanswered is rejected with `ClosedError` and the socket destroyed. Every call returns the
   * same promise.
   *
   * @returns Resolves once closed.
   */
  close(): Promise<void> {
    const closing = this.#closing;
    if (closing.promise !== undefined) return closing.promise;
    if (this.#state === STATE_CLOSED) return Promise.resolve();
    const wasReady = this.#state === STATE_READY;
    this.#to(STATE_CLOSING);
    this.#reconnect?.cancel();
    if (!wasReady) {
      this.#rejectUnsent(
        new ClosedError("Cannot send the command: the client was closed", { written: false }),
      );
    } else if (this.#unsent.length > 0 || this.#loading.queue.length > 0) {
      // Write what is queued (a handoff's hold ends: the current socket takes it); the flush
      // refuses while closing, so write directly.
      this.#queue.hold = false;
      if (this.#loading.active) this.#loading.release(this.#unsent);
      this.#to(STATE_READY);
      this.#queue.flush();
      this.#to(STATE_CLOSING);
    }
    const promise = closing.begin();
    this.#checkClosed();
    const bound = this.closeTimeout;
    if (this.#state !== STATE_CLOSED && bound > 0) {
      closing.bound(bound, () => {
        if (this.#state === STATE_CLOSED) return;
        this.#o.logger.debug(
          `${this.#label}: ${this.inflightCount} replies still missing after closeTimeout (${bound} ms), destroying the connection`,
        );
        this.#destroy(
          new ClosedError(
            `Cannot get the reply: the connection was closed (closeTimeout ${bound} ms passed)`,
          ),
        );
      });
    }
    return promise;
  }

  #checkClosed(): void {
    if (this.#state !== STATE_CLOSING) return;
    if (this.inflightCount > 0 || this.#unsent.length > 0 || this.#loading.queue.length > 0) {
      return;
    }
    this.#finishClose();
  }

  #finishClose(): void {
    if (this.#state === STATE_CLOSED) return;
    this.#to(STATE_CLOSED);
    this.#rejectUnsent(new ClosedError("Cannot send the command: the connection was closed"));
    const link = this.#link;
    this.#link = this.#replies.current = this.#queue.link = undefined;
    if (link && !link.closed) {
      link.closed = true;
      link.transport.close();
    }
    this.#sockets.closeRetiring();
    this.#settingUp.clear();
    for (const abort of [...this.#opening]) {
      abort(new ClosedError("Cannot connect: the connection was closed"));
    }
    this.#deadlines.clear();
    this.#reconnect?.cancel();
    this.#closing.stop();
    this.#keepAlive?.stop();
    link?.wakeDrained();
    this.#o.hooks?.onClose?.();
    this.#closing.settle();
  }

  /**
   * Closes at once: everything queued or in flight is rejected with `error` (a `ClosedError`
   * by default).
   *
   * @param error The error for the pending commands.
   */
  destroy(error?: Error): void {
    this.#destroy(error ?? new ClosedError("Cannot get the reply: the connection was closed"));
  }

  #destroy(error: Error): void {
    if (this.#state === STATE_CLOSED) return;
    this.#to(STATE_CLOSING);
    this.#rejectUnsent(error);
    if (this.#link) rejectInflight(this.#link, error);
    this.#finishClose();
  }

  /**
   * Milliseconds `close()` waits for the replies still due before destroying the connection.
   * @internal
   * @ignore
   */
  get closeTimeout(): number {
    return this.#o.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT;
  }
}
