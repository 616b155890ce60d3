/**
 * Option and result types of the typed command methods.
 *
 * @module
 */

import type { RedisArgument } from "../resp/types.ts";

/**
 * Options of `set`.
 *
 * @example
 * ```ts
 * import type { SetOptions } from "@edge/redis";
 * const opts: SetOptions = { ex: 10, nx: true };
 * ```
 */
export interface SetOptions {
  /** Expire after this many seconds (`EX`). */
  ex?: number;
  /** Expire after this many milliseconds (`PX`). */
  px?: number;
  /** Expire at this Unix time in seconds (`EXAT`). */
  exat?: number;
  /** Expire at this Unix time in milliseconds (`PXAT`). */
  pxat?: number;
  /** Keep the current time to live (`KEEPTTL`). @default {false} */
  keepttl?: boolean;
  /** Only set if the key does not exist (`NX`). @default {false} */
  nx?: boolean;
  /** Only set if the key exists (`XX`). @default {false} */
  xx?: boolean;
  /** Return the old value (`GET`). @default {false} */
  get?: boolean;
}

/**
 * Options of `getex`: exactly one of them.
 *
 * @example
 * ```ts
 * import type { GetExOptions } from "@edge/redis";
 * const opts: GetExOptions = { px: 1500 };
 * ```
 */
export interface GetExOptions {
  /** Expire after this many seconds (`EX`). */
  ex?: number;
  /** Expire after this many milliseconds (`PX`). */
  px?: number;
  /** Expire at this Unix time in seconds (`EXAT`). */
  exat?: number;
  /** Expire at this Unix time in milliseconds (`PXAT`). */
  pxat?: number;
  /** Remove the time to live (`PERSIST`). @default {false} */
  persist?: boolean;
}

/**
 * Conditions of `expire`, `pexpire`, `expireat`, `pexpireat` (Redis 7).
 *
 * @example
 * ```ts
 * import type { ExpireOptions } from "@edge/redis";
 * const opts: ExpireOptions = { nx: true };
 * ```
 */
export interface ExpireOptions {
  /** Only when the key has no expiry (`NX`). @default {false} */
  nx?: boolean;
  /** Only when the key has an expiry (`XX`). @default {false} */
  xx?: boolean;
  /** Only when the new expiry is greater (`GT`). @default {false} */
  gt?: boolean;
  /** Only when the new expiry is less (`LT`). @default {false} */
  lt?: boolean;
}

/**
 * Options of `scanPage`.
 *
 * @example
 * ```ts
 * import type { ScanOptions } from "@edge/redis";
 * const opts: ScanOptions = { match: "user:*", count: 100, type: "hash" };
 * ```
 */
export interface ScanOptions {
  /** Glob-style pattern (`MATCH`). */
  match?: string;
  /** Hint for the amount of work per call (`COUNT`). */
  count?: number;
  /** Only keys of this type (`TYPE`), e.g. `"string"`, `"hash"`. */
  type?: string;
}

/**
 * Options of `hscanPage`, `sscanPage`, `zscanPage`.
 *
 * @example
 * ```ts
 * import type { CollectionScanOptions } from "@edge/redis";
 * const opts: CollectionScanOptions = { match: "f*", count: 50 };
 * ```
 */
export interface CollectionScanOptions {
  /** Glob-style pattern (`MATCH`). */
  match?: string;
  /** Hint for the amount of work per call (`COUNT`). */
  count?: number;
}

/**
 * Options of `copy`.
 *
 * @example
 * ```ts
 * import type { CopyOptions } from "@edge/redis";
 * const opts: CopyOptions = { db: 1, replace: true };
 * ```
 */
export interface CopyOptions {
  /** Destination database (`DB`). */
  db?: number;
  /** Overwrite the destination (`REPLACE`). @default {false} */
  replace?: boolean;
}

/**
 * Options of `restore`.
 *
 * @example
 * ```ts
 * import type { RestoreOptions } from "@edge/redis";
 * const opts: RestoreOptions = { replace: true };
 * ```
 */
export interface RestoreOptions {
  /** Overwrite an existing key (`REPLACE`). @default {false} */
  replace?: boolean;
  /** The ttl is an absolute Unix time in milliseconds (`ABSTTL`). @default {false} */
  absttl?: boolean;
  /** Idle time in seconds (`IDLETIME`). */
  idletime?: number;
  /** LFU frequency (`FREQ`). */
  freq?: number;
}

