/**
 * Server-side sockets over `Deno.listen`.
 *
 * @module
 */

import type { TransportHandlers } from "./types.ts";
import {
  LISTEN_CLOSE_GRACE_MS,
  LISTEN_HIGH_WATER_MARK,
  type Listener,
  type ListenOptions,
  type ServerTransport,
} from "./listen.ts";

class DenoServerTransport implements ServerTransport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly secure: boolean;
  #conn: Deno.Conn;
  #handlers?: TransportHandlers;
  #queue: Uint8Array[] = [];
  #queued = 0;
  #writing = false;
  #above = false;
  #closing = false;
  #shut = false;
  #closed = false;
  #timer?: ReturnType<typeof setTimeout>;

  constructor(conn: Deno.Conn, secure: boolean) {
    this.#conn = conn;
    this.secure = secure;
    const remote = conn.remoteAddr as Deno.NetAddr;
    const local = conn.localAddr as Deno.NetAddr;
    this.remoteAddress = remote.hostname;
    this.remotePort = remote.port;
    this.localAddress = local.hostname;
    this.localPort = local.port;
    try {
      (conn as Partial<Deno.TcpConn>).setNoDelay?.(true);
    } catch { /* not a TCP socket */ }
  }

  setHandlers(handlers: TransportHandlers): void {
    this.#handlers = handlers;
    this.#readLoop();
  }

  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    let error: Error | undefined;
    try {
      while (!this.#closed) {
        const n = await this.#conn.read(buf);
        if (n === null) break;
        if (!this.#closed && !this.#shut) this.#handlers?.onData(buf.subarray(0, n));
      }
    } catch (e) {
      error = e instanceof Error ? e : new Error(String(e));
    }
    if (this.#closed) return;
    if (error !== undefined || this.#shut) this.#finish(error);
    else {
      // Peer sent FIN: flush what is queued, then close (no half-open connections).
      this.close();
    }
  }

  write(bytes: Uint8Array): boolean {
    if (this.#closing || this.#closed) return false;
    this.#queue.push(bytes);
    this.#queued += bytes.length;
    if (!this.#writing) this.#writeLoop();
    if (this.#queued >= LISTEN_HIGH_WATER_MARK) this.#above = true;
    return !this.#above;
  }

  async #writeLoop(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#queue.length > 0 && !this.#closed) {
        let chunk: Uint8Array;
        if (this.#queue.length === 1) chunk = this.#queue[0]!;
        else {
          chunk = new Uint8Array(this.#queued);
          let o = 0;
          for (const c of this.#queue) {
            chunk.set(c, o);
            o += c.length;
          }
        }
        this.#queue = [];
        let off = 0;
        while (off < chunk.length && !this.#closed) {
          off += await this.#conn.write(chunk.subarray(off));
        }
        this.#queued -= chunk.length;
      }
    } catch (e) {
      this.#writing = false;
      this.#finish(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    this.#writing = false;
    if (this.#closed) return;
    if (this.#closing) this.#shutdown();
    else if (this.#above) {
      this.#above = false;
      this.#handlers?.onDrain();
    }
  }

  close(): void {
    if (this.#closing || this.#closed) return;
    this.#closing = true;
    if (!this.#writing) this.#shutdown();
  }

  #shutdown(): void {
    if (this.#shut || this.#closed) return;
    this.#shut = true;
    try {
      this.#conn.closeWrite().catch(() => this.#finish());
    } catch {
      this.#finish();
      return;
    }
    this.#timer = setTimeout(() => this.#finish(), LISTEN_CLOSE_GRACE_MS);
  }

  destroy(): void {
    this.#closing = true;
    this.#finish();
  }

  #finish(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    this.#handlers?.onClose(error);
  }
}

/**
 * Listens with `Deno.listen`.
 *
 * @param options Where to listen.
 * @param onAccept Called with every accepted connection.
 * @returns The bound listener.
 *
 * @example
 * ```ts
 * import { denoListen } from "./listen_deno.ts";
 * const l = await denoListen({ host: "127.0.0.1", port: 0 }, (t) => t.close());
 * await l.close();
 * ```
 */
export function denoListen(
  options: ListenOptions,
  onAccept: (transport: ServerTransport) => void,
): Promise<Listener> {
  let listener: Deno.Listener;
  const secure = options.tls !== undefined;
  try {
    listener = options.tls === undefined
      ? Deno.listen({ hostname: options.host, port: options.port, transport: "tcp" })
      : Deno.listenTls({
        hostname: options.host,
        port: options.port,
        cert: options.tls.cert,
        key: options.tls.key,
      });
  } catch (e) {
    return Promise.reject(e);
  }
  let closed = false;
  const done = (async () => {
    try {
      for await (const conn of listener) onAccept(new DenoServerTransport(conn, secure));
    } catch { /* listener closed */ }
  })();
  const addr = listener.addr as Deno.NetAddr;
  return Promise.resolve({
    host: options.host,
    port: addr.port,
    async close(): Promise<void> {
      if (!closed) {
        closed = true;
        try {
          listener.close();
        } catch { /* already closed */ }
      }
      await done;
    },
  });
}
