/**
 * The Cloudflare Workers transport: `connect()` of `cloudflare:sockets` (TCP, TLS from the first
 * byte with `secureTransport: "on"`, or `"starttls"` + `startTls()` to verify another server
 * name), with a coalescing write queue and a high-water mark.
 *
 * Workers bind a socket to the request (I/O context) that opened it: another request that uses
 * it gets "Cannot perform I/O on behalf of a different request". The connection checks that
 * before it writes (`io_context.ts`) and opens a socket from the current request; where it could
 * not, this transport turns the refusal into a close with an error that says what to do, and the
 * client reconnects from the request that used it.
 *
 * @module
 */

import type { ConnectOptions, Connector, Transport, TransportHandlers } from "./types.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";
import { HandlerSlot } from "./_handler_slot.ts";
import { WriteQueue } from "./_write_queue.ts";
import { socketError } from "./_errors.ts";
import { dialAbortable } from "./_abort.ts";
import { ioContextProbe } from "./io_context.ts";

const HIGH_WATER_MARK = 1024 * 1024;

/** The part of `cloudflare:sockets` this transport uses. */
interface WorkersSocket {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  readonly opened: Promise<{ remoteAddress?: string; localAddress?: string }>;
  readonly closed: Promise<void>;
  close(): Promise<void>;
  startTls(options?: { expectedServerHostname?: string }): WorkersSocket;
}

interface WorkersSocketOptions {
  secureTransport?: "off" | "on" | "starttls";
  allowHalfOpen?: boolean;
}

interface WorkersSockets {
  connect(
    address: { hostname: string; port: number },
    options?: WorkersSocketOptions,
  ): WorkersSocket;
}

/** The module names, in variables: type checkers and bundlers leave the imports to the runtime. */
const SOCKETS_MODULE = "cloudflare:sockets";
const WORKERS_MODULE = "cloudflare:workers";
let sockets: Promise<WorkersSockets> | undefined;
/** `waitUntil` of `cloudflare:workers` (workerd since 2025-08), when the runtime has it. */
let waitUntil: ((promise: Promise<unknown>) => void) | undefined;

/** Longest time a request is kept alive for the reconnect its cross-request failure started. */
const RECONNECT_GRACE_MS = 5000;
/** Quiet time after the last handshake reply before that request may end. */
const HANDSHAKE_SETTLE_MS = 50;
/** Ends the keep-alive of the request whose failure started the pending reconnect. */
let reconnected: (() => void) | undefined;

/**
 * Keeps the current request alive (`waitUntil`) until the next socket is open and answered, or
 * `RECONNECT_GRACE_MS`: the client's reconnect runs in this request, and workerd cancels the
 * work of a request that ended, which would leave the reconnect pending forever.
 */
function keepAliveForReconnect(): void {
  if (waitUntil === undefined) return;
  // An earlier keep-alive is left to run out: its request may still be reconnecting.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = new Promise<void>((resolve) => {
    const end = () => {
      if (reconnected === end) reconnected = undefined;
      clearTimeout(timer);
      resolve();
    };
    reconnected = end;
    timer = setTimeout(end, RECONNECT_GRACE_MS);
  });
  try {
    waitUntil(done);
  } catch { /* outside a request */ }
}

/** The runtime this code runs on, for error messages. */
function runtimeName(): string {
  const g = globalThis as { Deno?: unknown; Bun?: unknown; process?: { versions?: object } };
  if (g.Deno !== undefined) return "Deno";
  if (g.Bun !== undefined) return "Bun";
  if (g.process?.versions && "node" in g.process.versions) return "Node.js";
  return "this runtime";
}

function loadSockets(): Promise<WorkersSockets> {
  const workers = (import(WORKERS_MODULE) as Promise<{ waitUntil?: typeof waitUntil }>).then(
    (m) => {
      waitUntil = typeof m.waitUntil === "function" ? m.waitUntil : undefined;
    },
    () => {},
  );
  return Promise.all([import(SOCKETS_MODULE) as Promise<WorkersSockets>, workers]).then(
    ([m]) => m,
  ).catch((e) => {
    sockets = undefined;
    throw new Error(
      `Cannot connect with the Cloudflare Workers transport on ${runtimeName()}: ` +
        `"cloudflare:sockets" is not available; it exists only on Cloudflare Workers ` +
        `(workerd). Leave out the connector to use the runtime's own.`,
      { cause: e },
    );
  });
}

