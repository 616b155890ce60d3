// The command encoder of a connection: RESP arrays of bulk strings into a reusable, growable
// buffer. RespEncoder (encoder.ts, the public one) wraps it and adds the reply and push encoding
// that servers and proxies use, so that a client's bundle carries only this.
import { numberText } from "./number_text.ts";
import type { RedisArgument } from "./types.ts";

const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);
const CR = 13;
const LF = 10;

/** Largest block allocated for batch-size reasons (a larger command still gets its room). */
const MAX_BLOCK = 4 * 1024 * 1024;

/** Strings up to this many UTF-16 units are written by a plain loop when they are ASCII. */
const SHORT = 64;

/** Number of decimal digits of a non-negative safe integer. */
function digits(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10000) return 4;
  if (n < 100000) return 5;
  if (n < 1000000) return 6;
  if (n < 10000000) return 7;
  if (n < 100000000) return 8;
  if (n < 1000000000) return 9;
  return String(n).length;
}

function argumentError(value: unknown, index: number): TypeError {
  const kind = value === null ? "null" : typeof value;
  return new TypeError(
    `Cannot encode the command: argument ${index} is ${kind}, expected a string, a number or a Uint8Array`,
  );
}

/**
 * The command half of {@linkcode RespEncoder} (`writeCommand`, `take`, `length`), which is all a
 * client writes: a reusable, growable byte buffer. The connection uses it alone, so that a
 * client's bundle carries none of the reply and push encoding servers and proxies use.
 */
export class CommandEncoder {
  #buf: Uint8Array;
  /** Start of the pending bytes in #buf. */
  #start = 0;
  /** End of the pending bytes in #buf. */
  #end = 0;
  #capacity: number;
  /** Recent size of a taken batch (decaying maximum). */
  #batch = 0;

  /**
   * Creates an encoder.
   *
   * @param initialCapacity Size in bytes of each memory block (a block grows to fit a large
   * command).
   * @default {16384}
   */
  constructor(initialCapacity: number = 16384) {
    if (!Number.isInteger(initialCapacity) || initialCapacity < 16) {
      throw new RangeError(
        `Cannot create the encoder: initialCapacity must be an integer >= 16, got ${initialCapacity}`,
      );
    }
    this.#capacity = initialCapacity;
    this.#buf = new Uint8Array(initialCapacity);
  }

  /**
   * Number of bytes written and not taken yet.
   *
   * @returns The pending byte count.
   */
  get length(): number {
    return this.#end - this.#start;
  }

  /**
   * Hands over the pending bytes. The returned array belongs to the caller: the encoder never
   * writes to it again. The pending length drops to 0.
   *
   * @returns The pending bytes (possibly empty).
   */
  take(): Uint8Array {
    const out = this.#buf.subarray(this.#start, this.#end);
    const n = out.length;
    this.#batch = n > this.#batch ? n : this.#batch - (this.#batch >> 3) + (n >> 3);
    // start the next batch in a new block unless a typical batch still fits in this one
    if (this.#buf.length - this.#end < this.#batch) {
      this.#buf = EMPTY;
      this.#end = 0;
    }
    this.#start = this.#end;
    return out;
  }

