/**
 * RESP encoder: commands for clients, values and pushes for servers and proxies.
 *
 * @module
 */

import { CommandEncoder, writeStringAt, writeUintAt } from "./command_encoder.ts";
import { ReplyError } from "../errors.ts";
import type { RedisArgument, RespValue } from "./types.ts";

const utf8 = new TextEncoder();
const CR = 13;
const LF = 10;

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
  readonly #enc: CommandEncoder;

  /**
   * Creates an encoder.
   *
   * @param initialCapacity Size in bytes of each memory block (a block grows to fit a large
   * command).
   * @default {16384}
   */
  constructor(initialCapacity: number = 16384) {
    this.#enc = new CommandEncoder(initialCapacity);
  }

  /**
   * Number of bytes written and not taken yet.
   *
   * @returns The pending byte count.
   */
  get length(): number {
    return this.#enc.length;
  }

  /**
   * Hands over the pending bytes. The returned array belongs to the caller: the encoder never
   * writes to it again. The pending length drops to 0.
   *
   * @returns The pending bytes (possibly empty).
   */
  take(): Uint8Array {
    return this.#enc.take();
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
    this.#enc.writeCommand(args);
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
    const start = this.#enc.start;
    const end = this.#enc.end;
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
    const start = this.#enc.start;
    const end = this.#enc.end;
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
    const enc = this.#enc;
    if (enc.end - enc.start >= pending) enc.end = enc.start + pending;
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
    const enc = this.#enc;
    const buf = enc.room(24);
    let p = enc.end;
    buf[p++] = type;
    p = writeUintAt(buf, p, n);
    buf[p++] = CR;
    buf[p++] = LF;
    enc.end = p;
  }

  #line(type: number, s: string): void {
    const enc = this.#enc;
    const buf = enc.room(s.length * 3 + 3);
    let p = enc.end;
    buf[p++] = type;
    p += utf8.encodeInto(s, buf.subarray(p)).written;
    buf[p++] = CR;
    buf[p++] = LF;
    enc.end = p;
  }

  #bulk(type: number, data: string | Uint8Array): void {
    const enc = this.#enc;
    if (typeof data === "string") {
      const buf = enc.room(data.length * 3 + 16);
      const at = enc.end;
      enc.end = writeStringAt(buf, at, data);
      buf[at] = type;
      return;
    }
    this.#header(type, data.length);
    const buf = enc.room(data.length + 2);
    buf.set(data, enc.end);
    let p = enc.end + data.length;
    buf[p++] = CR;
    buf[p++] = LF;
    enc.end = p;
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
