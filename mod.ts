/**
 * `@edge/redis`: a maintenance-aware Redis client for Deno and Bun.
 *
 * @module
 */
export * from "./src/errors.ts";
export type { RedisArgument, RespValue } from "./src/resp/types.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "./src/transport/types.ts";
