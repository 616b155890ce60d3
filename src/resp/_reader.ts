// Internal: the byte-level RESP reader shared by the decoder and the framer.
//
// Two readers work on the same module-level cursor (B, P, E):
// - `parseFrame()`: a recursive value builder for a frame that is (probably) complete in the
//   current buffer. It keeps no state between calls: when the input ends early it returns
//   INCOMPLETE and the caller falls back to the scanner.
// - `Scanner`: a resumable structural scanner (an explicit stack of element counts, no values
//   built) that finds where a frame ends, across any number of chunks, in linear time.
// Both validate the same things in the same order, so a malformed input raises the same
// ProtocolError (same offset) whichever reader meets it first.
//
// One file on purpose, though it holds both readers: V8 calls a module's own unexported functions
// faster than exported or imported ones. Measured A/B in one process on Deno (2026-12): the
// scanner in a file of its own, reaching the leaves as exports, decoded 19 % fewer small replies
// per second; reaching them through one exported object, still 6-8 % slower on nested RESP3 maps.
import { ProtocolError, ReplyError } from "../errors.ts";
import type { RespValue } from "./types.ts";
import { onUtf8Decoder, type Utf8Decoder } from "../utf8_decoder.ts";

/** Longest bulk string, line or aggregate length accepted (Redis' own proto-max-bulk-len). */
export const MAX_LENGTH = 512 * 1024 * 1024;
/** Deepest aggregate nesting accepted (attributes and streamed strings count as levels). */
export const MAX_DEPTH = 512;

/** Marker returned when the input ends before the frame does. */
export const INCOMPLETE: unique symbol = Symbol("incomplete");
/** What `parseFrame()` returns. */
export type Parsed = RespValue | typeof INCOMPLETE;

const NEED = -3;
const STREAMED = -2;

const CR = 13;
const LF = 10;

// Cursor over the input: bytes B[P..E), B[0] sits at absolute stream offset BASE.
let B: Uint8Array = new Uint8Array(0);
let P = 0;
let E = 0;
let BASE = 0;
let BIN = false;
/** Push frames (`>`) decode strings as bytes too (binary pub/sub). */
let PUSH_BIN = false;
/** The buffer is the reader's own and discarded after the frame: large byte values may view it. */
let OWNED = false;
/** Bumped whenever the cursor is pointed at an input, so a loop can tell it was moved. */
let EPOCH = 0;

/** Top-level attributes of the last frame parsed by `parseFrame()`. */
export let ATTRS: Map<RespValue, RespValue> | undefined;
/** Type byte of the value of the last frame parsed (after its attributes). */
export let TYPE = 0;

// ignoreBOM: a value that starts with U+FEFF keeps it (values are data, not documents)
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** A runtime's faster decoder, installed by its transport (`setUtf8Decoder`). */
let NATIVE: Utf8Decoder | undefined;
onUtf8Decoder((d) => NATIVE = d);

/** Decodes B[s..e) as UTF-8, natively where the runtime offers it and it pays. */
function utf8At(s: number, e: number): string {
  return NATIVE !== undefined && e - s <= NATIVE_MAX
    ? NATIVE(B, s, e)
    : utf8.decode(B.subarray(s, e));
}

/** Strings shorter than this are built in JS even with a native decoder (a call costs more). */
const NATIVE_MIN = 5;
/**
 * Strings longer than this go to TextDecoder even with a native decoder: on Bun, Buffer's
 * decoder was measured slower than TextDecoder for a 100 KB value in the client (6.99k vs
 * 7.60k GET/s), faster for short ones.
 */
const NATIVE_MAX = 4096;

/** Points the reader at `buf[pos..end)`; `base` is the stream offset of `buf[0]`. */
export function setInput(
  buf: Uint8Array,
  pos: number,
  end: number,
  base: number,
  binary: boolean,
  owned: boolean,
  pushBinary = false,
): void {
  EPOCH++;
  B = buf;
  P = pos;
  E = end;
  BASE = base;
  BIN = binary;
  OWNED = owned;
  PUSH_BIN = pushBinary;
}

const NO_INPUT = new Uint8Array(0);

/**
 * Lets go of the input (after a chunk): a reference kept here would let each chunk survive the
 * next young-generation GC, and on Bun every chunk is a fresh buffer, so these survivors made
 * collections more frequent and slower.
 */
