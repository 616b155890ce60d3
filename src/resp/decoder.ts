/**
 * Incremental RESP2/RESP3 decoder.
 *
 * @module
 */

import { ProtocolError } from "../errors.ts";
import { Collector } from "./_collector.ts";
import {
  decodeChunk,
  type Failure,
  HandlerFailure,
  INCOMPLETE,
  parseFrame,
  release,
  setInput,
} from "./_reader.ts";
import * as reader from "./_reader.ts";
import type { RespValue } from "./types.ts";

/** Callbacks of a {@linkcode RespDecoder}. */
export interface RespDecoderHandlers {
  /**
   * Called for every top-level frame that is not a push, in stream order. A top-level error
   * arrives as a `ReplyError` value (it is not thrown).
   *
   * @param value The decoded value.
   * @param attributes The attributes (`|`) sent right before the value, if any.
   */
  onReply(value: RespValue, attributes?: Map<RespValue, RespValue>): void;
  /**
   * Called for every top-level push (`>`) frame. Strings in push frames are always `string`.
   *
   * @param frame The push frame's items, e.g. `["message", "news", "hello"]`.
   */
  onPush(frame: RespValue[]): void;
}

/** An accumulation buffer larger than this is dropped after its frame. */
const KEEP = 1 << 20;

/**
 * Decodes a stream of RESP2/RESP3 bytes into values, resuming wherever a chunk ended.
 *
 * Frames that lie wholly inside a chunk are decoded straight from it; a frame that straddles
 * chunks is collected (in linear time, whatever its size) and decoded once complete.
 *
 * @example Decode replies from chunks
 * ```ts
 * import { RespDecoder } from "@edge/redis/resp";
 * const replies: unknown[] = [];
 * const decoder = new RespDecoder({
 *   onReply: (value) => replies.push(value),
 *   onPush: (frame) => console.log("push", frame),
 * });
 * decoder.feed(new TextEncoder().encode("+OK\r\n$5\r\nhel"));
 * decoder.feed(new TextEncoder().encode("lo\r\n"));
 * console.log(replies); // ["OK", "hello"]
 * ```
 */
export class RespDecoder {
  /**
   * Read at the start of each top-level frame: when `true`, bulk, simple and verbatim strings
   * of that frame decode as `Uint8Array` instead of `string`. Push frames follow
   * {@linkcode RespDecoder.pushBinary} instead. The arrays are copies the decoder never writes to
   * again; small ones may be views of one shared block (do not transfer their `buffer`).
   *
   * @default {false}
   */
  binary = false;

  /**
   * Read at the start of each push frame (`>`): when `true`, its strings decode as `Uint8Array`
   * (binary pub/sub messages), otherwise as `string`.
   *
   * @default {false}
   */
  pushBinary = false;

  #handlers: RespDecoderHandlers;
  /** Stream offset of the next chunk's first byte. */
  #offset = 0;
  /** The frame being collected across chunks. */
  #col = new Collector();
  #binaryFrame = false;
  #pushBinaryFrame = false;
  #error: ProtocolError | undefined;
  #failure: Failure = { f: undefined, stop: false };
  #feeding = false;

  /**
   * Creates a decoder.
   *
   * @param handlers Where decoded frames go.
   */
  constructor(handlers: RespDecoderHandlers) {
    this.#handlers = handlers;
  }

  /**
   * Decodes the bytes of `chunk`, calling the handlers for every frame it completes. The chunk
   * may be reused by the caller once the call returns. If a handler throws, the remaining
   * frames are still decoded and the first handler error is rethrown at the end.
   *
   * @param chunk The next bytes of the stream.
   * @throws {ProtocolError} The input is not valid RESP; `offset` is the stream offset of the
   * fault. The frames before the fault have been delivered; the decoder refuses input until
   * {@linkcode RespDecoder.reset}.
   * @throws {Error} Called from one of this decoder's own handlers.
   */
  feed(chunk: Uint8Array): void {
    if (this.#error !== undefined) throw this.#error;
    if (this.#feeding) {
      throw new Error("Cannot feed the decoder from one of its handlers: feed it afterwards");
    }
    this.#feeding = true;
    try {
      this.#feed(chunk);
    } catch (e) {
      if (e instanceof ProtocolError) this.#error = e;
      throw e;
    } finally {
      this.#feeding = false;
      this.#failure.stop = false;
      release();
    }
  }

  /**
   * Forgets any partial frame and a previous protocol error; the stream offset restarts at 0.
   * Called from a handler, it also drops the rest of the chunk being decoded.
   */
  reset(): void {
    if (this.#feeding) this.#failure.stop = true;
    this.#offset = 0;
    this.#col.clear();
    this.#error = undefined;
  }

  #feed(chunk: Uint8Array): void {
    const end = chunk.length;
    const base = this.#offset;
    const failure = this.#failure;
    failure.f = undefined;
    let p = 0;
    const col = this.#col;
    if (col.length > 0) {
      p = col.resume(chunk, 0);
      if (p >= 0) this.#flush(failure);
    }
    while (p >= 0 && p < end && !failure.stop) {
      p = decodeChunk(this, this.#handlers, chunk, p, end, base, failure);
      if (p === end || failure.stop) break;
      // the frame at p continues in later chunks: collect it
      this.#binaryFrame = this.binary;
      this.#pushBinaryFrame = this.pushBinary;
      col.start(base + p);
      p = col.resume(chunk, p);
      if (p >= 0) this.#flush(failure); // cannot happen: the parser saw it incomplete
    }
    if (!failure.stop) this.#offset = base + end;
    const f = failure.f as HandlerFailure | undefined;
    if (f !== undefined) {
      failure.f = undefined;
      throw f.error;
    }
  }

  /** Decodes the frame the collector completed and delivers it. */
  #flush(failure: Failure): void {
    const col = this.#col;
    const frameEnd = col.end;
    const base = col.base;
    const acc = col.finish(KEEP);
    // a buffer dropped by the collector is the frame's own: large byte values may view it
    setInput(acc, 0, frameEnd, base, this.#binaryFrame, acc !== col.acc, this.#pushBinaryFrame);
    const v = parseFrame();
    if (v === INCOMPLETE) {
      throw new ProtocolError("Cannot decode the reply: inconsistent frame", base);
    }
    const attrs = reader.ATTRS;
    const type = reader.TYPE;
    try {
      if (type === 0x3e) this.#handlers.onPush(v as RespValue[]);
      else if (attrs === undefined) this.#handlers.onReply(v);
      else this.#handlers.onReply(v, attrs);
    } catch (e) {
      if (failure.f === undefined) failure.f = new HandlerFailure(e);
    }
  }
}
