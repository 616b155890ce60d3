/**
 * Pipelines and transactions of the multi-database client: recorded, then run on the active
 * database when `exec()` is called, and re-run whole on the database failed over to only when
 * none of their commands was written.
 *
 * @module
 */

import type { Pipeline, Transaction } from "../client/pipeline.ts";

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
export type MultiDbPipeline = Pipeline;

/**
 * A transaction of a {@linkcode MultiDbClient}: `MULTI` ... `EXEC` on the active database's
 * client at `exec()`; run again whole on the database failed over to only when nothing of it
 * was written.
 *
 * @example
 * ```ts ignore
 * const results = await client.multi().incr("a").incr("b").exec();
 * ```
 */
export type MultiDbTransaction = Transaction;
