// Internal contract between the typed command methods and the executors that run them
// (the standalone client, the pipeline, the transaction, later the cluster client).
import type { RedisArgument, Transform } from "../resp/types.ts";

// The flags and the transform type, for the executors that import this contract.
export {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_NONE,
  FLAG_RAW,
  FLAG_READONLY,
} from "../command_flags.ts";
export type { Transform } from "../resp/types.ts";

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
