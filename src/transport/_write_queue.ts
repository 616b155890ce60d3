/**
 * A byte queue for transports whose socket write may be partial: chunks go in whole, come out
 * coalesced (several small chunks into one buffer, so many small writes cost one syscall) and are
 * consumed by however many bytes the socket took.
 *
 * @module
 */

/** Chunks smaller than this are merged with their neighbours before writing. */
const COALESCE_BELOW = 64 * 1024;
/** Upper bound of one merged buffer. */
const COALESCE_MAX = 256 * 1024;

/** A FIFO of byte chunks with coalescing and partial consumption. */
export class WriteQueue {
  /**
   * Slots `[#head, #tail)` hold the queue. The array is kept when the queue empties (its slots
   * are overwritten): a fresh array per write was one more object and backing store per command
   * on a serial workload.
   */
  #chunks: Uint8Array[] = [];
  #head = 0;
  #tail = 0;
  /** Bytes of `#chunks[#head]` already written. */
  #offset = 0;
  /** Bytes queued and not yet written. */
  bytes = 0;

  /** Appends a chunk (owned by the queue from now on). */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    const chunks = this.#chunks;
    if (this.#tail < chunks.length) chunks[this.#tail] = chunk;
    else chunks.push(chunk);
    this.#tail++;
    this.bytes += chunk.length;
  }

  /**
   * The next bytes to hand to the socket, or `undefined` when empty. Consecutive small chunks
   * are merged into one buffer (which then replaces them in the queue).
   */
  peek(): Uint8Array | undefined {
    if (this.#head === this.#tail) return undefined;
    const chunks = this.#chunks;
    const tail = this.#tail;
    const first = chunks[this.#head]!;
    const firstLen = first.length - this.#offset;
    if (firstLen >= COALESCE_BELOW || this.#head + 1 >= tail) {
      return this.#offset === 0 ? first : first.subarray(this.#offset);
    }
    let total = firstLen;
    let end = this.#head + 1;
    while (end < tail) {
      const len = chunks[end]!.length;
      if (total + len > COALESCE_MAX) break;
      total += len;
      end++;
    }
    if (end === this.#head + 1) return first.subarray(this.#offset);
    const merged = new Uint8Array(total);
    merged.set(first.subarray(this.#offset), 0);
    let at = firstLen;
    chunks[this.#head] = EMPTY;
    for (let i = this.#head + 1; i < end; i++) {
      const c = chunks[i]!;
      merged.set(c, at);
      at += c.length;
      chunks[i] = EMPTY;
    }
    // Replace the merged run by the merged buffer.
    this.#head = end - 1;
    chunks[this.#head] = merged;
    this.#offset = 0;
    return merged;
  }

  /** Marks `n` bytes from the front as written. */
  consume(n: number): void {
    this.bytes -= n;
    while (n > 0) {
      const first = this.#chunks[this.#head]!;
      const left = first.length - this.#offset;
      if (n < left) {
        this.#offset += n;
        return;
      }
      n -= left;
      this.#chunks[this.#head] = EMPTY;
      this.#head++;
      this.#offset = 0;
    }
    if (this.#head === this.#tail) {
      this.#head = this.#tail = 0;
      // a queue that once held many chunks does not keep a large array
      if (this.#chunks.length > 1024) this.#chunks = [];
    } else if (this.#head > 1024 && this.#head * 2 > this.#tail) {
      this.#chunks = this.#chunks.slice(this.#head, this.#tail);
      this.#tail -= this.#head;
      this.#head = 0;
    }
  }

  /** Drops everything queued. */
  clear(): void {
    this.#chunks = [];
    this.#head = this.#tail = 0;
    this.#offset = 0;
    this.bytes = 0;
  }
}

const EMPTY = new Uint8Array(0);
