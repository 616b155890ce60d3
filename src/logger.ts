/**
 * The logger shape the client writes to.
 *
 * @module
 */

/**
 * Anything with `debug`, `info`, `warn` and `error` methods: `console`, or a logger from
 * `@std/log`'s `getLogger()`. The client never logs passwords.
 *
 * @example
 * ```ts
 * import { type Logger, RedisClient } from "@edge/redis";
 * const logger: Logger = console;
 * const client = new RedisClient({ logger });
 * ```
 */
export interface Logger {
  /** Detailed diagnostics: handshakes, reconnects, maintenance decisions. */
  debug(msg: string, ...args: unknown[]): unknown;
  /** Notable events. */
  info(msg: string, ...args: unknown[]): unknown;
  /** Something went wrong and was handled. */
  warn(msg: string, ...args: unknown[]): unknown;
  /** Something went wrong and a caller saw an error. */
  error(msg: string, ...args: unknown[]): unknown;
}

const noop = (): undefined => undefined;

/** A logger that drops everything (the default). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
