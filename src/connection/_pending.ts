// The pending entry: one command between `send()` and its reply, in the unsent queue or in a
// socket's in-flight queue. Entries are recycled: under a burst, 100 000 short-lived objects
// promoted to the old generation cost more in GC than the rest of the client together.
import type { RedisArgument } from "../resp/types.ts";
import type { Transform } from "../resp/types.ts";

/**
 * Told of every error a command's caller receives (the error-count metric), without a
 * promise reaction per command.
 */
export type ErrorTap = (error: Error, cmd: RedisArgument | undefined) => void;

/** A command in a queue. */
export interface Pending {
  /** The arguments, kept until the reply (a command refused with LOADING is sent again). */
  args: RedisArgument[] | undefined;
  /** The command name (first argument), for error messages. */
  cmd: RedisArgument | undefined;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  transform: Transform | undefined;
  flags: number;
  /** Send-to-reply timeout, ms; 0 = none. */
  timeout: number;
  /**
   * Absolute deadline: for a queued command, its queue bound; for a written one, send + timeout.
   * 0 = none.
   */
  deadline: number;
  /** true once settled by a timeout or by close; its reply, if any, is discarded. */
  done: boolean;
  /** Encoded size, counted while queueing. */
  bytes: number;
  /** Subscribe family: confirmation pushes still expected before the command is answered. */
  pushes: number;
  /** Told of the error the command is rejected with (see {@linkcode rejectPending}). */
  tap: ErrorTap | undefined;
}

const POOL_MAX = 65_536;
const pool: Pending[] = [];

/** A settled entry's callbacks. */
export const noop = (): void => {};

let capturedResolve: (value: unknown) => void = noop;

/**
 * The executor of `new Promise(captureResolvers)`: one shared function, so no closure is
 * allocated per command; {@linkcode acquirePending} picks the captured `resolve` up.
 *
 * Only `resolve` is kept: a command is rejected by resolving its promise with a
 * {@linkcode Rejection} (see {@linkcode rejectThroughResolve}), so the `reject` function dies
 * young instead of living as long as the command is in flight. Measured with `bench/alloc.ts`
 * (get-in-flight): on Bun one function less per command waiting for its reply.
 */
export function captureResolvers(resolve: (value: unknown) => void): void {
  capturedResolve = resolve;
}

/**
 * A thenable that rejects whatever adopts it: a promise resolved with it ends rejected with
 * `error` (two microtask turns later than a direct `reject`).
 */
class Rejection {
  readonly error: Error;
  constructor(error: Error) {
    this.error = error;
  }
  then(_resolve: unknown, reject: (error: Error) => void): void {
    reject(this.error);
  }
}

/** The `reject` of every entry: rejects the command's promise through its `resolve`. */
function rejectThroughResolve(this: Pending, error: Error): void {
  this.resolve(new Rejection(error));
}

/**
 * An entry for the promise created last with `captureResolvers`, from the pool if possible.
 * With `errorsAsValues`, errors resolve the promise instead of rejecting it (and `tap` is not
 * told of them).
 */
export function acquirePending(
  args: RedisArgument[],
  transform: Transform | undefined,
  flags: number,
  timeout: number,
  bytes: number,
  pushes: number,
  errorsAsValues: boolean,
  tap?: ErrorTap,
): Pending {
  const reject = errorsAsValues ? capturedResolve : rejectThroughResolve;
  if (errorsAsValues) tap = undefined;
  let p = pool.pop();
  if (p === undefined) {
    p = {
      args,
      cmd: args[0],
      resolve: capturedResolve,
      reject,
      transform,
      flags,
      timeout,
      deadline: 0,
      done: false,
      bytes,
      pushes,
      tap,
    };
  } else {
    p.args = args;
    p.cmd = args[0];
    p.resolve = capturedResolve;
    p.reject = reject;
    p.transform = transform;
    p.flags = flags;
    p.timeout = timeout;
    p.deadline = 0;
    p.done = false;
    p.bytes = bytes;
    p.pushes = pushes;
    p.tap = tap;
  }
  return p;
}

/** Returns an answered entry to the pool (its callbacks already taken by the caller). */
export function releasePending(p: Pending): void {
  p.resolve = p.reject = noop;
  p.transform = undefined;
  p.tap = undefined;
  p.cmd = undefined;
  p.args = undefined;
  if (pool.length < POOL_MAX) pool.push(p);
}

/**
 * Rejects a command with `error`, telling its tap first. Every rejection of a queued command
 * goes through here (a tap that throws loses nothing: the command is rejected all the same).
 *
 * @param p The command's entry (still holding its callbacks).
 * @param error What its caller receives.
 */
export function rejectPending(p: Pending, error: Error): void {
  if (p.tap !== undefined) tellTap(p.tap, error, p.cmd);
  p.reject(error);
}

/**
 * Tells `tap` of `error`; a tap that throws is ignored (its failure is its owner's to report).
 *
 * @param tap The tap.
 * @param error What the caller receives.
 * @param cmd The command's name.
 */
export function tellTap(tap: ErrorTap, error: Error, cmd: RedisArgument | undefined): void {
  try {
    tap(error, cmd);
  } catch {
    // ignored: see above
  }
}
