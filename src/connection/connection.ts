/**
 * One logical, multiplexed connection to one Redis endpoint: auto-pipelining, timeouts that
 * never desynchronise the reply stream, reconnect with backoff, session restore, and the
 * replacement of its socket (the maintenance handoff).
 *
 * @module
 */

import {
  ClosedError,
  ConnectionError,
  ProtocolError,
  RedisError,
  ReplyError,
  TimeoutError,
} from "../errors.ts";
import type { Logger } from "../logger.ts";
import { RespEncoder } from "../resp/encoder.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { Connector, TlsOptions, Transport } from "../transport/types.ts";
import {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_ERRORS_AS_VALUES,
  FLAG_GROUP,
  FLAG_NO_REPLY,
  FLAG_PING,
  FLAG_RAW,
  FLAG_SUBSCRIBE,
  FLAG_TRANSACTION,
  type Transform,
} from "./flags.ts";
import { type Endpoint, formatEndpoint, sameEndpoint } from "./endpoint.ts";
import { backoffDelay, type BackoffOptions } from "../resilience/backoff.ts";
import { Deque } from "./_deque.ts";
import type { Link } from "./_link.ts";
import { openLink, type OpenSettings } from "./_open.ts";
import { type HandoffHost, type HandoffResult, Handoffs } from "./_handoff.ts";
import { type HandshakeStep, planHandshake } from "./_handshake.ts";
import { reservedCommandError } from "./reserved.ts";
import {
  acquirePending,
  captureResolvers,
  noop,
  type Pending,
  releasePending,
} from "./_pending.ts";
import { type Clock, clockWithNow, systemClock, type TimerId } from "../_clock.ts";
import { unrefTimer } from "../transport/unref_timer.ts";

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
  type Transform,
} from "./flags.ts";
export { type Endpoint, endpointKey, formatEndpoint, parseEndpoint } from "./endpoint.ts";

export type { HandshakeStep } from "./_handshake.ts";

export type { HandoffResult } from "./_handoff.ts";

/** Callbacks from the connection to its owner. */
export interface ConnectionHooks {
  /** A socket is open and its handshake is about to be written. */
  onConnect?(endpoint: Endpoint): void;
  /** The handshake succeeded; queued work is about to be flushed. */
  onReady?(endpoint: Endpoint): void;
  /** The socket was lost; a reconnect is scheduled after `delay` ms. */
  onReconnecting?(delay: number, attempt: number, error: Error | undefined): void;
  /** An error not delivered to a caller (a failed reconnect, a protocol fault). */
  onError?(error: Error): void;
  /** The connection was closed for good. */
  onClose?(): void;
  /**
   * A push frame (RESP3 `>`, or a pub/sub array on a RESP2 subscriber connection), with the
   * socket it arrived on (during a handoff two sockets deliver).
   */
  onPush?(frame: RespValue[], transport: Transport): void;
  /**
   * Extra handshake steps, after HELLO/AUTH/SETNAME/SETINFO and before SELECT. Called for every
   * new socket with its transport (for its remote address and TLS).
   */
  handshake?(transport: Transport, protocol: 2 | 3): HandshakeStep[];
  /**
   * Session state to re-apply after SELECT (subscriptions, tracking): commands written with no
   * reply slot, or with one when `onReply` is given.
   */
  session?(): HandshakeStep[];
  /**
   * Where a new socket goes: the configured endpoint, or a maintenance target while a MOVING
   * window lasts.
   */
  resolveEndpoint?(configured: Endpoint): Endpoint;
  /**
   * The connect timeout for a new socket to `endpoint` (relaxed during a MOVING window; 0 = none,
   * except for a handoff's replacement, which is always bounded).
   */
  connectTimeout?(configured: number, endpoint: Endpoint): number;
}

/**
 * Computes the effective send-to-reply timeout of a command (maintenance relaxation).
 *
 * @param configured The command's own timeout (0 = none).
 * @param blocking Whether the command blocks.
 * @returns The timeout to apply.
 */
export type TimeoutPolicy = (configured: number, blocking: boolean) => number;

/** Settings of a {@linkcode Connection}. */
export interface ConnectionOptions {
  /** The endpoint to connect to. */
  endpoint: Endpoint;
  /** TLS settings; plain TCP when absent. */
  tls?: TlsOptions;
  /** Opens sockets. */
  connector: Connector;
  /** RESP version. */
  protocol: 2 | 3;
  /** ACL user name. */
  username?: string;
  /** Password (never logged). */
  password?: string;
  /** Database index. */
  db: number;
  /** `CLIENT SETNAME` value. */
  clientName?: string;
  /** Library name and version for `CLIENT SETINFO`; skipped when absent. */
  libName?: string;
  /** Library version for `CLIENT SETINFO`. */
  libVersion?: string;
  /** Milliseconds to open the socket and finish the handshake. */
  connectTimeout: number;
  /** Send-to-reply timeout in milliseconds; 0 = none. */
  commandTimeout: number;
  /** Backoff between reconnect attempts, or `false` to never reconnect. */
  reconnect: BackoffOptions | false;
  /** Most commands waiting to be written while not connected. */
  maxQueueLength: number;
  /** Most bytes (approximate) waiting to be written while not connected. */
  maxQueueBytes: number;
  /** A RESP2 connection dedicated to pub/sub: pub/sub arrays go to `onPush`. */
  subscriber?: boolean;
  /**
   * Milliseconds `close()` waits for the replies still due, then rejects them with
   * `ClosedError` and destroys the socket; 0 = wait for each command's own timeout.
   * @default {3000}
   */
  closeTimeout?: number;
  /**
   * Let the process exit while the connection is open and idle: its sockets and timers do not
   * keep it alive, except a socket with commands in flight (a pending `await` still completes).
   * @default {false}
   */
  unref?: boolean;
  /**
   * Milliseconds of silence (nothing written, nothing read) after which a `PING` is written, so
   * a dead network path is noticed also on an idle or subscribed connection; 0 = never. The PING
   * times out like any command (after `commandTimeout`, or this interval when that is 0).
   * @default {0}
   */
  pingInterval?: number;
  /** Where to log. */
  logger: Logger;
  /** Callbacks. */
  hooks?: ConnectionHooks;
  /** Time source only (timers stay on the wall clock); prefer `clock`. */
  now?: () => number;
  /**
   * The time source and timers of every deadline of the connection (command, queue, connect,
   * reconnect, drain, close).
   * @default {systemClock}
   */
  clock?: Clock;
  /** A name used in log lines, e.g. "shared" or "pool#2". */
  label?: string;
}

