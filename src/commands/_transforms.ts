// Reply transforms shared by the typed command methods. Every transform accepts both the RESP2
// and the RESP3 shape of its reply, and bulk strings as `string` or `Uint8Array` (binary view).
import type { RespValue } from "../resp/types.ts";
import type {
  GeoPosition,
  GeoSearchEntry,
  LcsIdxResult,
  PendingEntry,
  PendingSummary,
  ScoredMember,
  StreamEntry,
  StreamMessages,
} from "./types.ts";

const decoder = new TextDecoder();

/** Bulk or simple string (or number) to a JS string. */
export function str(v: RespValue): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return decoder.decode(v);
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (v === null) return "";
  throw new TypeError(`Cannot read a string from a reply of type ${describe(v)}`);
}

/** Like {@linkcode str}, `null` stays `null`. */
export function strOrNull(v: RespValue): string | null {
  return v === null ? null : str(v);
}

function describe(v: RespValue): string {
  if (Array.isArray(v)) return "array";
  if (v instanceof Map) return "map";
  if (v instanceof Set) return "set";
  return typeof v;
}

/** Integer, double, big number or numeric string (`inf`, `-inf`, `nan` included) to a number. */
export function num(v: RespValue): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  const s = str(v).trim().toLowerCase();
  if (s === "inf" || s === "+inf" || s === "infinity" || s === "+infinity") return Infinity;
  if (s === "-inf" || s === "-infinity") return -Infinity;
  if (s === "nan") return NaN;
  const n = Number(s);
  if (Number.isNaN(n)) throw new TypeError(`Cannot read a number from the reply "${s}"`);
  return n;
}

/** Like {@linkcode num}, `null` stays `null`. */
export function numOrNull(v: RespValue): number | null {
  return v === null ? null : num(v);
}

/** 1/0 or a RESP3 boolean to a boolean. */
export function bool(v: RespValue): boolean {
  if (typeof v === "boolean") return v;
  return num(v) !== 0;
}

/** A status reply (`OK`), whatever the view: {@linkcode str}. */
export const ok: (v: RespValue) => string = str;

/** `OK` or a null reply (SET NX, ...): {@linkcode strOrNull}. */
export const okOrNull: (v: RespValue) => string | null = strOrNull;

/** An array, a RESP3 set or null (as an empty array) to an array. */
export function arr(v: RespValue): RespValue[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Set) return [...v];
  if (v === null) return [];
  if (v instanceof Map) {
    const out: RespValue[] = [];
    for (const [k, x] of v) out.push(k, x);
    return out;
  }
  throw new TypeError(`Cannot read an array from a reply of type ${describe(v)}`);
}

/** An array or set whose null stays null. */
export function arrOrNull(v: RespValue): RespValue[] | null {
  return v === null ? null : arr(v);
}

/** Array of numbers (integers or numeric strings). */
export function nums(v: RespValue): number[] {
  return arr(v).map(num);
}

/** Array of numbers or nulls. */
export function numsOrNull(v: RespValue): (number | null)[] {
  return arr(v).map(numOrNull);
}

/** Array of 0/1 to booleans. */
export function bools(v: RespValue): boolean[] {
  return arr(v).map(bool);
}

/** Array of strings decoded as text (ids, names). */
export function strs(v: RespValue): string[] {
  return arr(v).map(str);
}

/**
 * Key/value pairs as a list of tuples. Accepts a RESP3 map, a flat RESP2 array `[k, v, k, v]`,
 * or a RESP3 array of pairs `[[k, v], [k, v]]`.
 */
export function pairs(v: RespValue): [RespValue, RespValue][] {
  if (v === null) return [];
  if (v instanceof Map) return [...v];
  const a = arr(v);
  const out: [RespValue, RespValue][] = [];
  if (a.length > 0 && Array.isArray(a[0])) {
    for (const p of a) {
      const pa = arr(p);
      out.push([pa[0] ?? null, pa[1] ?? null]);
    }
    return out;
  }
  for (let i = 0; i + 1 < a.length; i += 2) out.push([a[i] as RespValue, a[i + 1] as RespValue]);
  return out;
}

/**
 * Sets `key` on a plain record. A key named `__proto__` becomes an own property instead of
 * replacing the record's prototype (a hash field may be called anything).
 */
export function put<V>(target: Record<string, V>, key: string, value: V): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else target[key] = value;
}

/** A map or flat array to a record with text keys and raw values. */
export function record(v: RespValue): Record<string, RespValue> {
  const out: Record<string, RespValue> = {};
  for (const [k, x] of pairs(v)) put(out, str(k), x);
  return out;
}

/** A map or flat array to a record with text keys and numeric values. */
export function numRecord(v: RespValue): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, x] of pairs(v)) put(out, str(k), num(x));
  return out;
}

/** A map or flat array to a record with text keys and text values. */
export function strRecord(v: RespValue): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of pairs(v)) put(out, str(k), str(x));
  return out;
}