export function release(): void {
  EPOCH++;
  B = NO_INPUT;
  P = 0;
  E = 0;
}

/** The reader's position. */
export function pos(): number {
  return P;
}

function fail(detail: string, at: number): never {
  throw new ProtocolError(`Cannot decode the reply: ${detail}`, BASE + at);
}

/** Fails at the byte at `at`: `text` followed by the byte, printable or in hex. */
function badByte(text: string, at: number): never {
  const c = B[at]!;
  return fail(
    text +
      (c >= 0x20 && c < 0x7f
        ? `"${String.fromCharCode(c)}"`
        : `0x${c.toString(16).padStart(2, "0")}`),
    at,
  );
}

function notLF(at: number): never {
  return badByte("expected LF, got ", at);
}

function notCR(at: number): never {
  return badByte("expected CR, got ", at);
}

const STREAMED_SEMI = 'expected ";" in a streamed string, got ';

// ---------------------------------------------------------------------------------------------
// Leaves

/**
 * Reads a length after a type byte: `n\r\n`, `-1\r\n` (returns -1), `?\r\n` (returns STREAMED).
 * Returns NEED when the line is not complete yet.
 */
function readLen(allowNull: boolean, allowStream: boolean): number {
  let i = P;
  if (i >= E) return NEED;
  let c = B[i]!;
  if (c === 0x2d) {
    if (!allowNull) fail("negative length", i);
    if (i + 1 >= E) return NEED;
    if (B[i + 1] !== 0x31) fail("negative length", i);
    if (i + 2 >= E) return NEED;
    if (B[i + 2] !== CR) fail("negative length", i);
    if (i + 3 >= E) return NEED;
    if (B[i + 3] !== LF) notLF(i + 3);
    P = i + 4;
    return -1;
  }
  if (c === 0x3f) {
    if (!allowStream) fail('unexpected streamed length "?"', i);
    if (i + 1 >= E) return NEED;
    if (B[i + 1] !== CR) notCR(i + 1);
    if (i + 2 >= E) return NEED;
    if (B[i + 2] !== LF) notLF(i + 2);
    P = i + 3;
    return STREAMED;
  }
  const start = i;
  let n = 0;
  for (;;) {
    if (i >= E) return NEED;
    c = B[i]!;
    if (c === CR) break;
    c -= 48;
    if (c < 0 || c > 9) badByte("invalid length byte ", i);
    n = n * 10 + c;
    if (n > MAX_LENGTH) fail("length exceeds 512 MB", start);
    i++;
  }
  if (i === start) fail("empty length", i);
  if (i + 1 >= E) return NEED;
  if (B[i + 1] !== LF) notLF(i + 1);
  P = i + 2;
  return n;
}

/** Where `lineEnd` may resume its search (set by the scanner for a line it saw in part). */
let LINE_FROM = 0;

/**
 * Finds the CR ending the line that starts at P; NEED if not there yet. Validates the LF and
 * the length (at most `max` bytes; `what` names the line in the error).
 */
function lineEnd(max: number, what: string): number {
  const start = P;
  let i = LINE_FROM > start ? LINE_FROM : start;
  LINE_FROM = 0;
  for (;;) {
    if (i >= E) {
      if (i - start > max) fail(`${what} is longer than ${max} bytes`, start);
      return NEED;
    }
    const c = B[i]!;
    if (c === CR) break;
    if (c === LF) fail("unexpected LF without CR", i);
    i++;
  }
  if (i - start > max) fail(`${what} is longer than ${max} bytes`, start);
  if (i + 1 >= E) return NEED;
  if (B[i + 1] !== LF) notLF(i + 1);
  return i;
}

function ascii(start: number, end: number): string {
  let s = "";
  for (let i = start; i < end; i++) s += String.fromCharCode(B[i]!);
  return s;
}

const fcc = String.fromCharCode;

/**
 * Recently decoded short ASCII strings by a hash of their bytes: replies repeat field names and
 * small values a lot (map keys, "OK", "0"), and a hit saves building the string.
 */
const CACHE_SIZE = 4096;
const cache: (string | undefined)[] = new Array(CACHE_SIZE).fill(undefined);

