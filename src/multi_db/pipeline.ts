/**
 * Pipelines and transactions of the multi-database client: recorded here, run on the active
 * database when `exec()` is called, and re-run whole on the database failed over to only when
 * none of their commands was written.
 *
 * @module
 */

import { Pipeline, type QueuedCommand, Transaction } from "../client/pipeline.ts";

/** @internal Runs a recorded pipeline. */
export type PipelineRunner = (commands: QueuedCommand[]) => Promise<unknown[]>;
/** @internal Runs a recorded transaction. */
export type TransactionRunner = (commands: QueuedCommand[]) => Promise<unknown[] | null>;

const unused = (): never => {
  throw new TypeError("Cannot send: a multi-database batch runs only on exec()");
};

/**
 * A pipeline of a {@linkcode MultiDbClient}: the same typed methods as a `Pipeline`, sent
 * together to the active database by `exec()`. Results are values (a failed command yields its
 * error). When no command of it was written (the database failed before), it runs whole on the
 * database failed over to; otherwise the commands that were lost yield their
 * `ConnectionError` and are not run again.
 *
 * @example
 * ```ts ignore
 * const [ok, value] = await client.pipeline().set("x", "1").get("x").exec();
 * ```
 */
export class MultiDbPipeline extends Pipeline {
  readonly #runner: PipelineRunner;

  /** @internal */
  constructor(runner: PipelineRunner) {
    super(unused);
    this.#runner = runner;
  }

  /**
   * Sends every recorded command to the active database.
   *
   * @returns One result per command, in order: the transformed reply or an error value.
   */
  override exec(): Promise<unknown[]> {
    return this.#runner(this._queue.splice(0));
  }
}

/**
 * A transaction of a {@linkcode MultiDbClient}: `MULTI`, the commands, `EXEC`, on the active
 * database. When nothing of it was written it runs whole on the database failed over to; when
 * it may have been written and its outcome is unknown it fails with the connection error and
 * is never run twice.
 *
 * @example
 * ```ts ignore
 * const [a, b] = await client.multi().incr("a").incr("a").exec() ?? [];
 * ```
 */
export class MultiDbTransaction extends Transaction {
  readonly #runner: TransactionRunner;

  /** @internal */
  constructor(runner: TransactionRunner) {
    super(unused);
    this.#runner = runner;
  }

  /**
   * Runs the transaction on the active database.
   *
   * @returns The results, or `null` when aborted.
   */
  override exec(): Promise<unknown[] | null> {
    return this.#runner(this._queue.splice(0));
  }
}