/** Member/score pairs (flat RESP2 with string scores, RESP3 pairs with doubles). */
export function scored(v: RespValue): ScoredMember<never>[] {
  return pairs(v).map(([m, s]) => ({ member: m as never, score: num(s) }));
}

/** ZPOPMIN/ZPOPMAX without count: one pair or nothing. */
export function scoredOne(v: RespValue): ScoredMember<never> | null {
  const a = scored(v);
  return a[0] ?? null;
}

/** `[key, element]` of BLPOP/BRPOP, or null on timeout. */
export function keyElement(v: RespValue): { key: string; element: never } | null {
  if (v === null) return null;
  const a = arr(v);
  return { key: str(a[0] ?? null), element: (a[1] ?? null) as never };
}

/** `[key, [elements]]` of LMPOP/BLMPOP, or null. */
export function keyElements(v: RespValue): { key: string; elements: never[] } | null {
  if (v === null) return null;
  const a = arr(v);
  return { key: str(a[0] ?? null), elements: arr(a[1] ?? null) as never[] };
}

/** `[key, [[member, score]...]]` of ZMPOP/BZMPOP, or null. */
export function keyScored(v: RespValue): { key: string; members: ScoredMember<never>[] } | null {
  if (v === null) return null;
  const a = arr(v);
  return { key: str(a[0] ?? null), members: scored(a[1] ?? null) };
}

/** `[key, member, score]` of BZPOPMIN/BZPOPMAX, or null. */
export function keyMemberScore(
  v: RespValue,
): { key: string; member: never; score: number } | null {
  if (v === null) return null;
  const a = arr(v);
  return { key: str(a[0] ?? null), member: (a[1] ?? null) as never, score: num(a[2] ?? null) };
}

/** SCAN-family page: `[cursor, [items]]`. */
export function scanPage(v: RespValue): [string, never[]] {
  const a = arr(v);
  return [str(a[0] ?? "0"), arr(a[1] ?? null) as never[]];
}

/** A stream entry `[id, [field, value, ...]]` (fields null for a deleted entry). */
export function streamEntry(v: RespValue): StreamEntry<never> {
  const a = arr(v);
  const fields: Record<string, never> = {};
  for (const [k, x] of pairs(a[1] ?? null)) put(fields, str(k), x as never);
  return { id: str(a[0] ?? null), fields };
}

/** A list of stream entries. */
export function streamEntries(v: RespValue): StreamEntry<never>[] {
  return arr(v).map(streamEntry);
}

/** XREAD/XREADGROUP: RESP2 `[[key, entries], ...]`, RESP3 map key -> entries, or null. */
export function streamMessages(v: RespValue): StreamMessages<never>[] | null {
  if (v === null) return null;
  if (v instanceof Map) {
    return [...v].map(([k, e]) => ({ key: str(k), entries: streamEntries(e) }));
  }
  return arr(v).map((s) => {
    const a = arr(s);
    return { key: str(a[0] ?? null), entries: streamEntries(a[1] ?? null) };
  });
}

/** XAUTOCLAIM: `[next, entries, deleted]`. */
export function autoclaim(
  v: RespValue,
): { next: string; entries: StreamEntry<never>[]; deleted: string[] } {
  const a = arr(v);
  return {
    next: str(a[0] ?? null),
    entries: streamEntries(a[1] ?? null),
    deleted: a[2] === undefined ? [] : strs(a[2]),
  };
}

/** XAUTOCLAIM JUSTID: `[next, ids, deleted]`. */
export function autoclaimJustId(
  v: RespValue,
): { next: string; ids: string[]; deleted: string[] } {
  const a = arr(v);
  return {
    next: str(a[0] ?? null),
    ids: strs(a[1] ?? null),
    deleted: a[2] === undefined ? [] : strs(a[2]),
  };
}

/** XPENDING summary form. */
export function pendingSummary(v: RespValue): PendingSummary {
  const a = arr(v);
  return {
    count: num(a[0] ?? 0),
    minId: strOrNull(a[1] ?? null),
    maxId: strOrNull(a[2] ?? null),
    consumers: pairs(a[3] ?? null).map(([n, c]) => ({ name: str(n), pending: num(c) })),
  };
}

/** XPENDING extended form. */
export function pendingEntries(v: RespValue): PendingEntry[] {
  return arr(v).map((e) => {
    const a = arr(e);
    return {
      id: str(a[0] ?? null),
      consumer: str(a[1] ?? null),
      idle: num(a[2] ?? 0),
      deliveries: num(a[3] ?? 0),
    };
  });
}

/** XINFO STREAM: a record; `first-entry`/`last-entry` become stream entries. */
export function xinfoStream(v: RespValue): Record<string, unknown> {
  const r: Record<string, unknown> = record(v);
  for (const k of ["first-entry", "last-entry"]) {
    const e = r[k];
    if (Array.isArray(e)) r[k] = streamEntry(e);
  }
  return r;
}

/** XINFO GROUPS/CONSUMERS: a list of records. */
export function records(v: RespValue): Record<string, RespValue>[] {
  return arr(v).map(record);
}

