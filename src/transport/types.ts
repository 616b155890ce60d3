/**
 * The one interface between the client core and the runtime's sockets.
 *
 * @module
 */

/** TLS settings of a connection. */
export interface TlsOptions {
  /** Extra CA certificates (PEM) to trust, e.g. a self-signed test CA. */
  caCerts?: string[];
  /** Host name to verify the certificate against (SNI). Defaults to the connection's host. */
  serverName?: string;
  /** Client certificate chain (PEM) for mutual TLS. */
  cert?: string;
  /** Client private key (PEM) for mutual TLS. */
  key?: string;
}

/** Where and how to open a connection. */
export interface ConnectOptions {
  /** Host name or IP literal (IPv6 without brackets). */
  host: string;
  /** TCP port. */
  port: number;
  /** Use TLS when set. */
  tls?: TlsOptions;
  /**
   * Gives up the attempt when aborted: the connector rejects with the signal's `reason` and
   * closes a socket that opened too late. An already aborted signal rejects without dialling.
   * Only the attempt is abortable: aborting after the connector resolved does nothing.
   */
  signal?: AbortSignal;
}

/**
 * Callbacks a transport reports to. Set once by the connection right after connecting; a
 * transport buffers nothing before they are set (the connection sets them synchronously).
 */
export interface TransportHandlers {
  /** Bytes received. The array may be reused by the transport after the call returns. */
  onData(chunk: Uint8Array): void;
  /** The socket can take more bytes after `write` returned `false`. */
  onDrain(): void;
  /** The socket closed, by either side. Called exactly once, also after `close()`. */
  onClose(error?: Error): void;
}

/**
 * An open, bidirectional byte stream.
 *
 * @example A transport that echoes what it is sent (a test double)
 * ```ts
 * import type { Transport, TransportHandlers } from "@edge/redis";
 * class Echo implements Transport {
 *   readonly remoteAddress = "127.0.0.1";
 *   readonly remotePort = 6379;
 *   readonly secure = false;
 *   #h?: TransportHandlers;
 *   setHandlers(h: TransportHandlers): void { this.#h = h; }
 *   write(bytes: Uint8Array): boolean { this.#h?.onData(bytes); return true; }
 *   close(): void { this.#h?.onClose(); }
 * }
 * ```
 */
export interface Transport {
  /** The peer's IP address as connected (for the maintenance endpoint type), if known. */
  readonly remoteAddress: string | undefined;
  /** The peer's port, if known. */
  readonly remotePort: number | undefined;
  /** Whether the stream is TLS. */
  readonly secure: boolean;
  /** Installs the callbacks. Called once, synchronously after the connector resolves. */
  setHandlers(handlers: TransportHandlers): void;
  /**
   * Queues bytes for writing. The transport owns `bytes` after the call (the caller never
   * reuses them). Returns `false` when the socket's buffer is above its high-water mark: the
   * caller should stop writing until `onDrain`.
   */
  write(bytes: Uint8Array): boolean;
  /** Closes the socket; `onClose` follows. Idempotent. */
  close(): void;
  /**
   * Lets the process exit while this socket is open (Node's `socket.unref()`, Deno's
   * `conn.unref()`, Bun's `socket.unref()`). Optional: a transport that cannot do it leaves it
   * out, and callers use `transport.unref?.()`.
   */
  unref?(): void;
  /** Undoes {@linkcode Transport.unref}: the open socket keeps the process alive again. */
  ref?(): void;
}

/**
 * Opens a transport. Rejects with an `Error` whose message says what failed; the connection
 * layer wraps it into a `ConnectionError` naming the endpoint.
 *
 * @example Inject a connector that logs every connection attempt
 * ```ts ignore
 * import { type Connector, RedisClient } from "@edge/redis";
 * const base: Connector = ...; // e.g. a transport over a tunnel
 * const connector: Connector = (o) => {
 *   console.log(`connecting to ${o.host}:${o.port}`);
 *   return base(o);
 * };
 * const client = new RedisClient({ connector });
 * ```
 */
export type Connector = (options: ConnectOptions) => Promise<Transport>;
