/**
 * The connector used when none is injected: picks the runtime's own transport and loads only
 * that file.
 *
 * @module
 */

import type { ConnectOptions, Connector, Transport } from "./types.ts";
// The npm package resolves this through its `#runtime-connector` import, by export condition:
// a build for one runtime (`workerd`, `deno`, `bun`, `node`) gets a loader of that runtime's
// transport alone, any other build this one, which finds the runtime when first used.
import { loadRuntimeConnector } from "./_runtime.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";

let cached: Promise<Connector> | undefined;

/**
 * Opens a connection with the current runtime's transport: `Deno.connect` on Deno,
 * `Bun.connect` on Bun, `connect()` of `cloudflare:sockets` on Cloudflare Workers, `node:net`
 * elsewhere. The runtime file is imported on first use (dynamically) and cached. A bundle of the
 * npm package for one runtime (a `workerd`, `deno`, `bun` or `node` export condition, as
 * wrangler, `bun build` or esbuild for Node set) carries that runtime's transport alone.
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
  cached ??= loadRuntimeConnector();
  let connector: Connector;
  try {
    connector = await cached;
  } catch (e) {
    cached = undefined;
    throw e;
  }
  return connector(options);
};
