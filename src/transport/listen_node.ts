/**
 * Server-side sockets over `node:net` (the portable fallback).
 *
 * @module
 */

import { createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import type { TransportHandlers } from "./types.ts";
import {
  LISTEN_CLOSE_GRACE_MS,
  LISTEN_HIGH_WATER_MARK,
  type Listener,
  type ListenOptions,
  type ServerTransport,
} from "./listen.ts";

class NodeServerTransport implements ServerTransport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly secure: boolean;
  #socket: Socket;
  #handlers?: TransportHandlers;
  #closing = false;
  #closed = false;
  #error?: Error;
  #timer?: ReturnType<typeof setTimeout>;

  constructor(socket: Socket, secure: boolean) {
    this.#socket = socket;
    this.secure = secure;
    this.remoteAddress = socket.remoteAddress;
    this.remotePort = socket.remotePort;
    this.localAddress = socket.localAddress;
    this.localPort = socket.localPort;
    socket.setNoDelay(true);
    socket.on("error", (e) => this.#error = e);
    socket.on("close", () => this.#finish());
  }

  setHandlers(handlers: TransportHandlers): void {
    this.#handlers = handlers;
    this.#socket.on("data", (chunk: Uint8Array) => {
      if (!this.#closed) handlers.onData(chunk);
    });
    this.#socket.on("drain", () => {
      if (!this.#closed && !this.#closing) handlers.onDrain();
    });
  }

  write(bytes: Uint8Array): boolean {
    if (this.#closing || this.#closed) return false;
    this.#socket.write(bytes);
    return this.#socket.writableLength < LISTEN_HIGH_WATER_MARK;
  }

  close(): void {
    if (this.#closing || this.#closed) return;
    this.#closing = true;
    this.#socket.end();
    this.#timer = setTimeout(() => this.#socket.destroy(), LISTEN_CLOSE_GRACE_MS);
  }

  destroy(): void {
    if (this.#closed) return;
    this.#closing = true;
    this.#socket.destroy();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#handlers?.onClose(this.#error);
  }
}

/**
 * Listens with `node:net`.
 *
 * @param options Where to listen.
 * @param onAccept Called with every accepted connection.
 * @returns The bound listener.
 *
 * @example
 * ```ts
 * import { nodeListen } from "./listen_node.ts";
 * const l = await nodeListen({ host: "127.0.0.1", port: 0 }, (t) => t.close());
 * await l.close();
 * ```
 */
export function nodeListen(
  options: ListenOptions,
  onAccept: (transport: ServerTransport) => void,
): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const server: Server = options.tls === undefined
      ? createServer({ allowHalfOpen: false }, (socket) => {
        onAccept(new NodeServerTransport(socket, false));
      })
      : createTlsServer({ cert: options.tls.cert, key: options.tls.key }, (socket) => {
        onAccept(new NodeServerTransport(socket, true));
      });
    server.once("error", reject);
    server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
      server.off("error", reject);
      server.on("error", () => {});
      const addr = server.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : options.port;
      let closed: Promise<void> | undefined;
      resolve({
        host: options.host,
        port,
        close(): Promise<void> {
          closed ??= new Promise((r) => server.close(() => r()));
          return closed;
        },
      });
    });
  });
}
