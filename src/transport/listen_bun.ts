/**
 * Server-side sockets over `Bun.listen`.
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

/** The part of Bun's socket this file uses. */
interface BunSocket {
  data: BunServerTransport | undefined;
  readonly remoteAddress: string;
  readonly remotePort?: number;
  readonly localAddress?: string;
  readonly localPort?: number;
  write(data: Uint8Array): number;
  shutdown(halfClose?: boolean): void;
  end(): void;
  terminate(): void;
  setNoDelay?(on: boolean): void;
}

interface BunListener {
  readonly port: number;
  stop(closeActive?: boolean): void;
}

interface BunGlobal {
  listen(options: {
    hostname: string;
    port: number;
    tls?: { cert: string; key: string };
    socket: {
      open(s: BunSocket): void;
      data(s: BunSocket, d: Uint8Array): void;
      drain(s: BunSocket): void;
      end(s: BunSocket): void;
      close(s: BunSocket, e?: Error): void;
      error(s: BunSocket, e: Error): void;
    };
  }): BunListener;
}

class BunServerTransport implements ServerTransport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly secure: boolean;
  #s: BunSocket;
  #handlers?: TransportHandlers;
  #queue: Uint8Array[] = [];
  #queued = 0;
  #above = false;
  #closing = false;
  #shut = false;
  #closed = false;
  #error?: Error;
  #timer?: ReturnType<typeof setTimeout>;

  constructor(s: BunSocket, secure: boolean) {
    this.#s = s;
    this.secure = secure;
    this.remoteAddress = s.remoteAddress;
    this.remotePort = s.remotePort;
    this.localAddress = s.localAddress;
    this.localPort = s.localPort;
    try {
      s.setNoDelay?.(true);
    } catch { /* ignore */ }
  }

  setHandlers(handlers: TransportHandlers): void {
    this.#handlers = handlers;
  }

  _data(d: Uint8Array): void {
    if (!this.#closed && !this.#shut) this.#handlers?.onData(d);
  }

  _drain(): void {
    this.#flush();
  }

  _end(): void {
    if (this.#shut) this.#s.end();
    else this.close();
  }

  _error(e: Error): void {
    this.#error = e;
  }

  _close(e?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#handlers?.onClose(e ?? this.#error);
  }

  write(bytes: Uint8Array): boolean {
    if (this.#closing || this.#closed) return false;
    if (this.#queue.length === 0) {
      const n = this.#s.write(bytes);
      if (n >= bytes.length) return true;
      bytes = bytes.subarray(Math.max(0, n));
    }
    this.#queue.push(bytes);
    this.#queued += bytes.length;
    if (this.#queued >= LISTEN_HIGH_WATER_MARK) this.#above = true;
    return !this.#above;
  }

  #flush(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const chunk = this.#queue[0]!;
      const n = this.#s.write(chunk);
      if (n < chunk.length) {
        this.#queue[0] = chunk.subarray(Math.max(0, n));
        this.#queued -= Math.max(0, n);
        return;
      }
      this.#queue.shift();
      this.#queued -= chunk.length;
    }
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
    if (this.#queue.length === 0) this.#shutdown();
  }

  #shutdown(): void {
    if (this.#shut || this.#closed) return;
    this.#shut = true;
    try {
      this.#s.shutdown(true);
    } catch {
      this.#s.end();
    }
    this.#timer = setTimeout(() => this.#s.terminate(), LISTEN_CLOSE_GRACE_MS);
  }

  destroy(): void {
    if (this.#closed) return;
    this.#closing = true;
    this.#s.terminate();
  }
}

/**
 * Listens with `Bun.listen`.
 *
 * @param options Where to listen.
 * @param onAccept Called with every accepted connection.
 * @returns The bound listener.
 *
 * @example
 * ```ts
 * import { bunListen } from "./listen_bun.ts";
 * const l = await bunListen({ host: "127.0.0.1", port: 0 }, (t) => t.close());
 * await l.close();
 * ```
 */
export function bunListen(
  options: ListenOptions,
  onAccept: (transport: ServerTransport) => void,
): Promise<Listener> {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  let listener: BunListener;
  try {
    listener = bun.listen({
      hostname: options.host,
      port: options.port,
      ...(options.tls === undefined
        ? {}
        : { tls: { cert: options.tls.cert, key: options.tls.key } }),
      socket: {
        open(s) {
          const t = new BunServerTransport(s, options.tls !== undefined);
          s.data = t;
          onAccept(t);
        },
        data: (s, d) => s.data?._data(d),
        drain: (s) => s.data?._drain(),
        end: (s) => s.data?._end(),
        close: (s, e) => s.data?._close(e),
        error: (s, e) => s.data?._error(e),
      },
    });
  } catch (e) {
    return Promise.reject(e);
  }
  let closed = false;
  return Promise.resolve({
    host: options.host,
    port: listener.port,
    close(): Promise<void> {
      if (!closed) {
        closed = true;
        listener.stop(false);
      }
      return Promise.resolve();
    },
  });
}
