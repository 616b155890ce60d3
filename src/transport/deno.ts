/**
 * The Deno transport: `Deno.connect` / `Deno.connectTls` with one reusable read buffer and a
 * non-blocking, coalescing write queue.
 *
 * @module
 */

import type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";
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

const READ_BUFFER_SIZE = 64 * 1024;
const HIGH_WATER_MARK = 1024 * 1024;

class DenoTransport implements Transport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly secure: boolean;
  #conn: Deno.Conn;
  #slot = new HandlerSlot();
  #queue = new WriteQueue();
  #closed = false;
  #flushing = false;
  #needDrain = false;
  /** One callback for every flush: no closure per write. */
  readonly #flushCb = (): void => {
    this.#flush();
  };

  constructor(conn: Deno.Conn, secure: boolean) {
    this.#conn = conn;
    this.secure = secure;
    const addr = conn.remoteAddr as Deno.NetAddr;
    this.remoteAddress = addr.hostname;
    this.remotePort = addr.port;
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
      queueMicrotask(this.#flushCb);
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

  unref(): void {
    if (!this.#closed) this.#conn.unref();
  }

  ref(): void {
    if (!this.#closed) this.#conn.ref();
  }

  #shutdown(error: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.clear();
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    this.#slot.close(error);
  }

  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(READ_BUFFER_SIZE);
    let view = buf;
    let viewLength = buf.length;
    const conn = this.#conn;
    try {
      while (!this.#closed) {
        const n = await conn.read(buf);
        if (n === null) break;
        // The view of the last read is reused when the next one has the same length (a serial
        // workload's replies): the buffer is reused anyway, the handlers never keep the chunk.
        if (n !== viewLength) {
          view = buf.subarray(0, n);
          viewLength = n;
        }
        this.#slot.data(view);
      }
      this.#shutdown(undefined);
    } catch (e) {
      this.#shutdown(this.#closed ? undefined : socketError(e));
    }
  }

  /**
   * Writes the queue's next bytes; each completed write continues with the rest. A chain of
   * `then` with two callbacks bound once: an async function per flush allocated its frame and
   * promise on every command of a serial workload.
   */
  #flush(): void {
    const chunk = this.#closed ? undefined : this.#queue.peek();
    if (chunk === undefined) {
      this.#flushing = false;
      return;
    }
    let written: Promise<number>;
    try {
      written = this.#conn.write(chunk);
    } catch (e) {
      this.#onWriteError(e);
      return;
    }
    written.then(this.#onWritten, this.#onWriteError);
  }

  readonly #onWritten = (n: number): void => {
    if (this.#closed) {
      this.#flushing = false;
      return;
    }
    try {
      const queue = this.#queue;
      queue.consume(n);
      if (this.#needDrain && queue.bytes <= HIGH_WATER_MARK) {
        this.#needDrain = false;
        this.#slot.drain();
      }
      this.#flush();
    } catch (e) {
      this.#onWriteError(e);
    }
  };

  readonly #onWriteError = (e: unknown): void => {
    this.#flushing = false;
    this.#shutdown(this.#closed ? undefined : socketError(e));
  };
}

/** What Deno's TCP connections offer; hosted platforms may leave a method out or refuse it. */
type SocketOptions = Partial<Pick<Deno.TcpConn, "setNoDelay" | "setKeepAlive">>;

function tune(conn: SocketOptions): void {
  try {
    conn.setNoDelay?.(true);
  } catch { /* not offered on this platform */ }
  try {
    conn.setKeepAlive?.(true);
  } catch { /* not offered on this platform */ }
}

async function connectTcp(
  options: ConnectOptions,
  signal: AbortSignal | undefined,
): Promise<Deno.TcpConn> {
  const tcp = await Deno.connect({
    hostname: options.host,
    port: options.port,
    transport: "tcp",
    signal,
  });
  tune(tcp);
  return tcp;
}

/** Deno Deploy sets this variable; its sockets may refuse plain TCP to TLS ports. */
function onHostedPlatform(): boolean {
  try {
    // Asked only when granted: reading it must never prompt for a permission.
    const query = { name: "env", variable: "DENO_DEPLOYMENT_ID" } as const;
    if (Deno.permissions.querySync(query).state !== "granted") return false;
    return Deno.env.get("DENO_DEPLOYMENT_ID") !== undefined;
  } catch {
    return false;
  }
}

/** A plain TCP connect refused by the platform (not by the peer). */
function refusedByPlatform(e: unknown): boolean {
  return e instanceof Deno.errors.PermissionDenied ||
    ("NotCapable" in Deno.errors &&
      e instanceof
        (Deno.errors as unknown as { NotCapable: ErrorConstructor })
          .NotCapable);
}

