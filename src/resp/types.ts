/**
 * Value types of the RESP codec.
 *
 * @module
 */

import type { ReplyError } from "../errors.ts";

/**
 * A command argument: strings are encoded as UTF-8, numbers in their decimal form, byte arrays
 * as they are (binary-safe).
 *
 * @example
 * ```ts
 * import type { RedisArgument } from "@edge/redis/resp";
 * const args: RedisArgument[] = ["SET", "k", new Uint8Array([0, 13, 10]), 42];
 * ```
 */
export type RedisArgument = string | number | Uint8Array;

/**
 * A decoded RESP2/RESP3 value.
 *
 * - simple string, verbatim string, bulk string: `string` (or `Uint8Array` when decoding binary)
 * - integer: `number` (a `bigint` when outside the safe integer range)
 * - double: `number` (`Infinity`, `-Infinity`, `NaN` included)
 * - big number: `bigint`
 * - boolean: `boolean`
 * - null (`_`, `$-1`, `*-1`): `null`
 * - array, push: `RespValue[]`
 * - map: `Map`; set: `Set`
 * - error (simple or bulk): a {@linkcode ReplyError} value when inside an aggregate
 *
 * @example
 * ```ts
 * import type { RespValue } from "@edge/redis/resp";
 * const v: RespValue = new Map<RespValue, RespValue>([["server", "redis"]]);
 * ```
 */
export type RespValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | Uint8Array
  | ReplyError
  | RespValue[]
  | Map<RespValue, RespValue>
  | Set<RespValue>;

/**
 * Converts a raw reply into a command method's result type. Runs only for non-error replies.
 *
 * @param reply The decoded reply.
 * @returns The method's result.
 */
export type Transform = (reply: RespValue) => unknown;
