/**
 * What the options object of each typed command may hold, checked by
 * {@linkcode checkCommandOptions} when one is given. The tables are typed by the options
 * types, so a key added to a type and not here (or the other way round) fails the type check.
 *
 * @module
 */

import type { KeyTable, OptionSpec } from "../_validate.ts";
import type {
  BitRangeOptions,
  ClientKillFilters,
  CollectionScanOptions,
  CopyOptions,
  ExpireOptions,
  FlushOptions,
  GeoAddOptions,
  GeoSearchOptions,
  GeoSearchWith,
  GetExOptions,
  LposOptions,
  RestoreOptions,
  ScanOptions,
  SetOptions,
  SortOptions,
  StreamTrimOptions,
  XAddOptions,
  XClaimOptions,
  XGroupCreateOptions,
  XPendingRangeOptions,
  XReadGroupOptions,
  XReadOptions,
  ZAddOptions,
  ZAggregateOptions,
  ZRangeOptions,
} from "./types.ts";

export {
  cannotUse,
  checkArgs,
  checkCommandOptions,
  nameOf,
  tooManyArguments,
} from "../_validate.ts";

function spec<T>(keys: KeyTable<T>, form: string, hints?: Record<string, string>): OptionSpec {
  return { keys, form, hints };
}

// Parts and forms used by several specs, written once (the bundle repeats every literal).
const EXPIRY = { ex: true, px: true, exat: true, pxat: true } as const;
const TRIM = { maxlen: true, minid: true, approximate: true, limit: true } as const;
const GEO = { from: true, by: true, order: true, count: true, any: true } as const;
const NX = "{ nx: true }";
const REPLACE = "{ replace: true }";
const TRIM_FORM = "{ maxlen: 1000, approximate: true }";
const READ_FORM = "{ count: 10, block: 1000 }";
const GEO_FORM = '{ from: { member: "m" }, by: { radius: 10, unit: "km" } }';