function directTls(
  options: ConnectOptions,
  tls: TlsOptions,
): Promise<Deno.TlsConn> {
  const mutual = tls.cert !== undefined && tls.key !== undefined;
  return Deno.connectTls({
    hostname: options.host,
    port: options.port,
    caCerts: tls.caCerts,
    cert: mutual ? tls.cert : undefined,
    key: mutual ? tls.key : undefined,
  });
}

async function connectTls(
  options: ConnectOptions,
  signal: AbortSignal | undefined,
): Promise<Deno.TlsConn> {
  const tls = options.tls!;
  const sameName = tls.serverName === undefined ||
    tls.serverName === options.host;
  // TLS from the first byte (`Deno.connectTls`) presents a client certificate, and is what
  // hosted platforms allow where they refuse plain TCP to port 443; but Deno sets no
  // TCP_NODELAY on it and offers no way to, so elsewhere TCP comes first (TCP_NODELAY and
  // keepalive set), then the upgrade, which also verifies a server name other than the host.
  const mutual = tls.cert !== undefined && tls.key !== undefined;
  if (sameName && (mutual || options.port === 443 || onHostedPlatform())) {
    return await directTls(options, tls);
  }
  let tcp: Deno.TcpConn;
  try {
    tcp = await connectTcp(options, signal);
  } catch (e) {
    if (sameName && refusedByPlatform(e)) return await directTls(options, tls);
    throw e;
  }
  try {
    return await Deno.startTls(tcp, {
      hostname: tls.serverName ?? options.host,
      caCerts: tls.caCerts,
    });
  } catch (e) {
    try {
      tcp.close();
    } catch { /* consumed by startTls */ }
    throw e;
  }
}

async function open(
  options: ConnectOptions,
  signal: AbortSignal | undefined,
): Promise<Deno.Conn> {
  const tls = options.tls;
  try {
    if (!tls) return await connectTcp(options, signal);
    const tlsConn = await connectTls(options, signal);
    // The handshake runs after connectTls resolved: an abort closes the socket under it.
    const onAbort = () => {
      try {
        tlsConn.close();
      } catch { /* already closed */ }
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await tlsConn.handshake();
    } catch (e) {
      try {
        tlsConn.close();
      } catch { /* closed by the abort */ }
      throw e;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    return tlsConn;
  } catch (e) {
    throw socketError(e);
  }
}

/**
 * Opens a TCP or TLS connection with Deno's own sockets (`Deno.connect`, `Deno.connectTls`).
 * Sets `TCP_NODELAY` and keepalive where the platform offers them (hosted platforms such as
 * Deno Deploy may not). For TLS the handshake completes (and the certificate is verified) before
 * the promise resolves.
 *
 * TLS connects over TCP (so `TCP_NODELAY` and keepalive are set) and upgrades with
 * `Deno.startTls`, which verifies against `tls.serverName` (default: `host`). It starts from the
 * first byte with `Deno.connectTls` instead where that is needed: with a client certificate
 * (`tls.cert`/`tls.key`; `startTls` cannot present one), to port 443 or on Deno Deploy
 * (`DENO_DEPLOYMENT_ID`), and when the platform refuses the plain TCP connect; Deno's socket
 * defaults apply there (no `TCP_NODELAY`). The one combination Deno's sockets cannot serve, a
 * client certificate with a different `serverName`, is handed to the `node:tls` transport
 * (`nodeConnector`, built into Deno).
 *
 * `options.signal` aborts the attempt: the promise rejects with its reason at once. Deno cannot
 * cut a TLS handshake short, so a socket aborted during one is closed when the handshake ends.
 * The transport has `unref()`/`ref()` (Deno's `conn.unref()`).
 *
 * `close()` discards bytes not yet written.
 *
 * @param options Host, port and TLS settings.
 * @returns The open transport.
 * @throws {Error} With a short message such as `connection refused`, `host not found` or
 * `certificate verify failed: unknown issuer`.
 *
 * @example Ping a server
 * ```ts ignore
 * import { denoConnector } from "@edge/redis/transport/deno";
 * const t = await denoConnector({ host: "127.0.0.1", port: 6379 });
 * t.setHandlers({
 *   onData: (chunk) => console.log(new TextDecoder().decode(chunk)), // "+PONG\r\n"
 *   onDrain: () => {},
 *   onClose: (error) => console.log("closed", error),
 * });
 * t.write(new TextEncoder().encode("*1\r\n$4\r\nPING\r\n"));
 * ```
 */
export const denoConnector: Connector = async (
  options: ConnectOptions,
): Promise<Transport> => {
  const tls = options.tls;
  if (
    tls?.serverName !== undefined && tls.serverName !== options.host &&
    (tls.cert !== undefined || tls.key !== undefined)
  ) {
    const { nodeConnector } = await import("./node.ts");
    return nodeConnector(options);
  }
  const conn = await dialAbortable(
    options.signal,
    (signal) => open(options, signal),
    (late) => late.close(),
  );
  return new DenoTransport(conn, tls !== undefined);
};
