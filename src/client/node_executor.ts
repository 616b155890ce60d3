// The per-endpoint executor: everything one Redis endpoint needs, built once and composed by
// every client kind. RedisClient is one executor behind the typed methods; the cluster client
// keeps one per node; the sentinel client one whose endpoint the sentinels choose.
//
//   NodeExecutor
//     shared      one multiplexed Connection: every non-blocking command, transactions, WAIT,
//                 and on RESP3 the subscriptions
//     exclusive   ExclusivePool: blocking commands and WATCH sessions, never reconnected under
//                 their user
//     subscriber  RESP2 only: one Connection dedicated to pub/sub
//     session     what every new socket re-applies before it takes work, per role: the caller's
//                 steps (READONLY, CLIENT TRACKING, ...) then the subscriptions
//     maintenance the client's MaintenanceSupport (one per client, shared by its executors):
//                 every connection is registered with its endpoint and role
import { FLAG_BLOCKING, type Transform } from "../commands/command_runner.ts";
import { FLAG_COUNTED } from "../command_flags.ts";
import {
  Connection,
  type ConnectionHooks,
  FLAG_SUBSCRIBE,
  type HandoffResult,
  type HandshakeStep,
  stoppedAnswering,
} from "../connection/connection.ts";
import { type Clock, systemClock } from "../_clock.ts";
import { unrefClock } from "../transport/unref_timer.ts";
import { type Endpoint, formatEndpoint } from "../endpoint.ts";
import { ClosedError, type ReplyError, TimeoutError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { Connector, Transport } from "../transport/types.ts";
import { LIB_NAME, VERSION } from "../version.ts";
import type { ResolvedClientOptions } from "./options.ts";
import { ExclusivePool } from "./_pool.ts";
import type { MaintenanceSupport } from "./maintenance_support.ts";
import type { ClientMetrics, ConnectionSample } from "../observability/metrics.ts";
import {
  type PubSubListener,
  Subscription,
  type SubscriptionKind,
  SubscriptionManager,
} from "./subscription.ts";
import { WatchSession } from "./watch_session.ts";

const TEXT = new TextDecoder();

/** A push frame with every byte string turned into text (aggregates copied, not changed). */
function textFrame(frame: RespValue[]): RespValue[] {
  const conv = (v: RespValue): RespValue =>
    v instanceof Uint8Array ? TEXT.decode(v) : Array.isArray(v) ? v.map(conv) : v;
  return frame.map(conv);
}

/** What a connection of an executor is for. */
export type ConnectionRole = "shared" | "exclusive" | "subscriber";

/** A queued command of a transaction or an ASKING group. */
export interface GroupCommand {
  args: RedisArgument[];
  transform: Transform | undefined;
  flags: number;
}

/** Events an executor reports to its client. */
export type NodeEventName =
  | "connect"
  | "ready"
  | "reconnecting"
  | "error";

/** Settings of a {@linkcode NodeExecutor}. */
export interface NodeExecutorOptions {
  /** Where to connect (the configured endpoint). */
  endpoint: Endpoint;
  /** Connection settings; `host` and `port` are ignored in favour of `endpoint`. */
  settings: ResolvedClientOptions;
  connector: Connector;
  logger: Logger;
  /** The client's maintenance support, shared by all its executors. */
  maintenance?: MaintenanceSupport;
  /**
   * Extra session steps for every new socket of a role, re-applied on reconnect and handoff
   * before queued work: `READONLY` for cluster replicas, `CLIENT TRACKING`, ...
   */
  session?: (role: ConnectionRole) => HandshakeStep[];
  /**
   * Where a new socket goes. The default is the configured endpoint (or the maintenance target
   * while a MOVING window lasts); the sentinel client answers with the current master.
   */
  resolveEndpoint?: (configured: Endpoint) => Endpoint;
  /**
   * Sees every push frame first (tracking invalidations, also RESP2 `__redis__:invalidate`
   * messages); one it takes (returns `true`) goes to neither pub/sub nor maintenance.
   */
  onPush?: (frame: RespValue[], role: ConnectionRole) => boolean;
  /**
   * A connection's socket was lost (a reconnect follows) or the connection closed for good;
   * not called for exclusive connections, which never reconnect.
   */
  onLost?: (role: ConnectionRole) => void;
  /**
   * A ping interval for a role's connections, where it must be shorter than the settings'
   * `pingInterval` (the client-side cache's probe of the connection carrying invalidations).
   */
  pingInterval?: (role: ConnectionRole) => number | undefined;
  /** Reports connection events (`connect`, `ready`, `reconnecting` of the shared connection; `error` of any). */
  emit: (name: NodeEventName, detail: unknown) => void;
  /** Reports an exception thrown by a subscription listener. */
  onListenerError?: (error: unknown) => void;
  /**
   * A shard channel a new socket could not restore (a cluster node answers MOVED once the
   * channel's slot left it): forgotten by the executor, reported here. Without it, such a
   * refusal fails the socket's handshake.
   */
  onShardRestoreRefused?: (channel: string, error: ReplyError) => void;
  /** Prefix of connection labels in logs and maintenance events, e.g. `127.0.0.1:7000 `. */
  label?: string;
  /** Time and timers of its connections and pool (tests drive it by hand). @default systemClock */
  clock?: Clock;
  /** The client's metrics recorder (`metrics` option). */
  metrics?: ClientMetrics;
  /**
   * Told of the error each command sent with `FLAG_COUNTED` is rejected with (commands on the
   * shared connection; the error-count metric).
   */
  onCommandError?: (error: Error, cmd: RedisArgument | undefined) => void;
}

/**
 * One endpoint's machinery: the shared multiplexed connection, the exclusive pool, the
 * subscriptions (and on RESP2 their dedicated connection), the maintenance wiring of its
 * connections, and close. Stateless about commands: callers pick the method.
 */
export class NodeExecutor {
  readonly #o: NodeExecutorOptions;
  readonly #s: ResolvedClientOptions;
  readonly shared: Connection;
  readonly #pool: ExclusivePool;
  readonly pubsub: SubscriptionManager;
  #subscriber: Connection | undefined;
  #unrefTimers: Clock | undefined;
  #poolSeq = 0;
  #closed = false;
  #closing: Promise<void> | undefined;
  #endpoint: Endpoint;

  constructor(options: NodeExecutorOptions) {
    this.#o = options;
    this.#endpoint = options.endpoint;
    this.#s = options.settings;
    this.pubsub = new SubscriptionManager(
      // Both families hold a reply slot, answered by their confirmations or an error reply.
      (args, _subscribe, asking) =>
        asking
          ? this.#sendAsking(args)
          : this.#pubsubConnection().send(args, undefined, FLAG_SUBSCRIBE),
      options.onListenerError,
      options.onShardRestoreRefused,
    );
    this.pubsub.onBinaryChange = (on) => this.#pubsubConnection().setPushBinary(on);
    const m = options.metrics;
    if (m?.pubsub) {
      this.pubsub.onMessage = (kind, channel) => m.message("in", kind === "shard", channel);
    }
    this.shared = this.#newConnection("shared");
    this.#pool = new ExclusivePool(
      () => this.#newConnection("exclusive"),
      this.#s.maxExclusiveConnections,
      this.#s.exclusiveIdleTimeout,
      this.#s.commandTimeout,
      options.clock,
    );
  }

  /**
   * The executor's time and timers for watches that must not keep the process alive (the
   * client-side cache's watch over its invalidation connection): the wall clock's timers are
   * unref'd.
   */
  get timers(): Clock {
    const clock = this.#o.clock ?? systemClock;
    if (clock !== systemClock) return clock;
    return this.#unrefTimers ??= unrefClock(clock);
  }

  /** The configured endpoint (changed by `setEndpoint`, which `moveExecutor` calls). */
  get endpoint(): Endpoint {
    return this.#endpoint;
  }

  /**
   * Changes the configured endpoint without touching live sockets (the sentinel client once it
   * knows the master): every later socket, reconnects included, dials `target`.
   */
  setEndpoint(target: Endpoint): void {
    this.#endpoint = target;
    for (const { connection } of this.connections()) connection.setEndpoint(target);
  }

  /** Whether `close()` or `destroy()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * When the ready socket of the role's connection last read a reply (or opened).
   *
   * @param role `shared` or `subscriber`.
   * @returns A time of the executor's clock, or `undefined` without a ready socket.
   */
  lastReplyAt(role: ConnectionRole): number | undefined {
    const c = role === "shared"
      ? this.shared
      : role === "subscriber"
      ? this.#subscriber
      : undefined;
    return c?.lastReplyAt;
  }

  /** Every live connection of the executor, with its role. */
  connections(): { role: ConnectionRole; connection: Connection }[] {
    const out: { role: ConnectionRole; connection: Connection }[] = [
      { role: "shared", connection: this.shared },
    ];
    for (const c of this.#pool.connections()) out.push({ role: "exclusive", connection: c });
    if (this.#subscriber) out.push({ role: "subscriber", connection: this.#subscriber });
    return out;
  }

  #newConnection(role: ConnectionRole): Connection {
    const s = this.#s;
    const o = this.#o;
    const m = o.maintenance;
    const label = `${o.label ?? ""}${role === "exclusive" ? `exclusive#${++this.#poolSeq}` : role}`;
    const isShared = role === "shared";
    const carriesPubSub = role === "subscriber" || (isShared && s.protocol === 3);
    // The hooks run only once the connection exists.
    const self = (): Connection => conn;
    const session = o.session;
    const hooks: ConnectionHooks = {
      onConnect: isShared ? (e: Endpoint) => o.emit("connect", e) : undefined,
      onReady: isShared ? (e: Endpoint) => o.emit("ready", e) : undefined,
      onReconnecting: isShared
        ? (delay, attempt, error) => {
          o.onLost?.(role);
          o.emit("reconnecting", { delay, attempt, error });
        }
        : o.onLost && role === "subscriber"
        ? () => o.onLost?.(role)
        : undefined,
      onError: (error) => o.emit("error", error),
      onClose: m || (o.onLost && role !== "exclusive")
        ? () => {
          if (role !== "exclusive") o.onLost?.(role);
          m?.unregister(self());
        }
        : undefined,
      onPush: (frame, transport) => this.#onPush(self(), role, frame, transport),
      session: session || carriesPubSub
        ? () => {
          const steps = session ? session(role) : [];
          return carriesPubSub ? [...steps, ...this.pubsub.session()] : steps;
        }
        : undefined,
      handshake: m ? (transport, protocol) => m.handshake(self(), transport, protocol) : undefined,
      resolveEndpoint: (configured) => {
        const target = m?.movingTarget(configured);
        if (target !== undefined) return target;
        return o.resolveEndpoint ? o.resolveEndpoint(configured) : configured;
      },
      connectTimeout: m ? (configured) => m.connectTimeout(configured, o.endpoint) : undefined,
      onCommandError: isShared ? o.onCommandError : undefined,
    };
    if (o.metrics?.basic || o.metrics?.advanced) this.#measure(hooks, o.metrics);
    const conn: Connection = new Connection({
      endpoint: this.#endpoint,
      tls: s.tls,
      connector: o.connector,
      protocol: s.protocol,
      username: s.username,
      password: s.password,
      db: s.db,
      clientName: s.clientName,
      libName: LIB_NAME,
      libVersion: VERSION,
      connectTimeout: s.connectTimeout,
      commandTimeout: s.commandTimeout,
      closeTimeout: s.closeTimeout,
      pingInterval: pingIntervalOf(s.pingInterval, o.pingInterval?.(role)),
      unref: s.unref,
      // An exclusive connection serves one caller's session (WATCH, a blocking pop): a new
      // socket under it would silently drop its state, so it is never reconnected.
      reconnect: role === "exclusive" ? false : s.reconnect,
      maxQueueLength: s.maxQueueLength,
      maxQueueBytes: s.maxQueueBytes,
      subscriber: role === "subscriber",
      // The shared connection only: an exclusive one carries a caller's session (a WATCH that
      // ran on a socket whose handshake then failed would be lost unseen), a subscriber's
      // commands change its socket's state.
      pipelineHandshake: isShared,
      logger: o.logger,
      hooks,
      label,
      clock: o.clock,
    });
    m?.register(conn, {
      label,
      role,
      endpoint: this.#endpoint,
      retire: role === "exclusive" ? (c) => this.#pool.retire((x) => x === c) > 0 : undefined,
    });
    return conn;
  }

  /**
   * Adds the measurements of a connection's life to its hooks: opened (`connection-basic`),
   * closed (`connection-advanced`).
   */
  #measure(hooks: ConnectionHooks, metrics: ClientMetrics): void {
    const { basic, advanced } = metrics;
    let dialAt = 0;
    // Whether a socket is up: a failed attempt to open one closes nothing.
    let up = false;
    const { resolveEndpoint, onReady, onReconnecting, onClose } = hooks;
    // Every new socket asks where to go first: the dial starts there.
    hooks.resolveEndpoint = (configured) => {
      dialAt = performance.now();
      return resolveEndpoint!(configured);
    };
    hooks.onReady = (e) => {
      if (basic && dialAt !== 0) {
        metrics.connectionCreated(performance.now() - dialAt, formatEndpoint(e));
      }
      dialAt = 0;
      up = true;
      onReady?.(e);
    };
    hooks.onReconnecting = (delay, attempt, error) => {
      if (up && advanced) {
        const reason = stoppedAnswering(error)
          ? "healthcheck_failed"
          : error
          ? "error"
          : "server_close";
        metrics.connectionClosed(reason, this.name, error);
      }
      up = false;
      onReconnecting?.(delay, attempt, error);
    };
    hooks.onClose = () => {
      if (up && advanced) metrics.connectionClosed("application_close", this.name);
      up = false;
      onClose?.();
    };
  }

  /** The connections of this executor for the metrics: idle, used, pending commands. */
  sample(): ConnectionSample {
    let idle = 0;
    let used = 0;
    let pending = 0;
    const shared = [this.shared, this.#subscriber];
    for (const c of shared) {
      if (c === undefined || c.closed) continue;
      const n = c.inflightCount + c.queuedCount;
      pending += n;
      if (!c.ready) continue;
      if (c.inflightCount > 0) used++;
      else idle++;
    }
    used += this.#pool.busy;
    idle += this.#pool.size - this.#pool.busy;
    return { pool: this.name, idle, used, pending };
  }

  /** Borrows an exclusive connection, measuring the wait (`connection-advanced`). */
  #acquire(): Promise<Connection> {
    const m = this.#o.metrics;
    if (!m?.advanced) return this.#pool.acquire();
    const start = performance.now();
    return this.#pool.acquire().then((c) => {
      m.waited(performance.now() - start, this.name);
      return c;
    });
  }

  #onPush(conn: Connection, role: ConnectionRole, frame: RespValue[], transport?: Transport): void {
    if (this.pubsub.binary) {
      // Binary subscriptions: pushes carry bytes. Pub/sub takes them as they are; everything
      // else (invalidations, maintenance notifications) reads text.
      const text = textFrame(frame);
      if (this.#o.onPush?.(text, role)) return;
      if (this.pubsub.onPush(frame)) return;
      if (this.#o.maintenance?.onPush(conn, text, transport)) return;
      this.#o.logger.debug(`Ignoring a push frame of type "${String(text[0])}"`);
      return;
    }
    if (this.#o.onPush?.(frame, role)) return;
    if (this.pubsub.onPush(frame)) return;
    if (this.#o.maintenance?.onPush(conn, frame, transport)) return;
    this.#o.logger.debug(`Ignoring a push frame of type "${String(frame[0])}"`);
  }

  /** `ASKING` and a (un)subscribe command as one group on the RESP3 connection that carries pub/sub. */
  #sendAsking(args: string[]): Promise<unknown> {
    if (this.#s.protocol !== 3) {
      return Promise.reject(
        new TypeError(
          `Cannot send "${
            args[0]
          }" behind ASKING over RESP2: a subscribed connection refuses other commands`,
        ),
      );
    }
    const [asking, command] = this.shared.sendAll([
      { args: ["ASKING"], transform: undefined, flags: 0 },
      { args, transform: undefined, flags: FLAG_SUBSCRIBE },
    ]);
    // Its outcome is the command's: a node that is not importing the slot answers it MOVED.
    asking!.catch(() => {});
    return command!;
  }

  #pubsubConnection(): Connection {
    if (this.#s.protocol === 3) return this.shared;
    return this.#subscriber ??= this.#newConnection("subscriber");
  }

  #closedError(what: string): ClosedError {
    return new ClosedError(`Cannot ${what}: the client is closed`, { written: false });
  }

  /** The timeout of a blocking command: its block time plus `commandTimeout` (0 = forever). */
  blockingTimeout(flags: number, blockMs: number | undefined): number | undefined {
    if ((flags & FLAG_BLOCKING) === 0) return undefined;
    const t = this.#s.commandTimeout;
    const b = blockMs ?? 0;
    return b === 0 || t === 0 ? 0 : b + t;
  }

  /**
   * Runs one command where it belongs: blocking commands on an exclusive connection, WAIT and
   * everything else on the shared one.
   */
  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
    timeout?: number,
    signal?: AbortSignal,
  ): Promise<unknown> {
    if (this.#closed) {
      const e = this.#closedError("send the command");
      if ((flags & FLAG_COUNTED) !== 0) this.#o.onCommandError?.(e, args[0]);
      return Promise.reject(e);
    }
    if ((flags & FLAG_BLOCKING) === 0) {
      return this.shared.send(args, transform, flags, timeout, signal);
    }
    const name = args[0];
    if (name === "WAIT" || name === "WAITAOF") {
      // WAIT counts the acknowledgements of the writes of the connection it runs on: the shared
      // one, where the client's writes went. It holds that connection for up to its timeout.
      return this.shared.send(args, transform, flags, this.blockingTimeout(flags, blockMs), signal);
    }
    return this.runExclusive(args, transform, flags, blockMs ?? 0, signal);
  }

  /** Runs one command on an exclusive connection, with the blocking timeout of `blockMs`. */
  async runExclusive(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number,
    signal?: AbortSignal,
  ): Promise<unknown> {
    if (signal?.aborted) throw signal.reason;
    const conn = await this.#acquire();
    const timeout = this.blockingTimeout(flags | FLAG_BLOCKING, blockMs);
    try {
      const v = await conn.send(args, transform, flags, timeout, signal);
      this.#pool.release(conn);
      return v;
    } catch (e) {
      // A blocked connection that timed out, or whose caller gave up, still waits for its
      // reply: do not reuse it.
      if (e instanceof TimeoutError || conn.closed || signal?.aborted) this.#pool.discard(conn);
      else this.#pool.release(conn);
      throw e;
    }
  }

  /** Queues commands together on the shared connection: all or none (a transaction). */
  sendAll(commands: GroupCommand[]): Promise<unknown>[] {
    if (this.#closed) {
      const e = this.#closedError("send the transaction");
      return commands.map(() => Promise.reject(e));
    }
    return this.shared.sendAll(commands);
  }

  /** Borrows an exclusive connection and `WATCH`es `keys` on it. */
  async watch(keys: RedisArgument[]): Promise<WatchSession> {
    if (keys.length === 0) throw new TypeError("Cannot watch: no key given");
    if (this.#closed) throw this.#closedError("watch");
    const conn = await this.#acquire();
    try {
      await conn.send(["WATCH", ...keys], undefined, 0);
    } catch (e) {
      this.#pool.discard(conn);
      throw e;
    }
    return new WatchSession(
      conn,
      (c) => this.#pool.release(c),
      (flags, blockMs) => this.blockingTimeout(flags, blockMs),
    );
  }

  /**
   * Subscribes; resolves once the server confirmed. `asking` sends the command (and its
   * unsubscribe) behind `ASKING`, RESP3 only: a cluster node importing a shard channel's slot
   * accepts it only so.
   */
  subscribe<S extends string | Uint8Array = string>(
    kind: SubscriptionKind,
    names: string | string[],
    listener?: PubSubListener<S>,
    bufferLimit?: number,
    binary = false,
    asking = false,
  ): Promise<Subscription<S>> {
    // The names were validated by the client shell, the one place that does.
    const list = typeof names === "string" ? [names] : [...names];
    if (this.#closed) return Promise.reject(this.#closedError("subscribe"));
    const sub = new Subscription<S>(this.pubsub, kind, list, listener, bufferLimit, binary);
    return this.pubsub.add(sub as unknown as Subscription, asking).then(() => sub);
  }

  /** Connects the shared connection now; `signal` gives up the attempt. */
  connect(options?: { signal?: AbortSignal }): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError("connect"));
    return this.shared.connect(options);
  }

  /** Retires every exclusive connection: idle ones close at once, busy ones when released. */
  retireExclusive(): void {
    this.#pool.retire(() => true);
  }

  /**
   * Closes gracefully: new commands are refused, queued and in-flight ones complete, each
   * connection within its close bound. Concurrent calls share one promise.
   */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.pubsub.endAll();
    this.#closing = Promise.all([
      this.shared.close(),
      this.#pool.close(),
      this.#subscriber?.close(),
    ]).then(() => {});
    return this.#closing;
  }

  /** Closes at once: everything queued or in flight is rejected with `ClosedError`. */
  destroy(): void {
    this.#closed = true;
    this.pubsub.endAll();
    const e = new ClosedError("Cannot get the reply: the client was destroyed");
    this.shared.destroy(e);
    this.#subscriber?.destroy(e);
    this.#closing ??= this.#pool.close();
  }

  /** A short name of the endpoint for messages. */
  get name(): string {
    return formatEndpoint(this.#endpoint);
  }
}