/**
 * Options of `sort` and `sortStore`.
 *
 * @example
 * ```ts
 * import type { SortOptions } from "@edge/redis";
 * const opts: SortOptions = { order: "DESC", alpha: true, limit: { offset: 0, count: 10 } };
 * ```
 */
export interface SortOptions {
  /** Sort by external keys (`BY pattern`). */
  by?: string;
  /** Return a slice (`LIMIT offset count`). */
  limit?: { offset: number; count: number };
  /** Patterns of values to return (`GET pattern`, repeated). */
  get?: string[];
  /** Sort order. @default {"ASC"} */
  order?: "ASC" | "DESC";
  /** Sort lexicographically (`ALPHA`). @default {false} */
  alpha?: boolean;
}

/**
 * Options of `lpos`.
 *
 * @example
 * ```ts
 * import type { LposOptions } from "@edge/redis";
 * const opts: LposOptions = { rank: -1, maxlen: 1000 };
 * ```
 */
export interface LposOptions {
  /** Which match to return; negative counts from the tail (`RANK`). */
  rank?: number;
  /** Compare at most this many elements (`MAXLEN`). */
  maxlen?: number;
}

/**
 * A list end: `LEFT` (head) or `RIGHT` (tail).
 *
 * @example
 * ```ts
 * import type { ListSide } from "@edge/redis";
 * const side: ListSide = "LEFT";
 * ```
 */
export type ListSide = "LEFT" | "RIGHT";

/**
 * A sorted-set member with its score.
 *
 * @typeParam S The type of bulk strings (`string` or `Uint8Array`).
 * @example
 * ```ts
 * import type { ScoredMember } from "@edge/redis";
 * const m: ScoredMember = { member: "alice", score: 12 };
 * ```
 */
export interface ScoredMember<S = string> {
  /** The member. */
  member: S;
  /** Its score. */
  score: number;
}

/**
 * A member to add with `zadd`.
 *
 * @example
 * ```ts
 * import type { ZAddMember } from "@edge/redis";
 * const m: ZAddMember = { score: 1.5, member: "a" };
 * ```
 */
export interface ZAddMember {
  /** The score (`Infinity`/`-Infinity` allowed). */
  score: number;
  /** The member. */
  member: RedisArgument;
}

/**
 * Options of `zadd`.
 *
 * @example
 * ```ts
 * import type { ZAddOptions } from "@edge/redis";
 * const opts: ZAddOptions = { gt: true, ch: true };
 * ```
 */
export interface ZAddOptions {
  /** Only add new members (`NX`). @default {false} */
  nx?: boolean;
  /** Only update existing members (`XX`). @default {false} */
  xx?: boolean;
  /** Only update when the new score is greater (`GT`). @default {false} */
  gt?: boolean;
  /** Only update when the new score is less (`LT`). @default {false} */
  lt?: boolean;
  /** Count changed members, not only added ones (`CH`). @default {false} */
  ch?: boolean;
}

/**
 * Options of `zrange`, `zrangeWithScores` and `zrangestore`.
 *
 * Without `byScore`/`byLex`, `start` and `stop` are ranks. With `byScore` they are scores
 * (numbers, or strings such as `"(1"`, `"-inf"`); with `byLex` lexicographic bounds (`"[a"`, `"-"`).
 *
 * @example
 * ```ts
 * import type { ZRangeOptions } from "@edge/redis";
 * const opts: ZRangeOptions = { byScore: true, rev: true, limit: { offset: 0, count: 10 } };
 * ```
 */
export interface ZRangeOptions {
  /** Interpret the bounds as scores (`BYSCORE`). @default {false} */
  byScore?: boolean;
  /** Interpret the bounds as lexicographic ranges (`BYLEX`). @default {false} */
  byLex?: boolean;
  /** Reverse order (`REV`). @default {false} */
  rev?: boolean;
  /** A slice of the result (`LIMIT offset count`), with `byScore` or `byLex` only. */
  limit?: { offset: number; count: number };
}

/**
 * Options of `zunionstore`, `zinterstore`, `zunion`, `zinter`.
 *
 * @example
 * ```ts
 * import type { ZAggregateOptions } from "@edge/redis";
 * const opts: ZAggregateOptions = { weights: [1, 2], aggregate: "MAX" };
 * ```
 */
