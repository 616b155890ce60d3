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
import { RespDecoder } from "../resp/decoder.ts";
import { RespEncoder } from "../resp/encoder.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { Connector, TlsOptions, Transport } from "../transport/types.ts";
import { FLAG_BINARY, FLAG_BLOCKING, type Transform } from "../commands/_command.ts";
import { backoffDelay, type BackoffOptions } from "../resilience/backoff.ts";
import { Deque } from "./_deque.ts";
import { countSocket, startTimer, stopTimer } from "../_resources.ts";

/** Internal flag: the command gets no reply slot (the unsubscribe family). */
export const FLAG_NO_REPLY = 256;
/**
 * Internal flag: a subscribe-family command, answered by one confirmation push per channel (or
 * by an error reply).
 */
export const FLAG_SUBSCRIBE = 512;
/** Internal flag: more commands of the same transaction follow; never split them over writes. */
export const FLAG_GROUP = 1024;
/**
 * Internal flag: the promise never rejects; an error (reply, timeout, connection) is its value
 * (pipelines: one promise per command instead of two).
 */
export const FLAG_ERRORS_AS_VALUES = 2048;

/** An endpoint: host and port. */
export interface Endpoint {
  /** Host name or IP literal (IPv6 without brackets). */
  host: string;
  /** TCP port. */
  port: number;
}

/** Formats an endpoint as `host:port` (`[v6]:port` for IPv6 literals). */
export function formatEndpoint(e: Endpoint): string {
  return e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}

/** A command handed to the handshake: its arguments and what to do with the reply. */
export interface HandshakeStep {
  /** The command. */
  args: RedisArgument[];
  /** Called with the reply (an error reply arrives as a `ReplyError` value); throw to fail the handshake. */
  onReply?: (reply: RespValue) => void;
  /** Subscribe family: answered by this many confirmation pushes (or an error reply). */
  pushes?: number;
}

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
  /** A push frame (RESP3 `>`, or a pub/sub array on a RESP2 subscriber connection). */
  onPush?(frame: RespValue[]): void;
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
  /** The connect timeout for a new socket (relaxed during a MOVING window). */
  connectTimeout?(configured: number): number;
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
  /** Where to log. */
  logger: Logger;
  /** Callbacks. */
  hooks?: ConnectionHooks;
  /** Clock, injectable for tests. */
  now?: () => number;
  /** A name used in log lines, e.g. "shared" or "pool#2". */
  label?: string;
}

/** @internal A command in a queue. */
interface Pending {
  args: RedisArgument[] | undefined;
  /** The command name (first argument), kept for error messages after `args` is released. */
  cmd: RedisArgument | undefined;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  transform: Transform | undefined;
  flags: number;
  /** Send-to-reply timeout, ms; 0 = none. */
  timeout: number;
  /** Absolute deadline: for a queued command, its queue bound; for a written one, send + timeout. 0 = none. */
  deadline: number;
  /** true once rejected by a timeout or by close; its reply, if any, is discarded. */
  done: boolean;
  /** Approximate encoded size, counted only while offline. */
  bytes: number;
  /** Subscribe family: confirmation pushes still expected before the command is answered. */
  pushes: number;
}

/** One socket with its decoder and the commands written to it, in order. */
class Link {
  readonly inflight: Deque<Pending> = new Deque<Pending>(256);
  readonly decoder: RespDecoder;
  closed = false;
  ready = false;
  lastDataAt = 0;
  /** Commands with different timeouts were written: deadlines are not in order. */
  mixed = false;
  constructor(
    readonly transport: Transport,
    readonly endpoint: Endpoint,
    onReply: (link: Link, value: RespValue) => void,
    onPush: (link: Link, frame: RespValue[]) => void,
  ) {
    this.decoder = new RespDecoder({
      onReply: (value) => onReply(this, value),
      onPush: (frame) => onPush(this, frame),
    });
  }
}

const STATE_IDLE = 0;
const STATE_CONNECTING = 1;
const STATE_READY = 2;
const STATE_WAITING = 3; // between reconnect attempts
const STATE_CLOSING = 4;
const STATE_CLOSED = 5;

