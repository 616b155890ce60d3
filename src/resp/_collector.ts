// Internal: collects the bytes of a frame that straddles chunks, for the decoder and the framer.
import { pos, Scanner, setInput } from "./_reader.ts";

const EMPTY = new Uint8Array(0);

/**
 * Holds the bytes of one incomplete frame (acc[0..length)) and the scanner state that says
 * where it ends. Linear in the frame size whatever the chunking: the scanner resumes where it
 * stopped, a bulk's payload is copied without being scanned, and the buffer grows by doubling
 * (or straight to the size a large bulk announces).
 */
export class Collector {
  /** The collected bytes: acc[0..length). */
  acc: Uint8Array = EMPTY;
  /** Bytes collected; 0 when no frame is being collected. */
  length = 0;
  /** Stream offset of acc[0]. */
  base = 0;
  /** Where the scanner resumes in acc; once the frame is complete, where it ends. */
  end = 0;
  readonly scanner: Scanner = new Scanner();

  /** Starts collecting a frame that begins at stream offset `base`. */
  start(base: number): void {
    this.base = base;
    this.end = 0;
    this.length = 0;
    this.scanner.reset();
  }

  /** Forgets everything, including the buffer. */
  clear(): void {
    this.acc = EMPTY;
    this.length = 0;
    this.end = 0;
    this.scanner.reset();
  }

  /**
   * Ends the collection of the complete frame acc[0..end): drops the buffer when it is larger
   * than `keep` bytes (the caller keeps using the returned one).
   *
   * @returns The buffer holding the frame.
   */
  finish(keep: number): Uint8Array {
    const acc = this.acc;
    this.length = 0;
    if (acc.length > keep) this.acc = EMPTY;
    return acc;
  }

  /**
   * Adds chunk bytes from `c` on until the frame is complete. Returns the chunk index just
   * after the frame (`end` then marks the frame's end in acc), or -1 when the chunk was used
   * up without completing it.
   */
  resume(chunk: Uint8Array, c: number): number {
    const end = chunk.length;
    const scanner = this.scanner;
    for (;;) {
      const need = scanner.need;
      // a bulk tells how many bytes it needs; otherwise take pieces growing with the frame, so
      // that a short frame tail does not copy a whole chunk and a long frame is scanned once
      const take = need > this.length
        ? Math.min(need - this.length, end - c)
        : Math.min(end - c, Math.max(4096, this.length));
      this.#append(chunk, c, c + take);
      c += take;
      if (this.length < need) return -1;
      setInput(this.acc, this.end, this.length, this.base, false, false);
      const done = scanner.scan();
      this.end = pos();
      if (done) return c - (this.length - this.end);
      if (c === end) return -1;
    }
  }

  #append(chunk: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (n === 0) return;
    const len = this.length;
    if (len + n > this.acc.length) {
      const cap = Math.max(len + n, this.acc.length * 2, this.scanner.need, 256);
      const next = new Uint8Array(cap);
      next.set(this.acc.subarray(0, len));
      this.acc = next;
    }
    this.acc.set(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to), len);
    this.length = len + n;
  }
}
