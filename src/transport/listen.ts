/**
 * Server-side sockets: a listener that accepts TCP connections and exposes each one as a
 * {@linkcode Transport}. Used by the test tools (`@edge/redis/testing`), never by the client.
 *
 * @module
 */

import type { Transport } from "./types.ts";

/**
 * Where to listen.
 *
 * @example
 * ```ts
 * import type { ListenOptions } from "@edge/redis/testing";
 * const any: ListenOptions = { host: "127.0.0.1", port: 0 };
 * ```
 */
export interface ListenOptions {
  /** Local address to bind, an IP literal (IPv6 without brackets) or a host name. */
  host: string;
  /** TCP port; `0` picks a free one. */
  port: number;
  /** Serve TLS with this certificate chain and key (PEM). Plain TCP when unset. */
  tls?: ListenTlsOptions;
}

/**
 * The certificate of a TLS listener.
 *
 * @example
 * ```ts
 * import type { ListenTlsOptions } from "@edge/redis/testing";
 * const tls: ListenTlsOptions = { cert: "-----BEGIN CERTIFICATE-----\n...", key: "-----BEGIN PRIVATE KEY-----\n..." };
 * ```
 */
export interface ListenTlsOptions {
  /** Certificate chain, PEM. */
  cert: string;
  /** Private key, PEM. */
  key: string;
}

/**
 * An accepted connection: a {@linkcode Transport} plus its local address.
 *
 * `close()` is graceful: bytes already written are flushed, then the write side is shut down
 * (FIN) and the socket is released once the peer closes too (or after a short grace period).
 * `destroy()` releases the socket at once.
 *
 * @example An echo handler
 * ```ts
 * import type { ServerTransport } from "@edge/redis/testing";
 * const echo = (t: ServerTransport) =>
 *   t.setHandlers({ onData: (b) => t.write(b.slice()), onDrain() {}, onClose() {} });
 * ```
 */
export interface ServerTransport extends Transport {
  /** The local address the connection was accepted on, if known. */
  readonly localAddress: string | undefined;
  /** The local port the connection was accepted on, if known. */
  readonly localPort: number | undefined;
  /** Releases the socket at once, dropping unwritten bytes; `onClose` follows. Idempotent. */
  destroy(): void;
}

/**
 * A listening socket.
 *
 * @example
 * ```ts
 * import type { Listener } from "@edge/redis/testing";
 * const address = (l: Listener) => `${l.host}:${l.port}`;
 * ```
 */
export interface Listener {
  /** The bound address. */
  readonly host: string;
  /** The bound port (the chosen one when listening on port 0). */
  readonly port: number;
  /** Stops accepting connections. Accepted connections stay open. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens a listener and reports every accepted connection to `onAccept`, which must install the
 * transport's handlers synchronously.
 *
 * @example Wrap the default listener
 * ```ts
 * import { type ListenFunction } from "@edge/redis/testing";
 * import { defaultListen } from "./listen.ts";
 * const logged: ListenFunction = (options, onAccept) => {
 *   console.log("listening on", options.host);
 *   return defaultListen(options, onAccept);
 * };
 * ```
 */
export type ListenFunction = (
  options: ListenOptions,
  onAccept: (transport: ServerTransport) => void,
) => Promise<Listener>;

/** Bytes queued for writing above which `write` returns `false`. */
export const LISTEN_HIGH_WATER_MARK = 1 << 20;
/** How long a gracefully closed connection waits for the peer's FIN before it is released. */
export const LISTEN_CLOSE_GRACE_MS = 2_000;

/**
 * Listens with the current runtime's own sockets: `Deno.listen` on Deno, `Bun.listen` on Bun,
 * `node:net` elsewhere. Only the runtime's own file is imported.
 *
 * @param options Where to listen.
 * @param onAccept Called with every accepted connection.
 * @returns The listener, once it is bound. Rejects when the address cannot be bound.
 *
 * @example Echo server
 * ```ts
 * import { defaultListen } from "./listen.ts";
 * const listener = await defaultListen({ host: "127.0.0.1", port: 0 }, (t) => {
 *   t.setHandlers({ onData: (b) => t.write(b.slice()), onDrain() {}, onClose() {} });
 * });
 * console.log(listener.port);
 * await listener.close();
 * ```
 */
export async function defaultListen(
  options: ListenOptions,
  onAccept: (transport: ServerTransport) => void,
): Promise<Listener> {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  if (g.Bun !== undefined) {
    const { bunListen } = await import("./listen_bun.ts");
    return bunListen(options, onAccept);
  }
  if (g.Deno !== undefined) {
    const { denoListen } = await import("./listen_deno.ts");
    return denoListen(options, onAccept);
  }
  const { nodeListen } = await import("./listen_node.ts");
  return nodeListen(options, onAccept);
}
