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

/**
 * Cloudflare Workers and workerd: `navigator.userAgent` is documented to be
 * `"Cloudflare-Workers"` there (the `global_navigator` flag, on by default since 2022-03-21).
 * Checked before Node.js, since `nodejs_compat` adds a `process` global.
 */
function onWorkers(): boolean {
  const nav = (globalThis as { navigator?: { userAgent?: unknown } }).navigator;
  return nav?.userAgent === "Cloudflare-Workers";
}

function load(): Promise<Connector> {
  if ("Deno" in globalThis) return import("./deno.ts").then((m) => m.denoConnector);
  if ("Bun" in globalThis) return import("./bun.ts").then((m) => m.bunConnector);
  if (onWorkers()) return import("./workers.ts").then((m) => m.workersConnector);
  return import("./node.ts").then((m) => m.nodeConnector);
}

/**
 * Opens a connection with the current runtime's transport: `Deno.connect` on Deno,
 * `Bun.connect` on Bun, `connect()` of `cloudflare:sockets` on Cloudflare Workers, `node:net`
 * elsewhere. The runtime file is imported on first use
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
