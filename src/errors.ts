/**
 * Error classes of the client. Every error the client raises is a {@linkcode RedisError}
 * with a stable `code`; bad arguments throw the built-in `TypeError` or `RangeError`.
 *
 * @module
 */

/** Options accepted by every {@linkcode RedisError} constructor. */
export interface RedisErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * Options of the errors that reject a command ({@linkcode ConnectionError},
 * {@linkcode TimeoutError}, {@linkcode ClosedError}).
 */
export interface CommandErrorOptions extends RedisErrorOptions {
  /**
   * Whether the command may have reached the server: `false` only when it certainly never left
   * the client (refused, still queued, timed out in the queue). See `written` on the errors.
   * @default {true}
   */
  written?: boolean;
}

/**
 * Base class of every error raised by the client.
 *
 * @example Catch any client error
 * ```ts
 * import { RedisError } from "@edge/redis";
 * try {
 *   throw new RedisError("Cannot do it");
 * } catch (e) {
 *   if (e instanceof RedisError) console.log(e.code); // "ERR_REDIS"
 * }
 * ```
 */
export class RedisError extends Error {
  /** A stable machine-readable code, `ERR_REDIS_*`. */
  readonly code: string = "ERR_REDIS";
  /**
   * Creates an error.
   *
   * @param message The message: sentence case, the action first, no trailing period.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: RedisErrorOptions) {
    super(message, options);
    this.name = "RedisError";
  }
}

/**
 * An error reply from the server (`-ERR ...`, `-WRONGTYPE ...`, a bulk error). `prefix` is the
 * first word of the message (`ERR`, `MOVED`, `ASK`, `LOADING`, `NOSCRIPT`, ...).
 *
 * Inside an aggregate reply (a pipeline, `EXEC`) an error is delivered as a value of this class
 * instead of being thrown.
 *
 * @example Inspect the prefix
 * ```ts
 * import { ReplyError } from "@edge/redis";
 * const e = new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value");
 * console.log(e.prefix); // "WRONGTYPE"
 * ```
 */
export class ReplyError extends RedisError {
  /** A stable machine-readable code: `ERR_REDIS_REPLY`. */
  override readonly code: string = "ERR_REDIS_REPLY";
  /** The first word of the server's message, e.g. `ERR`, `MOVED`, `WRONGTYPE`. */
  readonly prefix: string;
  /**
   * Creates a reply error from the server's message.
   *
   * @param message The server's error message, without the leading `-`.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: RedisErrorOptions) {
    super(message, options);
    this.name = "ReplyError";
    const space = message.indexOf(" ");
    this.prefix = space === -1 ? message : message.slice(0, space);
  }
}

/**
 * The connection to the server failed, or was lost while the command was written but not yet
 * answered. The message names the endpoint.
 *
 * @example
 * ```ts
 * import { ConnectionError } from "@edge/redis";
 * const e = new ConnectionError('Cannot connect to "127.0.0.1:1": connection refused');
 * console.log(e.code); // "ERR_REDIS_CONNECTION"
 * ```
 */
export class ConnectionError extends RedisError {
  /** A stable machine-readable code: `ERR_REDIS_CONNECTION`. */
  override readonly code: string = "ERR_REDIS_CONNECTION";
  /**
   * Whether the command may have reached the server. `false`: it never left the client (refused
   * before queueing, still queued when the connection failed or closed, timed out while waiting
   * for a socket), so running it again cannot apply it twice. `true`: it was written to a socket
   * and may have been executed. Retries (cluster redirections, multi-database failover) re-run
   * only commands with `written === false`, unless the command is idempotent.
   */
  readonly written: boolean;
  /**
   * Creates a connection error.
   *
   * @param message What failed, naming the endpoint.
   * @param options The cause, if any, and whether the command may have been written.
   */
  constructor(message: string, options?: CommandErrorOptions) {
    super(message, options);
    this.name = "ConnectionError";
    this.written = options?.written ?? true;
  }
}

/**
 * A command, a connection attempt or a handshake did not complete in time.
 *
 * @example
 * ```ts
 * import { TimeoutError } from "@edge/redis";
 * const e = new TimeoutError('Command "GET" timed out after 2000 ms on "127.0.0.1:6379"');
 * console.log(e.code); // "ERR_REDIS_TIMEOUT"
 * ```
 */
export class TimeoutError extends RedisError {
  /** A stable machine-readable code: `ERR_REDIS_TIMEOUT`. */
  override readonly code: string = "ERR_REDIS_TIMEOUT";
  /**
   * Whether the command may have reached the server. `false`: it never left the client (refused
   * before queueing, still queued when the connection failed or closed, timed out while waiting
   * for a socket), so running it again cannot apply it twice. `true`: it was written to a socket
   * and may have been executed. Retries (cluster redirections, multi-database failover) re-run
   * only commands with `written === false`, unless the command is idempotent.
   */
  readonly written: boolean;
  /**
   * Creates a timeout error.
   *
   * @param message What timed out and after how long.
   * @param options The cause, if any, and whether the command may have been written.
   */
  constructor(message: string, options?: CommandErrorOptions) {
    super(message, options);
    this.name = "TimeoutError";
    this.written = options?.written ?? true;
  }
}

/**
 * The client was closed: the command was issued after `close()`, or was still queued when the
 * client closed.
 *
 * @example
 * ```ts
 * import { ClosedError } from "@edge/redis";
 * const e = new ClosedError("Cannot send the command: the client is closed");
 * console.log(e.code); // "ERR_REDIS_CLOSED"
 * ```
 */
export class ClosedError extends RedisError {
  /** A stable machine-readable code: `ERR_REDIS_CLOSED`. */
  override readonly code: string = "ERR_REDIS_CLOSED";
  /**
   * Whether the command may have reached the server. `false`: it never left the client (refused
   * before queueing, still queued when the connection failed or closed, timed out while waiting
   * for a socket), so running it again cannot apply it twice. `true`: it was written to a socket
   * and may have been executed. Retries (cluster redirections, multi-database failover) re-run
   * only commands with `written === false`, unless the command is idempotent.
   */
  readonly written: boolean;
  /**
   * Creates a closed error.
   *
   * @param message What could not be done.
   * @param options The cause, if any, and whether the command may have been written.
   */
  constructor(message: string, options?: CommandErrorOptions) {
    super(message, options);
    this.name = "ClosedError";
    this.written = options?.written ?? true;
  }
}

/**
 * The bytes received are not valid RESP. The connection that received them is reset.
 *
 * @example
 * ```ts
 * import { ProtocolError } from "@edge/redis";
 * const e = new ProtocolError('Cannot decode the reply: unexpected type byte "?"', 12);
 * console.log(e.offset); // 12
 * ```
 */
export class ProtocolError extends RedisError {
  /** A stable machine-readable code: `ERR_REDIS_PROTOCOL`. */
  override readonly code: string = "ERR_REDIS_PROTOCOL";
  /** Byte offset in the connection's input stream where the fault was found, or -1 if unknown. */
  readonly offset: number;
  /**
   * Creates a protocol error.
   *
   * @param message What is wrong with the input.
   * @param offset Byte offset of the fault in the input stream.
   * @param options The cause, if any.
   */
  constructor(message: string, offset = -1, options?: RedisErrorOptions) {
    super(message, options);
    this.name = "ProtocolError";
    this.offset = offset;
  }
}

/**
 * The circuit breaker of a database is open: the command was not sent.
 *
 * @example
 * ```ts
 * import { CircuitOpenError } from "@edge/redis";
 * const e = new CircuitOpenError('Cannot send the command: the circuit of "east" is open');
 * console.log(e.code); // "ERR_REDIS_CIRCUIT_OPEN"
 * ```
 */
export class CircuitOpenError extends RedisError {
  /** A stable machine-readable code: `ERR_REDIS_CIRCUIT_OPEN`. */
  override readonly code: string = "ERR_REDIS_CIRCUIT_OPEN";
  /**
   * Creates a circuit-open error.
   *
   * @param message Which circuit is open.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: RedisErrorOptions) {
    super(message, options);
    this.name = "CircuitOpenError";
  }
}
