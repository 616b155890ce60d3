/**
 * RESP encoder: commands for clients, values and pushes for servers and proxies.
 *
 * @module
 */

import { numberText } from "./number_text.ts";
import { ReplyError } from "../errors.ts";
import type { RedisArgument, RespValue } from "./types.ts";

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
 * A reusable, growable byte buffer that RESP commands are written into. Write any number of
 * commands, then {@linkcode RespEncoder.take} the bytes to send them in one write.
 *
 * Taken arrays are never written to again: the encoder carries on after them in the same
 * memory block and starts a new block when it is full.
 *
 * @example Encode a pipeline of two commands
 * ```ts
 * import { RespEncoder } from "@edge/redis/resp";
 * const encoder = new RespEncoder();
 * encoder.writeCommand(["SET", "k", "v"]);
 * encoder.writeCommand(["GET", "k"]);
 * const bytes = encoder.take(); // *3\r\n$3\r\nSET\r\n... ready for one socket write
 * console.log(bytes.length, encoder.length); // 47 0
 * ```
 */
export class RespEncoder {
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

  /**
   * Appends one value in RESP3 or RESP2 form (see {@linkcode encodeValue}).
   *
   * @param value The value to write.
   * @param protocol 3 for RESP3 types, 2 for their RESP2 stand-ins.
   * @default {3}
   * @throws {TypeError} The value (or a nested one) is not a {@linkcode RespValue}.
   * @throws {RangeError} The value nests deeper than 1000 levels.
   */
  writeValue(value: RespValue, protocol: 2 | 3 = 3): void {
    const start = this.#start;
    const end = this.#end;
    try {
      this.#value(value, protocol === 2, 0);
    } catch (e) {
      this.#rollback(start, end);
      throw e;
    }
  }

  /**
   * Appends a RESP3 push frame (`>N`).
   *
   * @param items The push items, e.g. `["invalidate", ["key"]]`.
   */
  writePush(items: readonly RespValue[]): void {
    const start = this.#start;
    const end = this.#end;
    try {
      this.#header(0x3e, items.length);
      for (const v of items) this.#value(v, false, 1);
    } catch (e) {
      this.#rollback(start, end);
      throw e;
    }
  }

  /** Drops what a failed write added (the buffer may have moved to a new block meanwhile). */
  #rollback(start: number, end: number): void {
    const pending = end - start;
    if (this.#end - this.#start >= pending) this.#end = this.#start + pending;
  }

  /**
   * Appends a simple string (`+OK\r\n`).
   *
   * @param s The text: no CR or LF.
   * @throws {TypeError} The text contains CR or LF.
   */
  writeSimple(s: string): void {
    if (/[\r\n]/.test(s)) {
      throw new TypeError("Cannot encode the simple string: it contains CR or LF");
    }
    this.#line(0x2b, s);
  }

