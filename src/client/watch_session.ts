/**
 * `WATCH` sessions: optimistic transactions on one exclusive connection.
 *
 * @module
 */

import { RedisCommands } from "../commands/commands.ts";
import type { Transform } from "../commands/command_runner.ts";
import type { Connection } from "../connection/connection.ts";
import { formatEndpoint, sameEndpoint } from "../endpoint.ts";
import { ClosedError, ConnectionError } from "../errors.ts";
import type { RedisArgument } from "../resp/types.ts";
import { Transaction } from "./pipeline.ts";

/**
 * A command session on one exclusive connection, for `WATCH` transactions. Commands run on
 * that connection; `multi().exec()` runs the transaction and ends the session (the result is
 * `null` when a watched key changed). End it early with `release()`, or with `await using`.
 *
 * The session's connection is never reconnected under it: once its socket is lost, the server
 * has forgotten the `WATCH`, so every later command of the session and `exec()` reject with
 * `ConnectionError` (a transaction that ran anyway could overwrite another client's update).
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * const client = new RedisClient();
 * await using tx = await client.watch("counter");
 * const n = Number(await tx.get("counter") ?? 0);
 * const result = await tx.multi().set("counter", n + 1).exec(); // null if "counter" changed
 * ```
 */
export class WatchSession extends RedisCommands<string> implements AsyncDisposable {
  readonly #conn: Connection;
  readonly #release: (c: Connection) => void;
  readonly #blockingTimeout: (flags: number, blockMs: number | undefined) => number | undefined;
  #released = false;

  /**
   * @internal
   *
   * @ignore
   */
  constructor(
    conn: Connection,
    release: (c: Connection) => void,
    blockingTimeout: (flags: number, blockMs: number | undefined) => number | undefined,
  ) {
    super();
    this.#conn = conn;
    this.#release = release;
    this.#blockingTimeout = blockingTimeout;
  }

  /** Why the session cannot send, if it cannot. */
  #unusable(): Error | undefined {
    if (this.#released) return new ClosedError("Cannot send the command: the WATCH session ended");
    const socket = this.#conn.endpoint;
    const configured = this.#conn.configuredEndpoint;
    if (!sameEndpoint(socket, configured)) {
      // The client moved to another node (a sentinel failover) while this session's socket
      // stayed on the old one: its WATCH guards nothing the client now writes to, and a
      // transaction there could be acknowledged by a demoted master and lost.
      return new ConnectionError(
        `Cannot send the command: the WATCH session is on "${
          formatEndpoint(socket)
        }", but the client moved to "${formatEndpoint(configured)}"; start a new session`,
        { written: false },
      );
    }
    if (this.#conn.closed) {
      return new ConnectionError(
        `Cannot send the command: the WATCH session's connection to "${
          formatEndpoint(this.#conn.configuredEndpoint)
        }" was lost, and its WATCH with it`,
      );
    }
    return undefined;
  }

  /** Runs one command on the session's connection ({@linkcode RedisCommands._run}). */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown {
    const e = this.#unusable();
    if (e) return Promise.reject(e);
    return this.#conn.send(args, transform, flags, this.#blockingTimeout(flags, blockMs));
  }

  /**
   * Starts the transaction on this session's connection.
   *
   * @returns A transaction; its `exec()` ends the session.
   */
  multi(): Transaction {
    return new Transaction(
      (cmds) => {
        const e = this.#unusable();
        return e ? cmds.map(() => Promise.reject(e)) : this.#conn.sendAll(cmds);
      },
      () => this.release(),
    );
  }

  /**
   * Sends `UNWATCH` and returns the connection to the pool. Idempotent.
   *
   * @returns Resolves when released.
   */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    try {
      // With a command still unanswered (a timed-out BLPOP), UNWATCH would wait behind it: the
      // pool drops such a connection instead.
      if (!this.#conn.closed && this.#conn.idle) {
        await this.#conn.send(["UNWATCH"], undefined, 0);
      }
    } catch {
      // The connection is broken: the pool drops it.
    }
    this.#release(this.#conn);
  }

  /** Releases the session: `await using tx = await client.watch("k")`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