/** GEOPOS: `[[lon, lat] | null, ...]`. */
export function geoPositions(v: RespValue): (GeoPosition | null)[] {
  return arr(v).map((p) => {
    if (p === null) return null;
    const a = arr(p);
    if (a.length < 2) return null;
    return { longitude: num(a[0] ?? null), latitude: num(a[1] ?? null) };
  });
}

/** GEOSEARCH with WITH* flags: `[member, dist?, hash?, [lon, lat]?]` per result. */
export function geoSearchWith(
  withDist: boolean,
  withHash: boolean,
  withCoord: boolean,
): (v: RespValue) => GeoSearchEntry<never>[] {
  return (v) =>
    arr(v).map((e) => {
      const a = arr(e);
      let i = 0;
      const out: GeoSearchEntry<never> = { member: (a[i++] ?? null) as never };
      if (withDist) out.distance = num(a[i++] ?? null);
      if (withHash) out.hash = num(a[i++] ?? null);
      if (withCoord) {
        const c = arr(a[i++] ?? null);
        out.coordinates = { longitude: num(c[0] ?? null), latitude: num(c[1] ?? null) };
      }
      return out;
    });
}

/** LCS IDX: `{ matches, len }` from a map (RESP3) or flat array (RESP2). */
export function lcsIdx(v: RespValue): LcsIdxResult {
  const r = record(v);
  const range = (x: RespValue): [number, number] => {
    const a = arr(x);
    return [num(a[0] ?? null), num(a[1] ?? null)];
  };
  return {
    matches: arr(r["matches"] ?? null).map((m) => {
      const a = arr(m);
      const out: LcsIdxResult["matches"][number] = {
        key1: range(a[0] ?? null),
        key2: range(a[1] ?? null),
      };
      if (a[2] !== undefined) out.length = num(a[2]);
      return out;
    }),
    len: num(r["len"] ?? 0),
  };
}

/** INFO text to `{ section: { field: value } }`, section names lowercased. */
export function info(v: RespValue): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let section: Record<string, string> = {};
  let named = false;
  for (const raw of str(v).split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const name = line.slice(1).trim().toLowerCase();
      section = Object.hasOwn(out, name) ? out[name]! : {};
      put(out, name, section);
      named = true;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon === -1) continue;
    if (!named) {
      out["default"] = section;
      named = true;
    }
    put(section, line.slice(0, colon), line.slice(colon + 1));
  }
  return out;
}

/** CLIENT LIST / CLIENT INFO text: one record per line of `key=value` pairs. */
export function clientList(v: RespValue): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const raw of str(v).split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const rec: Record<string, string> = {};
    for (const part of line.split(" ")) {
      const eq = part.indexOf("=");
      if (eq === -1) continue;
      put(rec, part.slice(0, eq), part.slice(eq + 1));
    }
    out.push(rec);
  }
  return out;
}

/** One line of CLIENT INFO. */
export function clientInfo(v: RespValue): Record<string, string> {
  return clientList(v)[0] ?? {};
}

/** TIME: `[seconds, microseconds]` as strings. */
export function time(v: RespValue): { seconds: number; microseconds: number } {
  const a = arr(v);
  return { seconds: num(a[0] ?? 0), microseconds: num(a[1] ?? 0) };
}

/** FUNCTION LIST: libraries with their functions. */
export function functionList(v: RespValue): {
  libraryName: string;
  engine: string;
  functions: { name: string; description: string | null; flags: string[] }[];
  libraryCode?: string;
}[] {
  return arr(v).map((lib) => {
    const r = record(lib);
    const out: {
      libraryName: string;
      engine: string;
      functions: { name: string; description: string | null; flags: string[] }[];
      libraryCode?: string;
    } = {
      libraryName: str(r["library_name"] ?? null),
      engine: str(r["engine"] ?? null),
      functions: arr(r["functions"] ?? null).map((f) => {
        const fr = record(f);
        return {
          name: str(fr["name"] ?? null),
          description: strOrNull(fr["description"] ?? null),
          flags: strs(fr["flags"] ?? null),
        };
      }),
    };
    if (r["library_code"] !== undefined) out.libraryCode = str(r["library_code"]);
    return out;
  });
}

/** HSCAN page: `[cursor, [field, value, ...]]` to `[cursor, [[field, value], ...]]`. */
export function hscanPage(v: RespValue): [string, [never, never][]] {
  const a = arr(v);
  return [str(a[0] ?? "0"), pairs(a[1] ?? null) as [never, never][]];
}

/** ZSCAN page: `[cursor, [member, score, ...]]` to `[cursor, ScoredMember[]]`. */
export function zscanPage(v: RespValue): [string, ScoredMember<never>[]] {
  const a = arr(v);
  return [str(a[0] ?? "0"), scored(a[1] ?? null)];
}

/** Array of strings or nulls decoded as text. */
export function strsOrNull(v: RespValue): (string | null)[] {
  return arr(v).map(strOrNull);
}
