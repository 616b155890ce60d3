// What the cache does with a raw reply: a private copy (callers may change what they get) and
// an estimate of its size.
import type { RespValue } from "../resp/types.ts";

/** Fixed cost counted per cache entry (the entry object and its map slot; about what V8 takes). */
export const ENTRY_OVERHEAD = 200;
/** Fixed cost counted per element of an aggregate reply. */
const ELEMENT_OVERHEAD = 16;

/** A deep copy of the mutable parts of a reply (arrays, maps, sets, byte arrays). */
export function copyReply(v: RespValue): RespValue {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    const out: RespValue[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyReply(v[i] as RespValue);
    return out;
  }
  if (v instanceof Uint8Array) return v.slice();
  if (v instanceof Map) {
    const out = new Map<RespValue, RespValue>();
    for (const [k, x] of v) out.set(copyReply(k), copyReply(x));
    return out;
  }
  if (v instanceof Set) {
    const out = new Set<RespValue>();
    for (const x of v) out.add(copyReply(x));
    return out;
  }
  return v;
}

/** An estimate of the bytes a reply takes in memory. */
export function replyBytes(v: RespValue): number {
  switch (typeof v) {
    case "string":
      return v.length;
    case "number":
    case "boolean":
      return 8;
    case "bigint":
      return 16;
    case "object": {
      if (v === null) return 0;
      if (v instanceof Uint8Array) return v.byteLength + ELEMENT_OVERHEAD;
      let n = ELEMENT_OVERHEAD;
      if (Array.isArray(v) || v instanceof Set) {
        for (const x of v) n += ELEMENT_OVERHEAD + replyBytes(x as RespValue);
      } else if (v instanceof Map) {
        for (const [k, x] of v) {
          n += 2 * ELEMENT_OVERHEAD + replyBytes(k) + replyBytes(x);
        }
      }
      return n;
    }
    default:
      return 8;
  }
}