/**
 * Moves every connection of `node` to `target` like a MOVING handoff (the sentinel client on a
 * master switch): new work waits and goes to the target, written work drains for at most
 * `drainCap` ms, exclusive connections retire (idle ones at once, busy ones on release).
 * `target` becomes the configured endpoint: later sockets, reconnects included, dial it. A
 * function, not a method, so that a client that never moves (`.`) does not carry it.
 *
 * @param node The executor.
 * @param target Where to go.
 * @param drainCap Longest wait, in ms, for written commands to be answered.
 * @returns The shared connection's handoff.
 */
export async function moveExecutor(
  node: NodeExecutor,
  target: Endpoint,
  drainCap: number,
): Promise<HandoffResult> {
  node.setEndpoint(target);
  node.retireExclusive();
  const shared = node.shared;
  const sub = node.connections().find((c) => c.role === "subscriber")?.connection;
  const [r, rs] = await Promise.all([
    shared.handoff(drainCap, target),
    sub ? sub.handoff(drainCap, target) : undefined,
  ]);
  // A connection waiting to reconnect (its node died) dials the target now, not after its
  // backoff delay.
  for (const [c, res] of [[shared, r], [sub, rs]] as const) {
    if (c && res && !res.replaced && !c.ready && !c.closed) c.connect().catch(() => {});
  }
  return r;
}

/** The shorter of two ping intervals, 0 (none) counting as no interval. */
function pingIntervalOf(configured: number, needed: number | undefined): number {
  if (needed === undefined || needed <= 0) return configured;
  return configured > 0 ? Math.min(configured, needed) : needed;
}