/** Decodes B[s..e) as UTF-8 (invalid sequences become U+FFFD). */
function str(s: number, e: number): string {
  const n = e - s;
  if (n > 16 || (NATIVE !== undefined && n >= NATIVE_MIN)) return utf8At(s, e);
  if (JSC) {
    let r = "";
    for (let i = s; i < e; i++) {
      const c = B[i]!;
      if (c >= 0x80) return utf8At(s, e);
      r += fcc(c);
    }
    return r;
  }
  let or = 0;
  for (let i = s; i < e; i++) or |= B[i]!;
  if (or >= 0x80) return utf8At(s, e);
  return ascii16(s, n);
}

/**
 * JavaScriptCore (Bun) builds short strings fastest by appending characters; V8 (Deno) by one
 * `String.fromCharCode` call with all of them.
 */
const JSC = typeof navigator === "object" && /^Bun\//.test(navigator.userAgent ?? "");

/**
 * `str()` through the cache of short strings: for what tends to repeat (map keys, simple
 * strings). Unique values are better off without it (a miss costs a hash and a store).
 */
function cachedStr(s: number, e: number): string {
  const n = e - s;
  if (n > 16) return utf8At(s, e);
  let or = 0;
  let h = n;
  for (let i = s; i < e; i++) {
    const c = B[i]!;
    or |= c;
    h = Math.imul(h ^ c, 0x01000193);
  }
  if (or >= 0x80) return utf8At(s, e);
  const slot = (h ^ (h >>> 15)) & (CACHE_SIZE - 1);
  const hit = cache[slot];
  if (hit !== undefined && hit.length === n) {
    let i = 0;
    while (i < n && hit.charCodeAt(i) === B[s + i]) i++;
    if (i === n) return hit;
  }
  return cache[slot] = ascii16(s, n);
}

/** Builds the string of the n <= 16 ASCII bytes at B[s]. */
function ascii16(s: number, n: number): string {
  if (JSC) {
    let r = "";
    for (let i = s; i < s + n; i++) r += fcc(B[i]!);
    return r;
  }
  switch (n) {
    case 0:
      return "";
    case 1:
      return fcc(B[s]!);
    case 2:
      return fcc(B[s]!, B[s + 1]!);
    case 3:
      return fcc(B[s]!, B[s + 1]!, B[s + 2]!);
    case 4:
      return fcc(B[s]!, B[s + 1]!, B[s + 2]!, B[s + 3]!);
    case 5:
      return fcc(B[s]!, B[s + 1]!, B[s + 2]!, B[s + 3]!, B[s + 4]!);
    case 6:
      return fcc(B[s]!, B[s + 1]!, B[s + 2]!, B[s + 3]!, B[s + 4]!, B[s + 5]!);
    case 7:
      return fcc(B[s]!, B[s + 1]!, B[s + 2]!, B[s + 3]!, B[s + 4]!, B[s + 5]!, B[s + 6]!);
    case 8:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
      );
    case 9:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
      );
    case 10:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
      );
    case 11:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
        B[s + 10]!,
      );
    case 12:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
        B[s + 10]!,
        B[s + 11]!,
      );
    case 13:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
        B[s + 10]!,
        B[s + 11]!,
        B[s + 12]!,
      );
    case 14:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
        B[s + 10]!,
        B[s + 11]!,
        B[s + 12]!,
        B[s + 13]!,
      );
    case 15:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
        B[s + 10]!,
        B[s + 11]!,
        B[s + 12]!,
        B[s + 13]!,
        B[s + 14]!,
      );
    case 16:
      return fcc(
        B[s]!,
        B[s + 1]!,
        B[s + 2]!,
        B[s + 3]!,
        B[s + 4]!,
        B[s + 5]!,
        B[s + 6]!,
        B[s + 7]!,
        B[s + 8]!,
        B[s + 9]!,
        B[s + 10]!,
        B[s + 11]!,
        B[s + 12]!,
        B[s + 13]!,
        B[s + 14]!,
        B[s + 15]!,
      );
  }
  return "";
}

/**
 * Small byte values are copied into a shared slab on V8 (Deno), where allocating an
 * ArrayBuffer per value costs about a microsecond; JavaScriptCore (Bun) allocates them fast.
 * A slab is never written again where a value was handed out.
 */
