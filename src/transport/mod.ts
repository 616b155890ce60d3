/**
 * `@edge/redis/transport`: the socket layer, for custom connectors. A {@linkcode Connector}
 * opens a {@linkcode Transport} (a bidirectional byte stream); the client takes one in its
 * `connector` option. {@linkcode defaultConnector} is the one used when none is given: it
 * loads only the current runtime's transport. The runtime transports themselves are separate
 * entries, so a connector built on one imports only that one:
 * `@edge/redis/transport/deno` (`denoConnector`), `@edge/redis/transport/bun` (`bunConnector`)
 * and `@edge/redis/transport/node` (`nodeConnector`, `node:net`/`node:tls`, on every runtime).
 *
 * @example A connector that logs every attempt and dials with the runtime's transport
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * import { type Connector, defaultConnector } from "@edge/redis/transport";
 *
 * const connector: Connector = (options) => {
 *   console.log(`connecting to ${options.host}:${options.port}`);
 *   return defaultConnector(options);
 * };
 * await using client = new RedisClient({ url: "redis://127.0.0.1:6379", connector });
 * await client.ping();
 * ```
 *
 * @module
 */
export { defaultConnector } from "./default.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";
