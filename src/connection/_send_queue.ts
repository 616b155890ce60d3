// Admission, queue and flush of a Connection: the write half of the per-command path. A command
// is checked (`_admission.ts`), gets a pending entry and its promise, and waits in `unsent`; the
// first command of a tick schedules one microtask that encodes every queued command into one
// buffer, moves them to the socket's in-flight queue with their deadlines, and writes once.
// While no socket takes writes (not ready, above the high-water mark, a handoff's hold, a
// server loading its data set) commands wait with the queue bounds and a deadline. The
// Connection keeps `ready`, `idle`, `closed` and `link` up to date (its state machine) and
// opens sockets.
import type { Clock } from "../_clock.ts";
import type { CommandEncoder } from "../resp/command_encoder.ts";
import type { RedisArgument } from "../resp/types.ts";
import {
  argumentsError,
  bindSignal,
  closedError,
  encodedBytes,
  queueFullError,
} from "./_admission.ts";
import type { Deadlines } from "./_deadlines.ts";
import type { Deque } from "./_deque.ts";
import type { Link } from "./_link.ts";
import type { LoadingRetry } from "./_loading_retry.ts";
import {
  acquirePending,
  captureResolvers,
  type ErrorTap,
  type Pending,
  tellTap,
} from "./_pending.ts";
import type { ReplyMatcher } from "./_reply_matcher.ts";
import type { Endpoint } from "../endpoint.ts";
import {
  FLAG_BLOCKING,
  FLAG_COUNTED,
  FLAG_EARLY,
  FLAG_ERRORS_AS_VALUES,
  FLAG_GROUP,
  FLAG_NO_REPLY,
  FLAG_SUBSCRIBE,
  FLAG_TRANSACTION,
} from "../command_flags.ts";
import type { Transform } from "../resp/types.ts";
import type { TimeoutPolicy } from "./connection_options.ts";

/** Commands never written behind a handshake (`SendQueue.takeEarly`). */
const EARLY_NEVER = FLAG_SUBSCRIBE | FLAG_BLOCKING | FLAG_TRANSACTION | FLAG_GROUP |
  FLAG_NO_REPLY;

/** What the queue needs of its Connection. */
export interface SendQueueHost {
  /** The queue of commands waiting to be written (the deadlines read it too). */
  readonly unsent: Deque<Pending>;
  readonly clock: Clock;
  readonly encoder: CommandEncoder;
  readonly deadlines: Deadlines;
  readonly loading: LoadingRetry;
  readonly replies: ReplyMatcher;
  /** `commandTimeout`, ms. */
  readonly commandTimeout: number;
  /** `maxQueueLength`. */
  readonly maxQueueLength: number;
  /** `maxQueueBytes`. */
  readonly maxQueueBytes: number;
  /** Sockets do not keep the process alive while nothing is in flight. */
  readonly unref: boolean;
  /** `pingInterval > 0`: writing counts as I/O for the keep-alive. */
  readonly keepAlive: boolean;
  /** Told of every error a command flagged `FLAG_COUNTED` is rejected with. */
  readonly tap?: ErrorTap;
  /** The endpoint the connection is (or will be) connected to, for messages. */
  endpoint(): Endpoint;
  /** The connect timeout of the configured endpoint (the least a command waits offline). */
  connectTimeout(): number;
  /** Starts the lazy connect (its failure reaches the queued commands). */
  connect(): void;
}

