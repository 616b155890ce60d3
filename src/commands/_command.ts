// Internal contract between the typed command methods and the executors that run them
// (the standalone client, the pipeline, the transaction, later the cluster client).
import type { RedisArgument, RespValue } from "../resp/types.ts";

/** Converts a raw reply into the method's result type. Runs only for non-error replies. */
export type Transform = (reply: RespValue) => unknown;

/** No special handling. */
export const FLAG_NONE = 0;
/**
 * The command may block the connection (BLPOP, XREAD BLOCK, WAIT, ...): the standalone client
 * runs it on an exclusive pooled connection; its timeout is `blockMs` plus `commandTimeout`
 * (`blockMs` 0 means it blocks forever: no timeout).
 */
export const FLAG_BLOCKING = 1;
/** The command only reads (cluster: may be served by a replica). */
export const FLAG_READONLY = 2;
/** Reply bulk strings as `Uint8Array` (set by the binary view, not by command methods). */
export const FLAG_BINARY = 4;

/**
 * What every executor provides. A command method builds its argument list and calls
 * `_run(args, transform, flags, blockMs)`; the client returns a `Promise` of the transformed
 * reply, a pipeline records the command and returns itself.
 */
export interface CommandRunner {
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown;
}