/** `set`. */
export const SET: OptionSpec = spec<SetOptions>(
  { ...EXPIRY, keepttl: true, nx: true, xx: true, get: true },
  "{ ex: 60, nx: true }",
  { expiration: "give the expiry as ex, px, exat or pxat, e.g. { ex: 60 }" },
);
/** `getex`. */
export const GETEX: OptionSpec = spec<GetExOptions>({ ...EXPIRY, persist: true }, "{ ex: 60 }");
/** `expire` and its variants. */
export const EXPIRE: OptionSpec = spec<ExpireOptions>(
  { nx: true, xx: true, gt: true, lt: true },
  NX,
);
/** `scanPage`. */
export const SCAN: OptionSpec = spec<ScanOptions>(
  { match: true, count: true, type: true },
  '{ match: "user:*", count: 100 }',
);
/** `hscanPage`, `sscanPage`, `zscanPage`. */
export const COLLECTION_SCAN: OptionSpec = spec<CollectionScanOptions>(
  { match: true, count: true },
  '{ match: "f*", count: 100 }',
);
/** `copy`. */
export const COPY: OptionSpec = spec<CopyOptions>({ db: true, replace: true }, REPLACE);
/** `restore`. */
export const RESTORE: OptionSpec = spec<RestoreOptions>(
  { replace: true, absttl: true, idletime: true, freq: true },
  REPLACE,
);
/** `sort`, `sortStore`. */
export const SORT: OptionSpec = spec<SortOptions>(
  { by: true, limit: true, get: true, order: true, alpha: true },
  '{ order: "DESC", alpha: true }',
);
/** `lpos`, `lposCount`. */
export const LPOS: OptionSpec = spec<LposOptions>({ rank: true, maxlen: true }, "{ rank: 1 }");
/** `zadd`, `zaddIncr`. */
export const ZADD: OptionSpec = spec<ZAddOptions>(
  { nx: true, xx: true, gt: true, lt: true, ch: true },
  NX,
  { incr: "use zaddIncr(key, { score, member })" },
);
const BY = "use byScore: true or byLex: true";
const RANGE_SCORES = "use zrangeWithScores(key, start, stop, options) for the scores";
/** `zrange`, `zrangeWithScores`, `zrangestore`. */
export const ZRANGE: OptionSpec = spec<ZRangeOptions>(
  { byScore: true, byLex: true, rev: true, limit: true },
  "{ byScore: true, limit: { offset: 0, count: 10 } }",
  { withScores: RANGE_SCORES, WITHSCORES: RANGE_SCORES, by: BY, BY: BY },
);
const WITH_SCORES = "use the ...WithScores method (zunionWithScores, zinterWithScores)";
/** `zunion`, `zinter` and their variants. */
export const ZAGGREGATE: OptionSpec = spec<ZAggregateOptions>(
  { weights: true, aggregate: true },
  '{ weights: [1, 2], aggregate: "MAX" }',
  { withScores: WITH_SCORES, WITHSCORES: WITH_SCORES },
);
/** `xtrim`. */
export const XTRIM: OptionSpec = spec<StreamTrimOptions>(
  TRIM,
  TRIM_FORM,
);
/** `xadd`. */
export const XADD: OptionSpec = spec<XAddOptions>(
  { ...TRIM, nomkstream: true },
  TRIM_FORM,
);
/** `xread`. */
export const XREAD: OptionSpec = spec<XReadOptions>(
  { count: true, block: true },
  READ_FORM,
);
/** `xreadgroup`. */
export const XREADGROUP: OptionSpec = spec<XReadGroupOptions>(
  { count: true, block: true, noack: true },
  READ_FORM,
);
/** `xgroupCreate`. */
export const XGROUP_CREATE: OptionSpec = spec<XGroupCreateOptions>(
  { mkstream: true, entriesRead: true },
  "{ mkstream: true }",
);
/** `xpendingRange`. */
export const XPENDING_RANGE: OptionSpec = spec<XPendingRangeOptions>(
  { start: true, end: true, count: true, consumer: true, idle: true },
  '{ start: "-", end: "+", count: 10 }',
);
/** `xclaim`, `xclaimJustId`. */
export const XCLAIM: OptionSpec = spec<XClaimOptions>(
  { idle: true, time: true, retrycount: true, force: true, lastid: true },
  "{ idle: 1000 }",
  { justId: "use xclaimJustId" },
);
/** `bitcount`, `bitpos`. */
export const BIT_RANGE: OptionSpec = spec<BitRangeOptions>(
  { start: true, end: true, mode: true },
  '{ start: 0, end: 10, mode: "BYTE" }',
);
/** `geoadd`. */
export const GEOADD: OptionSpec = spec<GeoAddOptions>(
  { nx: true, xx: true, ch: true },
  NX,
);
const GEO_WITH = "use geosearchWith(key, options, { withDist, withHash, withCoord })";
/** `geosearch`, `geosearchWith`. */
export const GEOSEARCH: OptionSpec = spec<GeoSearchOptions>(
  GEO,
  GEO_FORM,
  { withDist: GEO_WITH, withHash: GEO_WITH, withCoord: GEO_WITH },
);
/** `geosearchstore`. */
export const GEOSEARCHSTORE: OptionSpec = spec<GeoSearchOptions & { storeDist?: boolean }>(
  { ...GEO, storeDist: true },
  GEO_FORM,
);
/** The `withOptions` of `geosearchWith`. */
export const GEOSEARCH_WITH: OptionSpec = spec<GeoSearchWith>(
  { withDist: true, withHash: true, withCoord: true },
  "{ withDist: true }",
);
/** `flushdb`, `flushall`, `scriptFlush`, `functionFlush`. */
export const FLUSH: OptionSpec = spec<FlushOptions>({ async: true }, "{ async: true }");
/** `clientKill`. */
export const CLIENT_KILL: OptionSpec = spec<ClientKillFilters>(
  { id: true, type: true, user: true, addr: true, laddr: true, skipme: true, maxage: true },
  "{ id: 42 }",
);
/** `{ count }`: `lmpop`, `zmpop`, `xrange`, `xautoclaim`, ... */
export const COUNT: OptionSpec = spec<{ count?: number }>({ count: true }, "{ count: 10 }");
/** `sintercard`. */
export const LIMIT: OptionSpec = spec<{ limit?: number }>({ limit: true }, "{ limit: 10 }");
/** `lcsIdx`. */
export const LCS_IDX: OptionSpec = spec<{ minMatchLen?: number; withMatchLen?: boolean }>(
  { minMatchLen: true, withMatchLen: true },
  "{ minMatchLen: 4 }",
);
/** `xgroupSetId`. */
export const ENTRIES_READ: OptionSpec = spec<{ entriesRead?: number }>(
  { entriesRead: true },
  "{ entriesRead: 10 }",
);
/** `functionLoad`. */
export const FUNCTION_LOAD: OptionSpec = spec<{ replace?: boolean }>(
  { replace: true },
  REPLACE,
);
/** `functionList`. */
export const FUNCTION_LIST: OptionSpec = spec<{ libraryName?: string; withCode?: boolean }>(
  { libraryName: true, withCode: true },
  "{ withCode: true }",
);
/** `clientList`. */
export const CLIENT_LIST: OptionSpec = spec<{ type?: string; id?: number[] }>(
  { type: true, id: true },
  '{ type: "pubsub" }',
);
/** `memoryUsage`. */
export const MEMORY_USAGE: OptionSpec = spec<{ samples?: number }>(
  { samples: true },
  "{ samples: 5 }",
);
