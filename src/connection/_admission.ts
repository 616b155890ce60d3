// Admission of a command to a Connection's queue: the checks that refuse it before it gets a
// pending entry (closed, bad arguments, reserved, queue bounds), its encoded size for the byte
// bound, and the errors of commands that never left the queue. Pure functions: the queue itself
// and the per-command path stay in the Connection.
import { ClosedError, ConnectionError, TimeoutError } from "../errors.ts";
import type { RedisArgument } from "../resp/types.ts";
import { type Endpoint, formatEndpoint } from "../endpoint.ts";
import { FLAG_RAW } from "../command_flags.ts";
import { reservedCommandError } from "./reserved.ts";
import { type Pending, rejectPending } from "./_pending.ts";

/**
 * The name of a command for messages: its first argument, upper-cased.
 *
 * @param a The first argument.
 * @returns The name, or "?" when there is none.
 */
export function nameOf(a: RedisArgument | undefined): string {
  if (a === undefined) return "?";
  return typeof a === "string" ? a.toUpperCase() : typeof a === "number" ? String(a) : "?";
}

const NON_ASCII = /[\u0080-\uffff]/;

function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/**
 * The RESP-encoded size of a command: exact for byte and ASCII arguments, an upper bound (3
 * bytes per UTF-16 unit) for other strings.
 *
 * @param args The command and its arguments.
 * @returns The size in bytes.
 * @example
 * ```ts ignore
 * encodedBytes(["SET", "k", "value"]); // 31
 * ```
 */
export function encodedBytes(args: RedisArgument[]): number {
  let n = 3 + digits(args.length);
  for (const a of args) {
    const len = typeof a === "string"
      ? (NON_ASCII.test(a) ? a.length * 3 : a.length)
      : typeof a === "number"
      ? String(a).length
      : a.length;
    n += 5 + digits(len) + len;
  }
  return n;
}

/**
 * The refusal of a command sent to a closed or closing connection.
 *
 * @param args The command.
 * @param endpoint Where the connection was.
 * @returns A `ClosedError` that never counts as written.
 */
export function closedError(args: RedisArgument[], endpoint: Endpoint): ClosedError {
  return new ClosedError(
    `Cannot send "${nameOf(args[0])}": the connection to "${formatEndpoint(endpoint)}" is closed`,
    { written: false },
  );
}

/**
 * Why a command cannot be sent on an open connection (bad arguments, reserved), if so.
 *
 * @param args The command and its arguments.
 * @param flags Its `FLAG_*` bits (with `FLAG_RAW`, the reserved commands are refused).
 * @returns The error, or `undefined` when the command may be sent.
 */
export function argumentsError(args: RedisArgument[], flags: number): Error | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (typeof a !== "string" && typeof a !== "number" && !(a instanceof Uint8Array)) {
      return new TypeError(
        `Cannot send "${nameOf(args[0])}": argument ${i} is ${
          a === null ? "null" : typeof a
        }, expected a string, a number or a Uint8Array`,
      );
    }
  }
  if (args.length === 0) return new TypeError("Cannot send an empty command");
  if ((flags & FLAG_RAW) !== 0) return reservedCommandError(args);
  return undefined;
}

/** The queue bounds of a Connection and what waits in its queue now. */
export interface QueueLoad {
  /** Commands waiting (those a loading server refused included). */
  waiting: number;
  /** Commands waiting to be written (those a loading server refused left out). */
  unsent: number;
  /** Encoded bytes waiting. */
  bytes: number;
  /** `maxQueueLength`. */
  maxLength: number;
  /** `maxQueueBytes`. */
  maxBytes: number;
}

/**
 * Why `count` more commands (`bytes` encoded) cannot wait in the queue, if so (called once the
 * caller saw a bound passed: it is not on the per-command path).
 *
 * @param args The first of the commands.
 * @param count How many commands.
 * @param bytes Their encoded size.
 * @param load The queue now.
 * @param endpoint Where the queue waits for.
 * @returns A `ConnectionError` that never counts as written, or `undefined`.
 */
export function queueFullError(
  args: RedisArgument[],
  count: number,
  bytes: number,
  load: QueueLoad,
  endpoint: Endpoint,
): ConnectionError | undefined {
  let why: string | undefined;
  if (load.waiting + count > load.maxLength) {
    why = `${load.unsent} commands already wait for "${
      formatEndpoint(endpoint)
    }" (maxQueueLength ${load.maxLength})`;
  } else if (load.bytes + bytes > load.maxBytes) {
    why = `${bytes} bytes, and ${load.bytes} bytes already wait for "${
      formatEndpoint(endpoint)
    }" (maxQueueBytes ${load.maxBytes})`;
  }
  if (why === undefined) return undefined;
  return unwrittenError(`Cannot queue "${nameOf(args[0])}": ${why}`);
}

/**
 * A `ConnectionError` that never counts as written (`written: false`): the command never left
 * the queue, or the connect attempt failed before any command was written.
 *
 * @param message The message.
 * @param cause The cause, when one is given (even `undefined`: the option is set as given).
 * @returns The error.
 */
export function unwrittenError(message: string, ...cause: [unknown?]): ConnectionError {
  return new ConnectionError(
    message,
    cause.length > 0 ? { cause: cause[0], written: false } : { written: false },
  );
}

/**
 * `Cannot connect to "<name>": <detail>`, never written (see {@linkcode unwrittenError}).
 *
 * @param name The endpoint, formatted.
 * @param detail What went wrong.
 * @param cause The cause, when one is given.
 * @returns The error.
 */
export function cannotConnect(name: string, detail: string, ...cause: [unknown?]): ConnectionError {
  return unwrittenError(`Cannot connect to "${name}": ${detail}`, ...cause);
}

/**
 * The same error, marked as never written (for commands that never left the queue).
 *
 * @param e The error.
 * @returns `e`, or a copy of it with `written: false`.
 */
export function asUnwritten(e: Error): Error {
  if (!(e instanceof ConnectionError || e instanceof TimeoutError || e instanceof ClosedError)) {
    return e;
  }
  if (!e.written) return e;
  const o = { cause: e.cause, written: false };
  return e instanceof TimeoutError
    ? new TimeoutError(e.message, o)
    : e instanceof ClosedError
    ? new ClosedError(e.message, o)
    : new ConnectionError(e.message, o);
}

/**
 * Gives up a queued command when `signal` aborts: rejects it with the signal's `reason`. A
 * command not yet written is never written; one already written keeps its place (its reply is
 * discarded, like after a timeout). The listener goes when the command settles.
 *
 * @param p The command's entry.
 * @param signal The caller's signal (not aborted yet).
 */
export function bindSignal(p: Pending, signal: AbortSignal): void {
  const resolve = p.resolve;
  const reject = p.reject;
  const onAbort = (): void => {
    if (p.done) return;
    // Still queued: never written. Written: the slot stays, its late reply is discarded.
    p.done = true;
    rejectPending(p, signal.reason);
  };
  p.resolve = (v) => {
    signal.removeEventListener("abort", onAbort);
    resolve(v);
  };
  p.reject = (e) => {
    signal.removeEventListener("abort", onAbort);
    reject.call(p, e); // the entry's `reject` rejects through `p.resolve`
  };
  signal.addEventListener("abort", onAbort, { once: true });
}