const STATE_IDLE = 0;
const STATE_CONNECTING = 1;
const STATE_READY = 2;
const STATE_WAITING = 3; // between reconnect attempts
const STATE_CLOSING = 4;
const STATE_CLOSED = 5;

/** The default of `closeTimeout`, ms. */
export const DEFAULT_CLOSE_TIMEOUT = 3000;
/** The connect bound of a handoff's replacement when no connect timeout applies, ms. */
const HANDOFF_CONNECT_MS = 10_000;
/** Delay before commands refused with LOADING are sent again, ms. */
const LOADING_RETRY_MS = 100;

const MESSAGE_KINDS = new Set(["message", "pmessage", "smessage"]);
const TEXT = new TextDecoder();
// The subscribe and unsubscribe families are answered by one confirmation per channel, or by an
// error reply (a cluster node answers SUNSUBSCRIBE of a slot it lost with MOVED): each holds a
// reply slot, so neither form can put the stream out of step.
const CONFIRM_KINDS = new Set([
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
]);

const PUBSUB_KINDS = new Set([
  "message",
  "pmessage",
  "smessage",
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
  "pong",
]);

/** The same error, marked as never written (commands that never left the queue). */
function asUnwritten(e: Error): Error {
  if (!(e instanceof ConnectionError || e instanceof TimeoutError || e instanceof ClosedError)) {
    return e;
  }
  if (!e.written) return e;
  const o = { cause: e.cause, written: false };
  return e instanceof TimeoutError
    ? new TimeoutError(e.message, o)
    : e instanceof ClosedError
    ? new ClosedError(e.message, o)
    : new ConnectionError(e.message, o);
}

function commandName(args: RedisArgument[] | undefined): string {
  return nameOf(args?.[0]);
}

function nameOf(a: RedisArgument | undefined): string {
  if (a === undefined) return "?";
  return typeof a === "string" ? a.toUpperCase() : typeof a === "number" ? String(a) : "?";
}

const NON_ASCII = /[\u0080-\uffff]/;

function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/**
 * The RESP-encoded size of a command: exact for byte and ASCII arguments, an upper bound (3
 * bytes per UTF-16 unit) for other strings.
 */
export function encodedBytes(args: RedisArgument[]): number {
  let n = 3 + digits(args.length);
  for (const a of args) {
    const len = typeof a === "string"
      ? (NON_ASCII.test(a) ? a.length * 3 : a.length)
      : typeof a === "number"
      ? String(a).length
      : a.length;
    n += 5 + digits(len) + len;
  }
  return n;
}