const MESSAGE_KINDS = new Set(["message", "pmessage", "smessage"]);
const CONFIRM_KINDS = new Set(["subscribe", "psubscribe", "ssubscribe"]);

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

// Pending entries are recycled: under a burst, 100 000 short-lived objects promoted to the old
// generation cost more in GC than the rest of the client together.
const POOL_MAX = 65_536;
const pool: Pending[] = [];
const noop = (): void => {};
let capturedResolve: ((value: unknown) => void) | undefined;
let capturedReject: ((error: Error) => void) | undefined;
function captureResolvers(resolve: (value: unknown) => void, reject: (error: Error) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

function commandName(args: RedisArgument[] | undefined): string {
  return nameOf(args?.[0]);
}

function nameOf(a: RedisArgument | undefined): string {
  if (a === undefined) return "?";
  return typeof a === "string" ? a.toUpperCase() : typeof a === "number" ? String(a) : "?";
}

function approxBytes(args: RedisArgument[]): number {
  let n = 16;
  for (const a of args) {
    n += 16 + (typeof a === "string" ? a.length * 3 : typeof a === "number" ? 20 : a.length);
  }
  return n;
}

/**
 * A multiplexed connection to one endpoint. Commands issued in one tick are written in one
 * batch; replies resolve the commands in order. Survives socket loss: commands not yet written
 * wait for the next socket (bounded), commands written but unanswered fail with
 * `ConnectionError` and are never sent twice.
 *
 * This is the building block of every client kind; applications use `RedisClient`.
 *
 * @example
 * ```ts ignore
 * import { Connection } from "@edge/redis/connection";
 * ```
 */
export class Connection {
  readonly #o: ConnectionOptions;
  readonly #now: () => number;
  readonly #encoder = new RespEncoder(16 * 1024);
  /** Commands waiting to be written, in order. */
  readonly #unsent = new Deque<Pending>(256);
  #unsentBytes = 0;
  #link: Link | undefined;
  /** A socket being replaced: still receiving replies for what was written to it. */
  readonly #retiring = new Set<Link>();
  #state = STATE_IDLE;
  #flushScheduled = false;
  #blocked = false; // transport above its high-water mark
  #hold = false; // handoff in progress: keep new work in the backlog
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = 0;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #everReady = false;
  #lastError: Error | undefined;
  #connectPromise: Promise<void> | undefined;
  #closeWaiters: (() => void)[] = [];
  #endpoint: Endpoint;
  #policy: TimeoutPolicy | undefined;
  /** Connection attempts in progress: each entry aborts one. */
  readonly #opening = new Set<(e: Error) => void>();
  #handoff: Promise<HandoffResult> | undefined;
  #again: { drainCap: number; target?: Endpoint } | undefined;
  readonly #label: string;
  readonly #flushCb = (): void => this.#flush();
  readonly #timerCb = (): void => this.#onTimer();

  /**
   * Creates a connection; it opens its socket on the first command or on `connect()`.
   *
   * @param options The settings.
   */
  constructor(options: ConnectionOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#endpoint = options.endpoint;
    this.#label = options.label ?? "connection";
  }

  /** The endpoint the connection is (or will be) connected to. */
  get endpoint(): Endpoint {
    return this.#link?.endpoint ?? this.#endpoint;
  }

  /** The configured endpoint. */
  get configuredEndpoint(): Endpoint {
    return this.#endpoint;
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

  /** Commands waiting to be written. */
  get queuedCount(): number {
    return this.#unsent.length;
  }

  /** Whether the connection has no command queued or in flight. */
  get idle(): boolean {
    return this.#unsent.length === 0 && this.inflightCount === 0;
  }

  /**
   * Opens the socket and runs the handshake, if not done yet.
   *
   * @returns Resolves when ready; rejects with the connection error of this attempt.
   */
  connect(): Promise<void> {
    if (this.#state === STATE_READY) return Promise.resolve();
    if (this.#state >= STATE_CLOSING) {
      return Promise.reject(new ClosedError("Cannot connect: the connection is closed"));
    }
    if (this.#connectPromise) return this.#connectPromise;
    if (this.#state === STATE_WAITING) {
      stopTimer(this.#reconnectTimer);
      this.#reconnectTimer = undefined;
    }
    this.#connectPromise = this.#open().finally(() => {
      this.#connectPromise = undefined;
    });
    return this.#connectPromise;
  }

  /**
   * Sends a command.
   *
   * @param args The command and its arguments.
   * @param transform Converts the reply.
   * @param flags `FLAG_*` bits.
   * @param timeout Send-to-reply timeout in ms (0 = none); the configured one when undefined.
   * @returns The transformed reply; rejects with `ReplyError`, `TimeoutError`, `ConnectionError` or `ClosedError`.
   */
  send(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout?: number,
  ): Promise<unknown> {
    const refused = this.#refuse(args, 1, args.length === 0 ? 0 : -1);
    if (refused !== undefined) {
      return (flags & FLAG_ERRORS_AS_VALUES) !== 0
        ? Promise.resolve(refused)
        : Promise.reject(refused);
    }
    return this.#push(args, transform, flags, timeout);
  }

  /**
   * Sends several commands back to back (a transaction): either every one is queued, or none is
   * and each promise rejects with the same error.
   *
   * @param commands The commands, in order.
   * @returns One promise per command.
   */
  sendAll(
    commands: { args: RedisArgument[]; transform: Transform | undefined; flags: number }[],
  ): Promise<unknown>[] {
    let bytes = 0;
    let refused: Error | undefined;
    if (this.#queueing) {
      for (const c of commands) bytes += approxBytes(c.args);
    }
    for (const c of commands) {
      refused ??= this.#refuse(c.args, commands.length, bytes);
    }
    if (refused !== undefined) {
      const e = refused;
      return commands.map(() => Promise.reject(e));
    }
    const last = commands.length - 1;
    return commands.map((c, i) =>
      this.#push(c.args, c.transform, i < last ? c.flags | FLAG_GROUP : c.flags, undefined)
    );
  }

  /**
   * Why `count` commands (`bytes` in all, -1 to compute for `args`) cannot be queued now, if so.
   */
  #refuse(args: RedisArgument[], count: number, bytes: number): Error | undefined {
    if (this.#state >= STATE_CLOSING) {
      return new ClosedError(
        `Cannot send "${commandName(args)}": the connection to "${
          formatEndpoint(this.endpoint)
        }" is closed`,
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
    if (!this.#queueing) return undefined;
    if (this.#unsent.length + count > this.#o.maxQueueLength) {
      return new ConnectionError(
        `Cannot queue "${commandName(args)}": ${this.#unsent.length} commands already wait for "${
          formatEndpoint(this.endpoint)
        }" (maxQueueLength)`,
      );
    }
    if (bytes < 0) bytes = approxBytes(args);
    if (this.#unsentBytes + bytes > this.#o.maxQueueBytes) {
      return new ConnectionError(
        `Cannot queue "${commandName(args)}": ${this.#unsentBytes} bytes already wait for "${
          formatEndpoint(this.endpoint)
        }" (maxQueueBytes)`,
      );
    }
    return undefined;
  }

  #push(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
  ): Promise<unknown> {
    const offline = this.#state !== STATE_READY;
    const bytes = this.#queueing ? approxBytes(args) : 0;
    const pushes = (flags & FLAG_SUBSCRIBE) !== 0 ? args.length - 1 : 0;
    // One shared executor: no closure or context is allocated per command.
    const promise = new Promise<unknown>(captureResolvers);
    let p = pool.pop();
    const reject = (flags & FLAG_ERRORS_AS_VALUES) !== 0 ? capturedResolve! : capturedReject!;
    if (p === undefined) {
      p = {
        args,
        cmd: args[0],
        resolve: capturedResolve!,
        reject,
        transform,
        flags,
        timeout: timeout ?? this.#o.commandTimeout,
        deadline: 0,
        done: false,
        bytes,
        pushes,
      };
    } else {
      p.args = args;
      p.cmd = args[0];
      p.resolve = capturedResolve!;
      p.reject = reject;
      p.transform = transform;
      p.flags = flags;
      p.timeout = timeout ?? this.#o.commandTimeout;
      p.deadline = 0;
      p.done = false;
      p.bytes = bytes;
      p.pushes = pushes;
    }
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
   * full socket, a handoff's hold): then the queue bounds apply.
   */
  get #queueing(): boolean {
    return this.#state !== STATE_READY || this.#blocked || this.#hold;
  }

  #enqueue(p: Pending, offline: boolean): void {
    if (offline) {
      if (p.timeout > 0) {
        // A queued command waits at most its own timeout for a socket.
        p.deadline = this.#now() + Math.max(p.timeout, this.#o.connectTimeout);
        this.#armTimer(p.deadline);
      }
      this.#unsentBytes += p.bytes;
      this.#unsent.push(p);
      if (this.#state === STATE_IDLE) this.connect().catch(() => {});
      return;
    }
    this.#unsentBytes += p.bytes;
    this.#unsent.push(p);
    if (!this.#flushScheduled && !this.#hold && !this.#blocked) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** Writes every queued command to the current socket in one batch. */
  #flush(): void {
    this.#flushScheduled = false;
    const link = this.#link;
    if (!link || !link.ready || this.#hold || this.#blocked || this.#unsent.length === 0) return;
    const enc = this.#encoder;
    const now = this.#now();
    const policy = this.#policy;
    const inflight = link.inflight;
    const wasEmpty = inflight.length === 0;
    let p: Pending | undefined;
    while ((p = this.#unsent.shift()) !== undefined) {
      if (p.done) continue;
      enc.writeCommand(p.args!);
      p.args = undefined;
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
    this.#unsentBytes = 0;
    if (wasEmpty) this.#updateBinary(link);
    if (enc.length > 0) {
      const ok = link.transport.write(enc.take());
      if (!ok) this.#blocked = true;
    }
    if (this.#unsent.length > 0 && !this.#blocked && !this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  #updateBinary(link: Link): void {
    const head = link.inflight.peek();
    link.decoder.binary = head !== undefined && (head.flags & FLAG_BINARY) !== 0;
  }

  #onReply(link: Link, value: RespValue): void {
    if (this.#o.subscriber && Array.isArray(value) && this.#isPubSubArray(value)) {
      this.#onPush(link, value);
      return;
    }
    const p = link.inflight.shift();
    if (p === undefined) {
      this.#fail(
        link,
        new ProtocolError(
          `Cannot match a reply from "${
            formatEndpoint(link.endpoint)
          }": no command is waiting for it`,
        ),
      );
      return;
    }
    const next = link.inflight.peek();
    if (next !== undefined) {
      link.decoder.binary = (next.flags & FLAG_BINARY) !== 0;
    } else if (link.decoder.binary) link.decoder.binary = false;
    if (link !== this.#link || this.#state === STATE_CLOSING) this.#afterReply(link);
    if (p.done) return; // timed out earlier: its late reply is discarded
    p.done = true;
    const { resolve, reject, transform } = p;
    p.resolve = p.reject = noop;
    p.transform = undefined;
    p.cmd = undefined;
    if (pool.length < POOL_MAX) pool.push(p);
    if (value instanceof ReplyError) {
      reject(value);
      return;
    }
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
    const k = value[0];
    return typeof k === "string" && PUBSUB_KINDS.has(k.toLowerCase());
  }

  #onPush(link: Link, frame: RespValue[]): void {
    const k = frame[0];
    if (typeof k === "string") {
      // Pub/sub messages are taken from the current socket only: during a handoff both the old
      // and the new socket are subscribed for a moment, and each message must arrive once.
      if (link !== this.#link && this.#link !== undefined && MESSAGE_KINDS.has(k)) return;
      // A subscribe-family command is answered by one confirmation per channel.
      const head = link.inflight.peek();
      if (head !== undefined && head.pushes > 0 && CONFIRM_KINDS.has(k)) {
        const expected = typeof head.cmd === "string" ? head.cmd.toLowerCase() : "";
        if (expected === k.toLowerCase() && --head.pushes === 0) {
          link.inflight.shift();
          this.#updateBinary(link);
          if (!head.done) {
            head.done = true;
            head.resolve(undefined);
          }
        }
      }
    }
    try {
      this.#o.hooks?.onPush?.(frame);
    } catch (e) {
      this.#o.logger.warn(`Push handler failed: ${(e as Error).message}`);
    }
  }

  #onData(link: Link, chunk: Uint8Array): void {
    link.lastDataAt = this.#now();
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
    }
  }

  /** Closes a socket because of a fault; its in-flight commands fail with `error`. */
  #fail(link: Link, error: Error): void {
    if (link.closed) return;
    link.closed = true;
    this.#rejectInflight(link, error);
    link.transport.close();
    this.#afterLinkLost(link, error);
  }

  #rejectInflight(link: Link, error: Error): void {
    let p: Pending | undefined;
    while ((p = link.inflight.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      p.reject(
        error instanceof ConnectionError || error instanceof ProtocolError
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

  /** Commands queued while connected get the offline bound once the socket is gone. */
  #boundUnsent(): void {
    const now = this.#now();
    const u = this.#unsent;
    for (let i = 0; i < u.length; i++) {
      const p = u.at(i)!;
      if (p.done || p.deadline !== 0 || p.timeout === 0) continue;
      p.deadline = now + Math.max(p.timeout, this.#o.connectTimeout);
      if (this.#timer === undefined || p.deadline < this.#timerAt) this.#armTimer(p.deadline);
    }
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
    this.#reconnectTimer = startTimer(() => {
      this.#reconnectTimer = undefined;
      if (this.#state !== STATE_WAITING) return;
      this.connect().catch(() => {});
    }, delay);
  }

  async #open(): Promise<void> {
    this.#state = STATE_CONNECTING;
    const endpoint = this.#target();
    try {
      const link = await this.#openLink(endpoint);
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
      this.#o.hooks?.onError?.(err);
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
    this.#o.hooks?.onReady?.(link.endpoint);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** Opens a socket to `endpoint` and runs the handshake on it. */
  #openLink(endpoint: Endpoint, connectTimeout = this.#connectTimeout()): Promise<Link> {
    const name = formatEndpoint(endpoint);
    return new Promise<Link>((resolve, reject) => {
      let settled = false;
      let link: Link | undefined;
      const timer = connectTimeout > 0
        ? startTimer(() => {
          if (settled) return;
          settled = true;
          if (link) {
            link.closed = true;
            link.transport.close();
          }
          reject(
            new TimeoutError(`Cannot connect to "${name}": timed out after ${connectTimeout} ms`),
          );
        }, connectTimeout)
        : undefined;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        this.#opening.delete(fail);
        stopTimer(timer);
        if (link && !link.closed) {
          link.closed = true;
          link.transport.close();
        }
        reject(e);
      };
      this.#opening.add(fail);
      this.#o.connector({ host: endpoint.host, port: endpoint.port, tls: this.#o.tls }).then(
        (transport) => {
          if (settled) {
            transport.close();
            return;
          }
          const l = new Link(
            transport,
            endpoint,
            (lk, v) => this.#onReply(lk, v),
            (lk, f) => this.#onPush(lk, f),
          );
          link = l;
          countSocket(1);
          transport.setHandlers({
            onData: (chunk) => this.#onData(l, chunk),
            onDrain: () => {
              if (this.#link === l && this.#blocked) {
                this.#blocked = false;
                this.#flush();
              }
            },
            onClose: (err) => {
              countSocket(-1);
              if (!l.ready) {
                l.closed = true;
                fail(
                  new ConnectionError(
                    `Cannot connect to "${name}": the connection closed during the handshake${
                      err ? `: ${err.message}` : ""
                    }`,
                    { cause: err },
                  ),
                );
                return;
              }
              this.#onClose(l, err);
            },
          });
          this.#o.hooks?.onConnect?.(endpoint);
          this.#handshake(l).then(() => {
            if (settled) return;
            if (l.closed) {
              // A fault right after the handshake's replies (in the same chunk) closed it.
              fail(new ConnectionError(`Cannot connect to "${name}": the connection was reset`));
              return;
            }
            settled = true;
            this.#opening.delete(fail);
            stopTimer(timer);
            l.ready = true;
            resolve(l);
          }, fail);
        },
        (e: Error) =>
          fail(new ConnectionError(`Cannot connect to "${name}": ${e.message}`, { cause: e })),
      );
    });
  }

  /** Writes the whole handshake in one batch and checks every reply in order. */
  #handshake(link: Link): Promise<void> {
    const o = this.#o;
    const name = formatEndpoint(link.endpoint);
    const steps: HandshakeStep[] = [];
    // A server that does not know a command echoes its arguments: never pass the password on.
    const redact = (e: ReplyError): ReplyError => {
      const pw = o.password;
      if (pw === undefined || pw === "" || !e.message.includes(pw)) return e;
      return new ReplyError(e.message.split(pw).join("<password>"));
    };
    const authFail = (v: RespValue) => {
      if (v instanceof ReplyError) {
        const r = redact(v);
        throw new ConnectionError(`Cannot authenticate to "${name}": ${r.message}`, { cause: r });
      }
    };
    if (o.protocol === 3) {
      const hello: RedisArgument[] = ["HELLO", "3"];
      if (o.password !== undefined) hello.push("AUTH", o.username ?? "default", o.password);
      if (o.clientName) hello.push("SETNAME", o.clientName);
      steps.push({
        args: hello,
        onReply: (v) => {
          if (!(v instanceof ReplyError)) return;
          if (v.prefix === "NOPROTO" || /unknown command/i.test(v.message)) {
            const r = redact(v);
            throw new ConnectionError(
              `Cannot use RESP3 with "${name}": ${r.message} (set protocol: 2)`,
              { cause: r },
            );
          }
          authFail(v);
        },
      });
    } else {
      if (o.password !== undefined) {
        steps.push({
          args: o.username !== undefined ? ["AUTH", o.username, o.password] : ["AUTH", o.password],
          onReply: authFail,
        });
      }
      if (o.clientName) steps.push({ args: ["CLIENT", "SETNAME", o.clientName] });
    }
    if (o.libName) {
      steps.push({ args: ["CLIENT", "SETINFO", "LIB-NAME", o.libName], onReply: () => {} });
      if (o.libVersion) {
        steps.push({ args: ["CLIENT", "SETINFO", "LIB-VER", o.libVersion], onReply: () => {} });
      }
    }
    try {
      const extra = o.hooks?.handshake?.(link.transport, o.protocol);
      if (extra) steps.push(...extra);
    } catch (e) {
      return Promise.reject(e);
    }
    if (o.db !== 0) {
      steps.push({
        args: ["SELECT", o.db],
        onReply: (v) => {
          if (v instanceof ReplyError) {
            throw new ConnectionError(`Cannot select database ${o.db} on "${name}": ${v.message}`, {
              cause: v,
            });
          }
        },
      });
    }
    // Session state (subscriptions, tracking) is restored before the socket takes any work;
    // subscriptions count as restored once every confirmation arrived.
    const session = o.hooks?.session?.();
    if (session && session.length > 0) steps.push(...session);
    return new Promise<void>((resolve, reject) => {
      let left = steps.length;
      let failed = false;
      if (left === 0) {
        resolve();
        return;
      }
      // The encoder is empty between synchronous sections, so these bytes are the handshake only.
      const enc = this.#encoder;
      for (const step of steps) {
        enc.writeCommand(step.args);
        const done = (v: unknown) => {
          if (failed) return;
          try {
            step.onReply?.(v as RespValue);
          } catch (e) {
            failed = true;
            reject(e);
            return;
          }
          if (--left === 0) resolve();
        };
        link.inflight.push({
          args: step.args,
          cmd: step.args[0],
          // A step without onReply must succeed.
          resolve: done,
          reject: (e) => {
            if (e instanceof ReplyError && step.onReply) return done(e);
            if (failed) return;
            failed = true;
            reject(
              e instanceof ReplyError
                ? new ConnectionError(
                  `Cannot set up the connection to "${name}": ${commandName(step.args)} failed: ${
                    redact(e).message
                  }`,
                  { cause: redact(e) },
                )
                : e,
            );
          },
          transform: undefined,
          flags: step.pushes ? FLAG_SUBSCRIBE : 0,
          timeout: 0,
          deadline: 0,
          done: false,
          bytes: 0,
          pushes: step.pushes ?? 0,
        });
      }
      link.transport.write(enc.take());
    });
  }

  #rejectUnsent(error: Error): void {
    let p: Pending | undefined;
    while ((p = this.#unsent.shift()) !== undefined) {
      if (p.done) continue;
      p.done = true;
      p.reject(error);
    }
    this.#unsentBytes = 0;
  }

  #armTimer(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    if (this.#timer !== undefined) stopTimer(this.#timer);
    this.#timerAt = at;
    this.#timer = startTimer(this.#timerCb, Math.max(0, at - this.#now()));
  }

  #onTimer(): void {
    this.#timer = undefined;
    const now = this.#now();
    let next = Infinity;
    const scan = (link: Link) => {
      const q = link.inflight;
      for (let i = 0; i < q.length; i++) {
        const p = q.at(i)!;
        if (p.done || p.deadline === 0) continue;
        if (p.deadline <= now) {
          p.done = true;
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
      // A socket that answers nothing at all while commands time out is dead.
      const head = q.peek();
      if (head && head.done && link.ready && !link.closed) {
        const silentFor = now - link.lastDataAt;
        const limit = Math.max(this.#o.commandTimeout, 1000) * 2;
        if (silentFor >= limit && head.deadline !== 0) {
          this.#o.logger.warn(
            `${this.#label}: "${
              formatEndpoint(link.endpoint)
            }" answered nothing for ${silentFor} ms, replacing the connection`,
          );
          this.#fail(
            link,
            new ConnectionError(
              `Cannot get the reply: "${formatEndpoint(link.endpoint)}" stopped answering`,
            ),
          );
          return;
        } else if (head.deadline !== 0) {
          next = Math.min(next, link.lastDataAt + limit);
        }
      }
    };
    if (this.#link) scan(this.#link);
    for (const l of this.#retiring) scan(l);
    // Queued commands waiting for a socket.
    const u = this.#unsent;
    for (let i = 0; i < u.length; i++) {
      const p = u.at(i)!;
      if (p.done || p.deadline === 0) continue;
      if (this.#state === STATE_READY && !this.#hold) break;
      if (p.deadline <= now) {
        p.done = true;
        p.reject(
          new TimeoutError(
            `Command "${nameOf(p.cmd)}" was not sent within ${
              Math.max(p.timeout, this.#o.connectTimeout)
            } ms: no connection to "${formatEndpoint(this.endpoint)}"${
              this.#lastError ? ` (${this.#lastError.message})` : ""
            }`,
          ),
        );
      } else if (p.deadline < next) next = p.deadline;
    }
    if (next !== Infinity && this.#state < STATE_CLOSED) this.#armTimer(next);
  }

  // ---- handoff (maintenance MOVING) ----

  #target(): Endpoint {
    return this.#o.hooks?.resolveEndpoint?.(this.#endpoint) ?? this.#endpoint;
  }

  #connectTimeout(): number {
    const c = this.#o.connectTimeout;
    return this.#o.hooks?.connectTimeout?.(c) ?? c;
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
    return this.#handoff !== undefined;
  }

  /**
   * Replaces the socket (maintenance MOVING): new work is held in the backlog, what was
   * written drains (at most `drainCap` ms), the replacement is opened to `target` (or to
   * where `resolveEndpoint` says, evaluated after the drain, so a retarget during the drain is
   * honoured) and set up, the backlog is flushed to it in order, and the old socket closes once
   * its last reply arrived. A second call during a handoff joins the first.
   *
   * @param drainCap Longest wait, in ms, for written commands to be answered.
   * @param target Where to go; `undefined` asks `resolveEndpoint` at the time of opening.
   * @returns Details of the handoff.
   */
  handoff(drainCap: number, target?: Endpoint): Promise<HandoffResult> {
    if (this.#handoff) {
      // A retarget while the replacement is being opened: go once more when it is installed.
      this.#again = { drainCap, target };
      return this.#handoff;
    }
    const p = this.#handoffLoop(drainCap, target).finally(() => {
      this.#handoff = undefined;
    });
    this.#handoff = p;
    return p;
  }

  async #handoffLoop(drainCap: number, target: Endpoint | undefined): Promise<HandoffResult> {
    let r = await this.#doHandoff(drainCap, target);
    for (let rounds = 0; this.#again !== undefined && rounds < 8; rounds++) {
      const again: { drainCap: number; target?: Endpoint } = this.#again;
      this.#again = undefined;
      const want = again.target ?? this.#target();
      const at = this.#link?.endpoint;
      if (at !== undefined && at.host === want.host && at.port === want.port) continue;
      const next = await this.#doHandoff(again.drainCap, again.target);
      r = { ...next, from: r.from, drainMs: r.drainMs + next.drainMs, held: r.held + next.held };
    }
    this.#again = undefined;
    return r;
  }

  async #doHandoff(drainCap: number, target: Endpoint | undefined): Promise<HandoffResult> {
    if (this.#state === STATE_CONNECTING && this.#connectPromise) {
      // MOVING arrived during the handshake of a socket to the old endpoint: hand off as soon
      // as that socket is ready.
      try {
        await this.#connectPromise;
      } catch {
        // The next attempt dials where resolveEndpoint says.
      }
    }
    const old = this.#link;
    const from = this.endpoint;
    const start = this.#now();
    if (!old || this.#state !== STATE_READY) {
      // Not connected: the next socket goes where resolveEndpoint says.
      return { from, to: target ?? this.#target(), drainMs: 0, held: 0, replaced: false };
    }
    this.#hold = true;
    try {
      await this.#waitDrained(old, drainCap);
      const drainMs = this.#now() - start;
      const held = this.#unsent.length;
      const to = target ?? this.#target();
      if (this.#state !== STATE_READY || old.closed && this.#link !== old) {
        return { from, to, drainMs, held, replaced: false };
      }
      let link: Link;
      try {
        link = await this.#openLink(to, this.#connectTimeout());
      } catch (e) {
        this.#o.logger.warn(
          `${this.#label}: cannot open the replacement connection to "${formatEndpoint(to)}": ${
            (e as Error).message
          }`,
        );
        // Keep serving on the old socket until the server closes it.
        return { from, to: from, drainMs, held, replaced: false };
      }
      if (this.#state !== STATE_READY && this.#state !== STATE_WAITING) {
        link.closed = true;
        link.transport.close();
        return { from, to, drainMs, held, replaced: false };
      }
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
      stopTimer(this.#reconnectTimer);
      this.#reconnectTimer = undefined;
      this.#hold = false;
      this.#blocked = false;
      this.#install(link);
      return { from, to, drainMs, held, replaced: true };
    } finally {
      this.#hold = false;
      if (this.#state === STATE_READY && this.#unsent.length > 0 && !this.#flushScheduled) {
        this.#flushScheduled = true;
        queueMicrotask(this.#flushCb);
      }
    }
  }

  #waitDrained(link: Link, cap: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = this.#now() + cap;
      const check = () => {
        if (link.closed || link.inflight.length === 0 || this.#now() >= end) {
          resolve();
          return;
        }
        startTimer(check, 1);
      };
      check();
    });
  }

  // ---- close ----

  /**
   * Closes gracefully: new commands are refused, queued and in-flight ones complete (each within
   * its own timeout), then the socket is closed.
   */
  async close(): Promise<void> {
    if (this.#state === STATE_CLOSED) return;
    if (this.#state !== STATE_CLOSING) {
      const wasReady = this.#state === STATE_READY;
      this.#state = STATE_CLOSING;
      stopTimer(this.#reconnectTimer);
      this.#reconnectTimer = undefined;
      if (!wasReady) {
        this.#rejectUnsent(new ClosedError("Cannot send the command: the client was closed"));
      } else if (this.#unsent.length > 0) {
        // Write what is queued (a handoff's hold ends: the current socket takes it); the flush
        // refuses while closing, so write directly.
        this.#hold = false;
        this.#state = STATE_READY;
        this.#flush();
        this.#state = STATE_CLOSING;
      }
    }
    await new Promise<void>((resolve) => {
      this.#closeWaiters.push(resolve);
      this.#checkClosed();
    });
  }

  #checkClosed(): void {
    if (this.#state !== STATE_CLOSING) return;
    if (this.inflightCount > 0 || this.#unsent.length > 0) return;
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
    stopTimer(this.#timer);
    this.#timer = undefined;
    stopTimer(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
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
}