  #header(type: number, n: number): void {
    this.#reserve(24);
    const buf = this.#buf;
    let p = this.#end;
    buf[p++] = type;
    p = writeUint(buf, p, n);
    buf[p++] = CR;
    buf[p++] = LF;
    this.#end = p;
  }

  #line(type: number, s: string): void {
    this.#reserve(s.length * 3 + 3);
    const buf = this.#buf;
    let p = this.#end;
    buf[p++] = type;
    p += utf8.encodeInto(s, buf.subarray(p)).written;
    buf[p++] = CR;
    buf[p++] = LF;
    this.#end = p;
  }

  #bulk(type: number, data: string | Uint8Array): void {
    if (typeof data === "string") {
      this.#reserve(data.length * 3 + 16);
      const p = writeString(this.#buf, this.#end, data);
      this.#buf[this.#end] = type;
      this.#end = p;
      return;
    }
    this.#header(type, data.length);
    this.#reserve(data.length + 2);
    const buf = this.#buf;
    buf.set(data, this.#end);
    let p = this.#end + data.length;
    buf[p++] = CR;
    buf[p++] = LF;
    this.#end = p;
  }

  #value(v: RespValue, resp2: boolean, depth: number): void {
    if (depth > 1000) {
      throw new RangeError("Cannot encode the value: nesting exceeds 1000 levels");
    }
    if (typeof v === "string" || v instanceof Uint8Array) return this.#bulk(0x24, v);
    if (typeof v === "number") {
      if (Number.isSafeInteger(v)) return this.#line(0x3a, String(v));
      const text = v === Infinity
        ? "inf"
        : v === -Infinity
        ? "-inf"
        : Number.isNaN(v)
        ? "nan"
        : String(v);
      return resp2 ? this.#bulk(0x24, text) : this.#line(0x2c, text);
    }
    if (typeof v === "bigint") {
      return resp2 ? this.#bulk(0x24, String(v)) : this.#line(0x28, String(v));
    }
    if (typeof v === "boolean") {
      return resp2 ? this.#line(0x3a, v ? "1" : "0") : this.#line(0x23, v ? "t" : "f");
    }
    if (v === null) return resp2 ? this.#line(0x24, "-1") : this.#line(0x5f, "");
    if (v instanceof ReplyError) {
      const msg = v.message;
      if (!/[\r\n]/.test(msg)) return this.#line(0x2d, msg);
      return resp2 ? this.#line(0x2d, msg.replace(/[\r\n]+/g, " ")) : this.#bulk(0x21, msg);
    }
    if (Array.isArray(v)) {
      this.#header(0x2a, v.length);
      for (const x of v) this.#value(x, resp2, depth + 1);
      return;
    }
    if (v instanceof Map) {
      if (resp2) this.#header(0x2a, v.size * 2);
      else this.#header(0x25, v.size);
      for (const [k, x] of v) {
        this.#value(k, resp2, depth + 1);
        this.#value(x, resp2, depth + 1);
      }
      return;
    }
    if (v instanceof Set) {
      this.#header(resp2 ? 0x2a : 0x7e, v.size);
      for (const x of v) this.#value(x, resp2, depth + 1);
      return;
    }
    throw new TypeError(`Cannot encode the value: unsupported type ${typeof v}`);
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

const shared = new RespEncoder();

/**
 * Encodes one command into a new array.
 *
 * @param args The command name and its arguments.
 * @returns The RESP bytes of the command.
 * @throws {TypeError} An argument is not a string, a number or a `Uint8Array`.
 *
 * @example
 * ```ts
 * import { encodeCommand } from "@edge/redis/resp";
 * const bytes = encodeCommand(["PING"]);
 * console.log(new TextDecoder().decode(bytes)); // "*1\r\n$4\r\nPING\r\n"
 * ```
 */
export function encodeCommand(args: readonly RedisArgument[]): Uint8Array {
  shared.writeCommand(args);
  return shared.take();
}

/**
 * Encodes a value as a server would reply it. RESP3: `ReplyError` as `-` (or `!` when the
 * message has line breaks), `Map` as `%`, `Set` as `~`, `null` as `_`, booleans as `#`, safe
 * integers as `:`, other numbers as `,` doubles (`inf`, `-inf`, `nan`), `bigint` as `(`,
 * strings and byte arrays as bulk strings. RESP2: maps as flat arrays, sets as arrays, `null`
 * as `$-1`, booleans as `:1`/`:0`, doubles and big numbers as bulk strings.
 *
 * @param value The value to encode.
 * @param protocol The protocol version of the reader.
 * @default {3}
 * @returns The RESP bytes.
 * @throws {TypeError} The value (or a nested one) is not a {@linkcode RespValue}.
 * @throws {RangeError} The value nests deeper than 1000 levels.
 *
 * @example
 * ```ts
 * import { encodeValue } from "@edge/redis/resp";
 * const bytes = encodeValue(new Map([["a", 1]]));
 * console.log(new TextDecoder().decode(bytes)); // "%1\r\n$1\r\na\r\n:1\r\n"
 * ```
 */
export function encodeValue(value: RespValue, protocol: 2 | 3 = 3): Uint8Array {
  shared.writeValue(value, protocol);
  return shared.take();
}

/**
 * Encodes a RESP3 push frame (`>N`), e.g. an invalidation or a maintenance notification.
 *
 * @param items The push items.
 * @returns The RESP bytes.
 *
 * @example
 * ```ts
 * import { encodePush } from "@edge/redis/resp";
 * const bytes = encodePush(["MOVING", 1, 15, "127.0.0.1:6380"]);
 * ```
 */
export function encodePush(items: readonly RespValue[]): Uint8Array {
  shared.writePush(items);
  return shared.take();
}

/**
 * Encodes a simple string reply (`+OK\r\n`).
 *
 * @param s The text: no CR or LF.
 * @returns The RESP bytes.
 * @throws {TypeError} The text contains CR or LF.
 *
 * @example
 * ```ts
 * import { encodeSimple } from "@edge/redis/resp";
 * const ok = encodeSimple("OK"); // "+OK\r\n"
 * ```
 */
export function encodeSimple(s: string): Uint8Array {
  shared.writeSimple(s);
  return shared.take();
}
