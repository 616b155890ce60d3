// The sockets of a Connection: those being retired after a handoff (still answering what was
// written to them), where the next one is dialled and within what bound, and what happens to the
// commands in flight when a socket goes. The Connection keeps the current socket (the
// per-command path reads it) and the state machine: it hears of a lost current socket (`lost`)
// and of a retiring one gone (`retired`).
import { ClosedError, ConnectionError, ProtocolError } from "../errors.ts";
import { nameOf } from "./_admission.ts";
import type { Link } from "./_link.ts";
import { type Pending, rejectPending } from "./_pending.ts";
import { type Endpoint, formatEndpoint, sameEndpoint } from "../endpoint.ts";
import type { ConnectionHooks } from "./connection_options.ts";

/** The connect bound of a socket to a target other than the configured endpoint, when no connect timeout applies, ms. */
const HANDOFF_CONNECT_MS = 10_000;

/** What the sockets report to their Connection. */
export interface SocketsHost {
  /** The current socket, if any. */
  current(): Link | undefined;
  /** The current socket went (a fault, or the peer closed it); it is no longer current. */
  lost(link: Link, error: Error | undefined): void;
  /** A retiring socket went, or closed once drained: a close may finish. */
  retired(): void;
}

/** The retiring sockets, where the next one goes, and the loss of a socket. */
export class Sockets {
  /** Sockets being replaced: still receiving replies for what was written to them. */
  readonly retiring: Set<Link> = new Set<Link>();
  readonly #h: SocketsHost;
  readonly #hooks: ConnectionHooks | undefined;
  readonly #connectTimeout: number;
  #configured: Endpoint;
  /** A handoff target that could not be reached: new sockets stay on the configured endpoint. */
  #unreachable: Endpoint | undefined;

  /**
   * @param configured The configured endpoint.
   * @param connectTimeout `connectTimeout`, ms.
   * @param hooks The owner's hooks (`resolveEndpoint`, `connectTimeout`).
   * @param host Where losses are reported.
   */
  constructor(
    configured: Endpoint,
    connectTimeout: number,
    hooks: ConnectionHooks | undefined,
    host: SocketsHost,
  ) {
    this.#configured = configured;
    this.#connectTimeout = connectTimeout;
    this.#hooks = hooks;
    this.#h = host;
  }

  /** The configured endpoint. */
  get configured(): Endpoint {
    return this.#configured;
  }

  /** Changes the configured endpoint; a target remembered as unreachable is forgotten. */
  configure(endpoint: Endpoint): void {
    this.#configured = { host: endpoint.host, port: endpoint.port };
    this.#unreachable = undefined;
  }

  /** Commands written to the retiring sockets and awaiting their reply. */
  get retiringInflight(): number {
    let n = 0;
    for (const l of this.retiring) n += l.inflight.length;
    return n;
  }

  /** Where a new socket goes now. */
  target(): Endpoint {
    const configured = this.#configured;
    const t = this.#hooks?.resolveEndpoint?.(configured) ?? configured;
    const bad = this.#unreachable;
    if (bad !== undefined) {
      // A handoff target that could not be reached: stay on the configured endpoint while the
      // owner still points there; forget it once the owner points elsewhere.
      if (sameEndpoint(t, bad)) return configured;
      this.#unreachable = undefined;
    }
    return t;
  }

  /** A handoff target that could not be reached (ignored when it is the configured endpoint). */
  unreachable(to: Endpoint): void {
    if (!sameEndpoint(to, this.#configured)) this.#unreachable = to;
  }

  /** The connect timeout for a new socket to `endpoint` (0 = none). */
  connectTimeout(endpoint: Endpoint): number {
    const c = this.#connectTimeout;
    return this.#hooks?.connectTimeout?.(c, endpoint) ?? c;
  }

  /**
   * The connect bound for a socket to `endpoint`: a target other than the configured endpoint
   * (MOVING, sentinel) or a handoff's replacement (`always`) is always dialled with a bound.
   */
  dialTimeout(endpoint: Endpoint, always: boolean): number {
    const ct = this.connectTimeout(endpoint);
    return always || !sameEndpoint(endpoint, this.#configured)
      ? ct || this.#connectTimeout || HANDOFF_CONNECT_MS
      : ct;
  }

  /** Retires the socket that was current (a handoff installs another): closed now if drained. */
  retire(cur: Link): void {
    if (cur.closed) return;
    if (cur.inflight.length === 0) {
      cur.closed = true;
      cur.transport.close();
    } else {
      this.retiring.add(cur);
    }
  }

  /** A retiring socket closes once drained (at the next microtask, if still drained). */
  afterReply(link: Link): void {
    if (link.inflight.length !== 0 || !this.retiring.has(link)) return;
    queueMicrotask(() => {
      if (link.inflight.length === 0 && !link.closed) {
        link.closed = true;
        link.transport.close();
        this.retiring.delete(link);
        this.#h.retired();
      }
    });
  }

  /** Closes a socket because of a fault; its in-flight commands fail with `error`. */
  fail(link: Link, error: Error): void {
    if (link.closed) return;
    link.closed = true;
    rejectInflight(link, error);
    link.wakeDrained();
    // Told before the transport closes: its close event can come at once, without the error.
    this.#gone(link, error);
    link.transport.close();
  }

  /** The peer closed a socket (after its handshake); its in-flight commands fail. */
  closed(link: Link, error?: Error): void {
    if (link.closed) {
      this.#gone(link, error);
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
    rejectInflight(link, lost);
    this.#gone(link, lost);
  }

  /** Closes every retiring socket, its commands in flight rejected (the connection closes). */
  closeRetiring(): void {
    for (const l of this.retiring) {
      l.closed = true;
      rejectInflight(l, new ClosedError("Cannot get the reply: the client was closed"));
      l.transport.close();
    }
    this.retiring.clear();
  }

  #gone(link: Link, error: Error | undefined): void {
    if (this.retiring.delete(link)) {
      this.#h.retired();
      return;
    }
    if (this.#h.current() !== link) return;
    this.#h.lost(link, error);
  }
}

/**
 * Rejects the commands in flight on `link` with `error` (a connection, protocol or close error
 * as it is; anything else as the loss of the connection).
 *
 * @param link The socket.
 * @param error Why its replies will not come.
 */
export function rejectInflight(link: Link, error: Error): void {
  let p: Pending | undefined;
  while ((p = link.inflight.shift()) !== undefined) {
    if (p.done) continue;
    p.done = true;
    rejectPending(
      p,
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