export interface ZAggregateOptions {
  /** A weight per input key (`WEIGHTS`). */
  weights?: number[];
  /** How scores are combined (`AGGREGATE`). @default {"SUM"} */
  aggregate?: "SUM" | "MIN" | "MAX";
}

/**
 * Which end `zmpop`/`bzmpop` pops from.
 *
 * @example
 * ```ts
 * import type { ZPopSide } from "@edge/redis";
 * const side: ZPopSide = "MIN";
 * ```
 */
export type ZPopSide = "MIN" | "MAX";

/**
 * Result of `blpop`/`brpop`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { KeyElement } from "@edge/redis";
 * const r: KeyElement = { key: "queue", element: "job1" };
 * ```
 */
export interface KeyElement<S = string> {
  /** The key the element was popped from. */
  key: string;
  /** The element. */
  element: S;
}

/**
 * Result of `lmpop`/`blmpop`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { KeyElements } from "@edge/redis";
 * const r: KeyElements = { key: "queue", elements: ["a", "b"] };
 * ```
 */
export interface KeyElements<S = string> {
  /** The key the elements were popped from. */
  key: string;
  /** The elements. */
  elements: S[];
}

/**
 * Result of `zmpop`/`bzmpop`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { KeyScoredMembers } from "@edge/redis";
 * const r: KeyScoredMembers = { key: "z", members: [{ member: "a", score: 1 }] };
 * ```
 */
export interface KeyScoredMembers<S = string> {
  /** The key the members were popped from. */
  key: string;
  /** The members with their scores. */
  members: ScoredMember<S>[];
}

/**
 * Result of `bzpopmin`/`bzpopmax`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { KeyScoredMember } from "@edge/redis";
 * const r: KeyScoredMember = { key: "z", member: "a", score: 1 };
 * ```
 */
export interface KeyScoredMember<S = string> {
  /** The key the member was popped from. */
  key: string;
  /** The member. */
  member: S;
  /** Its score. */
  score: number;
}

/**
 * Result of `lcsIdx`.
 *
 * @example
 * ```ts
 * import type { LcsIdxResult } from "@edge/redis";
 * const r: LcsIdxResult = { matches: [{ key1: [4, 7], key2: [5, 8], length: 4 }], len: 6 };
 * ```
 */
export interface LcsIdxResult {
  /** Matching ranges (inclusive byte offsets), last match first. */
  matches: { key1: [number, number]; key2: [number, number]; length?: number }[];
  /** Length of the longest common subsequence. */
  len: number;
}

/**
 * A stream entry.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { StreamEntry } from "@edge/redis";
 * const e: StreamEntry = { id: "1700000000000-0", fields: { temp: "21.5" } };
 * ```
 */
export interface StreamEntry<S = string> {
  /** The entry ID, `ms-seq`. */
  id: string;
  /** Field/value pairs; empty for an entry deleted while pending (XREADGROUP, XCLAIM). */
  fields: Record<string, S>;
}

/**
 * Entries of one stream, as returned by `xread`/`xreadgroup`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { StreamMessages } from "@edge/redis";
 * const r: StreamMessages = { key: "s", entries: [{ id: "1-0", fields: { a: "1" } }] };
 * ```
 */
export interface StreamMessages<S = string> {
  /** The stream key. */
  key: string;
  /** Its entries. */
  entries: StreamEntry<S>[];
}

/**
 * Field/value pairs of a stream entry to add: a record or a list of pairs.
 *
 * @example
 * ```ts
 * import type { StreamFields } from "@edge/redis";
 * const f: StreamFields = { temp: 21.5, unit: "C" };
 * ```
 */
export type StreamFields =
  | Record<string, RedisArgument>
  | [RedisArgument, RedisArgument][];

/**
 * Trimming of `xadd` and `xtrim`: one of `maxlen` or `minid`.
 *
 * @example
 * ```ts
 * import type { StreamTrimOptions } from "@edge/redis";
 * const t: StreamTrimOptions = { maxlen: 1000, approximate: true };
 * ```
 */