const SLAB_SIZE = 16384;
const SLAB_MAX = 1024;
let SLAB = new Uint8Array(0);
let SLAB_POS = 0;

/** A copy of B[start..end) (a view of B itself for large values of an owned buffer). */
function bytes(start: number, end: number): Uint8Array {
  const n = end - start;
  if (OWNED && n >= 65536) return B.subarray(start, end);
  // a plain copy even when B is a subclass whose slice() is a view (Node's and Bun's Buffer)
  if (JSC || n > SLAB_MAX) return new Uint8Array(B.subarray(start, end));
  if (SLAB_POS + n > SLAB.length) {
    SLAB = new Uint8Array(SLAB_SIZE);
    SLAB_POS = 0;
  }
  const at = SLAB_POS;
  if (n <= 32) { for (let i = 0; i < n; i++) SLAB[at + i] = B[start + i]!; }
  else SLAB.set(B.subarray(start, end), at);
  SLAB_POS = at + n;
  return SLAB.subarray(at, at + n);
}

/** `:` payload at P. */
function readInteger(): number | bigint | typeof INCOMPLETE {
  let i = P;
  if (i >= E) return INCOMPLETE;
  let neg = false;
  let c = B[i]!;
  if (c === 0x2d) {
    neg = true;
    i++;
  } else if (c === 0x2b) i++;
  const start = i;
  let n = 0;
  for (;;) {
    if (i >= E) {
      if (i - start > 19) fail("integer has more than 19 digits", start);
      return INCOMPLETE;
    }
    c = B[i]! - 48;
    if (c >>> 0 > 9) {
      if (c === CR - 48) break;
      // the length is checked at every exit of the loop, so that the error does not depend
      // on where the input was split
      if (i - start > 19) fail("integer has more than 19 digits", start);
      badByte("invalid integer byte ", i);
    }
    n = n * 10 + c;
    i++;
  }
  if (i - start > 19) fail("integer has more than 19 digits", start);
  if (i === start) fail("empty integer", i);
  if (i + 1 >= E) return INCOMPLETE;
  if (B[i + 1] !== LF) notLF(i + 1);
  const from = P;
  P = i + 2;
  if (n <= Number.MAX_SAFE_INTEGER) return neg ? 0 - n : n;
  return BigInt(ascii(from, i));
}

const DOUBLE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** `,` payload at P. */
function readDouble(): number | typeof INCOMPLETE {
  const start = P;
  const cr = lineEnd(1024, "double");
  if (cr === NEED) return INCOMPLETE;
  const s = ascii(start, cr);
  P = cr + 2;
  switch (s) {
    case "inf":
    case "+inf":
      return Infinity;
    case "-inf":
      return -Infinity;
    case "nan":
    case "-nan":
      return NaN;
  }
  if (!DOUBLE.test(s)) fail(`invalid double "${s}"`, start);
  return Number(s);
}

const BIGNUM = /^[+-]?\d+$/;

/** `(` payload at P. */
function readBigNumber(): bigint | typeof INCOMPLETE {
  const start = P;
  const cr = lineEnd(65536, "big number");
  if (cr === NEED) return INCOMPLETE;
  const s = ascii(start, cr);
  if (!BIGNUM.test(s)) fail(`invalid big number "${s}"`, start);
  P = cr + 2;
  return BigInt(s);
}

/** `#` payload at P. */
function readBoolean(): boolean | typeof INCOMPLETE {
  const i = P;
  if (i >= E) return INCOMPLETE;
  const c = B[i]!;
  if (c !== 0x74 && c !== 0x66) badByte("invalid boolean ", i);
  if (i + 1 >= E) return INCOMPLETE;
  if (B[i + 1] !== CR) notCR(i + 1);
  if (i + 2 >= E) return INCOMPLETE;
  if (B[i + 2] !== LF) notLF(i + 2);
  P = i + 3;
  return c === 0x74;
}

/** `_` payload at P. Returns false when incomplete. */
function readNull(): boolean {
  const i = P;
  if (i >= E) return false;
  if (B[i] !== CR) notCR(i);
  if (i + 1 >= E) return false;
  if (B[i + 1] !== LF) notLF(i + 1);
  P = i + 2;
  return true;
}

