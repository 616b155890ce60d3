// The binary view of a client: the same typed methods, bulk strings replied as Uint8Array.
import { RedisCommands } from "../commands/commands.ts";
import { FLAG_BINARY, type Transform } from "../commands/_command.ts";
import type { RedisArgument } from "../resp/types.ts";

/** Runs one command for a client (its `_run`). */
export type CommandRun = (
  args: RedisArgument[],
  transform: Transform | undefined,
  flags: number,
  blockMs?: number,
) => unknown;

/** Typed methods over another client's `_run`, with `FLAG_BINARY` on every command. */
export class BinaryView extends RedisCommands<Uint8Array> {
  readonly #run: CommandRun;
  constructor(run: CommandRun) {
    super();
    this.#run = run;
  }
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown {
    return this.#run(args, transform, flags | FLAG_BINARY, blockMs);
  }
}