export interface StreamTrimOptions {
  /** Keep at most this many entries (`MAXLEN`). */
  maxlen?: number;
  /** Evict entries with IDs lower than this (`MINID`). */
  minid?: string;
  /** Trim lazily, in whole macro nodes (`~`). @default {false} */
  approximate?: boolean;
  /** Evict at most this many entries (`LIMIT`, with `approximate` only). */
  limit?: number;
}

/**
 * Options of `xadd`.
 *
 * @example
 * ```ts
 * import type { XAddOptions } from "@edge/redis";
 * const opts: XAddOptions = { nomkstream: true, maxlen: 100, approximate: true };
 * ```
 */
export interface XAddOptions extends StreamTrimOptions {
  /** Do not create the stream if it does not exist (`NOMKSTREAM`). @default {false} */
  nomkstream?: boolean;
}

/**
 * Streams to read: a record key -> ID, or a list of `{ key, id }`.
 *
 * @example
 * ```ts
 * import type { XReadStreams } from "@edge/redis";
 * const s: XReadStreams = { "events": "$" };
 * ```
 */
export type XReadStreams =
  | Record<string, RedisArgument>
  | { key: RedisArgument; id: RedisArgument }[];

/**
 * Options of `xread`.
 *
 * @example
 * ```ts
 * import type { XReadOptions } from "@edge/redis";
 * const opts: XReadOptions = { count: 10, block: 5000 };
 * ```
 */
export interface XReadOptions {
  /** At most this many entries per stream (`COUNT`). */
  count?: number;
  /** Wait up to this many milliseconds for data (`BLOCK`); 0 waits forever. */
  block?: number;
}

/**
 * Options of `xreadgroup`.
 *
 * @example
 * ```ts
 * import type { XReadGroupOptions } from "@edge/redis";
 * const opts: XReadGroupOptions = { count: 10, noack: true };
 * ```
 */
export interface XReadGroupOptions extends XReadOptions {
  /** Do not add the entries to the pending list (`NOACK`). @default {false} */
  noack?: boolean;
}

/**
 * Options of `xgroupCreate`.
 *
 * @example
 * ```ts
 * import type { XGroupCreateOptions } from "@edge/redis";
 * const opts: XGroupCreateOptions = { mkstream: true };
 * ```
 */
export interface XGroupCreateOptions {
  /** Create the stream if it does not exist (`MKSTREAM`). @default {false} */
  mkstream?: boolean;
  /** The group's entries-read counter (`ENTRIESREAD`). */
  entriesRead?: number;
}

/**
 * Summary form of `xpending`.
 *
 * @example
 * ```ts
 * import type { PendingSummary } from "@edge/redis";
 * const p: PendingSummary = { count: 0, minId: null, maxId: null, consumers: [] };
 * ```
 */
export interface PendingSummary {
  /** Number of pending entries. */
  count: number;
  /** Smallest pending ID, null when none. */
  minId: string | null;
  /** Greatest pending ID, null when none. */
  maxId: string | null;
  /** Consumers with pending entries. */
  consumers: { name: string; pending: number }[];
}

/**
 * Options of `xpendingRange` (the extended form of XPENDING).
 *
 * @example
 * ```ts
 * import type { XPendingRangeOptions } from "@edge/redis";
 * const opts: XPendingRangeOptions = { start: "-", end: "+", count: 10, idle: 60_000 };
 * ```
 */
export interface XPendingRangeOptions {
  /** Smallest ID. @default {"-"} */
  start?: RedisArgument;
  /** Greatest ID. @default {"+"} */
  end?: RedisArgument;
  /** Maximum number of entries. */
  count: number;
  /** Only entries of this consumer. */
  consumer?: RedisArgument;
  /** Only entries idle at least this many milliseconds (`IDLE`). */
  idle?: number;
}

/**
 * One entry of the extended form of XPENDING.
 *
 * @example
 * ```ts
 * import type { PendingEntry } from "@edge/redis";
 * const e: PendingEntry = { id: "1-0", consumer: "c1", idle: 1200, deliveries: 1 };
 * ```
 */
export interface PendingEntry {
  /** Entry ID. */
  id: string;
  /** Consumer that owns it. */
  consumer: string;
  /** Milliseconds since it was last delivered. */
  idle: number;
  /** How many times it was delivered. */
  deliveries: number;
}

