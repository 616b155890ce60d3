/**
 * Splits a RESP byte stream into raw frames without decoding them.
 *
 * @module
 */

import { ProtocolError } from "../errors.ts";
import { Collector } from "./_collector.ts";
import { pos, Scanner, setInput } from "./_reader.ts";

/** A collection buffer larger than this is handed out (not copied) and replaced. */
const KEEP = 1 << 16;

/**
 * Splits a RESP2/RESP3 byte stream into the exact bytes of each complete top-level frame,
 * without building values: for proxies that forward or inspect frames. Attributes (`|`) are
 * delivered glued to the frame they annotate. Malformed input raises the same
 * {@linkcode ProtocolError} the decoder would.
 *
 * @example Forward frames, telling pushes apart
 * ```ts
 * import { RespFramer } from "@edge/redis/resp";
 * const framer = new RespFramer((frame, type) => {
 *   console.log(type === 0x3e ? "push" : "reply", frame.length);
 * });
 * framer.feed(new TextEncoder().encode(">2\r\n+a\r\n+b\r\n+OK\r\n"));
 * ```
 */
export class RespFramer {
  #onFrame: (frame: Uint8Array, type: number) => void;
  #offset = 0;
  /** The frame being collected across chunks. */
  #col = new Collector();
  /** Scans the frames that lie wholly inside a chunk. */
  #scanner = new Scanner();
  #error: ProtocolError | undefined;
  #feeding = false;
  #stop = false;
  /** Ends and types of the complete frames found in a chunk (reused). */
  #ends: number[] = [];
  #types: number[] = [];

  /**
   * Creates a framer.
   *
   * @param onFrame Called with each complete frame and the type byte of its value (`0x3e` for
   * a push; for a frame that starts with attributes, the type byte of the value they annotate).
   * The frame is a copy the framer never touches again (frames found in one chunk are views
   * of one copy: do not transfer their `buffer`).
   */
  constructor(onFrame: (frame: Uint8Array, type: number) => void) {
    this.#onFrame = onFrame;
  }

  /**
   * Splits the bytes of `chunk` into frames. The chunk may be reused by the caller once the
   * call returns. If the callback throws, the remaining frames are still delivered and the
   * first error is rethrown at the end.
   *
   * @param chunk The next bytes of the stream.
   * @throws {ProtocolError} The input is not valid RESP; `offset` is the stream offset of the
   * fault. The frames before the fault have been delivered; the framer refuses input until
   * {@linkcode RespFramer.reset}.
   * @throws {Error} Called from the framer's own callback.
   */
  feed(chunk: Uint8Array): void {
    if (this.#error !== undefined) throw this.#error;
    if (this.#feeding) {
      throw new Error("Cannot feed the framer from its callback: feed it afterwards");
    }
    this.#feeding = true;
    try {
      this.#feed(chunk);
    } catch (e) {
      if (e instanceof ProtocolError) this.#error = e;
      throw e;
    } finally {
      this.#feeding = false;
      this.#stop = false;
    }
  }

  /**
   * Forgets any partial frame and a previous protocol error; the stream offset restarts at 0.
   * Called from the callback, it also drops the rest of the chunk being split.
   */
  reset(): void {
    if (this.#feeding) this.#stop = true;
    this.#offset = 0;
    this.#col.clear();
    this.#error = undefined;
  }

  #feed(chunk: Uint8Array): void {
    const end = chunk.length;
    const base = this.#offset;
    const scanner = this.#scanner;
    let handlerError: unknown = undefined;
    let failed = false;
    const deliver = (frame: Uint8Array, type: number): void => {
      try {
        this.#onFrame(frame, type);
      } catch (e) {
        if (!failed) handlerError = e;
        failed = true;
      }
    };
    const col = this.#col;
    let p = 0;
    if (col.length > 0) {
      p = col.resume(chunk, 0);
      if (p >= 0) deliver(this.#takeCollected(), col.scanner.type);
    }
    if (p >= 0 && p < end && !this.#stop) {
      // find the complete frames first, then copy them out in one piece
      const ends = this.#ends;
      const types = this.#types;
      ends.length = 0;
      types.length = 0;
      let q = p;
      let fault: unknown = undefined;
      try {
        while (q < end) {
          scanner.reset();
          setInput(chunk, q, end, base, false, false);
          if (!scanner.scan()) break;
          q = pos();
          ends.push(q);
          types.push(scanner.type);
        }
      } catch (e) {
        fault = e;
      }
      if (ends.length > 0) {
        // a plain copy even when chunk is a subclass whose slice() is a view (a Buffer)
        const copy = new Uint8Array(chunk.subarray(p, q));
        let from = 0;
        for (let i = 0; i < ends.length && !this.#stop; i++) {
          const to = ends[i]! - p;
          deliver(copy.subarray(from, to), types[i]!);
          from = to;
        }
      }
      if (fault !== undefined) throw fault;
      if (q < end && !this.#stop) {
        // the frame at q continues in later chunks: collect it
        col.start(base + q);
        if (col.resume(chunk, q) >= 0) deliver(this.#takeCollected(), col.scanner.type);
      }
    }
    if (!this.#stop) this.#offset = base + end;
    if (failed) throw handlerError;
  }

  /** Hands out the frame the collector completed. */
  #takeCollected(): Uint8Array {
    const col = this.#col;
    const frameEnd = col.end;
    const acc = col.finish(KEEP);
    // a buffer dropped by the collector is the frame's own: hand out a view, not a copy
    return acc !== col.acc ? acc.subarray(0, frameEnd) : acc.slice(0, frameEnd);
  }
}