/**
 * Checks the payload of a bulk of `n` bytes of type `t` starting at P. Returns the payload end,
 * or NEED. Leaves P at the payload start.
 */
function bulkEnd(t: number, n: number): number {
  const s = P;
  const e = s + n;
  if (e + 2 > E) return NEED;
  if (B[e] !== CR) badByte(`expected CR after ${n} bytes, got `, e);
  if (B[e + 1] !== LF) notLF(e + 1);
  if (t === 0x3d && (n < 4 || B[s + 3] !== 0x3a)) {
    fail('verbatim string lacks its "xxx:" format prefix', s);
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// Value builder

function tooDeep(at: number): never {
  return fail(`nesting exceeds ${MAX_DEPTH} levels`, at);
}

/**
 * Parses one top-level frame at P (attributes first, if any). Sets ATTRS and TYPE. Returns
 * INCOMPLETE when the buffer ends before the frame.
 */
export function parseFrame(): Parsed {
  ATTRS = undefined;
  if (P >= E) return INCOMPLETE;
  let t = B[P]!;
  while (t === 0x7c) {
    const m = aggregate(t, P, 0);
    if (m === INCOMPLETE) return INCOMPLETE;
    if (ATTRS === undefined) ATTRS = m as Map<RespValue, RespValue>;
    else for (const [k, v] of m as Map<RespValue, RespValue>) ATTRS.set(k, v);
    if (P >= E) return INCOMPLETE;
    t = B[P]!;
  }
  TYPE = t;
  if (t === 0x3e) BIN = PUSH_BIN;
  return value(0, false);
}

/** Parses the value at P, nested `depth` levels deep; `key`: it is a map key. */
function value(depth: number, key: boolean): Parsed {
  if (P >= E) return INCOMPLETE;
  let at = P;
  let t = B[at]!;
  while (t === 0x7c) {
    // an attribute inside an aggregate: parsed and dropped
    if (aggregate(t, at, depth) === INCOMPLETE) return INCOMPLETE;
    if (P >= E) return INCOMPLETE;
    at = P;
    t = B[at]!;
  }
  P = at + 1;
  switch (t) {
    case 0x24: // $
    case 0x21: // !
    case 0x3d: // =
      return bulk(t, at, depth, key);
    case 0x2b: // +
    case 0x2d: // -
      return simple(t);
    case 0x3a: // :
      return readInteger();
    case 0x2a: // *
    case 0x25: // %
    case 0x7e: // ~
    case 0x3e: // >
      return aggregate(t, at, depth);
    case 0x5f: // _
      return readNull() ? null : INCOMPLETE;
    case 0x23: // #
      return readBoolean();
    case 0x2c: // ,
      return readDouble();
    case 0x28: // (
      return readBigNumber();
    default:
      return badByte("unexpected type byte ", at);
  }
}

/** A `$`, `!` or `=` value whose type byte is at `at` (P just after it). */
function bulk(t: number, at: number, depth: number, key: boolean): Parsed {
  const n = readLen(t === 0x24, t === 0x24);
  if (n === NEED) return INCOMPLETE;
  if (n === -1) return null;
  if (n === STREAMED) return streamedString(at, depth);
  const e = bulkEnd(t, n);
  if (e === NEED) return INCOMPLETE;
  const s = P;
  P = e + 2;
  if (t === 0x24) return BIN ? bytes(s, e) : key ? cachedStr(s, e) : str(s, e);
  if (t === 0x21) return new ReplyError(str(s, e));
  return BIN ? bytes(s + 4, e) : str(s + 4, e);
}

/** A `+` or `-` line (P just after the type byte). */
function simple(t: number): Parsed {
  const s = P;
  const cr = lineEnd(MAX_LENGTH, t === 0x2d ? "error" : "simple string");
  if (cr === NEED) return INCOMPLETE;
  P = cr + 2;
  if (t === 0x2d) return new ReplyError(str(s, cr));
  if (BIN) return bytes(s, cr);
  return cr - s === 2 && B[s] === 0x4f && B[s + 1] === 0x4b ? "OK" : cachedStr(s, cr);
}

/** An aggregate whose type byte `t` is at `at` (P just after it). */
function aggregate(t: number, at: number, depth: number): Parsed {
  if (depth >= MAX_DEPTH) tooDeep(at);
  P = at + 1;
  const n = readLen(t === 0x2a, t !== 0x7c);
  if (n === NEED) return INCOMPLETE;
  if (n === -1) return null;
  const d = depth + 1;
  if (n === STREAMED) return streamedAggregate(t, d);
  // every element takes 3 bytes at least: cannot be complete in this buffer
  if (t === 0x25 || t === 0x7c ? n * 6 > E - P : n * 3 > E - P) return INCOMPLETE;
  if (t === 0x2a || t === 0x3e) {
    if (n < 16) {
      const a: RespValue[] = [];
      for (let i = 0; i < n; i++) {
        const v = value(d, false);
        if (v === INCOMPLETE) return INCOMPLETE;
        a.push(v);
      }
      return a;
    }
    // Sized once (n is bounded by the bytes at hand, 3 per element): growing by push copied the
    // elements 3-4 times for 100 of them, 2.3 KB of garbage per MGET of 100 keys on Deno.
    const a: RespValue[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const v = value(d, false);
      if (v === INCOMPLETE) return INCOMPLETE;
      a[i] = v;
    }
    return a;
  }
  if (t === 0x7e) {
    const s = new Set<RespValue>();
    for (let i = 0; i < n; i++) {
      const v = value(d, false);
      if (v === INCOMPLETE) return INCOMPLETE;
      s.add(v);
    }
    return s;
  }
  const m = new Map<RespValue, RespValue>();
  for (let i = 0; i < n; i++) {
    const k = value(d, true);
    if (k === INCOMPLETE) return INCOMPLETE;
    const v = value(d, false);
    if (v === INCOMPLETE) return INCOMPLETE;
    m.set(k, v);
  }
  return m;
}

/** Reads the `.\r\n` end marker at P if there; returns 1 if read, 0 if not a marker, NEED. */
function endMarker(): number {
  if (P >= E) return NEED;
  if (B[P] !== 0x2e) return 0;
  if (P + 1 >= E) return NEED;
  if (B[P + 1] !== CR) notCR(P + 1);
  if (P + 2 >= E) return NEED;
  if (B[P + 2] !== LF) notLF(P + 2);
  P += 3;
  return 1;
}

function streamedAggregate(t: number, d: number): Parsed {
  if (t === 0x25) {
    const m = new Map<RespValue, RespValue>();
    for (;;) {
      const end = endMarker();
      if (end === NEED) return INCOMPLETE;
      if (end === 1) return m;
      const k = value(d, true);
      if (k === INCOMPLETE) return INCOMPLETE;
      if (P < E && B[P] === 0x2e) fail("streamed map ends after a key", P);
      const v = value(d, false);
      if (v === INCOMPLETE) return INCOMPLETE;
      m.set(k, v);
    }
  }
  const items: RespValue[] = [];
  for (;;) {
    const end = endMarker();
    if (end === NEED) return INCOMPLETE;
    if (end === 1) break;
    const v = value(d, false);
    if (v === INCOMPLETE) return INCOMPLETE;
    items.push(v);
  }
  return t === 0x7e ? new Set(items) : items;
}

function streamedString(at: number, depth: number): Parsed {
  if (depth >= MAX_DEPTH) tooDeep(at);
  const parts: number[] = [];
  let total = 0;
  for (;;) {
    if (P >= E) return INCOMPLETE;
    if (B[P] !== 0x3b) badByte(STREAMED_SEMI, P);
    P++;
    const n = readLen(false, false);
    if (n === NEED) return INCOMPLETE;
    if (n === 0) break;
    if (total + n > MAX_LENGTH) fail("streamed string exceeds 512 MB", P);
    const e = bulkEnd(0x24, n);
    if (e === NEED) return INCOMPLETE;
    parts.push(P, e);
    total += n;
    P = e + 2;
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (let i = 0; i < parts.length; i += 2) {
    out.set(B.subarray(parts[i]!, parts[i + 1]!), o);
    o += parts[i + 1]! - parts[i]!;
  }
  return BIN ? out : utf8.decode(out);
}

// ---------------------------------------------------------------------------------------------
// Fast decode loop

/** Where `decodeChunk` delivers frames. */
export interface Sink {
  onReply(value: RespValue, attributes?: Map<RespValue, RespValue>): void;
  onPush(frame: RespValue[]): void;
}

/** The first error a handler threw during `decodeChunk`. */
export class HandlerFailure {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

/** Shared between a decoder and `decodeChunk`: handler error, stop request (a reset). */
export interface Failure {
  f: HandlerFailure | undefined;
  stop: boolean;
}

/**
 * Decodes the complete frames of buf[p..end) and delivers them. Returns the index where an
 * incomplete frame starts (`end` when none). A handler that throws does not stop the loop:
 * the first such error is stored in `failure.f`. Stops after a handler set `failure.stop`.
 */
export function decodeChunk(
  flags: { readonly binary: boolean; readonly pushBinary?: boolean },
  sink: Sink,
  buf: Uint8Array,
  p: number,
  end: number,
  base: number,
  failure: Failure,
): number {
  B = buf;
  E = end;
  BASE = base;
  OWNED = false;
  PUSH_BIN = flags.pushBinary === true;
  let epoch = ++EPOCH;
  while (p < end) {
    // the commonest replies go straight to their reader
    let v: Parsed;
    const t = buf[p]!;
    if (t === 0x3a) {
      P = p + 1;
      v = readInteger();
      TYPE = t;
      ATTRS = undefined;
    } else if (t === 0x24) {
      P = p + 1;
      BIN = flags.binary;
      v = bulk(t, p, 0, false);
      TYPE = t;
      ATTRS = undefined;
    } else if (t === 0x2b) {
      P = p + 1;
      BIN = flags.binary;
      v = simple(t);
      TYPE = t;
      ATTRS = undefined;
    } else {
      P = p;
      BIN = flags.binary;
      v = parseFrame();
    }
    if (v === INCOMPLETE) return p;
    p = P;
    try {
      if (TYPE === 0x3e) sink.onPush(v as RespValue[]);
      else if (ATTRS === undefined) sink.onReply(v);
      else sink.onReply(v, ATTRS);
    } catch (e) {
      if (failure.f === undefined) failure.f = new HandlerFailure(e);
    }
    if (failure.stop) return p;
    if (EPOCH !== epoch) {
      // a handler used the reader (another decoder, a framer): take it back
      B = buf;
      E = end;
      BASE = base;
      OWNED = false;
      PUSH_BIN = flags.pushBinary === true;
      epoch = ++EPOCH;
    }
  }
  return end;
}

// ---------------------------------------------------------------------------------------------
// Resumable scanner

const K_AGG = 0;
const K_ATTR = 1;
const K_STR = 2;
const K_MAP = 3;

/**
 * Finds the end of one top-level frame without building values, resumable across chunks.
 * Usage: `reset()` at a frame start, then `scan()` with the cursor at the frame start (first
 * call) or at `pos()` of the previous call's return (same buffer, grown).
 */
export class Scanner {
  /** Kind of each open level (K_*). */
  kinds: number[] = [];
  /**
   * Per open level: elements left; -1 for a streamed aggregate; -2/-3 for a streamed map
   * expecting a key/value; bytes so far for a streamed string.
   */
  counts: number[] = [];
  /** Buffer index the scan needs before it can progress (0 if unknown: any byte helps). */
  need = 0;
  /** Type byte of the frame's value (after attributes), 0 until seen. */
  type = 0;
  /** An attribute just ended: a value must follow (not an end marker). */
  #afterAttr = false;
  /** Start of a simple string or error line seen in part, and how far it was searched. */
  #lineStart = -1;
  #lineScanned = 0;

  reset(): void {
    this.#lineStart = -1;
    this.#afterAttr = false;
    this.kinds.length = 0;
    this.counts.length = 0;
    this.need = 0;
    this.type = 0;
  }

  /**
   * Scans from P. Returns true with P at the frame end, or false with P at the start of the
   * element that is not complete yet (state kept for the next call).
   */
  scan(): boolean {
    const kinds = this.kinds;
    const counts = this.counts;
    this.need = 0;
    for (;;) {
      const start = P;
      if (start >= E) return false;
      const top = kinds.length - 1;
      const t = B[start]!;
      if (top >= 0 && kinds[top] === K_STR) {
        if (t !== 0x3b) badByte(STREAMED_SEMI, start);
        P = start + 1;
        const n = readLen(false, false);
        if (n === NEED) return this.#wait(start, 0);
        if (n === 0) {
          kinds.pop();
          counts.pop();
          if (this.#done()) return true;
          continue;
        }
        // a streamed string level counts the bytes of its chunks so far
        if (counts[top]! + n > MAX_LENGTH) fail("streamed string exceeds 512 MB", P);
        const e = bulkEnd(0x24, n);
        if (e === NEED) return this.#wait(start, P + n + 2);
        counts[top] = counts[top]! + n;
        P = e + 2;
        continue;
      }
      if (t === 0x2e && top >= 0 && counts[top]! < 0 && !this.#afterAttr) {
        if (counts[top] === -3) fail("streamed map ends after a key", start);
        const m = endMarker();
        if (m === NEED) return this.#wait(start, 0);
        kinds.pop();
        counts.pop();
        if (this.#done()) return true;
        continue;
      }
      if (t !== 0x7c) {
        this.#afterAttr = false;
        if (top < 0) this.type = t;
      }
      P = start + 1;
      switch (t) {
        case 0x24:
        case 0x21:
        case 0x3d: {
          const n = readLen(t === 0x24, t === 0x24);
          if (n === NEED) return this.#wait(start, 0);
          if (n === STREAMED) {
            if (kinds.length >= MAX_DEPTH) tooDeep(start);
            kinds.push(K_STR);
            counts.push(0);
            continue;
          }
          if (n >= 0) {
            const e = bulkEnd(t, n);
            if (e === NEED) return this.#wait(start, P + n + 2);
            P = e + 2;
          }
          break;
        }
        case 0x2b:
        case 0x2d: {
          if (start === this.#lineStart) LINE_FROM = this.#lineScanned - 1;
          const cr = lineEnd(MAX_LENGTH, t === 0x2d ? "error" : "simple string");
          if (cr === NEED) {
            // resume the search for the CR where it stopped, not at the line start
            this.#lineStart = start;
            this.#lineScanned = E;
            return this.#wait(start, 0);
          }
          P = cr + 2;
          break;
        }
        case 0x3a:
          if (readInteger() === INCOMPLETE) return this.#wait(start, 0);
          break;
        case 0x5f:
          if (!readNull()) return this.#wait(start, 0);
          break;
        case 0x23:
          if (readBoolean() === INCOMPLETE) return this.#wait(start, 0);
          break;
        case 0x2c:
          if (readDouble() === INCOMPLETE) return this.#wait(start, 0);
          break;
        case 0x28:
          if (readBigNumber() === INCOMPLETE) return this.#wait(start, 0);
          break;
        case 0x2a:
        case 0x25:
        case 0x7e:
        case 0x3e:
        case 0x7c: {
          if (kinds.length >= MAX_DEPTH) tooDeep(start);
          const n = readLen(t === 0x2a, t !== 0x7c);
          if (n === NEED) return this.#wait(start, 0);
          if (n === -1) break;
          const kind = t === 0x7c ? K_ATTR : t === 0x25 ? K_MAP : K_AGG;
          if (n === STREAMED) {
            kinds.push(kind);
            counts.push(kind === K_MAP ? -2 : -1);
            continue;
          }
          if (n === 0) {
            if (t !== 0x7c) break;
            this.#afterAttr = true;
            continue;
          }
          kinds.push(kind);
          counts.push(kind === K_AGG ? n : n * 2);
          continue;
        }
        default:
          badByte("unexpected type byte ", start);
      }
      if (this.#done()) return true;
    }
  }

  #wait(start: number, need: number): false {
    P = start;
    this.need = need;
    return false;
  }

  /** One element completed: closes finished levels. True when the frame is complete. */
  #done(): boolean {
    const kinds = this.kinds;
    const counts = this.counts;
    for (;;) {
      const top = counts.length - 1;
      if (top < 0) return true;
      const c = counts[top]!;
      if (c < 0) {
        // streamed: a map alternates -2 (expects key) and -3 (expects value)
        if (c !== -1) counts[top] = c === -2 ? -3 : -2;
        return false;
      }
      if (c > 1) {
        counts[top] = c - 1;
        return false;
      }
      const k = kinds.pop();
      counts.pop();
      if (k === K_ATTR) {
        this.#afterAttr = true;
        return false;
      }
    }
  }
}