/**
 * Options of `xclaim`.
 *
 * @example
 * ```ts
 * import type { XClaimOptions } from "@edge/redis";
 * const opts: XClaimOptions = { retrycount: 3, force: true };
 * ```
 */
export interface XClaimOptions {
  /** Set the idle time in milliseconds (`IDLE`). */
  idle?: number;
  /** Set the idle time to a Unix time in milliseconds (`TIME`). */
  time?: number;
  /** Set the delivery counter (`RETRYCOUNT`). */
  retrycount?: number;
  /** Create pending entries for IDs that are not pending (`FORCE`). @default {false} */
  force?: boolean;
  /** Update the group's last ID (`LASTID`). */
  lastid?: RedisArgument;
}

/**
 * Result of `xautoclaim`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { XAutoClaimResult } from "@edge/redis";
 * const r: XAutoClaimResult = { next: "0-0", entries: [], deleted: [] };
 * ```
 */
export interface XAutoClaimResult<S = string> {
  /** Cursor for the next call; `"0-0"` when done. */
  next: string;
  /** Claimed entries. */
  entries: StreamEntry<S>[];
  /** IDs that no longer exist and were removed from the pending list. */
  deleted: string[];
}

/**
 * Result of `xautoclaimJustId`.
 *
 * @example
 * ```ts
 * import type { XAutoClaimJustIdResult } from "@edge/redis";
 * const r: XAutoClaimJustIdResult = { next: "0-0", ids: ["1-0"], deleted: [] };
 * ```
 */
export interface XAutoClaimJustIdResult {
  /** Cursor for the next call; `"0-0"` when done. */
  next: string;
  /** Claimed IDs. */
  ids: string[];
  /** IDs that no longer exist and were removed from the pending list. */
  deleted: string[];
}

/**
 * Bit-range options of `bitcount` and `bitpos`.
 *
 * @example
 * ```ts
 * import type { BitRangeOptions } from "@edge/redis";
 * const opts: BitRangeOptions = { start: 0, end: 7, mode: "BIT" };
 * ```
 */
export interface BitRangeOptions {
  /** First byte (or bit). */
  start?: number;
  /** Last byte (or bit), inclusive; needs `start`. */
  end?: number;
  /** Unit of `start`/`end`. @default {"BYTE"} */
  mode?: "BYTE" | "BIT";
}

/**
 * One BITFIELD operation. `type` is e.g. `"u8"`, `"i16"`; `offset` a number or `"#n"`.
 *
 * @example
 * ```ts
 * import type { BitfieldOperation } from "@edge/redis";
 * const ops: BitfieldOperation[] = [
 *   { op: "OVERFLOW", behavior: "SAT" },
 *   { op: "INCRBY", type: "u8", offset: 0, increment: 300 },
 * ];
 * ```
 */
export type BitfieldOperation =
  | { op: "GET"; type: string; offset: number | string }
  | { op: "SET"; type: string; offset: number | string; value: number }
  | { op: "INCRBY"; type: string; offset: number | string; increment: number }
  | { op: "OVERFLOW"; behavior: "WRAP" | "SAT" | "FAIL" };

/**
 * A unit of distance for geo commands.
 *
 * @example
 * ```ts
 * import type { GeoUnit } from "@edge/redis";
 * const u: GeoUnit = "km";
 * ```
 */
export type GeoUnit = "m" | "km" | "ft" | "mi";

/**
 * A member to add with `geoadd`.
 *
 * @example
 * ```ts
 * import type { GeoMember } from "@edge/redis";
 * const m: GeoMember = { longitude: 13.361389, latitude: 38.115556, member: "Palermo" };
 * ```
 */
export interface GeoMember {
  /** Longitude in degrees. */
  longitude: number;
  /** Latitude in degrees. */
  latitude: number;
  /** The member. */
  member: RedisArgument;
}

/**
 * Options of `geoadd`.
 *
 * @example
 * ```ts
 * import type { GeoAddOptions } from "@edge/redis";
 * const opts: GeoAddOptions = { xx: true, ch: true };
 * ```
 */
export interface GeoAddOptions {
  /** Only add new members (`NX`). @default {false} */
  nx?: boolean;
  /** Only update existing members (`XX`). @default {false} */
  xx?: boolean;
  /** Count changed members, not only added ones (`CH`). @default {false} */
  ch?: boolean;
}