/** The commands of a Connection between `send()` and the socket. */
export class SendQueue {
  /** Commands waiting to be written, in order. */
  readonly unsent: Deque<Pending>;
  /** Their encoded size, counted while queueing. */
  unsentBytes = 0;
  /** The connection is READY: its current socket takes writes (kept by the Connection). */
  ready = false;
  /** The connection is IDLE: a command starts the lazy connect (kept by the Connection). */
  idle = true;
  /** The connection is closing or closed: commands are refused (kept by the Connection). */
  closed = false;
  /** The current socket (kept by the Connection). */
  link: Link | undefined;
  /** The transport is above its high-water mark: writing waits for its drain. */
  blocked = false;
  /** A handoff is in progress: new work is kept in the backlog. */
  hold = false;
  /** The timeout policy (maintenance relaxation), if any. */
  policy: TimeoutPolicy | undefined;
  #scheduled = false;
  /** The clock reading shared by the commands of one `sendAll` (0 outside it). */
  #groupAt = 0;
  readonly #h: SendQueueHost;
  readonly #clock: Clock;
  readonly #encoder: CommandEncoder;
  readonly #deadlines: Deadlines;
  readonly #loading: LoadingRetry;
  readonly #replies: ReplyMatcher;
  readonly #commandTimeout: number;
  readonly #maxLength: number;
  readonly #maxBytes: number;
  readonly #unref: boolean;
  readonly #keepAlive: boolean;
  readonly #tap: ErrorTap | undefined;
  readonly #flushCb = (): void => this.flush();

  constructor(host: SendQueueHost) {
    this.#h = host;
    this.unsent = host.unsent;
    this.#clock = host.clock;
    this.#encoder = host.encoder;
    this.#deadlines = host.deadlines;
    this.#loading = host.loading;
    this.#replies = host.replies;
    this.#commandTimeout = host.commandTimeout;
    this.#maxLength = host.maxQueueLength;
    this.#maxBytes = host.maxQueueBytes;
    this.#unref = host.unref;
    this.#keepAlive = host.keepAlive;
    this.#tap = host.tap;
  }