/** Whether `e` is workerd's refusal to let one request use another request's socket. */
function crossRequest(e: unknown): boolean {
  const m = (e as { message?: unknown } | undefined)?.message;
  return typeof m === "string" && m.includes("on behalf of a different request");
}

/** The error a request gets that used a connection another request opened. */
const CROSS_REQUEST_DETAIL =
  "the connection was opened by another request, and Cloudflare Workers lets only the request " +
  "that opened a socket use it. The client reconnects from this request; to avoid the failed " +
  "commands, create the client in the request handler (`await using client = new " +
  "RedisClient(...)`, or `ctx.waitUntil(client.close())`) or keep a long-lived client in a " +
  "Durable Object";

function crossRequestError(e: unknown): Error {
  return new Error(`Cannot use the socket from this request: ${CROSS_REQUEST_DETAIL}`, {
    cause: e,
  });
}

/** `"127.0.0.1:6379"` or `"[::1]:6379"` into its parts; workerd may also report a bare host. */
function splitAddress(address: string | undefined): { host?: string; port?: number } {
  if (!address) return {};
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  if (m && (address.startsWith("[") || !m[1]!.includes(":"))) {
    return { host: m[1], port: Number(m[2]) };
  }
  return { host: address };
}

class WorkersTransport implements Transport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly secure: boolean;
  #socket: WorkersSocket;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #slot = new HandlerSlot();
  #queue = new WriteQueue();
  #closed = false;
  #flushing = false;
  #needDrain = false;
  /** Ends the keep-alive of a request that waits for this socket's handshake replies. */
  #answered: (() => void) | undefined;
  #answeredTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the current request is the one that opened the socket (`io_context.ts`). */
  readonly #own = ioContextProbe();
  #flush = (): void => {
    this.#flushLoop();
  };

  constructor(
    socket: WorkersSocket,
    secure: boolean,
    remote: { host?: string; port?: number },
    answered: (() => void) | undefined,
  ) {
    this.#socket = socket;
    this.#answered = answered;
    this.secure = secure;
    this.remoteAddress = remote.host;
    this.remotePort = remote.port;
    this.#writer = socket.writable.getWriter();
  }

  setHandlers(handlers: TransportHandlers): void {
    this.#slot.set(handlers);
    if (!this.#closed) this.#readLoop();
  }

  write(bytes: Uint8Array): boolean {
    if (this.#closed) return false;
    this.#queue.push(bytes);
    if (!this.#flushing) {
      this.#flushing = true;
      // Let every write of this tick join the queue, then write them as one buffer.
      queueMicrotask(this.#flush);
    }
    if (this.#queue.bytes > HIGH_WATER_MARK) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  close(): void {
    this.#shutdown(undefined);
  }

  #shutdown(error: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.clear();
    // Not from another request: workerd would settle the socket's promises (`closed`, a pending
    // read) from this request, those of an ended request with a warning each ("A promise was
    // resolved or rejected from a different request context"). The socket closes when the
    // request that opened it ends.
    if (this.#own?.() !== false) this.#socket.close().catch(() => {});
    this.#slot.close(error);
  }

  /**
   * The socket ended without `close()`: the client reconnects from the current request, which
   * is kept alive until that is through (workerd cancels the work of an ended request).
   */
  #lost(error: Error | undefined): void {
    if (this.#closed) return;
    keepAliveForReconnect();
    this.#shutdown(error);
  }

  #fail(e: unknown): void {
    this.#lost(crossRequest(e) ? crossRequestError(e) : socketError(e));
  }

  async #readLoop(): Promise<void> {
    const reader = this.#socket.readable.getReader();
    try {
      while (!this.#closed) {
        const r = await reader.read();
        if (r.done) break;
        this.#slot.data(r.value);
        if (this.#answered !== undefined) this.#settleAnswered();
      }
      this.#lost(undefined);
    } catch (e) {
      this.#fail(e);
    }
  }

  /**
   * The handshake is answered once replies arrived and the socket stayed quiet for a moment: the
   * client finishes it in promise continuations, which must run before the request may end.
   */
  #settleAnswered(): void {
    clearTimeout(this.#answeredTimer);
    this.#answeredTimer = setTimeout(() => {
      this.#answered?.();
      this.#answered = undefined;
    }, HANDSHAKE_SETTLE_MS);
  }

  async #flushLoop(): Promise<void> {
    const queue = this.#queue;
    try {
      let chunk: Uint8Array | undefined;
      while (!this.#closed && (chunk = queue.peek()) !== undefined) {
        // The stream owns what it is given until the write settles: hand it the whole chunk.
        await this.#writer.write(chunk);
        if (this.#closed) return;
        queue.consume(chunk.length);
        if (this.#needDrain && queue.bytes <= HIGH_WATER_MARK) {
          this.#needDrain = false;
          this.#slot.drain();
        }
      }
    } catch (e) {
      this.#fail(e);
    } finally {
      this.#flushing = false;
    }
  }
}