/**
 * A position.
 *
 * @example
 * ```ts
 * import type { GeoPosition } from "@edge/redis";
 * const p: GeoPosition = { longitude: 13.36, latitude: 38.11 };
 * ```
 */
export interface GeoPosition {
  /** Longitude in degrees. */
  longitude: number;
  /** Latitude in degrees. */
  latitude: number;
}

/**
 * The search area of `geosearch`: a centre (`from`) and a shape (`by`).
 *
 * @example
 * ```ts
 * import type { GeoSearchOptions } from "@edge/redis";
 * const opts: GeoSearchOptions = {
 *   from: { longitude: 15, latitude: 37 },
 *   by: { radius: 200, unit: "km" },
 *   order: "ASC",
 *   count: 5,
 * };
 * ```
 */
export interface GeoSearchOptions {
  /** The centre: a member of the set or a position. */
  from: { member: RedisArgument } | GeoPosition;
  /** The shape: a circle or a box. */
  by: { radius: number; unit: GeoUnit } | { width: number; height: number; unit: GeoUnit };
  /** Sort by distance. */
  order?: "ASC" | "DESC";
  /** At most this many results (`COUNT`). */
  count?: number;
  /** With `count`: return as soon as enough matches are found (`ANY`). @default {false} */
  any?: boolean;
}

/**
 * Which extra data `geosearchWith` returns.
 *
 * @example
 * ```ts
 * import type { GeoSearchWith } from "@edge/redis";
 * const w: GeoSearchWith = { withDist: true, withCoord: true };
 * ```
 */
export interface GeoSearchWith {
  /** Distance from the centre, in the search unit (`WITHDIST`). @default {false} */
  withDist?: boolean;
  /** Raw geohash as a number (`WITHHASH`). @default {false} */
  withHash?: boolean;
  /** Position (`WITHCOORD`). @default {false} */
  withCoord?: boolean;
}

/**
 * One result of `geosearchWith`.
 *
 * @typeParam S The type of bulk strings.
 * @example
 * ```ts
 * import type { GeoSearchEntry } from "@edge/redis";
 * const e: GeoSearchEntry = { member: "Palermo", distance: 190.4424 };
 * ```
 */
export interface GeoSearchEntry<S = string> {
  /** The member. */
  member: S;
  /** Distance from the centre (with `withDist`). */
  distance?: number;
  /** Raw geohash (with `withHash`). */
  hash?: number;
  /** Position (with `withCoord`). */
  coordinates?: GeoPosition;
}

/**
 * A library of `functionList`.
 *
 * @example
 * ```ts
 * import type { FunctionLibrary } from "@edge/redis";
 * const l: FunctionLibrary = { libraryName: "mylib", engine: "LUA", functions: [] };
 * ```
 */
export interface FunctionLibrary {
  /** Library name. */
  libraryName: string;
  /** Engine, `LUA`. */
  engine: string;
  /** Its functions. */
  functions: { name: string; description: string | null; flags: string[] }[];
  /** The source code (with `withCode`). */
  libraryCode?: string;
}

/**
 * Filters of `clientKill` (combined with AND).
 *
 * @example
 * ```ts
 * import type { ClientKillFilters } from "@edge/redis";
 * const f: ClientKillFilters = { type: "pubsub", skipme: true };
 * ```
 */
export interface ClientKillFilters {
  /** Client ID (`ID`). */
  id?: number;
  /** Client type (`TYPE`). */
  type?: "normal" | "master" | "replica" | "pubsub";
  /** Authenticated user (`USER`). */
  user?: string;
  /** Remote address `ip:port` (`ADDR`). */
  addr?: string;
  /** Local address `ip:port` (`LADDR`). */
  laddr?: string;
  /** Skip the calling client (`SKIPME`). @default {true} */
  skipme?: boolean;
  /** Only clients older than this many seconds (`MAXAGE`, Redis 7.4). */
  maxage?: number;
}

/**
 * A flush mode option (`ASYNC` when true, `SYNC` when false, the server default when absent).
 *
 * @example
 * ```ts
 * import type { FlushOptions } from "@edge/redis";
 * const opts: FlushOptions = { async: true };
 * ```
 */
export interface FlushOptions {
  /** Flush in the background (`ASYNC`) or synchronously (`SYNC`). */
  async?: boolean;
}
