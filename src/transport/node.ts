/**
 * The portable transport: `node:net` / `node:tls`, which Node.js, Deno and Bun all provide.
 *
 * @module
 */

import type * as net from "node:net";
import type { ConnectOptions, Connector, Transport, TransportHandlers } from "./types.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";
import { HandlerSlot } from "./_handler_slot.ts";
import { socketError } from "./_errors.ts";
import { dialAbortable } from "./_abort.ts";

const HIGH_WATER_MARK = 1024 * 1024;

class NodeTransport implements Transport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly secure: boolean;
  #socket: net.Socket;
  #slot = new HandlerSlot();
  #corked = false;
  #needDrain = false;
  #error: Error | undefined;
  #uncork = (): void => {
    this.#corked = false;
    this.#socket.uncork();
  };

  constructor(socket: net.Socket, secure: boolean) {
    this.#socket = socket;
    this.secure = secure;
    this.remoteAddress = socket.remoteAddress;
    this.remotePort = socket.remotePort;
    // A plain Uint8Array view: Buffer.slice would share memory where Uint8Array.slice copies.
    socket.on(
      "data",
      (chunk: Uint8Array) =>
        this.#slot.data(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
    );
    socket.on("drain", () => {
      if (this.#needDrain && socket.writableLength <= HIGH_WATER_MARK) {
        this.#needDrain = false;
        this.#slot.drain();
      }
    });
    socket.on("error", (e: Error) => {
      this.#error ??= socketError(e);
    });
    socket.on("close", () => this.#slot.close(this.#error));
    // The peer half-closing ends the connection for us too.
    socket.on("end", () => socket.destroy());
  }

  setHandlers(handlers: TransportHandlers): void {
    this.#slot.set(handlers);
  }

  write(bytes: Uint8Array): boolean {
    const socket = this.#socket;
    if (socket.destroyed) return false;
    if (!this.#corked) {
      // Writes of one tick leave as one (writev) syscall.
      this.#corked = true;
      socket.cork();
      queueMicrotask(this.#uncork);
    }
    socket.write(bytes);
    if (socket.writableLength > HIGH_WATER_MARK) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  close(): void {
    this.#socket.destroy();
  }

  unref(): void {
    this.#socket.unref();
  }

  ref(): void {
    this.#socket.ref();
  }
}

/**
 * Opens a TCP or TLS connection with `node:net` / `node:tls`. Works on Node.js, Deno and Bun;
 * the runtime-specific connectors are faster where they exist. Sets `TCP_NODELAY` and keepalive.
 * For TLS, `tls.caCerts` are trusted in addition to the built-in root certificates and the
 * promise resolves after the certificate has been verified.
 *
 * `close()` discards bytes not yet written. `options.signal` aborts the attempt (the promise
 * rejects with its reason); the transport has `unref()`/`ref()` (Node's `socket.unref()`).
 *
 * @param options Host, port and TLS settings.
 * @returns The open transport.
 * @throws {Error} With a short message such as `connection refused`, `host not found` or
 * `certificate verify failed: self-signed certificate in certificate chain`.
 *
 * @example Ping a server
 * ```ts ignore
 * import { nodeConnector } from "@edge/redis/transport/node";
 * const t = await nodeConnector({ host: "127.0.0.1", port: 6379 });
 * t.setHandlers({
 *   onData: (chunk) => console.log(new TextDecoder().decode(chunk)), // "+PONG\r\n"
 *   onDrain: () => {},
 *   onClose: (error) => console.log("closed", error),
 * });
 * t.write(new TextEncoder().encode("*1\r\n$4\r\nPING\r\n"));
 * ```
 */
export const nodeConnector: Connector = (options: ConnectOptions): Promise<Transport> =>
  dialAbortable(options.signal, (signal) => connect(options, signal), (late) => late.close());

// `node:net` and `node:tls` are imported on the first connect, not by this file, so a bundle
// that contains this transport has no top-level `node:` import (edge runtimes without them
// load the bundle and use their own transport).
let modules: Promise<[typeof import("node:net"), typeof import("node:tls")]> | undefined;

async function connect(
  options: ConnectOptions,
  signal: AbortSignal | undefined,
): Promise<Transport> {
  modules ??= Promise.all([import("node:net"), import("node:tls")]);
  let net: typeof import("node:net");
  let tls: typeof import("node:tls");
  try {
    [net, tls] = await modules;
  } catch (e) {
    modules = undefined;
    throw e;
  }
  if (signal?.aborted) throw signal.reason; // aborted while the modules loaded
  return await new Promise<Transport>((resolve, reject) => {
    const o = options.tls;
    let socket: net.Socket;
    if (o) {
      const serverName = o.serverName ?? options.host;
      const ip = net.isIP(serverName) !== 0;
      socket = tls.connect({
        host: options.host,
        port: options.port,
        // SNI carries names only; an IP literal is still verified against the IP SANs.
        servername: ip ? undefined : serverName,
        checkServerIdentity: (_host, cert) => tls.checkServerIdentity(serverName, cert),
        ca: o.caCerts ? [...tls.rootCertificates, ...o.caCerts] : undefined,
        cert: o.cert,
        key: o.key,
      });
    } else {
      socket = net.connect({ host: options.host, port: options.port });
    }
    const onError = (e: Error) => {
      socket.destroy();
      reject(socketError(e));
    };
    socket.once("error", onError);
    // Aborted while dialling: stop the attempt (the caller has already been answered).
    const onAbort = () => {
      socket.destroy();
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.once(o ? "secureConnect" : "connect", () => {
      socket.off("error", onError);
      signal?.removeEventListener("abort", onAbort);
      socket.setNoDelay(true);
      socket.setKeepAlive(true);
      resolve(new NodeTransport(socket, o !== undefined));
    });
  });
}