/**
 * A multiplexed connection to one endpoint. Commands issued in one tick are written in one
 * batch; replies resolve the commands in order. Survives socket loss: commands not yet written
 * wait for the next socket (bounded), commands written but unanswered fail with
 * `ConnectionError` and are never sent twice.
 *
 * This is the building block of every client kind (internal); applications use `RedisClient`.
 *
 * States:
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
  readonly #encoder = new RespEncoder(16 * 1024);
  /** Commands waiting to be written, in order. */
  readonly #unsent = new Deque<Pending>(256);
  #unsentBytes = 0;
  #link: Link | undefined;
  /** A socket being replaced: still receiving replies for what was written to it. */
  readonly #retiring = new Set<Link>();
  /** Push frames decode strings as bytes (binary subscriptions exist). */
  #pushBinary = false;
  /** A RESP2 subscriber with binary subscriptions: every frame decodes strings as bytes. */
  #subBinary = false;
  #state = STATE_IDLE;
  #flushScheduled = false;
  #blocked = false; // transport above its high-water mark
  #hold = false; // handoff in progress: keep new work in the backlog
  #loading = false; // the server answered LOADING: hold new work, retry what it refused
  /** Commands the server refused with LOADING (not applied), to be sent again in order. */
  readonly #retry = new Deque<Pending>(16);
  #loadingTimer: TimerId | undefined;
  /** The clock reading shared by the commands of one `sendAll` (0 outside it). */
  #groupAt = 0;
  #closing: Promise<void> | undefined;
  #closeTimer: TimerId | undefined;
  /** A handoff target that could not be reached: new sockets stay on the configured endpoint. */
  #unreachable: Endpoint | undefined;
  #probes = 0;
  #timer: TimerId | undefined;
  #timerAt = 0;
  #reconnectTimer: TimerId | undefined;
  #attempt = 0;
  #everReady = false;
  #lastError: Error | undefined;
  #connectPromise: Promise<void> | undefined;
  #closeWaiters: (() => void)[] = [];
  #endpoint: Endpoint;
  #policy: TimeoutPolicy | undefined;
  /** Connection attempts in progress: each entry aborts one. */
  readonly #opening = new Set<(e: Error) => void>();
  readonly #handoffs: Handoffs = new Handoffs(this.#handoffHost());
  readonly #openSettings: OpenSettings;
  readonly #label: string;
  /** Sockets and timers do not keep the process alive (see `ConnectionOptions.unref`). */
  readonly #unref: boolean;
  readonly #pingInterval: number;
  #pingTimer: TimerId | undefined;
  readonly #pingCb = (): void => this.#onPingTimer();
  readonly #flushCb = (): void => this.#flush();
  readonly #timerCb = (): void => this.#onTimer();

  /**
   * Creates a connection; it opens its socket on the first command or on `connect()`.
   *
   * @param options The settings.
   */
  constructor(options: ConnectionOptions) {
    this.#o = options;
    this.#clock = options.clock ?? (options.now ? clockWithNow(options.now) : systemClock);
    this.#endpoint = options.endpoint;
    this.#label = options.label ?? "connection";
    this.#unref = options.unref === true;
    this.#pingInterval = options.pingInterval ?? 0;
    this.#openSettings = this.#makeOpenSettings();
  }

  /** The endpoint the connection is (or will be) connected to. */
  get endpoint(): Endpoint {
    return this.#link?.endpoint ?? this.#endpoint;
  }

  /** The configured endpoint. */
  get configuredEndpoint(): Endpoint {
    return this.#endpoint;
  }

  /**
   * Changes the configured endpoint (the sentinel client's master switch): later sockets,
   * reconnects included, dial it; a handoff target remembered as unreachable is forgotten.
   * The current socket stays (move it with `handoff`).
   *
   * @param endpoint The new endpoint.
   */
  setEndpoint(endpoint: Endpoint): void {
    this.#endpoint = { host: endpoint.host, port: endpoint.port };
    this.#unreachable = undefined;
  }

  /** The current socket, if connected. */
  get transport(): Transport | undefined {
    return this.#link?.transport;
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
    let n = this.#link ? this.#link.inflight.length : 0;
    for (const l of this.#retiring) n += l.inflight.length;
    return n;
  }

  /** Commands waiting to be written (those a loading server refused included). */
  get queuedCount(): number {
    return this.#unsent.length + this.#retry.length;
  }

  /** Whether the connection has no command queued or in flight. */
  get idle(): boolean {
    return this.#unsent.length === 0 && this.#retry.length === 0 && this.inflightCount === 0;
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
    if (this.#state === STATE_READY) return Promise.resolve();
    if (this.#state >= STATE_CLOSING) {
      return Promise.reject(new ClosedError("Cannot connect: the connection is closed"));
    }
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(this.#aborted(signal));
    if (this.#connectPromise) {
      return signal ? this.#untilAborted(this.#connectPromise, signal) : this.#connectPromise;
    }
    if (this.#state === STATE_WAITING) {
      this.#clock.clearTimer(this.#reconnectTimer);
      this.#reconnectTimer = undefined;
    }
    this.#connectPromise = this.#open(signal).finally(() => {
      this.#connectPromise = undefined;
    });
    return this.#connectPromise;
  }

  #aborted(signal: AbortSignal): ConnectionError {
    return new ConnectionError(`Cannot connect to "${formatEndpoint(this.#target())}": aborted`, {
      cause: signal.reason,
      written: false,
    });
  }

  /** `p`, or a rejection once `signal` aborts (the listener removed when either settles). */
  #untilAborted(p: Promise<void>, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(this.#aborted(signal));
      signal.addEventListener("abort", onAbort, { once: true });
      p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

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
    let refused = this.#refuse(args, flags);
    let bytes = 0;
    if (refused === undefined && this.#queueing) {
      bytes = encodedBytes(args);
      refused = this.#full(args, 1, bytes);
    }
    if (refused !== undefined) {
      return (flags & FLAG_ERRORS_AS_VALUES) !== 0
        ? Promise.resolve(refused)
        : Promise.reject(refused);
    }
    if (signal !== undefined) {
      return this.#pushWithSignal(args, transform, flags, timeout, bytes, signal);
    }
    return this.#push(args, transform, flags, timeout, bytes);
  }

  /** `#push` for a command with an abort signal (its callbacks wrapped to drop the listener). */
  #pushWithSignal(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
    bytes: number,
    signal: AbortSignal,
  ): Promise<unknown> {
    const asValue = (flags & FLAG_ERRORS_AS_VALUES) !== 0;
    if (signal.aborted) {
      return asValue ? Promise.resolve(signal.reason) : Promise.reject(signal.reason);
    }
    const promise = new Promise<unknown>(captureResolvers);
    const p = acquirePending(
      args,
      transform,
      flags,
      timeout ?? this.#o.commandTimeout,
      bytes,
      (flags & FLAG_SUBSCRIBE) !== 0 ? args.length - 1 : 0,
      asValue,
    );
    const resolve = p.resolve;
    const reject = p.reject;
    const onAbort = (): void => {
      if (p.done) return;
      // Still queued: never written. Written: the slot stays, its late reply is discarded.
      p.done = true;
      p.reject(signal.reason);
    };
    p.resolve = (v) => {
      signal.removeEventListener("abort", onAbort);
      resolve(v);
    };
    p.reject = (e) => {
      signal.removeEventListener("abort", onAbort);
      reject(e);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    this.#enqueue(p, this.#state !== STATE_READY);
    return promise;
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
    let refused: Error | undefined;
    for (const c of commands) {
      refused ??= this.#refuse(c.args, c.flags);
    }
    let sizes: number[] | undefined;
    if (refused === undefined && this.#queueing && commands.length > 0) {
      let total = 0;
      sizes = commands.map((c) => {
        const n = encodedBytes(c.args);
        total += n;
        return n;
      });
      refused = this.#full(commands[0]!.args, commands.length, total);
    }
    if (refused !== undefined) {
      const e = refused;
      return commands.map(() => Promise.reject(e));
    }
    const last = commands.length - 1;
    // One clock reading for the whole group: one offline deadline.
    this.#groupAt = this.#clock.now();
    try {
      return commands.map((c, i) =>
        this.#push(
          c.args,
          c.transform,
          (i < last ? c.flags | FLAG_GROUP : c.flags) | FLAG_TRANSACTION,
          undefined,
          sizes?.[i] ?? 0,
        )
      );
    } finally {
      this.#groupAt = 0;
    }
  }

  /** Why a command cannot be sent at all (closed, bad arguments, reserved), if so. */
  #refuse(args: RedisArgument[], flags: number): Error | undefined {
    if (this.#state >= STATE_CLOSING) {
      return new ClosedError(
        `Cannot send "${commandName(args)}": the connection to "${
          formatEndpoint(this.endpoint)
        }" is closed`,
        { written: false },
      );
    }
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (typeof a !== "string" && typeof a !== "number" && !(a instanceof Uint8Array)) {
        return new TypeError(
          `Cannot send "${commandName(args)}": argument ${i} is ${
            a === null ? "null" : typeof a
          }, expected a string, a number or a Uint8Array`,
        );
      }
    }
    if (args.length === 0) return new TypeError("Cannot send an empty command");
    if ((flags & FLAG_RAW) !== 0) return reservedCommandError(args);
    return undefined;
  }

  /**
   * Why `count` more commands (`bytes` encoded) cannot wait in the queue now, if so. A refused
   * command still starts the lazy connect, so a client bounded to nothing still connects.
   */
  #full(args: RedisArgument[], count: number, bytes: number): Error | undefined {
    let why: string | undefined;
    if (this.#unsent.length + this.#retry.length + count > this.#o.maxQueueLength) {
      why = `${this.#unsent.length} commands already wait for "${
        formatEndpoint(this.endpoint)
      }" (maxQueueLength ${this.#o.maxQueueLength})`;
    } else if (this.#unsentBytes + bytes > this.#o.maxQueueBytes) {
      why = `${bytes} bytes, and ${this.#unsentBytes} bytes already wait for "${
        formatEndpoint(this.endpoint)
      }" (maxQueueBytes ${this.#o.maxQueueBytes})`;
    }
    if (why === undefined) return undefined;
    if (this.#state === STATE_IDLE) this.connect().catch(noop);
    return new ConnectionError(`Cannot queue "${commandName(args)}": ${why}`, { written: false });
  }

  #push(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
    bytes: number,
  ): Promise<unknown> {
    const offline = this.#state !== STATE_READY;
    const pushes = (flags & FLAG_SUBSCRIBE) !== 0 ? args.length - 1 : 0;
    // One shared executor: no closure or context is allocated per command.
    const promise = new Promise<unknown>(captureResolvers);
    const p = acquirePending(
      args,
      transform,
      flags,
      timeout ?? this.#o.commandTimeout,
      bytes,
      pushes,
      (flags & FLAG_ERRORS_AS_VALUES) !== 0,
    );
    this.#enqueue(p, offline);
    return promise;
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
   * Whether new commands wait in the queue rather than leave with the next write (no socket, a
   * full socket, a handoff's hold, a server loading its data set): then the queue bounds apply.
   */
  get #queueing(): boolean {
    return this.#state !== STATE_READY || this.#blocked || this.#hold || this.#loading;
  }

  #enqueue(p: Pending, offline: boolean): void {
    if (offline) {
      // A queued command waits at most its own timeout for a socket (both relaxed during a
      // maintenance window: the handshake of a socket opened then is).
      const t = this.#policy ? this.#policy(p.timeout, (p.flags & FLAG_BLOCKING) !== 0) : p.timeout;
      if (p.timeout > 0 && t > 0) {
        p.deadline = (this.#groupAt || this.#clock.now()) +
          Math.max(t, this.#connectTimeout(this.#endpoint));
        this.#armTimer(p.deadline);
      }
      this.#unsentBytes += p.bytes;
      this.#unsent.push(p);
      if (this.#state === STATE_IDLE) this.connect().catch(noop);
      return;
    }
    this.#unsentBytes += p.bytes;
    this.#unsent.push(p);
    if (this.#blocked || this.#loading) {
      // Behind a full socket or a loading server a command waits at most its own timeout.
      if (p.timeout > 0) {
        p.deadline = (this.#groupAt || this.#clock.now()) + p.timeout;
        if (this.#timer === undefined || p.deadline < this.#timerAt) this.#armTimer(p.deadline);
      }
      return;
    }
    if (!this.#flushScheduled && !this.#hold) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** Writes every queued command to the current socket in one batch. */
  #flush(): void {
    this.#flushScheduled = false;
    const link = this.#link;
    if (
      !link || !link.ready || this.#hold || this.#blocked || this.#loading ||
      this.#unsent.length === 0
    ) return;
    const enc = this.#encoder;
    const now = this.#clock.now();
    const policy = this.#policy;
    const inflight = link.inflight;
    const wasEmpty = inflight.length === 0;
    let p: Pending | undefined;
    // A transaction one of whose commands expired is dropped whole: never a tail without MULTI.
    let broken = false;
    while ((p = this.#unsent.shift()) !== undefined) {
      this.#unsentBytes -= p.bytes;
      if (p.done || broken) {
        if (!p.done) this.#expireQueued(p, "the rest of its transaction expired");
        broken = (p.flags & FLAG_GROUP) !== 0;
        continue;
      }
      enc.writeCommand(p.args!);
      if ((p.flags & FLAG_NO_REPLY) !== 0) {
        p.done = true;
        p.resolve(undefined);
        continue;
      }
      let t = p.timeout;
      if (policy !== undefined) {
        t = policy(t, (p.flags & FLAG_BLOCKING) !== 0);
        p.timeout = t;
      }
      if (t > 0) {
        p.deadline = now + t;
        if (t !== this.#o.commandTimeout) link.mixed = true;
        if (this.#timer === undefined || p.deadline < this.#timerAt) this.#armTimer(p.deadline);
      } else {
        p.deadline = 0;
      }
      inflight.push(p);
      // Keep batches bounded so one huge burst does not build one giant buffer (but never split
      // a transaction: a socket lost between its writes would run the rest outside MULTI).
      if (enc.length >= 4 * 1024 * 1024 && (p.flags & FLAG_GROUP) === 0) break;
    }
    if (this.#unsent.length === 0) this.#unsentBytes = 0;
    if (wasEmpty) {
      this.#updateBinary(link);
      // A socket with commands in flight keeps the process alive, even with `unref`.
      if (this.#unref && inflight.length > 0) link.transport.ref?.();
    }
    if (enc.length > 0) {
      if (this.#pingInterval > 0) link.lastIoAt = now;
      const ok = link.transport.write(enc.take());
      if (!ok) {
        this.#blocked = true;
        // What still waits behind the full socket gets its deadline.
        this.#boundUnsent(false);
      }
    }
    if (this.#unsent.length > 0 && !this.#blocked && !this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  #updateBinary(link: Link): void {
    const head = link.inflight.peek();
    link.decoder.binary = this.#subBinary ||
      head !== undefined && (head.flags & FLAG_BINARY) !== 0;
  }

  /**
   * Makes push frames (and on a RESP2 subscriber connection, its pub/sub arrays) decode their
   * strings as `Uint8Array`, for binary subscriptions; the frame's type (its first element) is
   * still handed on as a `string`. Applies to the current socket and every later one.
   *
   * @param on Whether binary subscriptions exist.
   */
  setPushBinary(on: boolean): void {
    this.#pushBinary = on;
    this.#subBinary = on && this.#o.subscriber === true;
    const apply = (l: Link) => {
      l.decoder.pushBinary = on;
      this.#updateBinary(l);
    };
    if (this.#link) apply(this.#link);
    for (const l of this.#retiring) apply(l);
  }

  #onReply(link: Link, value: RespValue): void {
    if (this.#o.subscriber && Array.isArray(value) && this.#isPubSubArray(value)) {
      this.#onPush(link, value);
      return;
    }
    const p = link.inflight.shift();
    if (p === undefined) {
      this.#unsolicited(link);
      return;
    }
    const next = link.inflight.peek();
    if (next !== undefined) {
      link.decoder.binary = this.#subBinary || (next.flags & FLAG_BINARY) !== 0;
    } else {
      if (link.decoder.binary !== this.#subBinary) link.decoder.binary = this.#subBinary;
      if (link.drained !== undefined) link.wakeDrained();
      if (this.#unref && link.ready) link.transport.unref?.();
    }
    if (link !== this.#link || this.#state === STATE_CLOSING) this.#afterReply(link);
    if (p.done) return; // timed out earlier: its late reply is discarded (and proves no liveness)
    link.replies++;
    if (value instanceof ReplyError) {
      // Refused while the server loads its data set: not applied, so sent again later.
      if (value.prefix === "LOADING" && this.#retryLoading(link, p)) return;
      p.done = true;
      const reject = p.reject;
      releasePending(p);
      reject(value);
      return;
    }
    p.done = true;
    const { resolve, reject, transform } = p;
    releasePending(p);
    if (transform === undefined) {
      resolve(value);
      return;
    }
    let out: unknown;
    try {
      out = transform(value);
    } catch (e) {
      reject(e instanceof Error ? e : new RedisError(String(e)));
      return;
    }
    resolve(out);
  }

  /** A reply no command waits for: the stream is out of step; the socket is reset. */
  #unsolicited(link: Link): void {
    if (link.closed) return;
    const err = new ProtocolError(
      `Cannot match a reply from "${formatEndpoint(link.endpoint)}": no command is waiting for it`,
    );
    this.#o.logger.error(
      `${this.#label}: unsolicited reply from "${
        formatEndpoint(link.endpoint)
      }", resetting the connection: ${err.message}`,
    );
    this.#o.hooks?.onError?.(err);
    this.#fail(link, err);
  }

  /**
   * Keeps a command the server refused with LOADING for another try, unless it belongs to a
   * transaction, its deadline passed, or its socket is no longer the current one.
   */
  #retryLoading(link: Link, p: Pending): boolean {
    if ((p.flags & (FLAG_TRANSACTION | FLAG_SUBSCRIBE)) !== 0 || p.args === undefined) return false;
    if (link !== this.#link || this.#state !== STATE_READY) return false;
    const now = this.#clock.now();
    if (p.deadline !== 0) {
      const left = p.deadline - now - LOADING_RETRY_MS;
      if (left <= 0) return false;
      // Sent again with what is left of its timeout.
      p.timeout = left;
    }
    this.#retry.push(p);
    if (!this.#loading) {
      this.#loading = true;
      this.#o.logger.debug(
        `${this.#label}: "${
          formatEndpoint(link.endpoint)
        }" is loading its data set, holding commands`,
      );
    }
    if (this.#loadingTimer === undefined) {
      this.#loadingTimer = this.#setTimer(this.#loadingCb, LOADING_RETRY_MS);
    }
    if (p.deadline !== 0 && (this.#timer === undefined || p.deadline < this.#timerAt)) {
      this.#armTimer(p.deadline);
    }
    return true;
  }

  readonly #loadingCb = (): void => {
    this.#loadingTimer = undefined;
    this.#releaseRetry();
  };

  /** Puts the commands refused with LOADING back in front of the queue, in order, and flushes. */
  #releaseRetry(): void {
    this.#clock.clearTimer(this.#loadingTimer);
    this.#loadingTimer = undefined;
    this.#loading = false;
    const r = this.#retry;
    for (let i = r.length - 1; i >= 0; i--) {
      const p = r.at(i)!;
      if (!p.done) this.#unsent.unshift(p);
    }
    while (r.shift() !== undefined);
    if (this.#state === STATE_READY && this.#unsent.length > 0 && !this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** A retiring socket closes once drained; a closing connection finishes once idle. */
  #afterReply(link: Link): void {
    if (link !== this.#link && link.inflight.length === 0 && this.#retiring.has(link)) {
      queueMicrotask(() => {
        if (link.inflight.length === 0 && !link.closed) {
          link.closed = true;
          link.transport.close();
          this.#retiring.delete(link);
          this.#checkClosed();
        }
      });
    }
    if (this.#state === STATE_CLOSING) queueMicrotask(() => this.#checkClosed());
  }

  #isPubSubArray(value: RespValue[]): boolean {
    let k = value[0];
    if (k instanceof Uint8Array && k.length < 16) value[0] = k = TEXT.decode(k);
    return typeof k === "string" && PUBSUB_KINDS.has(k.toLowerCase());
  }

  #onPush(link: Link, frame: RespValue[]): void {
    let k = frame[0];
    // Binary subscriptions: the frame's type is handed on as text, the rest as bytes.
    if (k instanceof Uint8Array) frame[0] = k = TEXT.decode(k);
    if (typeof k === "string") {
      // Pub/sub messages are taken from the current socket only: during a handoff both the old
      // and the new socket are subscribed for a moment, and each message must arrive once.
      if (link !== this.#link && this.#link !== undefined && MESSAGE_KINDS.has(k)) return;
      const head = link.inflight.peek();
      // A PING on a RESP2 subscribed socket is answered by ["pong", ""].
      if (head !== undefined && (head.flags & FLAG_PING) !== 0 && k.toLowerCase() === "pong") {
        this.#onReply(link, "PONG");
        return;
      }
      // A subscribe-family command is answered by one confirmation per channel.
      if (head !== undefined && head.pushes > 0 && CONFIRM_KINDS.has(k)) {
        const expected = typeof head.cmd === "string" ? head.cmd.toLowerCase() : "";
        if (expected === k.toLowerCase() && --head.pushes === 0) {
          link.inflight.shift();
          // A confirmation answers a command: it counts as a reply.
          link.replies++;
          this.#updateBinary(link);
          if (link.inflight.length === 0) {
            link.wakeDrained();
            if (this.#unref && link.ready) link.transport.unref?.();
          }
          if (!head.done) {
            head.done = true;
            head.resolve(undefined);
          }
        }
      }
    }
    try {
      this.#o.hooks?.onPush?.(frame, link.transport);
    } catch (e) {
      this.#o.logger.warn(`Push handler failed: ${(e as Error).message}`);
    }
  }

  #onData(link: Link, chunk: Uint8Array): void {
    const replies = link.replies;
    if (link.decoder.pushBinary !== this.#pushBinary) {
      link.decoder.pushBinary = this.#pushBinary;
      this.#updateBinary(link);
    }
    if (this.#pingInterval > 0) link.lastIoAt = this.#clock.now();
    try {
      link.decoder.feed(chunk);
    } catch (e) {
      const err = e instanceof ProtocolError ? e : new ProtocolError(
        `Cannot decode a reply from "${formatEndpoint(link.endpoint)}": ${(e as Error).message}`,
        -1,
        { cause: e },
      );
      this.#o.logger.error(
        `Protocol error from "${
          formatEndpoint(link.endpoint)
        }", resetting the connection: ${err.message}`,
      );
      this.#o.hooks?.onError?.(err);
      this.#fail(link, err);
      return;
    }
    // Liveness is judged by replies to commands: pushes (pub/sub messages) do not count.
    if (link.replies !== replies) link.lastReplyAt = this.#clock.now();
  }

  /** Closes a socket because of a fault; its in-flight commands fail with `error`. */
  #fail(link: Link, error: Error): void {
    if (link.closed) return;
    link.closed = true;
    this.#rejectInflight(link, error);
    link.wakeDrained();
    link.transport.close();
    this.#afterLinkLost(link, error);
  }

  #rejectInflight(link: Link, error: Error): void {
    let p: Pending | undefined;
    while ((p = link.inflight.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      p.reject(
        error instanceof ConnectionError || error instanceof ProtocolError ||
          error instanceof ClosedError
          ? error
          : new ConnectionError(
            `Cannot get the reply to "${nameOf(p.cmd)}": the connection to "${
              formatEndpoint(link.endpoint)
            }" was lost`,
            { cause: error },
          ),
      );
    }
  }

  #onClose(link: Link, error?: Error): void {
    if (link.closed) {
      this.#afterLinkLost(link, error);
      return;
    }
    link.closed = true;
    link.wakeDrained();
    const lost = new ConnectionError(
      `Cannot get the reply: the connection to "${formatEndpoint(link.endpoint)}" was closed${
        error ? `: ${error.message}` : ""
      }`,
      { cause: error },
    );
    this.#rejectInflight(link, lost);
    this.#afterLinkLost(link, lost);
  }

  #afterLinkLost(link: Link, error: Error | undefined): void {
    if (this.#retiring.delete(link)) {
      this.#checkClosed();
      return;
    }
    if (this.#link !== link) return;
    this.#link = undefined;
    this.#blocked = false;
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
      this.#boundUnsent();
      this.#scheduleReconnect(error);
    }
  }

  /**
   * Commands queued while connected get a deadline once they cannot leave: the offline bound
   * when the socket is gone, their own timeout behind a full socket.
   */
  #boundUnsent(offline = true): void {
    const now = this.#clock.now();
    const u = this.#unsent;
    let groupDeadline = 0;
    for (let i = 0; i < u.length; i++) {
      const p = u.at(i)!;
      if (p.done || p.deadline !== 0 || p.timeout === 0) {
        groupDeadline = (p.flags & FLAG_GROUP) !== 0 ? groupDeadline : 0;
        continue;
      }
      // The commands of one transaction share the deadline of its first command.
      p.deadline = groupDeadline ||
        now + (offline ? Math.max(p.timeout, this.#o.connectTimeout) : p.timeout);
      groupDeadline = (p.flags & FLAG_GROUP) !== 0 ? p.deadline : 0;
      if (this.#timer === undefined || p.deadline < this.#timerAt) this.#armTimer(p.deadline);
    }
  }

  /** Rejects a command that never left the queue with a TimeoutError saying why. */
  #expireQueued(p: Pending, why?: string): void {
    p.done = true;
    const waited = this.#state === STATE_READY
      ? p.timeout
      : Math.max(p.timeout, this.#o.connectTimeout);
    const where = formatEndpoint(this.endpoint);
    const reason = why ??
      (this.#state !== STATE_READY
        ? `no connection to "${where}"${this.#lastError ? ` (${this.#lastError.message})` : ""}`
        : this.#loading
        ? `"${where}" is loading its data set`
        : this.#blocked
        ? `the socket to "${where}" is full (the server does not read)`
        : `the connection to "${where}" is being replaced`);
    p.reject(
      new TimeoutError(
        `Command "${nameOf(p.cmd)}" was not sent within ${waited} ms: ${reason}`,
        { written: false },
      ),
    );
  }

  #scheduleReconnect(error: Error | undefined): void {
    if (this.#o.reconnect === false) {
      this.#destroy(
        new ConnectionError(
          `Cannot send: the connection to "${formatEndpoint(this.endpoint)}" was lost`,
          { cause: error },
        ),
      );
      return;
    }
    this.#lastError = error;
    this.#state = STATE_WAITING;
    const delay = this.#attempt === 0 ? 0 : backoffDelay(this.#attempt - 1, this.#o.reconnect);
    this.#attempt++;
    this.#o.hooks?.onReconnecting?.(delay, this.#attempt, error);
    this.#reconnectTimer = this.#setTimer(() => {
      this.#reconnectTimer = undefined;
      if (this.#state !== STATE_WAITING) return;
      this.connect().catch(() => {});
    }, delay);
  }

  async #open(signal?: AbortSignal): Promise<void> {
    this.#state = STATE_CONNECTING;
    const endpoint = this.#target();
    const moved = !sameEndpoint(endpoint, this.#endpoint);
    try {
      const ct = this.#connectTimeout(endpoint);
      // A target other than the configured endpoint (MOVING, sentinel) is always dialled with a
      // bound. (Only a failed handoff marks its target unreachable: a reconnect to where
      // resolveEndpoint points keeps trying there.)
      const link = await this.#openLink(
        endpoint,
        moved ? ct || this.#o.connectTimeout || HANDOFF_CONNECT_MS : ct,
        signal,
      );
      if (this.#state >= STATE_CLOSING) {
        link.closed = true;
        link.transport.close();
        throw new ClosedError("Cannot connect: the connection was closed meanwhile");
      }
      if (this.#link !== undefined && !this.#link.closed) {
        // A handoff installed its replacement meanwhile: keep that one.
        link.closed = true;
        link.transport.close();
        return;
      }
      this.#install(link);
    } catch (e) {
      const err = e as Error;
      this.#lastError = err;
      if (this.#state >= STATE_CLOSING) throw err;
      // An abort the caller asked for is not reported as an error.
      if (!signal?.aborted) this.#o.hooks?.onError?.(err);
      if (!this.#everReady || this.#o.reconnect === false) {
        // Never connected: fail fast, queued work included.
        this.#state = STATE_IDLE;
        this.#rejectUnsent(err);
      } else {
        this.#scheduleReconnect(err);
      }
      throw err;
    }
  }

  /** Makes `link` the current socket and flushes the backlog. */
  #install(link: Link): void {
    this.#link = link;
    this.#state = STATE_READY;
    this.#everReady = true;
    this.#attempt = 0;
    link.lastReplyAt = this.#clock.now();
    if (this.#unref && link.inflight.length === 0) link.transport.unref?.();
    if (this.#pingInterval > 0) {
      link.lastIoAt = link.lastReplyAt;
      this.#armPing(this.#pingInterval);
    }
    // Commands a loading server refused on the previous socket go first.
    if (this.#retry.length > 0 || this.#loading) this.#releaseRetry();
    this.#o.hooks?.onReady?.(link.endpoint);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** Opens a socket to `endpoint` and runs the handshake on it. */
  #openLink(
    endpoint: Endpoint,
    connectTimeout = this.#connectTimeout(endpoint),
    signal?: AbortSignal,
  ): Promise<Link> {
    return openLink(endpoint, connectTimeout, this.#openSettings, signal);
  }

  /** What opening a socket needs, created once. */
  #makeOpenSettings(): OpenSettings {
    const o = this.#o;
    return {
      clock: this.#unref
        ? {
          now: () => this.#clock.now(),
          setTimer: (fn, ms) => this.#setTimer(fn, ms),
          clearTimer: (id) => this.#clock.clearTimer(id),
        }
        : this.#clock,
      connector: o.connector,
      tls: o.tls,
      encoder: this.#encoder,
      opening: this.#opening,
      events: {
        onReply: (l, v) => this.#onReply(l, v),
        onPush: (l, f) => this.#onPush(l, f),
        onData: (l, chunk) => this.#onData(l, chunk),
        onDrain: (l) => {
          if (this.#link === l && this.#blocked) {
            this.#blocked = false;
            this.#flush();
          }
        },
        onClose: (l, err) => this.#onClose(l, err),
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
    let p: Pending | undefined;
    while ((p = this.#retry.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      p.reject(e);
    }
    this.#clock.clearTimer(this.#loadingTimer);
    this.#loadingTimer = undefined;
    this.#loading = false;
    while ((p = this.#unsent.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      p.reject(e);
    }
    this.#unsentBytes = 0;
  }

  #armTimer(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#setTimer(this.#timerCb, Math.max(0, at - this.#clock.now()));
  }

  /** A clock timer, unref'd with the `unref` option (on the wall clock). */
  #setTimer(fn: () => void, ms: number): TimerId {
    const id = this.#clock.setTimer(fn, ms);
    if (this.#unref && this.#clock === systemClock) {
      unrefTimer(id as ReturnType<typeof setTimeout>);
    }
    return id;
  }

  #onTimer(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
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
          p.reject(
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
      if (timedOut && link === this.#link) this.#writeProbe(link);
      // A socket that answers no command in time while commands time out is dead: pushes (pub/sub
      // messages) and late replies do not keep it alive.
      const head = q.peek();
      if (head && head.done && link.ready && head.deadline !== 0) {
        const silentFor = now - link.lastReplyAt;
        const limit = Math.max(this.#o.commandTimeout, 1000) * 2;
        if (silentFor >= limit) {
          this.#o.logger.warn(
            `${this.#label}: "${
              formatEndpoint(link.endpoint)
            }" answered no command for ${silentFor} ms, replacing the connection`,
          );
          this.#fail(
            link,
            new ConnectionError(
              `Cannot get the reply: "${formatEndpoint(link.endpoint)}" stopped answering`,
            ),
          );
          return;
        }
        next = Math.min(next, link.lastReplyAt + limit);
      }
    };
    if (this.#link) scan(this.#link);
    for (const l of [...this.#retiring]) scan(l);
    // Commands waiting for a socket, for a full socket to drain, or for a loading server.
    const waiting = this.#state !== STATE_READY || this.#hold || this.#blocked || this.#loading;
    const u = this.#unsent;
    for (let i = 0; waiting && i < u.length; i++) {
      const p = u.at(i)!;
      if (p.done || p.deadline === 0) continue;
      if (p.deadline <= now) {
        this.#expireQueued(p);
        // A transaction expires whole.
        while ((p.flags & FLAG_GROUP) !== 0 && i + 1 < u.length) {
          const q = u.at(++i)!;
          if (!q.done) this.#expireQueued(q, "another command of its transaction expired");
          if ((q.flags & FLAG_GROUP) === 0) break;
        }
      } else if (p.deadline < next) next = p.deadline;
    }
    const r = this.#retry;
    for (let i = 0; i < r.length; i++) {
      const p = r.at(i)!;
      if (p.done || p.deadline === 0) continue;
      if (p.deadline <= now) {
        p.done = true;
        p.reject(
          new TimeoutError(
            `Command "${nameOf(p.cmd)}" was not applied within its timeout: "${
              formatEndpoint(this.endpoint)
            }" is loading its data set`,
            { written: false },
          ),
        );
      } else if (p.deadline < next) next = p.deadline;
    }
    if (next !== Infinity && this.#state < STATE_CLOSED) this.#armTimer(next);
  }

  /**
   * Writes `ECHO <token>` behind the commands in flight. Replies come in order, so the reply in
   * its place must be the token: anything else means replies no longer match their commands
   * (a reply was lost or is extra), and the socket is replaced.
   */
  #writeProbe(link: Link): void {
    if (link.probe !== undefined || this.#o.subscriber || !link.ready || this.#hold) return;
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
      this.#o.logger.error(`${this.#label}: ${err.message}, resetting the connection`);
      this.#o.hooks?.onError?.(err);
      this.#fail(link, err);
    };
    const t = Math.max(this.#o.commandTimeout, 1000);
    const args: RedisArgument[] = ["ECHO", token];
    this.#encoder.writeCommand(args);
    link.inflight.push({
      args: undefined,
      cmd: "ECHO",
      resolve: settle,
      reject: settle,
      transform: undefined,
      flags: 0,
      timeout: t,
      deadline: this.#clock.now() + t,
      done: false,
      bytes: 0,
      pushes: 0,
    });
    link.mixed = true;
    link.transport.write(this.#encoder.take());
  }

  // ---- keep-alive ----

  #armPing(ms: number): void {
    this.#clock.clearTimer(this.#pingTimer);
    this.#pingTimer = this.#setTimer(this.#pingCb, Math.max(1, ms));
  }

  /** Writes a PING when the current socket was silent for the ping interval. */
  #onPingTimer(): void {
    this.#pingTimer = undefined;
    const link = this.#link;
    // Re-armed when the next socket is installed.
    if (link === undefined || this.#state !== STATE_READY) return;
    const interval = this.#pingInterval;
    const due = link.lastIoAt + interval - this.#clock.now();
    if (due > 0) {
      this.#armPing(due);
      return;
    }
    if (link.inflight.length === 0 && this.#unsent.length === 0 && !this.#hold) {
      const t = this.#o.commandTimeout || interval;
      this.send(["PING"], undefined, FLAG_PING, t).catch(noop);
    }
    this.#armPing(interval);
  }

  // ---- handoff (maintenance MOVING) ----

  #target(): Endpoint {
    const configured = this.#endpoint;
    const t = this.#o.hooks?.resolveEndpoint?.(configured) ?? configured;
    const bad = this.#unreachable;
    if (bad !== undefined) {
      // A handoff target that could not be reached: stay on the configured endpoint while the
      // owner still points there; forget it once the owner points elsewhere.
      if (sameEndpoint(t, bad)) return configured;
      this.#unreachable = undefined;
    }
    return t;
  }

  #connectTimeout(endpoint: Endpoint): number {
    const c = this.#o.connectTimeout;
    return this.#o.hooks?.connectTimeout?.(c, endpoint) ?? c;
  }

  /**
   * Sets (or clears) the timeout policy: every command written from now on gets the timeout it
   * returns, and so do the commands in flight (re-timed from when they were written).
   *
   * @param policy The policy, or `undefined` for the configured timeouts.
   */
  setTimeoutPolicy(policy: TimeoutPolicy | undefined): void {
    this.#policy = policy;
    if (policy === undefined) return;
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
    if (this.#link) retime(this.#link);
    for (const l of this.#retiring) retime(l);
    // A shorter deadline than the armed one needs an earlier timer.
    let first = Infinity;
    const earliest = (l: Link) => {
      for (let i = 0; i < l.inflight.length; i++) {
        const p = l.inflight.at(i)!;
        if (!p.done && p.deadline !== 0 && p.deadline < first) first = p.deadline;
      }
    };
    if (this.#link) earliest(this.#link);
    for (const l of this.#retiring) earliest(l);
    if (first !== Infinity) this.#armTimer(first);
  }

  /** Whether a handoff is in progress. */
  get handingOff(): boolean {
    return this.#handoffs.active;
  }

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
      target: () => this.#target(),
      hold: (on) => {
        this.#hold = on;
        if (
          !on && this.#state === STATE_READY && this.#unsent.length > 0 && !this.#flushScheduled
        ) {
          this.#flushScheduled = true;
          queueMicrotask(this.#flushCb);
        }
      },
      held: () => this.#unsent.length,
      drained: (link, cap) => this.#waitDrained(link, cap),
      // Always bounded: a target that never answers must not hold the backlog forever.
      open: (to) =>
        this.#openLink(
          to,
          this.#connectTimeout(to) || this.#o.connectTimeout || HANDOFF_CONNECT_MS,
        ),
      install: (link) => {
        // Retire the current socket: the old one, or one a reconnect installed meanwhile.
        const cur = this.#link;
        if (cur !== undefined) {
          this.#link = undefined;
          if (!cur.closed) {
            if (cur.inflight.length === 0) {
              cur.closed = true;
              cur.transport.close();
            } else {
              this.#retiring.add(cur);
            }
          }
        }
        this.#clock.clearTimer(this.#reconnectTimer);
        this.#reconnectTimer = undefined;
        this.#hold = false;
        this.#blocked = false;
        this.#install(link);
      },
      unreachable: (to) => {
        if (!sameEndpoint(to, this.#endpoint)) this.#unreachable = to;
      },
      warn: (m) => this.#o.logger.warn(`${this.#label}: ${m}`),
    };
  }

  /** Resolves once `link` has no command in flight (or is closed), or after `cap` ms. */
  #waitDrained(link: Link, cap: number): Promise<void> {
    if (link.closed || link.inflight.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: TimerId | undefined;
      const done = (): void => {
        this.#clock.clearTimer(timer);
        resolve();
      };
      (link.drained ??= []).push(done);
      timer = this.#clock.setTimer(() => {
        timer = undefined;
        const i = link.drained?.indexOf(done) ?? -1;
        if (i !== -1) link.drained!.splice(i, 1);
        resolve();
      }, cap);
    });
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
    if (this.#closing !== undefined) return this.#closing;
    if (this.#state === STATE_CLOSED) return Promise.resolve();
    const wasReady = this.#state === STATE_READY;
    this.#state = STATE_CLOSING;
    this.#clock.clearTimer(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    if (!wasReady) {
      this.#rejectUnsent(
        new ClosedError("Cannot send the command: the client was closed", { written: false }),
      );
    } else if (this.#unsent.length > 0 || this.#retry.length > 0) {
      // Write what is queued (a handoff's hold ends: the current socket takes it); the flush
      // refuses while closing, so write directly.
      this.#hold = false;
      if (this.#loading) this.#releaseRetry();
      this.#state = STATE_READY;
      this.#flush();
      this.#state = STATE_CLOSING;
    }
    this.#closing = new Promise<void>((resolve) => {
      this.#closeWaiters.push(resolve);
    });
    this.#checkClosed();
    const bound = this.#o.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT;
    if (this.#state !== STATE_CLOSED && bound > 0) {
      this.#closeTimer = this.#setTimer(() => {
        this.#closeTimer = undefined;
        if (this.#state === STATE_CLOSED) return;
        this.#o.logger.debug(
          `${this.#label}: ${this.inflightCount} replies still missing after closeTimeout (${bound} ms), destroying the connection`,
        );
        this.#destroy(
          new ClosedError(
            `Cannot get the reply: the connection was closed (closeTimeout ${bound} ms passed)`,
          ),
        );
      }, bound);
    }
    return this.#closing;
  }

  #checkClosed(): void {
    if (this.#state !== STATE_CLOSING) return;
    if (this.inflightCount > 0 || this.#unsent.length > 0 || this.#retry.length > 0) return;
    this.#finishClose();
  }

  #finishClose(): void {
    if (this.#state === STATE_CLOSED) return;
    this.#state = STATE_CLOSED;
    this.#rejectUnsent(new ClosedError("Cannot send the command: the connection was closed"));
    const link = this.#link;
    this.#link = undefined;
    if (link && !link.closed) {
      link.closed = true;
      link.transport.close();
    }
    for (const l of this.#retiring) {
      l.closed = true;
      this.#rejectInflight(l, new ClosedError("Cannot get the reply: the client was closed"));
      l.transport.close();
    }
    this.#retiring.clear();
    for (const abort of [...this.#opening]) {
      abort(new ClosedError("Cannot connect: the connection was closed"));
    }
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#clock.clearTimer(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    this.#clock.clearTimer(this.#closeTimer);
    this.#closeTimer = undefined;
    this.#clock.clearTimer(this.#pingTimer);
    this.#pingTimer = undefined;
    link?.wakeDrained();
    this.#o.hooks?.onClose?.();
    for (const w of this.#closeWaiters.splice(0)) w();
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
    this.#state = STATE_CLOSING;
    this.#rejectUnsent(error);
    if (this.#link) this.#rejectInflight(this.#link, error);
    this.#finishClose();
  }

  /**
   * Milliseconds `close()` waits for the replies still due before destroying the connection.
   * @internal
   */
  get closeTimeout(): number {
    return this.#o.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT;
  }
}
