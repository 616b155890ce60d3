/**
 * Incremental RESP2/RESP3 decoder.
 *
 * @module
 */

import { ProtocolError } from "../errors.ts";
import {
  decodeChunk,
  type Failure,
  HandlerFailure,
  INCOMPLETE,
  parseFrame,
  pos,
  Scanner,
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

const EMPTY = new Uint8Array(0);
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
   * of that frame decode as `Uint8Array` instead of `string`. Push frames always decode
   * strings as `string`. The arrays are copies the decoder never writes to again; small ones
   * may be views of one shared block (do not transfer their `buffer`).
   *
   * @default {false}
   */
  binary = false;

  #handlers: RespDecoderHandlers;
  /** Stream offset of the next chunk's first byte. */
  #offset = 0;
  /** Bytes of the frame being collected across chunks: acc[0..accLen). */
  #acc: Uint8Array = EMPTY;
  #accLen = 0;
  /** Stream offset of acc[0]. */
  #accBase = 0;
  /** Where the scanner resumes in acc. */
  #scanPos = 0;
  #binaryFrame = false;
  #scanner = new Scanner();
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
    }
  }

  /**
   * Forgets any partial frame and a previous protocol error; the stream offset restarts at 0.
   * Called from a handler, it also drops the rest of the chunk being decoded.
   */
  reset(): void {
    if (this.#feeding) this.#failure.stop = true;
    this.#offset = 0;
    this.#acc = EMPTY;
    this.#accLen = 0;
    this.#scanPos = 0;
    this.#scanner.reset();
    this.#error = undefined;
  }

  #feed(chunk: Uint8Array): void {
    const end = chunk.length;
    const base = this.#offset;
    const failure = this.#failure;
    failure.f = undefined;
    let p = 0;
    if (this.#accLen > 0) {
      p = this.#resume(chunk, 0);
      if (p >= 0) this.#flush(failure);
    }
    while (p >= 0 && p < end && !failure.stop) {
      p = decodeChunk(this, this.#handlers, chunk, p, end, base, failure);
      if (p === end || failure.stop) break;
      // the frame at p continues in later chunks: collect it
      this.#binaryFrame = this.binary;
      this.#accBase = base + p;
      this.#scanPos = 0;
      this.#scanner.reset();
      p = this.#resume(chunk, p);
      if (p >= 0) this.#flush(failure); // cannot happen: the parser saw it incomplete
    }
    if (!failure.stop) this.#offset = base + end;
    const f = failure.f as HandlerFailure | undefined;
    if (f !== undefined) {
      failure.f = undefined;
      throw f.error;
    }
  }

  /** Decodes the frame collected in acc[0..scanPos) and delivers it. */
  #flush(failure: Failure): void {
    const frameEnd = this.#scanPos;
    const acc = this.#acc;
    const big = acc.length > KEEP;
    this.#accLen = 0;
    if (big) this.#acc = EMPTY;
    setInput(acc, 0, frameEnd, this.#accBase, this.#binaryFrame, big);
    const v = parseFrame();
    if (v === INCOMPLETE) {
      throw new ProtocolError("Cannot decode the reply: inconsistent frame", this.#accBase);
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

  /**
   * Adds chunk bytes from `c` on to the collected frame until it is complete. Returns the chunk
   * index just after the frame, or -1 when the chunk was used up without completing it.
   */
  #resume(chunk: Uint8Array, c: number): number {
    const end = chunk.length;
    const scanner = this.#scanner;
    for (;;) {
      const need = scanner.need;
      // a bulk tells how many bytes it needs; otherwise take pieces growing with the frame, so
      // that a short frame tail does not copy a whole chunk and a long frame is scanned once
      const take = need > this.#accLen
        ? Math.min(need - this.#accLen, end - c)
        : Math.min(end - c, Math.max(4096, this.#accLen));
      this.#append(chunk, c, c + take);
      c += take;
      if (this.#accLen < need) return -1;
      setInput(this.#acc, this.#scanPos, this.#accLen, this.#accBase, false, false);
      const done = scanner.scan();
      this.#scanPos = pos();
      if (done) return c - (this.#accLen - this.#scanPos);
      if (c === end) return -1;
    }
  }

  #append(chunk: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (n === 0) return;
    const len = this.#accLen;
    if (len + n > this.#acc.length) {
      const cap = Math.max(len + n, this.#acc.length * 2, this.#scanner.need, 256);
      const next = new Uint8Array(cap);
      next.set(this.#acc.subarray(0, len));
      this.#acc = next;
    }
    this.#acc.set(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to), len);
    this.#accLen = len + n;
  }
}