  /** Makes room for `n` more bytes after the pending ones. */
  #reserve(n: number): void {
    if (this.#end + n <= this.#buf.length) return;
    const pending = this.#end - this.#start;
    // a new block holds about two batches of the size recently taken, so that a batch seldom
    // outgrows its block (each growth is an allocation plus a copy)
    const size = Math.max(
      this.#capacity,
      pending === 0 ? n : (pending + n) * 2,
      Math.min(this.#batch + (this.#batch >> 1), MAX_BLOCK),
    );
    const next = new Uint8Array(size);
    if (pending > 0) next.set(this.#buf.subarray(this.#start, this.#end));
    this.#buf = next;
    this.#start = 0;
    this.#end = pending;
  }

  /**
   * Appends a command as a RESP array of bulk strings: `*N\r\n$len\r\narg\r\n...`. Strings are
   * written as UTF-8, numbers in decimal (`Infinity` as `+inf`), byte arrays as they are.
   *
   * @param args The command name and its arguments, e.g. `["SET", "k", "v"]`.
   * @throws {TypeError} An argument is not a string, a number or a `Uint8Array`.
   * @throws {RangeError} A number argument is `NaN`.
   */
  writeCommand(args: readonly RedisArgument[]): void {
    const count = args.length;
    // upper bound of the encoded size
    let size = 3 + digits(count);
    for (let i = 0; i < count; i++) {
      const a = args[i];
      if (typeof a === "string") size += a.length * 3 + 16;
      else if (typeof a === "number") size += 40;
      else if (a instanceof Uint8Array) size += a.length + 16;
      else throw argumentError(a, i);
    }
    this.#reserve(size);
    const buf = this.#buf;
    let p = this.#end;
    buf[p++] = 0x2a;
    p = writeUint(buf, p, count);
    buf[p++] = CR;
    buf[p++] = LF;
    for (let i = 0; i < count; i++) {
      const a = args[i]!;
      if (typeof a === "string") p = writeString(buf, p, a);
      else if (typeof a === "number") {
        if (Number.isSafeInteger(a) && a >= 0) {
          buf[p++] = 0x24;
          p = writeUint(buf, p, digits(a));
          buf[p++] = CR;
          buf[p++] = LF;
          p = writeUint(buf, p, a);
        } else {
          p = writeString(buf, p, numberText(a));
          continue;
        }
        buf[p++] = CR;
        buf[p++] = LF;
      } else {
        const n = a.length;
        buf[p++] = 0x24;
        p = writeUint(buf, p, n);
        buf[p++] = CR;
        buf[p++] = LF;
        buf.set(a, p);
        p += n;
        buf[p++] = CR;
        buf[p++] = LF;
      }
    }
    this.#end = p;
  }

  /** Room for `n` more bytes after the pending ones: the buffer, to be written from `end`. */
  room(n: number): Uint8Array {
    this.#reserve(n);
    return this.#buf;
  }

  /** Start of the pending bytes in the buffer. */
  get start(): number {
    return this.#start;
  }

  /** End of the pending bytes in the buffer (set after writing past it). */
  get end(): number {
    return this.#end;
  }

  set end(p: number) {
    this.#end = p;
  }
}

/** Writes the decimal digits of a non-negative safe integer at p; returns the new position. */
function writeUint(buf: Uint8Array, p: number, n: number): number {
  if (n < 10) {
    buf[p] = 48 + n;
    return p + 1;
  }
  const d = digits(n);
  let i = p + d;
  while (n >= 10) {
    const q = Math.floor(n / 10);
    buf[--i] = 48 + n - q * 10;
    n = q;
  }
  buf[--i] = 48 + n;
  return p + d;
}

/**
 * Writes `$len\r\n<utf-8>\r\n` at p (room for length * 3 + 16 bytes is reserved by the caller);
 * returns the new position.
 */
function writeString(buf: Uint8Array, p: number, s: string): number {
  const n = s.length;
  if (n <= SHORT) {
    // optimistic ASCII: the byte length is the string length
    let q = p;
    buf[q++] = 0x24;
    q = writeUint(buf, q, n);
    buf[q++] = CR;
    buf[q++] = LF;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[q++] = c;
    }
    if (i === n) {
      buf[q++] = CR;
      buf[q++] = LF;
      return q;
    }
  }
  // reserve the header for the largest possible byte length, then close the gap if shorter
  const reserved = digits(n * 3);
  const at = p + 1 + reserved + 2;
  const written = utf8.encodeInto(s, buf.subarray(at)).written;
  const d = digits(written);
  buf[p] = 0x24;
  let q = writeUint(buf, p + 1, written);
  buf[q++] = CR;
  buf[q++] = LF;
  if (d < reserved) buf.copyWithin(q, at, at + written);
  q += written;
  buf[q++] = CR;
  buf[q++] = LF;
  return q;
}

// For RespEncoder: the same functions under other bindings, so that the command path above
// keeps calling them as unexported module functions.
/** Writes the decimal digits of a non-negative safe integer at p; returns the new position. */
export const writeUintAt: (buf: Uint8Array, p: number, n: number) => number = writeUint;
/** Writes a bulk string `$len\r\n<utf-8>\r\n` at p; returns the new position. */
export const writeStringAt: (buf: Uint8Array, p: number, s: string) => number = writeString;
