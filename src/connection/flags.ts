/**
 * The command flags and the reply transform type under the path the connection's files import:
 * the definitions are `src/command_flags.ts` and `src/resp/types.ts` (below the connection, so
 * the command builders and the cache read them without importing the connection).
 *
 * @module
 */

export * from "../command_flags.ts";
export type { Transform } from "../resp/types.ts";
