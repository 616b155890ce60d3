// Reads command arguments the way redis-server sees them (their encoded bytes) without
// decoding them: case-insensitive keyword tests and the server's two integer parsers.
import type { RedisArgument } from "../resp/types.ts";

/** The text the encoder sends for a number that is not a safe integer. */
function numberText(n: number): string {
  if (n === Infinity) return "+inf";
  if (n === -Infinity) return "-inf";
  return String(n);
}

/** Whether `arg` equals `word` (ASCII, given in lower case) ignoring case, like strcasecmp. */
export function argIs(arg: RedisArgument | undefined, word: string): boolean {
  if (typeof arg === "string") {
    if (arg.length !== word.length) return false;
    for (let i = 0; i < word.length; i++) {
      let c = arg.charCodeAt(i);
      if (c >= 65 && c <= 90) c += 32;
      if (c !== word.charCodeAt(i)) return false;
    }
    return true;
  }
  if (arg instanceof Uint8Array) {
    if (arg.length !== word.length) return false;
    for (let i = 0; i < word.length; i++) {
      let c = arg[i] as number;
      if (c >= 65 && c <= 90) c += 32;
      if (c !== word.charCodeAt(i)) return false;
    }
    return true;
  }
  // A number is sent in decimal: it can only equal a word made of its characters.
  return typeof arg === "number" && numberText(arg) === word;
}

/** Whether `arg` is sent as an empty string. */
export function argIsEmpty(arg: RedisArgument | undefined): boolean {
  return (typeof arg === "string" || arg instanceof Uint8Array) && arg.length === 0;
}

/** The character (byte) code at `i` of a string or byte argument. */
function code(arg: string | Uint8Array, i: number): number {
  return typeof arg === "string" ? arg.charCodeAt(i) : arg[i] as number;
}

/**
 * The server's strict integer parser (string2ll): an optional "-", then digits without a
 * leading zero (or exactly "0"), nothing else. Returns `undefined` when it refuses.
 */
export function parseStrictInteger(arg: RedisArgument | undefined): number | undefined {
  if (arg === undefined) return undefined;
  if (typeof arg === "number" && Number.isSafeInteger(arg)) return arg === 0 ? 0 : arg;
  const t = typeof arg === "number" ? numberText(arg) : arg;
  const len = t.length;
  if (len === 0) return undefined;
  if (len === 1 && code(t, 0) === 48) return 0;
  let i = 0;
  let negative = false;
  if (code(t, 0) === 45) {
    negative = true;
    i = 1;
    if (len === 1) return undefined;
  }
  const first = code(t, i);
  if (first < 49 || first > 57) return undefined;
  let v = 0;
  for (; i < len; i++) {
    const c = code(t, i);
    if (c < 48 || c > 57) return undefined;
    v = v * 10 + (c - 48);
  }
  if (!Number.isSafeInteger(v)) return undefined;
  return negative ? -v : v;
}

/**
 * C's atoi, as the server's hand-written key finders use it: leading white space, an optional
 * sign, then as many digits as there are; 0 when there are none.
 */
export function parseLooseInteger(arg: RedisArgument | undefined): number {
  if (arg === undefined) return 0;
  if (typeof arg === "number" && Number.isSafeInteger(arg)) return arg;
  const t = typeof arg === "number" ? numberText(arg) : arg;
  const len = t.length;
  let i = 0;
  while (i < len) {
    const c = code(t, i);
    // isspace: space, \t \n \v \f \r
    if (c === 32 || (c >= 9 && c <= 13)) i++;
    else break;
  }
  let negative = false;
  if (i < len && (code(t, i) === 45 || code(t, i) === 43)) {
    negative = code(t, i) === 45;
    i++;
  }
  let v = 0;
  for (; i < len; i++) {
    const c = code(t, i);
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return negative ? -v : v;
}
