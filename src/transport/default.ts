/**
 * The connector used when none is injected: picks the runtime's own transport and loads only
 * that file.
 *
 * @module
 */

import type { ConnectOptions, Connector, Transport } from "./types.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";

let cached: Promise<Connector> | undefined;

function load(): Promise<Connector> {
  if ("Deno" in globalThis) return import("./deno.ts").then((m) => m.denoConnector);
  if ("Bun" in globalThis) return import("./bun.ts").then((m) => m.bunConnector);
  return import("./node.ts").then((m) => m.nodeConnector);
}

/**
 * Opens a connection with the current runtime's transport: `Deno.connect` on Deno,
 * `Bun.connect` on Bun, `node:net` elsewhere. The runtime file is imported on first use
 * (dynamically, so bundles for one runtime leave the others out) and cached.
 *
 * @param options Host, port and TLS settings.
 * @returns The open transport.
 * @throws {Error} With a short message such as `connection refused` or `host not found`.
 *
 * @example Connect with the runtime's transport
 * ```ts ignore
 * import { defaultConnector } from "@edge/redis/transport";
 * const t = await defaultConnector({ host: "127.0.0.1", port: 6379 });
 * t.setHandlers({ onData: () => {}, onDrain: () => {}, onClose: () => {} });
 * t.close();
 * ```
 */
export const defaultConnector: Connector = async (options: ConnectOptions): Promise<Transport> => {
  cached ??= load();
  let connector: Connector;
  try {
    connector = await cached;
  } catch (e) {
    cached = undefined;
    throw e;
  }
  return connector(options);
};
