/**
 * Redis Cluster key hashing: CRC16 (XMODEM) of the key, or of its hash tag, modulo 16384.
 *
 * @module
 */

import type { RedisArgument } from "../resp/types.ts";
import { numberText } from "../resp/number_text.ts";

/** The number of hash slots of a Redis Cluster. */
export const SLOT_COUNT = 16384;

const TABLE: Uint16Array = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

/** One byte into the CRC. */
function step(crc: number, byte: number): number {
  return ((crc << 8) & 0xffff) ^ TABLE[((crc >>> 8) ^ byte) & 0xff]!;
}

/**
 * CRC16 (XMODEM: polynomial 0x1021, initial value 0, no reflection) of a byte range.
 *
 * @param bytes The bytes.
 * @param start First byte, inclusive.
 * @default {0} start
 * @param end Last byte, exclusive.
 * @default {bytes.length} end
 * @returns The CRC, 0-65535.
 *
 * @example
 * ```ts
 * import { crc16 } from "@edge/redis/cluster";
 * crc16(new TextEncoder().encode("123456789")); // 0x31c3
 * ```
 */
export function crc16(bytes: Uint8Array, start = 0, end: number = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = step(crc, bytes[i]!);
  return crc;
}

/** CRC16 of the UTF-8 encoding of `s[start, end)`, without allocating (lone surrogates as U+FFFD). */
function crc16String(s: string, start: number, end: number): number {
  let crc = 0;
  let i = start;
  // ASCII keys: one table lookup per character.
  for (; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >>> 8) ^ c) & 0xff]!;
  }
  for (; i < end; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      crc = step(crc, c);
      continue;
    }
    if (c < 0x800) {
      crc = step(step(crc, 0xc0 | (c >> 6)), 0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < end ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        crc = step(crc, 0xf0 | (c >> 18));
        crc = step(crc, 0x80 | ((c >> 12) & 0x3f));
        crc = step(crc, 0x80 | ((c >> 6) & 0x3f));
        crc = step(crc, 0x80 | (c & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    crc = step(crc, 0xe0 | (c >> 12));
    crc = step(crc, 0x80 | ((c >> 6) & 0x3f));
    crc = step(crc, 0x80 | (c & 0x3f));
  }
  return crc;
}

/**
 * The hash slot of a key, 0-16383. When the key holds a hash tag (the text between the first
 * `{` and the first `}` after it, if not empty) only the tag is hashed, so `{user1}.name` and
 * `{user1}.email` share a slot. Strings are hashed as their UTF-8 bytes without building them;
 * numbers as their decimal text, like the command encoder sends them.
 *
 * @param key The key.
 * @returns The slot.
 *
 * @example
 * ```ts
 * import { keySlot } from "@edge/redis/cluster";
 * keySlot("foo"); // 12182
 * keySlot("{user1}.name") === keySlot("{user1}.email"); // true
 * ```
 */
export function keySlot(key: RedisArgument): number {
  if (typeof key === "string") {
    const len = key.length;
    let start = 0;
    let end = len;
    const open = key.indexOf("{");
    if (open !== -1) {
      const close = key.indexOf("}", open + 1);
      if (close > open + 1) {
        start = open + 1;
        end = close;
      }
    }
    return crc16String(key, start, end) & 0x3fff;
  }
  if (typeof key === "number") return keySlot(numberText(key));
  if (!(key instanceof Uint8Array)) {
    throw new TypeError(`Cannot hash the key: expected a string, number or Uint8Array`);
  }
  let start = 0;
  let end = key.length;
  const open = key.indexOf(0x7b);
  if (open !== -1) {
    const close = key.indexOf(0x7d, open + 1);
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  return crc16(key, start, end) & 0x3fff;
}
