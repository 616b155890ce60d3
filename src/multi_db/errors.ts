/**
 * Errors of the multi-database client when no database can serve a command.
 *
 * @module
 */

import { ConnectionError, type RedisErrorOptions } from "../errors.ts";

/**
 * No database is healthy right now: the command was not sent. The client keeps looking for a
 * healthy database (`maxNumFailoverAttempts` attempts, `delayInBetweenFailoverAttempts` apart)
 * before it reports {@linkcode PermanentlyUnavailableError}.
 *
 * @example
 * ```ts
 * import { TemporarilyUnavailableError } from "@edge/redis/multi-db";
 * const e = new TemporarilyUnavailableError("Cannot send the command: no healthy database");
 * console.log(e.code); // "ERR_REDIS_TEMPORARILY_UNAVAILABLE"
 * ```
 */
export class TemporarilyUnavailableError extends ConnectionError {
  /** A stable machine-readable code: `ERR_REDIS_TEMPORARILY_UNAVAILABLE`. */
  override readonly code: string = "ERR_REDIS_TEMPORARILY_UNAVAILABLE";
  /**
   * Creates the error.
   *
   * @param message What could not be done, and why.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: RedisErrorOptions) {
    // The command never left the client: `written` is false.
    super(message, { ...options, written: false } as RedisErrorOptions);
    this.name = "TemporarilyUnavailableError";
  }
}

/**
 * Every failover attempt found no healthy database: the command was not sent. Commands keep
 * failing with this error until a health check finds a healthy database again.
 *
 * @example
 * ```ts
 * import { PermanentlyUnavailableError } from "@edge/redis/multi-db";
 * const e = new PermanentlyUnavailableError("Cannot send the command: no healthy database");
 * console.log(e.code); // "ERR_REDIS_PERMANENTLY_UNAVAILABLE"
 * ```
 */
export class PermanentlyUnavailableError extends ConnectionError {
  /** A stable machine-readable code: `ERR_REDIS_PERMANENTLY_UNAVAILABLE`. */
  override readonly code: string = "ERR_REDIS_PERMANENTLY_UNAVAILABLE";
  /**
   * Creates the error.
   *
   * @param message What could not be done, and why.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: RedisErrorOptions) {
    // The command never left the client: `written` is false.
    super(message, { ...options, written: false } as RedisErrorOptions);
    this.name = "PermanentlyUnavailableError";
  }
}
