/**
 * Runs commands of the multi-database client on the active database: through its failure
 * detector, retrying only what certainly was not written, on the same database with backoff
 * or at once on the database failed over to.
 *
 * @module
 */

import { ClosedError, ConnectionError, TimeoutError } from "../errors.ts";
import { CircuitOpenError } from "../errors.ts";
import type { CommandRetryOptions } from "./config.ts";
import type { Database } from "./database.ts";

/**
 * Whether a failed command certainly never left the client, so running it again (here or on
 * another database) cannot apply it twice. Reads the error's `written` flag; errors without it
 * are judged by the messages of the errors raised before a write.
 *
 * @param error What the command failed with.
 * @returns `true` only for errors of a command that was not written.
 *
 * @example
 * ```ts
 * import { wasNotWritten } from "@edge/redis/multi-db";
 * import { ReplyError } from "@edge/redis";
 * console.log(wasNotWritten(new ReplyError("ERR no"))); // false: the server ran it
 * ```
 */
export function wasNotWritten(error: unknown): boolean {
  if (error instanceof CircuitOpenError) return true;
  if (
    !(error instanceof ConnectionError || error instanceof TimeoutError ||
      error instanceof ClosedError)
  ) {
    return false;
  }
  const written = (error as { written?: unknown }).written;
  if (typeof written === "boolean") return !written;
  // Errors raised before anything was written, by their messages.
  return /^Cannot send |^Cannot queue |was not sent within/.test(error.message);
}

/** Internal: What the executor needs of the client. */
export interface ExecutorHost {
  /**
   * The active database, its breaker having granted the call; throws when none can serve.
   * `blocking`: a command that may hold its connection for long (BLPOP, XREAD BLOCK), which
   * must not be a half-open breaker's one trial call.
   */
  acquire(blocking: boolean): Promise<Granted>;
  /**
   * Records a failure of `db` (and fails over when it opens the breaker); `generation`: the
   * breaker's generation when the call was granted (a stale outcome is dropped).
   */
  record(db: Database, error: unknown, generation?: number): Promise<void>;
  /** Records a success of `db` (`blocking`: the command was not the breaker's trial). */
  success(db: Database, blocking: boolean, generation?: number): void;
  /** The active database now. */
  current(): Database | undefined;
  /** Waits `ms`; rejects when the client closes meanwhile. */
  sleep(ms: number): Promise<void>;
  /** Whether the client is closed. */
  closed(): boolean;
  /** Number of databases (bounds the moves between databases). */
  size(): number;
}

/** Internal: A database whose breaker granted a call, with the breaker's generation then. */
export interface Granted {
  db: Database;
  generation: number;
}

/** Internal: Retry settings of the executor. */
export interface ExecutorSettings {
  retry: Required<CommandRetryOptions>;
  retryOnFailover: boolean;
  random?: () => number;
}

/**
 * The delay before retry number `retry` (1 for the first): `initialDelay * backoffMultiplier^(retry-1)`,
 * with jitter in its upper half.
 *
 * @param retry The 1-based retry number.
 * @param options The retry settings.
 * @param random A source of numbers in [0, 1).
 * @returns The delay in ms.
 *
 * @example
 * ```ts
 * import { commandRetryDelay } from "@edge/redis/multi-db";
 * const ms = commandRetryDelay(2, { maxAttempts: 3, initialDelay: 500, backoffMultiplier: 2 }, () => 1);
 * console.log(ms); // 1000
 * ```
 */
export function commandRetryDelay(
  retry: number,
  options: Required<CommandRetryOptions>,
  random: () => number = Math.random,
): number {
  const d = options.initialDelay * options.backoffMultiplier ** Math.max(0, retry - 1);
  return Math.round(d / 2 + (random() * d) / 2);
}

/** @internal */
export class CommandExecutor {
  readonly #host: ExecutorHost;
  readonly #s: ExecutorSettings;

  constructor(host: ExecutorHost, settings: ExecutorSettings) {
    this.#host = host;
    this.#s = settings;
  }

  /**
   * Runs `op` on the active database. A failure that certainly was not written is retried:
   * at once on another database when the active one changed meanwhile (only with
   * `retryOnFailover`), else on the same one after a backoff, `maxAttempts` attempts in all.
   * Anything else is thrown as is.
   */
  async run<T>(op: (db: Database) => Promise<T>, blocking = false): Promise<T> {
    const host = this.#host;
    let attempts = 0;
    let moves = 0;
    for (;;) {
      const { db, generation } = await host.acquire(blocking);
      let value: T;
      try {
        value = await op(db);
      } catch (e) {
        await host.record(db, e, generation);
        if (host.closed() || !wasNotWritten(e)) throw e;
        const now = host.current();
        if (now !== undefined && now !== db) {
          // The active database changed meanwhile: retry there at once, or not at all.
          if (!this.#s.retryOnFailover || moves >= host.size() + this.#s.retry.maxAttempts) {
            throw e;
          }
          moves++;
          continue;
        }
        if (++attempts >= this.#s.retry.maxAttempts) throw e;
        await host.sleep(commandRetryDelay(attempts, this.#s.retry, this.#s.random));
        continue;
      }
      host.success(db, blocking, generation);
      return value;
    }
  }
}