async function open(options: ConnectOptions, signal: AbortSignal | undefined): Promise<Transport> {
  const tls = options.tls;
  if (tls && (tls.caCerts?.length || tls.cert !== undefined || tls.key !== undefined)) {
    throw new Error(
      "Cannot use tls.caCerts, tls.cert or tls.key on Cloudflare Workers: cloudflare:sockets " +
        "verifies against the platform's CAs and presents no client certificate (with workerd, " +
        "trust a CA in the network service's tlsOptions.trustedCertificates)",
    );
  }
  const { connect } = await (sockets ??= loadSockets());
  const answered = reconnected;
  const serverName = tls?.serverName ?? options.host;
  const starttls = tls !== undefined && serverName !== options.host;
  let socket: WorkersSocket;
  try {
    socket = connect({ hostname: options.host, port: options.port }, {
      secureTransport: tls === undefined ? "off" : starttls ? "starttls" : "on",
      allowHalfOpen: false,
    });
  } catch (e) {
    throw socketError(e);
  }
  const onAbort = () => socket.close().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const info = await socket.opened;
    if (starttls) {
      // Upgraded before any byte: the handshake verifies `serverName`, not the dialled host.
      socket = socket.startTls({ expectedServerHostname: serverName });
      await socket.opened;
    }
    const remote = splitAddress(info?.remoteAddress);
    return new WorkersTransport(socket, tls !== undefined, {
      host: remote.host ?? options.host,
      port: remote.port ?? options.port,
    }, answered);
  } catch (e) {
    // A failed attempt keeps the request alive: the client's next attempt runs in it too.
    socket.close().catch(() => {});
    throw crossRequest(e) ? crossRequestError(e) : socketError(e);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Opens a TCP or TLS connection with `connect()` of `cloudflare:sockets`, on Cloudflare Workers
 * and workerd. The default connector picks it there by itself (`navigator.userAgent` is
 * `"Cloudflare-Workers"`), so `new RedisClient({ url })` needs no connector; import this entry
 * to name it explicitly. It needs no `nodejs_compat` flag.
 *
 * TLS (`rediss://`) starts from the first byte (`secureTransport: "on"`); with a `tls.serverName`
 * other than the host it connects with `secureTransport: "starttls"` and upgrades at once with
 * `startTls({ expectedServerHostname })`. Certificates are verified against the platform's CAs:
 * `tls.caCerts`, `tls.cert` and `tls.key` are refused with an error (sockets take none). Sockets
 * are opened with `allowHalfOpen: false`: when the server ends its side, the socket closes and the
 * client reconnects.
 *
 * A socket belongs to the request that opened it. A client's connection tells before it writes
 * that a command comes from another request and then opens a socket from that request (the old
 * one keeps answering its own request's commands), so a client created at module scope works
 * across requests at the cost of a connect per request. Where that check is not available,
 * workerd refuses the write; the transport then closes with an error that says so (the commands
 * written in that tick fail with it), and the client reconnects from that request, which is kept
 * alive for it (`waitUntil` of `cloudflare:workers`, at most 5 s) so the reconnect is never left
 * pending. The transport has no `unref()`/`ref()` (Workers have no process to keep alive).
 * `options.signal` aborts the attempt.
 *
 * @param options Host, port and TLS settings.
 * @returns The open transport.
 * @throws {Error} `Cannot connect with the Cloudflare Workers transport on Deno: ...` off Workers,
 * or a short message such as `connection refused`.
 *
 * @example Ping a server from a worker
 * ```ts ignore
 * import { workersConnector } from "@edge/redis/transport/workers";
 * const t = await workersConnector({ host: "127.0.0.1", port: 6379 });
 * t.setHandlers({
 *   onData: (chunk) => console.log(new TextDecoder().decode(chunk)), // "+PONG\r\n"
 *   onDrain: () => {},
 *   onClose: (error) => console.log("closed", error),
 * });
 * t.write(new TextEncoder().encode("*1\r\n$4\r\nPING\r\n"));
 * ```
 */
export const workersConnector: Connector = (options: ConnectOptions): Promise<Transport> =>
  dialAbortable(options.signal, (signal) => open(options, signal), (late) => late.close());