  /** Flushes at the next microtask unless a flush is scheduled already. */
  flushSoon(): void {
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** `Connection.send`: refuses, or queues the command (see there). */
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
      if ((flags & FLAG_ERRORS_AS_VALUES) !== 0) return Promise.resolve(refused);
      if ((flags & FLAG_COUNTED) !== 0) this.#tell(refused, args);
      return Promise.reject(refused);
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
      if (asValue) return Promise.resolve(signal.reason);
      if ((flags & FLAG_COUNTED) !== 0) this.#tell(signal.reason, args);
      return Promise.reject(signal.reason);
    }
    const promise = new Promise<unknown>(captureResolvers);
    const p = acquirePending(
      args,
      transform,
      flags,
      timeout ?? this.#commandTimeout,
      bytes,
      (flags & FLAG_SUBSCRIBE) !== 0 ? args.length - 1 : 0,
      asValue,
      (flags & FLAG_COUNTED) !== 0 ? this.#tap : undefined,
    );
    bindSignal(p, signal);
    this.#enqueue(p, !this.ready);
    return promise;
  }

  /** Tells the tap of a command refused before it was queued. */
  #tell(error: Error, args: RedisArgument[]): void {
    if (this.#tap !== undefined) tellTap(this.#tap, error, args[0]);
  }

  /** `Connection.sendAll`: queues every command of a transaction, or none (see there). */
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
    if (this.closed) return closedError(args, this.#h.endpoint());
    return argumentsError(args, flags);
  }

  /**
   * Why `count` more commands (`bytes` encoded) cannot wait in the queue now, if so. A refused
   * command still starts the lazy connect, so a client bounded to nothing still connects.
   */
  #full(args: RedisArgument[], count: number, bytes: number): Error | undefined {
    const waiting = this.unsent.length + this.#loading.queue.length;
    if (waiting + count <= this.#maxLength && this.unsentBytes + bytes <= this.#maxBytes) {
      return undefined;
    }
    if (this.idle) this.#h.connect();
    return queueFullError(args, count, bytes, {
      waiting,
      unsent: this.unsent.length,
      bytes: this.unsentBytes,
      maxLength: this.#maxLength,
      maxBytes: this.#maxBytes,
    }, this.#h.endpoint());
  }

  #push(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
    bytes: number,
  ): Promise<unknown> {
    const offline = !this.ready;
    const pushes = (flags & FLAG_SUBSCRIBE) !== 0 ? args.length - 1 : 0;
    // One shared executor: no closure or context is allocated per command.
    const promise = new Promise<unknown>(captureResolvers);
    const p = acquirePending(
      args,
      transform,
      flags,
      timeout ?? this.#commandTimeout,
      bytes,
      pushes,
      (flags & FLAG_ERRORS_AS_VALUES) !== 0,
      (flags & FLAG_COUNTED) !== 0 ? this.#tap : undefined,
    );
    this.#enqueue(p, offline);
    return promise;
  }

  /**
   * Whether new commands wait in the queue rather than leave with the next write (no socket, a
   * full socket, a handoff's hold, a server loading its data set): then the queue bounds apply.
   */
  get #queueing(): boolean {
    return !this.ready || this.blocked || this.hold || this.#loading.active;
  }

  #enqueue(p: Pending, offline: boolean): void {
    if (offline) {
      // A queued command waits at most its own timeout for a socket (both relaxed during a
      // maintenance window: the handshake of a socket opened then is).
      const t = this.policy ? this.policy(p.timeout, (p.flags & FLAG_BLOCKING) !== 0) : p.timeout;
      if (p.timeout > 0 && t > 0) {
        p.deadline = (this.#groupAt || this.#clock.now()) +
          Math.max(t, this.#h.connectTimeout());
        this.#deadlines.arm(p.deadline);
      }
      this.unsentBytes += p.bytes;
      this.unsent.push(p);
      if (this.idle) this.#h.connect();
      return;
    }
    this.unsentBytes += p.bytes;
    this.unsent.push(p);
    if (this.blocked || this.#loading.active) {
      // Behind a full socket or a loading server a command waits at most its own timeout.
      if (p.timeout > 0) {
        p.deadline = (this.#groupAt || this.#clock.now()) + p.timeout;
        if (p.deadline < this.#deadlines.armedAt) this.#deadlines.arm(p.deadline);
      }
      return;
    }
    if (!this.#scheduled && !this.hold) {
      this.#scheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /** Schedules a flush when the connection is ready and commands wait. */
  scheduleFlush(): void {
    if (this.ready && this.unsent.length > 0 && !this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }

  /**
   * Moves the first queued commands that a handshake may carry (as {@linkcode takeEarly} would
   * take them) to `to`: a Workers rebind sets them aside for the attempt of the request that
   * queued them.
   *
   * @param to Where they go.
   */
  setAsideEarly(to: Deque<Pending>): void {
    let p: Pending | undefined;
    while ((p = this.unsent.peek()) !== undefined) {
      if (!p.done && (p.flags & EARLY_NEVER) !== 0) break;
      this.unsent.shift();
      this.unsentBytes -= p.bytes;
      if (!p.done) to.push(p);
    }
    if (this.unsent.length === 0) this.unsentBytes = 0;
  }

  /**
   * Writes the commands set aside for a superseded Workers attempt (`from`, see
   * {@linkcode setAsideEarly}) on its socket, ready and not the current one: those its handshake
   * did not carry (a handshake that no command may follow, or work was held).
   *
   * @param link The attempt's ready socket.
   * @param from The commands set aside for it; what is left in it was not written.
   */
  writeAside(link: Link, from: Deque<Pending>): void {
    const wasEmpty = link.inflight.length === 0;
    while (from.length > 0 && this.takeEarly(link, from) > 0) {
      link.transport.write(this.#encoder.take());
    }
    if (wasEmpty) this.#replies.updateBinary(link);
  }

  /**
   * Moves the first queued commands behind a new socket's handshake: encoded after it (the
   * encoder holds the handshake), in flight on `link` with their deadlines, flagged
   * `FLAG_EARLY`. Stops at the first command that must wait for a ready socket: the subscribe
   * family, a blocking command, a transaction, one written without a reply slot (each changes,
   * or depends on, the socket's state), or past 4 MB. The socket's handshake writes them.
   *
   * @param link The new socket (not ready).
   * @param from Where the commands are taken from: the queue, or the commands a Workers rebind
   *   set aside for the attempt it superseded (`Connection.#rebind`).
   * @returns How many were taken.
   */
  takeEarly(link: Link, from: Deque<Pending> = this.unsent): number {
    const enc = this.#encoder;
    const now = this.#clock.now();
    const deadlines = this.#deadlines;
    const inflight = link.inflight;
    const own = from === this.unsent;
    let n = 0;
    let p: Pending | undefined;
    while ((p = from.peek()) !== undefined) {
      if (!p.done && (p.flags & EARLY_NEVER) !== 0) break;
      from.shift();
      if (own) this.unsentBytes -= p.bytes;
      if (p.done) continue;
      enc.writeCommand(p.args!);
      p.flags |= FLAG_EARLY;
      const t = p.timeout;
      if (t > 0) {
        p.deadline = now + t;
        if (t !== this.#commandTimeout) link.mixed = true;
        if (p.deadline < deadlines.armedAt) deadlines.arm(p.deadline);
      } else {
        p.deadline = 0;
      }
      inflight.push(p);
      n++;
      if (enc.length >= 4 * 1024 * 1024) break;
    }
    if (own && this.unsent.length === 0) this.unsentBytes = 0;
    return n;
  }

  /**
   * Puts commands back in front of the queue, in order: written behind a handshake, the server
   * did not run them (see `Link.notRun`). They wait like any queued command.
   *
   * @param commands The commands, in their order.
   */
  giveBack(commands: Pending[]): void {
    for (let i = commands.length - 1; i >= 0; i--) {
      const p = commands[i]!;
      if (p.done) continue;
      p.flags &= ~FLAG_EARLY;
      this.unsentBytes += p.bytes;
      this.unsent.unshift(p);
    }
    this.scheduleFlush();
  }

  /** Writes every queued command to the current socket in one batch. */
  flush(): void {
    this.#scheduled = false;
    const link = this.link;
    if (
      !link || !link.ready || this.hold || this.blocked || this.#loading.active ||
      this.unsent.length === 0
    ) return;
    const enc = this.#encoder;
    const now = this.#clock.now();
    const policy = this.policy;
    const deadlines = this.#deadlines;
    const inflight = link.inflight;
    const wasEmpty = inflight.length === 0;
    let p: Pending | undefined;
    // A transaction one of whose commands expired is dropped whole: never a tail without MULTI.
    let broken = false;
    while ((p = this.unsent.shift()) !== undefined) {
      this.unsentBytes -= p.bytes;
      if (p.done || broken) {
        if (!p.done) deadlines.expireQueued(p, "the rest of its transaction expired");
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
        if (t !== this.#commandTimeout) link.mixed = true;
        if (p.deadline < deadlines.armedAt) deadlines.arm(p.deadline);
      } else {
        p.deadline = 0;
      }
      inflight.push(p);
      // Keep batches bounded so one huge burst does not build one giant buffer (but never split
      // a transaction: a socket lost between its writes would run the rest outside MULTI).
      if (enc.length >= 4 * 1024 * 1024 && (p.flags & FLAG_GROUP) === 0) break;
    }
    if (this.unsent.length === 0) this.unsentBytes = 0;
    if (wasEmpty) {
      this.#replies.updateBinary(link);
      // A socket with commands in flight keeps the process alive, even with `unref`.
      if (this.#unref && inflight.length > 0) link.transport.ref?.();
    }
    if (enc.length > 0) {
      if (this.#keepAlive) link.lastIoAt = now;
      const ok = link.transport.write(enc.take());
      if (!ok) {
        this.blocked = true;
        // What still waits behind the full socket gets its deadline.
        deadlines.boundUnsent(false);
      }
    }
    if (this.unsent.length > 0 && !this.blocked && !this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flushCb);
    }
  }
}
