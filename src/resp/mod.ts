/**
 * RESP2/RESP3 codec: a command encoder, an incremental decoder that resumes wherever a chunk
 * ended, and a framer that splits a byte stream into raw frames. Pure code: no sockets, no
 * timers, no runtime APIs, so it also serves servers and proxies.
 *
 * - {@linkcode RespEncoder} / {@linkcode encodeCommand}: commands as arrays of bulk strings.
 * - {@linkcode encodeValue}, {@linkcode encodePush}, {@linkcode encodeSimple}: replies and
 *   pushes, as a server writes them.
 * - {@linkcode RespDecoder}: every RESP2/RESP3 type, streamed strings and aggregates,
 *   attributes beside the reply they annotate, pushes apart.
 * - {@linkcode RespFramer}: exact frame boundaries without building values.
 *
 * @example Round trip
 * ```ts
 * import { encodeCommand, RespDecoder } from "@edge/redis/resp";
 * const decoder = new RespDecoder({
 *   onReply: (value) => console.log(value), // ["GET", "k"]
 *   onPush: () => {},
 * });
 * decoder.feed(encodeCommand(["GET", "k"]));
 * ```
 *
 * @module
 */

export { encodeCommand, encodePush, encodeSimple, encodeValue, RespEncoder } from "./encoder.ts";
export { RespDecoder, type RespDecoderHandlers } from "./decoder.ts";
export { RespFramer } from "./framer.ts";
export type { RedisArgument, RespValue } from "./types.ts";
export { ProtocolError, RedisError, type RedisErrorOptions, ReplyError } from "../errors.ts";
