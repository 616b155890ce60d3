/**
 * The typed command methods shared by every client, pipeline and transaction.
 *
 * @module
 */

import type { RedisArgument, RespValue } from "../resp/types.ts";
import { ReplyError } from "../errors.ts";
import {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_NONE,
  FLAG_READONLY,
  type Transform,
} from "./command_runner.ts";
import * as T from "./_transforms.ts";
import { sha1Hex } from "./_sha1.ts";
import * as O from "./_option_specs.ts";
import type { OptionSpec } from "../_validate.ts";
import {
  cannotUse,
  checkArgs,
  checkCommandOptions,
  nameOf,
  tooManyArguments,
} from "./_option_specs.ts";
import type {
  BitfieldOperation,
  BitRangeOptions,
  ClientKillFilters,
  CollectionScanOptions,
  CopyOptions,
  ExpireOptions,
  FlushOptions,
  FunctionLibrary,
  GeoAddOptions,
  GeoMember,
  GeoPosition,
  GeoSearchEntry,
  GeoSearchOptions,
  GeoSearchWith,
  GeoUnit,
  GetExOptions,
  KeyElement,
  KeyElements,
  KeyScoredMember,
  KeyScoredMembers,
  LcsIdxResult,
  ListSide,
  LposOptions,
  PendingEntry,
  PendingSummary,
  RestoreOptions,
  ScanOptions,
  ScoredMember,
  SetOptions,
  SortOptions,
  StreamEntry,
  StreamFields,
  StreamMessages,
  StreamTrimOptions,
  XAddOptions,
  XAutoClaimJustIdResult,
  XAutoClaimResult,
  XClaimOptions,
  XGroupCreateOptions,
  XPendingRangeOptions,
  XReadGroupOptions,
  XReadOptions,
  XReadStreams,
  ZAddMember,
  ZAddOptions,
  ZAggregateOptions,
  ZPopSide,
  ZRangeOptions,
} from "./types.ts";

export type * from "./types.ts";
export type { RedisArgument, RespValue } from "../resp/types.ts";
export type { RedisError, RedisErrorOptions, ReplyError } from "../errors.ts";
export type { Transform } from "./command_runner.ts";

const N = FLAG_NONE;
const RO = FLAG_READONLY;
const BL = FLAG_BLOCKING;

/** A score or score bound: infinities become `+inf`/`-inf`, strings (`"(1"`) pass through. */
function sc(v: number | string): RedisArgument {
  if (typeof v === "string") return v;
  if (v === Infinity) return "+inf";
  if (v === -Infinity) return "-inf";
  return v;
}

/** A Redis timeout in seconds (maybe fractional) to `blockMs`; 0 stays 0 (forever). */
function secToMs(seconds: number): number {
  if (!(seconds >= 0)) {
    throw new RangeError(`Cannot block for ${seconds} seconds: the timeout must be >= 0`);
  }
  return seconds === 0 ? 0 : Math.ceil(seconds * 1000);
}

// What the arguments checked below are, for their messages.
const LIST = 'a list, e.g. ["a", "b"]';
const PAIRS = 'a record or [name, value] pairs, e.g. { a: "1" }';

/** A record or a list of pairs (the pairs of `form`), flattened; a missing one or a bad pair refused. */
function flat(
  pairs: Record<string, RedisArgument> | [RedisArgument, RedisArgument][],
  form: string,
): RedisArgument[] {
  if (pairs == null) cannotUse(pairs, "the pairs", form, PAIRS);
  const out: RedisArgument[] = [];
  if (Array.isArray(pairs)) {
    // A pair is a list of two: a string would destructure into its first two characters.
    for (const p of pairs) {
      if (!Array.isArray(p) || p.length !== 2) cannotUse(p, "a pair", form, PAIRS);
      out.push(p[0], p[1]);
    }
  } else for (const k of Object.keys(pairs)) out.push(k, pairs[k] as RedisArgument);
  return out;
}

/**
 * The error of a list (or one-or-list) argument `v` whose reading threw `e`, called on that
 * failure path only: `v` missing (`the members` of `form`, for `name` "member"), or an entry
 * of it (`a member`) missing; else `e` again (a throwing getter).
 */
function shapeError(e: unknown, v: unknown, form: string, name: string, expected: string): never {
  if (v == null) cannotUse(v, `the ${name}s`, form, expected);
  for (const x of list(v) as unknown[]) {
    if (x == null) cannotUse(x, `a ${name}`, form, expected);
  }
  throw e;
}

/** Refuses a list argument (`what` of `form`) that is not a list. */
function checkList(v: unknown, form: string, what = "the keys", expected = LIST): void {
  // A list, not any iterable: a string would be spread into its characters.
  if (!Array.isArray(v)) cannotUse(v, what, form, expected);
}

/** Appends `numkeys ...keys` to `args`, the keys checked ({@linkcode checkList}). */
function numKeys(args: RedisArgument[], keys: RedisArgument[], form: string): RedisArgument[] {
  checkList(keys, form);
  args.push(keys.length, ...keys);
  return args;
}

/** The `keys`/`args` of `eval`, `fcall` and their variants (`form`) are not both lists. */
function scriptListsError(form: string, keys: unknown, args: unknown): never {
  const method = nameOf(form);
  const example = `${method}(script, ["key1"], ["arg1"])`;
  if (typeof keys === "number") {
    throw new TypeError(
      `Cannot call ${method} with a key count (${keys}) and the keys and arguments inline: ` +
        `give the keys and the arguments as two lists, e.g. ${example}`,
    );
  }
  const [what, v] = Array.isArray(keys) ? ["the arguments", args] : ["the keys", keys];
  cannotUse(v, what, method, `a list, e.g. ${example}`);
}

/**
 * The checks of `eval`, `fcall` and their variants: at most three arguments, the keys and the
 * arguments as two lists.
 */
function checkScript(got: number, form: string, keys: unknown, args: unknown): void {
  if (got > 3) tooManyArguments(got, form);
  if (!Array.isArray(keys) || !Array.isArray(args)) scriptListsError(form, keys, args);
}

function list<A>(v: A | A[]): A[] {
  return Array.isArray(v) ? v : [v];
}

function scanArgs(args: RedisArgument[], o: CollectionScanOptions & { type?: string }): void {
  if (o.match !== undefined) args.push("MATCH", o.match);
  if (o.count !== undefined) args.push("COUNT", o.count);
  if (o.type !== undefined) args.push("TYPE", o.type);
}

function expireArgs(args: RedisArgument[], o: ExpireOptions | undefined): RedisArgument[] {
  if (o?.nx) args.push("NX");
  if (o?.xx) args.push("XX");
  if (o?.gt) args.push("GT");
  if (o?.lt) args.push("LT");
  return args;
}

function zrangeArgs(
  args: RedisArgument[],
  start: number | string,
  stop: number | string,
  o: ZRangeOptions | undefined,
): RedisArgument[] {
  args.push(sc(start), sc(stop));
  if (o?.byScore) args.push("BYSCORE");
  if (o?.byLex) args.push("BYLEX");
  if (o?.rev) args.push("REV");
  if (o?.limit) args.push("LIMIT", o.limit.offset, o.limit.count);
  return args;
}

function trimArgs(args: RedisArgument[], o: StreamTrimOptions): void {
  if (o.maxlen !== undefined) args.push("MAXLEN", o.approximate ? "~" : "=", o.maxlen);
  else if (o.minid !== undefined) args.push("MINID", o.approximate ? "~" : "=", o.minid);
  else return;
  if (o.limit !== undefined) args.push("LIMIT", o.limit);
}

function streamsArgs(args: RedisArgument[], streams: XReadStreams, form: string): void {
  const keys: RedisArgument[] = [];
  const ids: RedisArgument[] = [];
  try {
    if (Array.isArray(streams)) {
      for (const s of streams) {
        keys.push(s.key);
        ids.push(s.id);
      }
    } else {
      for (const k of Object.keys(streams)) {
        keys.push(k);
        ids.push(streams[k] as RedisArgument);
      }
    }
  } catch (e) {
    shapeError(e, streams, form, "stream", 'a record or [{ key, id }], e.g. { s: "$" }');
  }
  args.push("STREAMS", ...keys, ...ids);
}

const BITFIELD = 'a list, e.g. [{ op: "GET", type: "u8", offset: 0 }]';

/** BITCOUNT, BITPOS: checks the arguments, then appends `[start [end [BYTE | BIT]]]`. */
function bitRange(
  got: number,
  max: number,
  form: string,
  args: RedisArgument[],
  o: BitRangeOptions | undefined,
): RedisArgument[] {
  if (got > max || o !== undefined) checkArgs(got, max, form, O.BIT_RANGE, o);
  if (o?.start !== undefined) {
    args.push(o.start);
    if (o.end !== undefined) {
      args.push(o.end);
      if (o.mode) args.push(o.mode);
    }
  }
  return args;
}

/**
 * GEOSEARCH, GEOSEARCHSTORE: checks the arguments (the options are required), then appends
 * the options to `args`.
 */
function geoSearchArgs(
  got: number,
  max: number,
  form: string,
  spec: OptionSpec,
  args: RedisArgument[],
  o: GeoSearchOptions,
): RedisArgument[] {
  checkArgs(got, max, form, spec, o, true);
  // `in` throws on anything but an object: say which option it is.
  if (Object(o.from) !== o.from || Object(o.by) !== o.by) {
    const k = Object(o.from) !== o.from ? "from" : "by";
    cannotUse(o[k], `the option \`${k}\``, form, `an object, e.g. ${spec.form}`);
  }
  if ("member" in o.from) args.push("FROMMEMBER", o.from.member);
  else args.push("FROMLONLAT", o.from.longitude, o.from.latitude);
  if ("radius" in o.by) args.push("BYRADIUS", o.by.radius, o.by.unit);
  else args.push("BYBOX", o.by.width, o.by.height, o.by.unit);
  if (o.order) args.push(o.order);
  if (o.count !== undefined) {
    args.push("COUNT", o.count);
    if (o.any) args.push("ANY");
  }
  return args;
}

/** SORT: checks the arguments, then appends the options to `args` (`SORT key`). */
function sortArgs(
  got: number,
  max: number,
  form: string,
  args: RedisArgument[],
  o: SortOptions | undefined,
): RedisArgument[] {
  if (got > max || o !== undefined) checkArgs(got, max, form, O.SORT, o);
  if (o?.by !== undefined) args.push("BY", o.by);
  if (o?.limit) args.push("LIMIT", o.limit.offset, o.limit.count);
  for (const g of o?.get ?? []) args.push("GET", g);
  if (o?.order) args.push(o.order);
  if (o?.alpha) args.push("ALPHA");
  return args;
}

/** LPOS: checks the arguments, then builds `LPOS key element [RANK r] [MAXLEN m]`. */
function lposArgs(
  got: number,
  max: number,
  form: string,
  key: RedisArgument,
  element: RedisArgument,
  o: LposOptions | undefined,
): RedisArgument[] {
  if (got > max || o !== undefined) checkArgs(got, max, form, O.LPOS, o);
  const args: RedisArgument[] = ["LPOS", key, element];
  if (o?.rank !== undefined) args.push("RANK", o.rank);
  if (o?.maxlen !== undefined) args.push("MAXLEN", o.maxlen);
  return args;
}

function zaddArgs(key: RedisArgument, o: ZAddOptions | undefined): RedisArgument[] {
  const args: RedisArgument[] = ["ZADD", key];
  if (o?.nx) args.push("NX");
  if (o?.xx) args.push("XX");
  if (o?.gt) args.push("GT");
  if (o?.lt) args.push("LT");
  if (o?.ch) args.push("CH");
  return args;
}

/** XCLAIM: checks the arguments, then builds `XCLAIM key group consumer min-idle ...ids [options]`. */
function xclaimArgs(
  got: number,
  form: string,
  key: RedisArgument,
  group: RedisArgument,
  consumer: RedisArgument,
  minIdleTime: number,
  ids: RedisArgument[],
  o: XClaimOptions | undefined,
): RedisArgument[] {
  if (got > 6 || o !== undefined) checkArgs(got, 6, form, O.XCLAIM, o);
  checkList(ids, form, "the IDs");
  const args: RedisArgument[] = ["XCLAIM", key, group, consumer, minIdleTime, ...ids];
  if (o?.idle !== undefined) args.push("IDLE", o.idle);
  if (o?.time !== undefined) args.push("TIME", o.time);
  if (o?.retrycount !== undefined) args.push("RETRYCOUNT", o.retrycount);
  if (o?.force) args.push("FORCE");
  if (o?.lastid !== undefined) args.push("LASTID", o.lastid);
  return args;
}

/** What the helpers below run a command on: the executor of the calling method. */
type Runner = Pick<RedisCommands<string | Uint8Array>, "_run">;

/**
 * The body of a method of fixed arity without options: refuses extra arguments
 * ({@linkcode tooManyArguments}), then runs the command. For the methods whose arguments are
 * their parameters as given, so building `args` cannot throw before the check. The most used
 * commands (GET, SET, INCR, HGET, EXPIRE, ...) keep the check inline instead: no extra call on
 * their path.
 */
function run(
  c: Runner,
  got: number,
  max: number,
  form: string,
  args: RedisArgument[],
  transform: Transform | undefined,
  flags: number,
): unknown {
  if (got > max) tooManyArguments(got, form);
  return c._run(args, transform, flags);
}

/** EVAL, EVALSHA, FCALL and their read-only variants: `cmd first numkeys ...keys ...args`. */
function runScript(
  c: Runner,
  got: number,
  form: string,
  cmd: string,
  first: string,
  keys: RedisArgument[],
  args: RedisArgument[],
  flags: number,
): unknown {
  checkScript(got, form, keys, args);
  return c._run([cmd, first, keys.length, ...keys, ...args], undefined, flags);
}

/**
 * LMPOP, ZMPOP (`flags` N) and BLMPOP, BZMPOP (`flags` BL, blocking for `timeout` seconds):
 * `[timeout] numkeys ...keys side [COUNT n]`.
 */
function runMpop(
  c: Runner,
  got: number,
  form: string,
  cmd: string,
  flags: number,
  timeout: number | undefined,
  keys: RedisArgument[],
  side: string,
  o: { count?: number } | undefined,
  transform: Transform,
): unknown {
  const blocking = flags === BL;
  const max = blocking ? 4 : 3;
  if (got > max || o !== undefined) checkArgs(got, max, form, O.COUNT, o);
  const ms = blocking ? secToMs(timeout as number) : undefined;
  const args: RedisArgument[] = blocking ? [cmd, timeout as number] : [cmd];
  numKeys(args, keys, form).push(side);
  if (o?.count !== undefined) args.push("COUNT", o.count);
  return c._run(args, transform, flags, ms);
}

/** BLPOP, BRPOP, BZPOPMIN, BZPOPMAX: `...keys timeout`, blocking for `timeout` seconds. */
function runBpop(
  c: Runner,
  got: number,
  form: string,
  cmd: string,
  keys: RedisArgument | RedisArgument[],
  timeout: number,
  transform: Transform,
): unknown {
  if (got > 2) tooManyArguments(got, form);
  const ms = secToMs(timeout);
  return c._run([cmd, ...list(keys), timeout], transform, BL, ms);
}

/**
 * ZUNION, ZINTER and their STORE variants: `head numkeys ...keys [WEIGHTS ...] [AGGREGATE a]`,
 * then `WITHSCORES` when `withScores`.
 */
function runAggregate(
  c: Runner,
  got: number,
  max: number,
  form: string,
  head: RedisArgument[],
  keys: RedisArgument[],
  o: ZAggregateOptions | undefined,
  transform: Transform,
  flags: number,
  withScores?: boolean,
): unknown {
  if (got > max || o !== undefined) checkArgs(got, max, form, O.ZAGGREGATE, o);
  numKeys(head, keys, form);
  if (o?.weights) {
    checkList(o.weights, form, "the weights", "a list of numbers, e.g. { weights: [1, 2] }");
    head.push("WEIGHTS", ...o.weights.map(sc));
  }
  if (o?.aggregate) head.push("AGGREGATE", o.aggregate);
  if (withScores) head.push("WITHSCORES");
  return c._run(head, transform, flags);
}

/** HSCAN, SSCAN, ZSCAN: one page, `key cursor [MATCH pattern] [COUNT n]`. */
function runScanPage(
  c: Runner,
  got: number,
  form: string,
  cmd: string,
  key: RedisArgument,
  cursor: string | number,
  o: CollectionScanOptions | undefined,
  transform: Transform,
): unknown {
  if (got > 3 || o !== undefined) checkArgs(got, 3, form, O.COLLECTION_SCAN, o);
  const args: RedisArgument[] = [cmd, key, cursor];
  if (o) scanArgs(args, o);
  return c._run(args, transform, RO);
}

/**
 * SPOP, SRANDMEMBER, ZRANDMEMBER, HRANDFIELD, ZPOPMIN, ZPOPMAX: `key [count]`, one element
 * (`one`) without `count`, a list (`many`) with it.
 */
function runCount(
  c: Runner,
  got: number,
  form: string,
  cmd: string,
  key: RedisArgument,
  count: number | undefined,
  one: Transform | undefined,
  many: Transform,
  flags: number,
): unknown {
  if (got > 2) tooManyArguments(got, form);
  if (count === undefined) return c._run([cmd, key], one, flags);
  return c._run([cmd, key, count], many, flags);
}

/** FLUSHDB, FLUSHALL, SCRIPT FLUSH, FUNCTION FLUSH: `[ASYNC | SYNC]`. */
function runFlush(
  c: Runner,
  got: number,
  form: string,
  args: RedisArgument[],
  o: FlushOptions | undefined,
): unknown {
  if (got > 1 || o !== undefined) checkArgs(got, 1, form, O.FLUSH, o);
  if (o?.async === true) args.push("ASYNC");
  else if (o?.async === false) args.push("SYNC");
  return c._run(args, T.ok, N);
}

/**
 * A command whose only option is `count` (XRANGE, XREVRANGE, XAUTOCLAIM): checks the arguments,
 * then runs `args [COUNT n] [tail]`. For methods whose `args` are their parameters as given, so
 * building them cannot throw before the check.
 */
function runWithCount(
  c: Runner,
  got: number,
  max: number,
  form: string,
  args: RedisArgument[],
  o: { count?: number } | undefined,
  transform: Transform,
  flags: number,
  tail?: string,
): unknown {
  if (got > max || o !== undefined) checkArgs(got, max, form, O.COUNT, o);
  if (o?.count !== undefined) args.push("COUNT", o.count);
  if (tail !== undefined) args.push(tail);
  return c._run(args, transform, flags);
}

/**
 * XREAD, XREADGROUP: checks the arguments, then runs `args [COUNT n] [BLOCK ms] [NOACK]
 * STREAMS ...keys ...ids`, blocking (`BL`) for `block` milliseconds when given.
 */
function runRead(
  c: Runner,
  got: number,
  max: number,
  form: string,
  spec: OptionSpec,
  args: RedisArgument[],
  streams: XReadStreams,
  o: XReadGroupOptions | undefined,
  flags: number,
): unknown {
  if (got > max || o !== undefined) checkArgs(got, max, form, spec, o);
  if (o?.count !== undefined) args.push("COUNT", o.count);
  const block = o?.block;
  if (block !== undefined) args.push("BLOCK", block);
  if (o?.noack) args.push("NOACK");
  streamsArgs(args, streams, form);
  return c._run(args, T.streamMessages, block === undefined ? flags : flags | BL, block);
}

/**
 * PEXPIRE, EXPIREAT, PEXPIREAT: `key time [NX | XX | GT | LT]`. (EXPIRE, one of the most used
 * commands, checks inline: no extra call on its path.)
 */
function runExpire(
  c: Runner,
  got: number,
  form: string,
  cmd: string,
  key: RedisArgument,
  time: number,
  o: ExpireOptions | undefined,
): unknown {
  if (got > 3 || o !== undefined) checkArgs(got, 3, form, O.EXPIRE, o);
  return c._run(expireArgs([cmd, key, time], o), T.bool, N);
}

/** The filters of CLIENT KILL in the order they are sent (`skipme` as `yes`/`no`). */
const KILL_FILTERS = ["id", "type", "user", "addr", "laddr", "skipme", "maxage"] as const;

/**
 * The typed Redis command methods. Every client (standalone, cluster, sentinel, multi-db), its
 * pipelines and transactions extend this class and implement {@linkcode RedisCommands._run};
 * each method builds the command's arguments and a reply transform and hands them over.
 *
 * Method names are the lowercase Redis command names (`hset`, `zadd`); sub-commands are
 * camelCased (`clientSetName`, `xgroupCreate`); variants with a different result shape get a
 * suffix (`zrangeWithScores`, `lcsLen`). Keys and values accept `string | number | Uint8Array`.
 * Bulk string replies are `S`: `string` normally, `Uint8Array` on a binary view.
 * Replies are normalised so that RESP2 and RESP3 give the same results.
 *
 * Timeouts of blocking list/sorted-set commands are in seconds like in Redis (fractions
 * allowed, 0 waits forever); `xread`/`xreadgroup` `block` and `wait` are in milliseconds.
 *
 * @typeParam S The type of bulk string replies: `string` or `Uint8Array`.
 *
 * @example A minimal executor
 * ```ts
 * import { type RedisArgument, RedisCommands } from "@edge/redis";
 *
 * class Recorder extends RedisCommands {
 *   sent: RedisArgument[][] = [];
 *   _run(args: RedisArgument[]): Promise<unknown> {
 *     this.sent.push(args);
 *     return Promise.resolve(null);
 *   }
 * }
 * const r = new Recorder();
 * await r.set("k", "v", { ex: 10, nx: true });
 * console.log(r.sent[0]); // ["SET", "k", "v", "EX", 10, "NX"]
 * ```
 */
export abstract class RedisCommands<S extends string | Uint8Array = string> {
  /**
   * Runs one command. Implemented by the executor (client, pipeline, transaction).
   *
   * @param args The command name and its arguments.
   * @param transform Converts the raw reply into the method's result; not called for errors.
   * @param flags `FLAG_*` bits: blocking, read-only.
   * @param blockMs For blocking commands: how long the server may block, 0 = forever.
   * @returns A promise of the transformed reply (a client), or the executor itself (a pipeline).
   */
  abstract _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown;

  // ---------------------------------------------------------------- strings

  /**
   * Gets the value of a key (GET).
   *
   * @param key The key.
   * @returns The value, or null when the key does not exist.
   */
  get(key: RedisArgument): Promise<S | null> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "get(key)");
    return this._run(["GET", key], undefined, RO) as Promise<S | null>;
  }

  /**
   * Sets a key and returns its old value (SET ... GET).
   *
   * @param key The key.
   * @param value The value.
   * @param options Expiry and conditions, with `get: true`.
   * @returns The old value, or null when the key did not exist.
   */
  set(
    key: RedisArgument,
    value: RedisArgument,
    options: SetOptions & { get: true },
  ): Promise<S | null>;
  /**
   * Sets a key (SET).
   *
   * @param key The key.
   * @param value The value.
   * @param options Expiry and conditions.
   * @returns `"OK"`, or null when an `nx`/`xx` condition was not met.
   */
  set(key: RedisArgument, value: RedisArgument, options?: SetOptions): Promise<"OK" | null>;
  /**
   * Sets a key (SET).
   *
   * @param key The key.
   * @param value The value.
   * @param options Expiry, conditions and `get`.
   * @returns `"OK"` or the old value (with `get`), null when a condition was not met.
   */
  set(key: RedisArgument, value: RedisArgument, options?: SetOptions): Promise<S | "OK" | null> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "set(key, value, options?)", O.SET, options);
    }
    const args: RedisArgument[] = ["SET", key, value];
    if (options) {
      if (options.ex !== undefined) args.push("EX", options.ex);
      if (options.px !== undefined) args.push("PX", options.px);
      if (options.exat !== undefined) args.push("EXAT", options.exat);
      if (options.pxat !== undefined) args.push("PXAT", options.pxat);
      if (options.keepttl) args.push("KEEPTTL");
      if (options.nx) args.push("NX");
      if (options.xx) args.push("XX");
      if (options.get) args.push("GET");
    }
    return this._run(args, options?.get ? undefined : T.okOrNull, N) as Promise<S | "OK" | null>;
  }

  /**
   * Gets the values of several keys (MGET).
   *
   * @param keys The keys.
   * @returns The values in order, null for missing keys.
   */
  mget(...keys: RedisArgument[]): Promise<(S | null)[]> {
    return this._run(["MGET", ...keys], T.arr, RO) as Promise<(S | null)[]>;
  }

  /**
   * Sets several keys (MSET).
   *
   * @param pairs A record key -> value, or a list of `[key, value]` pairs.
   * @returns `"OK"`.
   */
  mset(pairs: Record<string, RedisArgument> | [RedisArgument, RedisArgument][]): Promise<"OK"> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "mset(pairs)");
    return this._run(["MSET", ...flat(pairs, "mset")], T.ok, N) as Promise<"OK">;
  }

  /**
   * Sets several keys only if none of them exists (MSETNX).
   *
   * @param pairs A record key -> value, or a list of `[key, value]` pairs.
   * @returns Whether the keys were set.
   */
  msetnx(
    pairs: Record<string, RedisArgument> | [RedisArgument, RedisArgument][],
  ): Promise<boolean> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "msetnx(pairs)");
    return this._run(["MSETNX", ...flat(pairs, "msetnx")], T.bool, N) as Promise<
      boolean
    >;
  }

  /**
   * Sets a key only if it does not exist (SETNX).
   *
   * @param key The key.
   * @param value The value.
   * @returns Whether the key was set.
   */
  setnx(key: RedisArgument, value: RedisArgument): Promise<boolean> {
    const form = "setnx(key, value)";
    return run(this, arguments.length, 2, form, ["SETNX", key, value], T.bool, N) as Promise<
      boolean
    >;
  }

  /**
   * Sets a key with a time to live in seconds (SETEX).
   *
   * @param key The key.
   * @param seconds Time to live in seconds.
   * @param value The value.
   * @returns `"OK"`.
   */
  setex(key: RedisArgument, seconds: number, value: RedisArgument): Promise<"OK"> {
    const form = "setex(key, seconds, value)";
    return run(this, arguments.length, 3, form, ["SETEX", key, seconds, value], T.ok, N) as Promise<
      "OK"
    >;
  }

  /**
   * Sets a key with a time to live in milliseconds (PSETEX).
   *
   * @param key The key.
   * @param milliseconds Time to live in milliseconds.
   * @param value The value.
   * @returns `"OK"`.
   */
  psetex(key: RedisArgument, milliseconds: number, value: RedisArgument): Promise<"OK"> {
    return run(
      this,
      arguments.length,
      3,
      "psetex(key, milliseconds, value)",
      ["PSETEX", key, milliseconds, value],
      T.ok,
      N,
    ) as Promise<"OK">;
  }

  /**
   * Sets a key and returns its old value (GETSET).
   *
   * @param key The key.
   * @param value The new value.
   * @returns The old value, or null.
   */
  getset(key: RedisArgument, value: RedisArgument): Promise<S | null> {
    const form = "getset(key, value)";
    return run(this, arguments.length, 2, form, ["GETSET", key, value], undefined, N) as Promise<
      S | null
    >;
  }

  /**
   * Gets a key and deletes it (GETDEL).
   *
   * @param key The key.
   * @returns The value, or null.
   */
  getdel(key: RedisArgument): Promise<S | null> {
    return run(this, arguments.length, 1, "getdel(key)", ["GETDEL", key], undefined, N) as Promise<
      S | null
    >;
  }

  /**
   * Gets a key and changes its expiry (GETEX).
   *
   * @param key The key.
   * @param options The new expiry, or `persist`.
   * @returns The value, or null.
   */
  getex(key: RedisArgument, options?: GetExOptions): Promise<S | null> {
    if (arguments.length > 2 || options !== undefined) {
      checkArgs(arguments.length, 2, "getex(key, options?)", O.GETEX, options);
    }
    const args: RedisArgument[] = ["GETEX", key];
    if (options?.ex !== undefined) args.push("EX", options.ex);
    if (options?.px !== undefined) args.push("PX", options.px);
    if (options?.exat !== undefined) args.push("EXAT", options.exat);
    if (options?.pxat !== undefined) args.push("PXAT", options.pxat);
    if (options?.persist) args.push("PERSIST");
    return this._run(args, undefined, N) as Promise<S | null>;
  }

  /**
   * Appends to a string (APPEND).
   *
   * @param key The key.
   * @param value What to append.
   * @returns The new length.
   */
  append(key: RedisArgument, value: RedisArgument): Promise<number> {
    const form = "append(key, value)";
    return run(this, arguments.length, 2, form, ["APPEND", key, value], T.num, N) as Promise<
      number
    >;
  }

  /**
   * Length of a string value (STRLEN).
   *
   * @param key The key.
   * @returns The length in bytes, 0 for a missing key.
   */
  strlen(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "strlen(key)", ["STRLEN", key], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * Increments an integer by one (INCR).
   *
   * @param key The key.
   * @returns The new value.
   */
  incr(key: RedisArgument): Promise<number> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "incr(key)");
    return this._run(["INCR", key], T.num, N) as Promise<number>;
  }

  /**
   * Increments an integer (INCRBY).
   *
   * @param key The key.
   * @param increment The increment.
   * @returns The new value.
   */
  incrby(key: RedisArgument, increment: number): Promise<number> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "incrby(key, increment)");
    return this._run(["INCRBY", key, increment], T.num, N) as Promise<number>;
  }

  /**
   * Increments a float (INCRBYFLOAT).
   *
   * @param key The key.
   * @param increment The increment.
   * @returns The new value.
   */
  incrbyfloat(key: RedisArgument, increment: number): Promise<number> {
    return run(
      this,
      arguments.length,
      2,
      "incrbyfloat(key, increment)",
      ["INCRBYFLOAT", key, increment],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Decrements an integer by one (DECR).
   *
   * @param key The key.
   * @returns The new value.
   */
  decr(key: RedisArgument): Promise<number> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "decr(key)");
    return this._run(["DECR", key], T.num, N) as Promise<number>;
  }

  /**
   * Decrements an integer (DECRBY).
   *
   * @param key The key.
   * @param decrement The decrement.
   * @returns The new value.
   */
  decrby(key: RedisArgument, decrement: number): Promise<number> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "decrby(key, decrement)");
    return this._run(["DECRBY", key, decrement], T.num, N) as Promise<number>;
  }

  /**
   * A substring of a string value (GETRANGE).
   *
   * @param key The key.
   * @param start First byte; negative counts from the end.
   * @param end Last byte, inclusive.
   * @returns The substring (empty for a missing key).
   */
  getrange(key: RedisArgument, start: number, end: number): Promise<S> {
    return run(
      this,
      arguments.length,
      3,
      "getrange(key, start, end)",
      ["GETRANGE", key, start, end],
      undefined,
      RO,
    ) as Promise<S>;
  }

  /**
   * Overwrites part of a string value (SETRANGE).
   *
   * @param key The key.
   * @param offset Byte offset.
   * @param value The bytes to write.
   * @returns The new length.
   */
  setrange(key: RedisArgument, offset: number, value: RedisArgument): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "setrange(key, offset, value)",
      ["SETRANGE", key, offset, value],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * The longest common subsequence of two string values (LCS).
   *
   * @param key1 The first key.
   * @param key2 The second key.
   * @returns The subsequence.
   */
  lcs(key1: RedisArgument, key2: RedisArgument): Promise<S> {
    const form = "lcs(key1, key2)";
    return run(this, arguments.length, 2, form, ["LCS", key1, key2], undefined, RO) as Promise<S>;
  }

  /**
   * The length of the longest common subsequence (LCS ... LEN).
   *
   * @param key1 The first key.
   * @param key2 The second key.
   * @returns The length.
   */
  lcsLen(key1: RedisArgument, key2: RedisArgument): Promise<number> {
    const form = "lcsLen(key1, key2)";
    return run(this, arguments.length, 2, form, ["LCS", key1, key2, "LEN"], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * The matching ranges of the longest common subsequence (LCS ... IDX).
   *
   * @param key1 The first key.
   * @param key2 The second key.
   * @param options `minMatchLen` (MINMATCHLEN) and `withMatchLen` (WITHMATCHLEN).
   * @returns The matches and the length.
   */
  lcsIdx(
    key1: RedisArgument,
    key2: RedisArgument,
    options?: { minMatchLen?: number; withMatchLen?: boolean },
  ): Promise<LcsIdxResult> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "lcsIdx(key1, key2, options?)", O.LCS_IDX, options);
    }
    const args: RedisArgument[] = ["LCS", key1, key2, "IDX"];
    if (options?.minMatchLen !== undefined) args.push("MINMATCHLEN", options.minMatchLen);
    if (options?.withMatchLen) args.push("WITHMATCHLEN");
    return this._run(args, T.lcsIdx, RO) as Promise<LcsIdxResult>;
  }

  // ------------------------------------------------------------------- keys

  /**
   * Deletes keys (DEL).
   *
   * @param keys The keys.
   * @returns How many keys were deleted.
   */
  del(...keys: RedisArgument[]): Promise<number> {
    return this._run(["DEL", ...keys], T.num, N) as Promise<number>;
  }

  /**
   * Deletes keys, reclaiming memory in the background (UNLINK).
   *
   * @param keys The keys.
   * @returns How many keys were unlinked.
   */
  unlink(...keys: RedisArgument[]): Promise<number> {
    return this._run(["UNLINK", ...keys], T.num, N) as Promise<number>;
  }

  /**
   * Counts existing keys (EXISTS); a key given twice counts twice.
   *
   * @param keys The keys.
   * @returns How many of them exist.
   */
  exists(...keys: RedisArgument[]): Promise<number> {
    return this._run(["EXISTS", ...keys], T.num, RO) as Promise<number>;
  }

  /**
   * Sets a time to live in seconds (EXPIRE).
   *
   * @param key The key.
   * @param seconds Time to live.
   * @param options Conditions (`nx`, `xx`, `gt`, `lt`).
   * @returns Whether the expiry was set.
   */
  expire(key: RedisArgument, seconds: number, options?: ExpireOptions): Promise<boolean> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "expire(key, seconds, options?)", O.EXPIRE, options);
    }
    return this._run(expireArgs(["EXPIRE", key, seconds], options), T.bool, N) as Promise<boolean>;
  }

  /**
   * Sets a time to live in milliseconds (PEXPIRE).
   *
   * @param key The key.
   * @param milliseconds Time to live.
   * @param options Conditions (`nx`, `xx`, `gt`, `lt`).
   * @returns Whether the expiry was set.
   */
  pexpire(key: RedisArgument, milliseconds: number, options?: ExpireOptions): Promise<boolean> {
    const form = "pexpire(key, milliseconds, options?)";
    return runExpire(
      this,
      arguments.length,
      form,
      "PEXPIRE",
      key,
      milliseconds,
      options,
    ) as Promise<boolean>;
  }

  /**
   * Sets an expiry as a Unix time in seconds (EXPIREAT).
   *
   * @param key The key.
   * @param unixSeconds The expiry time.
   * @param options Conditions (`nx`, `xx`, `gt`, `lt`).
   * @returns Whether the expiry was set.
   */
  expireat(key: RedisArgument, unixSeconds: number, options?: ExpireOptions): Promise<boolean> {
    const form = "expireat(key, unixSeconds, options?)";
    return runExpire(
      this,
      arguments.length,
      form,
      "EXPIREAT",
      key,
      unixSeconds,
      options,
    ) as Promise<boolean>;
  }

  /**
   * Sets an expiry as a Unix time in milliseconds (PEXPIREAT).
   *
   * @param key The key.
   * @param unixMilliseconds The expiry time.
   * @param options Conditions (`nx`, `xx`, `gt`, `lt`).
   * @returns Whether the expiry was set.
   */
  pexpireat(
    key: RedisArgument,
    unixMilliseconds: number,
    options?: ExpireOptions,
  ): Promise<boolean> {
    const form = "pexpireat(key, unixMilliseconds, options?)";
    return runExpire(
      this,
      arguments.length,
      form,
      "PEXPIREAT",
      key,
      unixMilliseconds,
      options,
    ) as Promise<boolean>;
  }

  /**
   * The expiry as a Unix time in seconds (EXPIRETIME).
   *
   * @param key The key.
   * @returns The time, -1 without expiry, -2 for a missing key.
   */
  expiretime(key: RedisArgument): Promise<number> {
    const form = "expiretime(key)";
    return run(this, arguments.length, 1, form, ["EXPIRETIME", key], T.num, RO) as Promise<number>;
  }

  /**
   * The expiry as a Unix time in milliseconds (PEXPIRETIME).
   *
   * @param key The key.
   * @returns The time, -1 without expiry, -2 for a missing key.
   */
  pexpiretime(key: RedisArgument): Promise<number> {
    const form = "pexpiretime(key)";
    return run(this, arguments.length, 1, form, ["PEXPIRETIME", key], T.num, RO) as Promise<number>;
  }

  /**
   * Remaining time to live in seconds (TTL).
   *
   * @param key The key.
   * @returns Seconds, -1 without expiry, -2 for a missing key.
   */
  ttl(key: RedisArgument): Promise<number> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "ttl(key)");
    return this._run(["TTL", key], T.num, RO) as Promise<number>;
  }

  /**
   * Remaining time to live in milliseconds (PTTL).
   *
   * @param key The key.
   * @returns Milliseconds, -1 without expiry, -2 for a missing key.
   */
  pttl(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "pttl(key)", ["PTTL", key], T.num, RO) as Promise<number>;
  }

  /**
   * Removes the expiry (PERSIST).
   *
   * @param key The key.
   * @returns Whether an expiry was removed.
   */
  persist(key: RedisArgument): Promise<boolean> {
    return run(this, arguments.length, 1, "persist(key)", ["PERSIST", key], T.bool, N) as Promise<
      boolean
    >;
  }

  /**
   * The type of a key (TYPE).
   *
   * @param key The key.
   * @returns `"string"`, `"list"`, `"set"`, `"zset"`, `"hash"`, `"stream"` or `"none"`.
   */
  type(key: RedisArgument): Promise<string> {
    return run(this, arguments.length, 1, "type(key)", ["TYPE", key], T.str, RO) as Promise<string>;
  }

  /**
   * Renames a key (RENAME).
   *
   * @param key The key.
   * @param newKey The new name.
   * @returns `"OK"`.
   */
  rename(key: RedisArgument, newKey: RedisArgument): Promise<"OK"> {
    const form = "rename(key, newKey)";
    return run(this, arguments.length, 2, form, ["RENAME", key, newKey], T.ok, N) as Promise<"OK">;
  }

  /**
   * Renames a key if the new name does not exist (RENAMENX).
   *
   * @param key The key.
   * @param newKey The new name.
   * @returns Whether the key was renamed.
   */
  renamenx(key: RedisArgument, newKey: RedisArgument): Promise<boolean> {
    const form = "renamenx(key, newKey)";
    return run(this, arguments.length, 2, form, ["RENAMENX", key, newKey], T.bool, N) as Promise<
      boolean
    >;
  }

  /**
   * All keys matching a pattern (KEYS). Prefer `scanPage` on large databases.
   *
   * @param pattern Glob-style pattern.
   * @returns The keys.
   */
  keys(pattern: string): Promise<S[]> {
    return run(this, arguments.length, 1, "keys(pattern)", ["KEYS", pattern], T.arr, RO) as Promise<
      S[]
    >;
  }

  /**
   * A random key (RANDOMKEY).
   *
   * @returns A key, or null when the database is empty.
   */
  randomkey(): Promise<S | null> {
    return run(this, arguments.length, 0, "randomkey()", ["RANDOMKEY"], undefined, RO) as Promise<
      S | null
    >;
  }

  /**
   * Updates the last access time of keys (TOUCH).
   *
   * @param keys The keys.
   * @returns How many keys exist.
   */
  touch(...keys: RedisArgument[]): Promise<number> {
    return this._run(["TOUCH", ...keys], T.num, RO) as Promise<number>;
  }

  /**
   * Copies a key (COPY).
   *
   * @param source The source key.
   * @param destination The destination key.
   * @param options Destination database, `replace`.
   * @returns Whether the key was copied.
   */
  copy(source: RedisArgument, destination: RedisArgument, options?: CopyOptions): Promise<boolean> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "copy(source, destination, options?)", O.COPY, options);
    }
    const args: RedisArgument[] = ["COPY", source, destination];
    if (options?.db !== undefined) args.push("DB", options.db);
    if (options?.replace) args.push("REPLACE");
    return this._run(args, T.bool, N) as Promise<boolean>;
  }

  /**
   * Serializes a value (DUMP). Always binary, whatever the view.
   *
   * @param key The key.
   * @returns The serialized value, or null for a missing key.
   */
  dump(key: RedisArgument): Promise<Uint8Array | null> {
    return run(
      this,
      arguments.length,
      1,
      "dump(key)",
      ["DUMP", key],
      undefined,
      RO | FLAG_BINARY,
    ) as Promise<Uint8Array | null>;
  }

  /**
   * Creates a key from a serialized value (RESTORE).
   *
   * @param key The key.
   * @param ttl Time to live in milliseconds, 0 for none.
   * @param serialized The output of `dump`.
   * @param options `replace`, `absttl`, `idletime`, `freq`.
   * @returns `"OK"`.
   */
  restore(
    key: RedisArgument,
    ttl: number,
    serialized: Uint8Array,
    options?: RestoreOptions,
  ): Promise<"OK"> {
    if (arguments.length > 4 || options !== undefined) {
      checkArgs(arguments.length, 4, "restore(key, ttl, serialized, options?)", O.RESTORE, options);
    }
    const args: RedisArgument[] = ["RESTORE", key, ttl, serialized];
    if (options?.replace) args.push("REPLACE");
    if (options?.absttl) args.push("ABSTTL");
    if (options?.idletime !== undefined) args.push("IDLETIME", options.idletime);
    if (options?.freq !== undefined) args.push("FREQ", options.freq);
    return this._run(args, T.ok, N) as Promise<"OK">;
  }

  /**
   * The internal encoding of a value (OBJECT ENCODING).
   *
   * @param key The key.
   * @returns E.g. `"listpack"`, `"hashtable"`, `"int"`; null for a missing key.
   */
  objectEncoding(key: RedisArgument): Promise<string | null> {
    return run(
      this,
      arguments.length,
      1,
      "objectEncoding(key)",
      ["OBJECT", "ENCODING", key],
      T.strOrNull,
      RO,
    ) as Promise<string | null>;
  }

  /**
   * The LFU access frequency of a key (OBJECT FREQ); needs an LFU eviction policy.
   *
   * @param key The key.
   * @returns The frequency, or null for a missing key.
   */
  objectFreq(key: RedisArgument): Promise<number | null> {
    return run(
      this,
      arguments.length,
      1,
      "objectFreq(key)",
      ["OBJECT", "FREQ", key],
      T.numOrNull,
      RO,
    ) as Promise<number | null>;
  }

  /**
   * Seconds since the key was last accessed (OBJECT IDLETIME).
   *
   * @param key The key.
   * @returns Seconds, or null for a missing key.
   */
  objectIdletime(key: RedisArgument): Promise<number | null> {
    return run(
      this,
      arguments.length,
      1,
      "objectIdletime(key)",
      ["OBJECT", "IDLETIME", key],
      T.numOrNull,
      RO,
    ) as Promise<number | null>;
  }

  /**
   * The reference count of a value (OBJECT REFCOUNT).
   *
   * @param key The key.
   * @returns The count, or null for a missing key.
   */
  objectRefcount(key: RedisArgument): Promise<number | null> {
    return run(
      this,
      arguments.length,
      1,
      "objectRefcount(key)",
      ["OBJECT", "REFCOUNT", key],
      T.numOrNull,
      RO,
    ) as Promise<number | null>;
  }

  /**
   * Sorts a list, set or sorted set (SORT).
   *
   * @param key The key.
   * @param options `by`, `limit`, `get`, `order`, `alpha`.
   * @returns The sorted elements (or looked-up values with `get`).
   */
  sort(key: RedisArgument, options?: SortOptions): Promise<(S | null)[]> {
    const args = sortArgs(arguments.length, 2, "sort(key, options?)", ["SORT", key], options);
    return this._run(args, T.arr, N) as Promise<(S | null)[]>;
  }

  /**
   * Sorts and stores the result in a list (SORT ... STORE).
   *
   * @param key The key.
   * @param destination Where to store the result.
   * @param options `by`, `limit`, `get`, `order`, `alpha`.
   * @returns The number of stored elements.
   */
  sortStore(
    key: RedisArgument,
    destination: RedisArgument,
    options?: SortOptions,
  ): Promise<number> {
    const form = "sortStore(key, destination, options?)";
    const args = sortArgs(arguments.length, 3, form, ["SORT", key], options);
    args.push("STORE", destination);
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * One page of a key scan (SCAN). Start with cursor `"0"`; done when it returns `"0"`.
   *
   * @param cursor The cursor from the previous page.
   * @param options `match`, `count`, `type`.
   * @returns The next cursor and the keys of this page.
   */
  scanPage(cursor: string | number, options?: ScanOptions): Promise<[string, S[]]> {
    if (arguments.length > 2 || options !== undefined) {
      checkArgs(arguments.length, 2, "scanPage(cursor, options?)", O.SCAN, options);
    }
    const args: RedisArgument[] = ["SCAN", cursor];
    if (options) scanArgs(args, options);
    return this._run(args, T.scanPage, RO) as Promise<[string, S[]]>;
  }

  // ----------------------------------------------------------------- hashes

  /**
   * Sets one hash field (HSET).
   *
   * @param key The key.
   * @param field The field.
   * @param value The value.
   * @returns How many fields were added (0 when the field was updated).
   */
  hset(key: RedisArgument, field: RedisArgument, value: RedisArgument): Promise<number>;
  /**
   * Sets hash fields (HSET).
   *
   * @param key The key.
   * @param fields A record field -> value, or a list of `[field, value]` pairs.
   * @returns How many fields were added.
   */
  hset(
    key: RedisArgument,
    fields: Record<string, RedisArgument> | [RedisArgument, RedisArgument][],
  ): Promise<number>;
  /**
   * Sets hash fields (HSET).
   *
   * @param key The key.
   * @param fieldOrFields A field, or a record/pair list of fields and values.
   * @param value The value when a single field is given.
   * @returns How many fields were added.
   */
  hset(
    key: RedisArgument,
    fieldOrFields: RedisArgument | Record<string, RedisArgument> | [RedisArgument, RedisArgument][],
    value?: RedisArgument,
  ): Promise<number>;
  hset(
    key: RedisArgument,
    fieldOrFields: RedisArgument | Record<string, RedisArgument> | [RedisArgument, RedisArgument][],
    value?: RedisArgument,
  ): Promise<number> {
    if (arguments.length > 3) {
      tooManyArguments(arguments.length, "hset(key, fieldOrFields, value?)");
    }
    const args: RedisArgument[] = ["HSET", key];
    if (
      typeof fieldOrFields === "string" || typeof fieldOrFields === "number" ||
      fieldOrFields instanceof Uint8Array
    ) {
      if (value === undefined) throw new TypeError("Cannot run HSET: a value is required");
      args.push(fieldOrFields, value);
    } else args.push(...flat(fieldOrFields, "hset"));
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * Sets a hash field only if it does not exist (HSETNX).
   *
   * @param key The key.
   * @param field The field.
   * @param value The value.
   * @returns Whether the field was set.
   */
  hsetnx(key: RedisArgument, field: RedisArgument, value: RedisArgument): Promise<boolean> {
    return run(
      this,
      arguments.length,
      3,
      "hsetnx(key, field, value)",
      ["HSETNX", key, field, value],
      T.bool,
      N,
    ) as Promise<boolean>;
  }

  /**
   * Gets a hash field (HGET).
   *
   * @param key The key.
   * @param field The field.
   * @returns The value, or null.
   */
  hget(key: RedisArgument, field: RedisArgument): Promise<S | null> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "hget(key, field)");
    return this._run(["HGET", key, field], undefined, RO) as Promise<S | null>;
  }

  /**
   * Gets several hash fields (HMGET).
   *
   * @param key The key.
   * @param fields The fields.
   * @returns The values in order, null for missing fields.
   */
  hmget(key: RedisArgument, ...fields: RedisArgument[]): Promise<(S | null)[]> {
    return this._run(["HMGET", key, ...fields], T.arr, RO) as Promise<(S | null)[]>;
  }

  /**
   * Gets all fields and values of a hash (HGETALL).
   *
   * @param key The key.
   * @returns A record field -> value, empty for a missing key.
   */
  hgetall(key: RedisArgument): Promise<Record<string, S>> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "hgetall(key)");
    return this._run(["HGETALL", key], T.record, RO) as Promise<Record<string, S>>;
  }

  /**
   * Deletes hash fields (HDEL).
   *
   * @param key The key.
   * @param fields The fields.
   * @returns How many fields were removed.
   */
  hdel(key: RedisArgument, ...fields: RedisArgument[]): Promise<number> {
    return this._run(["HDEL", key, ...fields], T.num, N) as Promise<number>;
  }

  /**
   * Whether a hash field exists (HEXISTS).
   *
   * @param key The key.
   * @param field The field.
   * @returns Whether it exists.
   */
  hexists(key: RedisArgument, field: RedisArgument): Promise<boolean> {
    const form = "hexists(key, field)";
    return run(this, arguments.length, 2, form, ["HEXISTS", key, field], T.bool, RO) as Promise<
      boolean
    >;
  }

  /**
   * Increments an integer hash field (HINCRBY).
   *
   * @param key The key.
   * @param field The field.
   * @param increment The increment.
   * @returns The new value.
   */
  hincrby(key: RedisArgument, field: RedisArgument, increment: number): Promise<number> {
    if (arguments.length > 3) tooManyArguments(arguments.length, "hincrby(key, field, increment)");
    return this._run(["HINCRBY", key, field, increment], T.num, N) as Promise<number>;
  }

  /**
   * Increments a float hash field (HINCRBYFLOAT).
   *
   * @param key The key.
   * @param field The field.
   * @param increment The increment.
   * @returns The new value.
   */
  hincrbyfloat(key: RedisArgument, field: RedisArgument, increment: number): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "hincrbyfloat(key, field, increment)",
      ["HINCRBYFLOAT", key, field, increment],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * The fields of a hash (HKEYS).
   *
   * @param key The key.
   * @returns The fields.
   */
  hkeys(key: RedisArgument): Promise<S[]> {
    return run(this, arguments.length, 1, "hkeys(key)", ["HKEYS", key], T.arr, RO) as Promise<S[]>;
  }

  /**
   * The values of a hash (HVALS).
   *
   * @param key The key.
   * @returns The values.
   */
  hvals(key: RedisArgument): Promise<S[]> {
    return run(this, arguments.length, 1, "hvals(key)", ["HVALS", key], T.arr, RO) as Promise<S[]>;
  }

  /**
   * The number of fields of a hash (HLEN).
   *
   * @param key The key.
   * @returns The number of fields.
   */
  hlen(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "hlen(key)", ["HLEN", key], T.num, RO) as Promise<number>;
  }

  /**
   * The length of a hash field's value (HSTRLEN).
   *
   * @param key The key.
   * @param field The field.
   * @returns The length in bytes, 0 when missing.
   */
  hstrlen(key: RedisArgument, field: RedisArgument): Promise<number> {
    const form = "hstrlen(key, field)";
    return run(this, arguments.length, 2, form, ["HSTRLEN", key, field], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * A random field of a hash (HRANDFIELD).
   *
   * @param key The key.
   * @returns A field, or null for a missing key.
   */
  hrandfield(key: RedisArgument): Promise<S | null>;
  /**
   * Random fields of a hash (HRANDFIELD key count).
   *
   * @param key The key.
   * @param count How many; negative allows repetitions.
   * @returns The fields.
   */
  hrandfield(key: RedisArgument, count: number): Promise<S[]>;
  /**
   * Random fields of a hash (HRANDFIELD).
   *
   * @param key The key.
   * @param count How many; omit for a single field.
   * @returns A field or null, or a list of fields with `count`.
   */
  hrandfield(key: RedisArgument, count?: number): Promise<S | null | S[]>;
  hrandfield(key: RedisArgument, count?: number): Promise<S | null | S[]> {
    const form = "hrandfield(key, count?)";
    return runCount(
      this,
      arguments.length,
      form,
      "HRANDFIELD",
      key,
      count,
      undefined,
      T.arr,
      RO,
    ) as Promise<S | null | S[]>;
  }

  /**
   * Random fields of a hash with their values (HRANDFIELD ... WITHVALUES).
   *
   * @param key The key.
   * @param count How many; negative allows repetitions.
   * @returns `[field, value]` pairs.
   */
  hrandfieldWithValues(key: RedisArgument, count: number): Promise<[S, S][]> {
    return run(
      this,
      arguments.length,
      2,
      "hrandfieldWithValues(key, count)",
      ["HRANDFIELD", key, count, "WITHVALUES"],
      T.pairs,
      RO,
    ) as Promise<[S, S][]>;
  }

  /**
   * One page of a hash scan (HSCAN). Start with cursor `"0"`; done when it returns `"0"`.
   *
   * @param key The key.
   * @param cursor The cursor from the previous page.
   * @param options `match`, `count`.
   * @returns The next cursor and the `[field, value]` pairs of this page.
   */
  hscanPage(
    key: RedisArgument,
    cursor: string | number,
    options?: CollectionScanOptions,
  ): Promise<[string, [S, S][]]> {
    const form = "hscanPage(key, cursor, options?)";
    return runScanPage(
      this,
      arguments.length,
      form,
      "HSCAN",
      key,
      cursor,
      options,
      T.hscanPage,
    ) as Promise<[string, [S, S][]]>;
  }

  // ------------------------------------------------------------------ lists

  /**
   * Prepends elements to a list (LPUSH); the last one ends up first.
   *
   * @param key The key.
   * @param elements The elements.
   * @returns The new length.
   */
  lpush(key: RedisArgument, ...elements: RedisArgument[]): Promise<number> {
    return this._run(["LPUSH", key, ...elements], T.num, N) as Promise<number>;
  }

  /**
   * Appends elements to a list (RPUSH).
   *
   * @param key The key.
   * @param elements The elements.
   * @returns The new length.
   */
  rpush(key: RedisArgument, ...elements: RedisArgument[]): Promise<number> {
    return this._run(["RPUSH", key, ...elements], T.num, N) as Promise<number>;
  }

  /**
   * Prepends elements only if the list exists (LPUSHX).
   *
   * @param key The key.
   * @param elements The elements.
   * @returns The new length, 0 when the list does not exist.
   */
  lpushx(key: RedisArgument, ...elements: RedisArgument[]): Promise<number> {
    return this._run(["LPUSHX", key, ...elements], T.num, N) as Promise<number>;
  }

  /**
   * Appends elements only if the list exists (RPUSHX).
   *
   * @param key The key.
   * @param elements The elements.
   * @returns The new length, 0 when the list does not exist.
   */
  rpushx(key: RedisArgument, ...elements: RedisArgument[]): Promise<number> {
    return this._run(["RPUSHX", key, ...elements], T.num, N) as Promise<number>;
  }

  /**
   * Removes and returns the first element (LPOP).
   *
   * @param key The key.
   * @returns The element, or null.
   */
  lpop(key: RedisArgument): Promise<S | null>;
  /**
   * Removes and returns up to `count` first elements (LPOP key count).
   *
   * @param key The key.
   * @param count How many.
   * @returns The elements, or null for a missing key.
   */
  lpop(key: RedisArgument, count: number): Promise<S[] | null>;
  /**
   * Removes and returns first elements (LPOP).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns The element (or elements with `count`), null for a missing key.
   */
  lpop(key: RedisArgument, count?: number): Promise<S | S[] | null>;
  lpop(key: RedisArgument, count?: number): Promise<S | S[] | null> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "lpop(key, count?)");
    if (count === undefined) return this._run(["LPOP", key], undefined, N) as Promise<S | null>;
    return this._run(["LPOP", key, count], T.arrOrNull, N) as Promise<S[] | null>;
  }

  /**
   * Removes and returns the last element (RPOP).
   *
   * @param key The key.
   * @returns The element, or null.
   */
  rpop(key: RedisArgument): Promise<S | null>;
  /**
   * Removes and returns up to `count` last elements (RPOP key count).
   *
   * @param key The key.
   * @param count How many.
   * @returns The elements, or null for a missing key.
   */
  rpop(key: RedisArgument, count: number): Promise<S[] | null>;
  /**
   * Removes and returns last elements (RPOP).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns The element (or elements with `count`), null for a missing key.
   */
  rpop(key: RedisArgument, count?: number): Promise<S | S[] | null>;
  rpop(key: RedisArgument, count?: number): Promise<S | S[] | null> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "rpop(key, count?)");
    if (count === undefined) return this._run(["RPOP", key], undefined, N) as Promise<S | null>;
    return this._run(["RPOP", key, count], T.arrOrNull, N) as Promise<S[] | null>;
  }

  /**
   * The length of a list (LLEN).
   *
   * @param key The key.
   * @returns The length.
   */
  llen(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "llen(key)", ["LLEN", key], T.num, RO) as Promise<number>;
  }

  /**
   * A range of a list (LRANGE).
   *
   * @param key The key.
   * @param start First index; negative counts from the end.
   * @param stop Last index, inclusive.
   * @returns The elements.
   */
  lrange(key: RedisArgument, start: number, stop: number): Promise<S[]> {
    const form = "lrange(key, start, stop)";
    return run(this, arguments.length, 3, form, ["LRANGE", key, start, stop], T.arr, RO) as Promise<
      S[]
    >;
  }

  /**
   * The element at an index (LINDEX).
   *
   * @param key The key.
   * @param index The index; negative counts from the end.
   * @returns The element, or null.
   */
  lindex(key: RedisArgument, index: number): Promise<S | null> {
    const form = "lindex(key, index)";
    return run(this, arguments.length, 2, form, ["LINDEX", key, index], undefined, RO) as Promise<
      S | null
    >;
  }

  /**
   * Sets the element at an index (LSET).
   *
   * @param key The key.
   * @param index The index.
   * @param element The element.
   * @returns `"OK"`.
   */
  lset(key: RedisArgument, index: number, element: RedisArgument): Promise<"OK"> {
    const form = "lset(key, index, element)";
    return run(this, arguments.length, 3, form, ["LSET", key, index, element], T.ok, N) as Promise<
      "OK"
    >;
  }

  /**
   * Inserts an element before or after a pivot (LINSERT).
   *
   * @param key The key.
   * @param where `"BEFORE"` or `"AFTER"`.
   * @param pivot The element to insert next to.
   * @param element The element to insert.
   * @returns The new length, -1 when the pivot was not found, 0 for a missing key.
   */
  linsert(
    key: RedisArgument,
    where: "BEFORE" | "AFTER",
    pivot: RedisArgument,
    element: RedisArgument,
  ): Promise<number> {
    return run(
      this,
      arguments.length,
      4,
      "linsert(key, where, pivot, element)",
      ["LINSERT", key, where, pivot, element],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Removes occurrences of an element (LREM).
   *
   * @param key The key.
   * @param count How many: positive from the head, negative from the tail, 0 all.
   * @param element The element.
   * @returns How many were removed.
   */
  lrem(key: RedisArgument, count: number, element: RedisArgument): Promise<number> {
    const form = "lrem(key, count, element)";
    return run(this, arguments.length, 3, form, ["LREM", key, count, element], T.num, N) as Promise<
      number
    >;
  }

  /**
   * Trims a list to a range (LTRIM).
   *
   * @param key The key.
   * @param start First index to keep.
   * @param stop Last index to keep, inclusive.
   * @returns `"OK"`.
   */
  ltrim(key: RedisArgument, start: number, stop: number): Promise<"OK"> {
    const form = "ltrim(key, start, stop)";
    return run(this, arguments.length, 3, form, ["LTRIM", key, start, stop], T.ok, N) as Promise<
      "OK"
    >;
  }

  /**
   * The index of an element (LPOS).
   *
   * @param key The key.
   * @param element The element.
   * @param options `rank`, `maxlen`.
   * @returns The index, or null when not found.
   */
  lpos(key: RedisArgument, element: RedisArgument, options?: LposOptions): Promise<number | null> {
    const args = lposArgs(
      arguments.length,
      3,
      "lpos(key, element, options?)",
      key,
      element,
      options,
    );
    return this._run(args, T.numOrNull, RO) as Promise<number | null>;
  }

  /**
   * The indexes of several matches of an element (LPOS ... COUNT).
   *
   * @param key The key.
   * @param element The element.
   * @param count At most this many matches; 0 for all.
   * @param options `rank`, `maxlen`.
   * @returns The indexes.
   */
  lposCount(
    key: RedisArgument,
    element: RedisArgument,
    count: number,
    options?: LposOptions,
  ): Promise<number[]> {
    const form = "lposCount(key, element, count, options?)";
    const args = lposArgs(arguments.length, 4, form, key, element, options);
    args.push("COUNT", count);
    return this._run(args, T.nums, RO) as Promise<number[]>;
  }

  /**
   * Moves an element between lists (LMOVE).
   *
   * @param source The source list.
   * @param destination The destination list.
   * @param from The end of the source to pop from.
   * @param to The end of the destination to push to.
   * @returns The element, or null when the source is empty.
   */
  lmove(
    source: RedisArgument,
    destination: RedisArgument,
    from: ListSide,
    to: ListSide,
  ): Promise<S | null> {
    return run(
      this,
      arguments.length,
      4,
      "lmove(source, destination, from, to)",
      ["LMOVE", source, destination, from, to],
      undefined,
      N,
    ) as Promise<S | null>;
  }

  /**
   * Pops elements from the first non-empty list (LMPOP).
   *
   * @param keys The lists, in order.
   * @param side The end to pop from.
   * @param options `count`: how many elements (default 1).
   * @returns The key and the elements, or null when all lists are empty.
   */
  lmpop(
    keys: RedisArgument[],
    side: ListSide,
    options?: { count?: number },
  ): Promise<KeyElements<S> | null> {
    const form = "lmpop(keys, side, options?)";
    return runMpop(
      this,
      arguments.length,
      form,
      "LMPOP",
      N,
      undefined,
      keys,
      side,
      options,
      T.keyElements,
    ) as Promise<KeyElements<S> | null>;
  }

  /**
   * Pops the first element of the first non-empty list, waiting if all are empty (BLPOP).
   *
   * @param keys One key or several.
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @returns The key and the element, or null on timeout.
   */
  blpop(keys: RedisArgument | RedisArgument[], timeout: number): Promise<KeyElement<S> | null> {
    const form = "blpop(keys, timeout)";
    return runBpop(this, arguments.length, form, "BLPOP", keys, timeout, T.keyElement) as Promise<
      KeyElement<S> | null
    >;
  }

  /**
   * Pops the last element of the first non-empty list, waiting if all are empty (BRPOP).
   *
   * @param keys One key or several.
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @returns The key and the element, or null on timeout.
   */
  brpop(keys: RedisArgument | RedisArgument[], timeout: number): Promise<KeyElement<S> | null> {
    const form = "brpop(keys, timeout)";
    return runBpop(this, arguments.length, form, "BRPOP", keys, timeout, T.keyElement) as Promise<
      KeyElement<S> | null
    >;
  }

  /**
   * Moves an element between lists, waiting if the source is empty (BLMOVE).
   *
   * @param source The source list.
   * @param destination The destination list.
   * @param from The end of the source to pop from.
   * @param to The end of the destination to push to.
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @returns The element, or null on timeout.
   */
  blmove(
    source: RedisArgument,
    destination: RedisArgument,
    from: ListSide,
    to: ListSide,
    timeout: number,
  ): Promise<S | null> {
    if (arguments.length > 5) {
      tooManyArguments(arguments.length, "blmove(source, destination, from, to, timeout)");
    }
    const ms = secToMs(timeout);
    const args: RedisArgument[] = ["BLMOVE", source, destination, from, to, timeout];
    return this._run(args, undefined, BL, ms) as Promise<S | null>;
  }

  /**
   * Pops elements from the first non-empty list, waiting if all are empty (BLMPOP).
   *
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @param keys The lists, in order.
   * @param side The end to pop from.
   * @param options `count`: how many elements (default 1).
   * @returns The key and the elements, or null on timeout.
   */
  blmpop(
    timeout: number,
    keys: RedisArgument[],
    side: ListSide,
    options?: { count?: number },
  ): Promise<KeyElements<S> | null> {
    const form = "blmpop(timeout, keys, side, options?)";
    return runMpop(
      this,
      arguments.length,
      form,
      "BLMPOP",
      BL,
      timeout,
      keys,
      side,
      options,
      T.keyElements,
    ) as Promise<KeyElements<S> | null>;
  }

  /**
   * Pops the last element of a list and pushes it to another, waiting if empty (BRPOPLPUSH).
   *
   * @param source The source list.
   * @param destination The destination list.
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @returns The element, or null on timeout.
   */
  brpoplpush(
    source: RedisArgument,
    destination: RedisArgument,
    timeout: number,
  ): Promise<S | null> {
    if (arguments.length > 3) {
      tooManyArguments(arguments.length, "brpoplpush(source, destination, timeout)");
    }
    const ms = secToMs(timeout);
    const args: RedisArgument[] = ["BRPOPLPUSH", source, destination, timeout];
    return this._run(args, undefined, BL, ms) as Promise<S | null>;
  }

  // ------------------------------------------------------------------- sets

  /**
   * Adds members to a set (SADD).
   *
   * @param key The key.
   * @param members The members.
   * @returns How many were added.
   */
  sadd(key: RedisArgument, ...members: RedisArgument[]): Promise<number> {
    return this._run(["SADD", key, ...members], T.num, N) as Promise<number>;
  }

  /**
   * Removes members from a set (SREM).
   *
   * @param key The key.
   * @param members The members.
   * @returns How many were removed.
   */
  srem(key: RedisArgument, ...members: RedisArgument[]): Promise<number> {
    return this._run(["SREM", key, ...members], T.num, N) as Promise<number>;
  }

  /**
   * All members of a set (SMEMBERS).
   *
   * @param key The key.
   * @returns The members, in no particular order.
   */
  smembers(key: RedisArgument): Promise<S[]> {
    return run(this, arguments.length, 1, "smembers(key)", ["SMEMBERS", key], T.arr, RO) as Promise<
      S[]
    >;
  }

  /**
   * Whether a value is a member of a set (SISMEMBER).
   *
   * @param key The key.
   * @param member The value.
   * @returns Whether it is a member.
   */
  sismember(key: RedisArgument, member: RedisArgument): Promise<boolean> {
    const form = "sismember(key, member)";
    return run(this, arguments.length, 2, form, ["SISMEMBER", key, member], T.bool, RO) as Promise<
      boolean
    >;
  }

  /**
   * Whether each value is a member of a set (SMISMEMBER).
   *
   * @param key The key.
   * @param members The values.
   * @returns One boolean per value.
   */
  smismember(key: RedisArgument, ...members: RedisArgument[]): Promise<boolean[]> {
    return this._run(["SMISMEMBER", key, ...members], T.bools, RO) as Promise<boolean[]>;
  }

  /**
   * The number of members of a set (SCARD).
   *
   * @param key The key.
   * @returns The cardinality.
   */
  scard(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "scard(key)", ["SCARD", key], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * Removes and returns a random member (SPOP).
   *
   * @param key The key.
   * @returns The member, or null.
   */
  spop(key: RedisArgument): Promise<S | null>;
  /**
   * Removes and returns random members (SPOP key count).
   *
   * @param key The key.
   * @param count How many.
   * @returns The members.
   */
  spop(key: RedisArgument, count: number): Promise<S[]>;
  /**
   * Removes and returns random members (SPOP).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns A member or null, or a list with `count`.
   */
  spop(key: RedisArgument, count?: number): Promise<S | null | S[]>;
  spop(key: RedisArgument, count?: number): Promise<S | null | S[]> {
    const form = "spop(key, count?)";
    return runCount(
      this,
      arguments.length,
      form,
      "SPOP",
      key,
      count,
      undefined,
      T.arr,
      N,
    ) as Promise<S | null | S[]>;
  }

  /**
   * A random member (SRANDMEMBER).
   *
   * @param key The key.
   * @returns The member, or null.
   */
  srandmember(key: RedisArgument): Promise<S | null>;
  /**
   * Random members (SRANDMEMBER key count).
   *
   * @param key The key.
   * @param count How many; negative allows repetitions.
   * @returns The members.
   */
  srandmember(key: RedisArgument, count: number): Promise<S[]>;
  /**
   * Random members (SRANDMEMBER).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns A member or null, or a list with `count`.
   */
  srandmember(key: RedisArgument, count?: number): Promise<S | null | S[]>;
  srandmember(key: RedisArgument, count?: number): Promise<S | null | S[]> {
    const form = "srandmember(key, count?)";
    return runCount(
      this,
      arguments.length,
      form,
      "SRANDMEMBER",
      key,
      count,
      undefined,
      T.arr,
      RO,
    ) as Promise<S | null | S[]>;
  }

  /**
   * Moves a member between sets (SMOVE).
   *
   * @param source The source set.
   * @param destination The destination set.
   * @param member The member.
   * @returns Whether it was moved.
   */
  smove(
    source: RedisArgument,
    destination: RedisArgument,
    member: RedisArgument,
  ): Promise<boolean> {
    return run(
      this,
      arguments.length,
      3,
      "smove(source, destination, member)",
      ["SMOVE", source, destination, member],
      T.bool,
      N,
    ) as Promise<boolean>;
  }

  /**
   * The intersection of sets (SINTER).
   *
   * @param keys The sets.
   * @returns The members.
   */
  sinter(...keys: RedisArgument[]): Promise<S[]> {
    return this._run(["SINTER", ...keys], T.arr, RO) as Promise<S[]>;
  }

  /**
   * The size of the intersection of sets (SINTERCARD).
   *
   * @param keys The sets.
   * @param options `limit`: stop counting at this number.
   * @returns The cardinality.
   */
  sintercard(keys: RedisArgument[], options?: { limit?: number }): Promise<number> {
    const form = "sintercard(keys, options?)";
    if (arguments.length > 2 || options !== undefined) {
      checkArgs(arguments.length, 2, form, O.LIMIT, options);
    }
    const args = numKeys(["SINTERCARD"], keys, form);
    if (options?.limit !== undefined) args.push("LIMIT", options.limit);
    return this._run(args, T.num, RO) as Promise<number>;
  }

  /**
   * Stores the intersection of sets (SINTERSTORE).
   *
   * @param destination Where to store it.
   * @param keys The sets.
   * @returns The size of the result.
   */
  sinterstore(destination: RedisArgument, ...keys: RedisArgument[]): Promise<number> {
    return this._run(["SINTERSTORE", destination, ...keys], T.num, N) as Promise<number>;
  }

  /**
   * The union of sets (SUNION).
   *
   * @param keys The sets.
   * @returns The members.
   */
  sunion(...keys: RedisArgument[]): Promise<S[]> {
    return this._run(["SUNION", ...keys], T.arr, RO) as Promise<S[]>;
  }

  /**
   * Stores the union of sets (SUNIONSTORE).
   *
   * @param destination Where to store it.
   * @param keys The sets.
   * @returns The size of the result.
   */
  sunionstore(destination: RedisArgument, ...keys: RedisArgument[]): Promise<number> {
    return this._run(["SUNIONSTORE", destination, ...keys], T.num, N) as Promise<number>;
  }

  /**
   * The members of the first set that are in none of the others (SDIFF).
   *
   * @param keys The sets.
   * @returns The members.
   */
  sdiff(...keys: RedisArgument[]): Promise<S[]> {
    return this._run(["SDIFF", ...keys], T.arr, RO) as Promise<S[]>;
  }

  /**
   * Stores the difference of sets (SDIFFSTORE).
   *
   * @param destination Where to store it.
   * @param keys The sets.
   * @returns The size of the result.
   */
  sdiffstore(destination: RedisArgument, ...keys: RedisArgument[]): Promise<number> {
    return this._run(["SDIFFSTORE", destination, ...keys], T.num, N) as Promise<number>;
  }

  /**
   * One page of a set scan (SSCAN). Start with cursor `"0"`; done when it returns `"0"`.
   *
   * @param key The key.
   * @param cursor The cursor from the previous page.
   * @param options `match`, `count`.
   * @returns The next cursor and the members of this page.
   */
  sscanPage(
    key: RedisArgument,
    cursor: string | number,
    options?: CollectionScanOptions,
  ): Promise<[string, S[]]> {
    const form = "sscanPage(key, cursor, options?)";
    return runScanPage(
      this,
      arguments.length,
      form,
      "SSCAN",
      key,
      cursor,
      options,
      T.scanPage,
    ) as Promise<[string, S[]]>;
  }

  // ------------------------------------------------------------ sorted sets

  /**
   * Adds or updates members of a sorted set (ZADD).
   *
   * @param key The key.
   * @param members One `{ score, member }` or several.
   * @param options `nx`, `xx`, `gt`, `lt`, `ch`.
   * @returns How many members were added (or changed, with `ch`).
   */
  zadd(
    key: RedisArgument,
    members: ZAddMember | ZAddMember[],
    options?: ZAddOptions,
  ): Promise<number> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "zadd(key, members, options?)", O.ZADD, options);
    }
    const args = zaddArgs(key, options);
    try {
      for (const m of list(members)) args.push(sc(m.score), m.member);
    } catch (e) {
      shapeError(e, members, "zadd", "member", "{ score, member } or a list of them");
    }
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * Increments the score of a member like ZINCRBY, with ZADD's conditions (ZADD ... INCR).
   *
   * @param key The key.
   * @param member The increment as `score`, and the member.
   * @param options `nx`, `xx`, `gt`, `lt`.
   * @returns The new score, or null when a condition was not met.
   */
  zaddIncr(key: RedisArgument, member: ZAddMember, options?: ZAddOptions): Promise<number | null> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "zaddIncr(key, member, options?)", O.ZADD, options);
    }
    if (member == null) cannotUse(member, "the member", "zaddIncr", "{ score, member }");
    const args = zaddArgs(key, options);
    args.push("INCR", sc(member.score), member.member);
    return this._run(args, T.numOrNull, N) as Promise<number | null>;
  }

  /**
   * Increments the score of a member (ZINCRBY).
   *
   * @param key The key.
   * @param increment The increment.
   * @param member The member.
   * @returns The new score.
   */
  zincrby(key: RedisArgument, increment: number, member: RedisArgument): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "zincrby(key, increment, member)",
      ["ZINCRBY", key, sc(increment), member],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Removes members of a sorted set (ZREM).
   *
   * @param key The key.
   * @param members The members.
   * @returns How many were removed.
   */
  zrem(key: RedisArgument, ...members: RedisArgument[]): Promise<number> {
    return this._run(["ZREM", key, ...members], T.num, N) as Promise<number>;
  }

  /**
   * The score of a member (ZSCORE).
   *
   * @param key The key.
   * @param member The member.
   * @returns The score, or null.
   */
  zscore(key: RedisArgument, member: RedisArgument): Promise<number | null> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "zscore(key, member)");
    return this._run(["ZSCORE", key, member], T.numOrNull, RO) as Promise<number | null>;
  }

  /**
   * The scores of several members (ZMSCORE).
   *
   * @param key The key.
   * @param members The members.
   * @returns One score or null per member.
   */
  zmscore(key: RedisArgument, ...members: RedisArgument[]): Promise<(number | null)[]> {
    const args: RedisArgument[] = ["ZMSCORE", key, ...members];
    return this._run(args, T.numsOrNull, RO) as Promise<(number | null)[]>;
  }

  /**
   * The rank of a member, lowest score first (ZRANK).
   *
   * @param key The key.
   * @param member The member.
   * @returns The 0-based rank, or null.
   */
  zrank(key: RedisArgument, member: RedisArgument): Promise<number | null> {
    const form = "zrank(key, member)";
    return run(this, arguments.length, 2, form, ["ZRANK", key, member], T.numOrNull, RO) as Promise<
      number | null
    >;
  }

  /**
   * The rank of a member, highest score first (ZREVRANK).
   *
   * @param key The key.
   * @param member The member.
   * @returns The 0-based rank, or null.
   */
  zrevrank(key: RedisArgument, member: RedisArgument): Promise<number | null> {
    return run(
      this,
      arguments.length,
      2,
      "zrevrank(key, member)",
      ["ZREVRANK", key, member],
      T.numOrNull,
      RO,
    ) as Promise<number | null>;
  }

  /**
   * The number of members of a sorted set (ZCARD).
   *
   * @param key The key.
   * @returns The cardinality.
   */
  zcard(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "zcard(key)", ["ZCARD", key], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * Counts members with a score in a range (ZCOUNT).
   *
   * @param key The key.
   * @param min Minimum score (`"(1"` for exclusive, `-Infinity`).
   * @param max Maximum score.
   * @returns The count.
   */
  zcount(key: RedisArgument, min: number | string, max: number | string): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "zcount(key, min, max)",
      ["ZCOUNT", key, sc(min), sc(max)],
      T.num,
      RO,
    ) as Promise<number>;
  }

  /**
   * Counts members in a lexicographic range (ZLEXCOUNT).
   *
   * @param key The key.
   * @param min Minimum, e.g. `"[a"`, `"(a"`, `"-"`.
   * @param max Maximum, e.g. `"[z"`, `"+"`.
   * @returns The count.
   */
  zlexcount(key: RedisArgument, min: RedisArgument, max: RedisArgument): Promise<number> {
    const form = "zlexcount(key, min, max)";
    return run(this, arguments.length, 3, form, ["ZLEXCOUNT", key, min, max], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * Members in a range of ranks, scores or lexicographic bounds (ZRANGE).
   *
   * @param key The key.
   * @param start Start rank, or score/lex bound with `byScore`/`byLex` (the max with `rev`).
   * @param stop Stop rank (inclusive), or score/lex bound.
   * @param options `byScore`, `byLex`, `rev`, `limit`.
   * @returns The members.
   */
  zrange(
    key: RedisArgument,
    start: number | string,
    stop: number | string,
    options?: ZRangeOptions,
  ): Promise<S[]> {
    if (arguments.length > 4 || options !== undefined) {
      checkArgs(arguments.length, 4, "zrange(key, start, stop, options?)", O.ZRANGE, options);
    }
    return this._run(zrangeArgs(["ZRANGE", key], start, stop, options), T.arr, RO) as Promise<S[]>;
  }

  /**
   * Members with their scores in a range (ZRANGE ... WITHSCORES).
   *
   * @param key The key.
   * @param start Start rank, or score bound with `byScore` (the max with `rev`).
   * @param stop Stop rank (inclusive), or score bound.
   * @param options `byScore`, `rev`, `limit`.
   * @returns `{ member, score }` in order.
   */
  zrangeWithScores(
    key: RedisArgument,
    start: number | string,
    stop: number | string,
    options?: ZRangeOptions,
  ): Promise<ScoredMember<S>[]> {
    const form = "zrangeWithScores(key, start, stop, options?)";
    if (arguments.length > 4 || options !== undefined) {
      checkArgs(arguments.length, 4, form, O.ZRANGE, options);
    }
    const args = zrangeArgs(["ZRANGE", key], start, stop, options);
    args.push("WITHSCORES");
    return this._run(args, T.scored, RO) as Promise<ScoredMember<S>[]>;
  }

  /**
   * Stores a range of a sorted set (ZRANGESTORE).
   *
   * @param destination Where to store it.
   * @param source The source sorted set.
   * @param start Start rank or bound.
   * @param stop Stop rank or bound.
   * @param options `byScore`, `byLex`, `rev`, `limit`.
   * @returns The number of stored members.
   */
  zrangestore(
    destination: RedisArgument,
    source: RedisArgument,
    start: number | string,
    stop: number | string,
    options?: ZRangeOptions,
  ): Promise<number> {
    const form = "zrangestore(destination, source, start, stop, options?)";
    if (arguments.length > 5 || options !== undefined) {
      checkArgs(arguments.length, 5, form, O.ZRANGE, options);
    }
    const args = zrangeArgs(["ZRANGESTORE", destination, source], start, stop, options);
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * Removes members in a range of ranks (ZREMRANGEBYRANK).
   *
   * @param key The key.
   * @param start First rank.
   * @param stop Last rank, inclusive.
   * @returns How many were removed.
   */
  zremrangebyrank(key: RedisArgument, start: number, stop: number): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "zremrangebyrank(key, start, stop)",
      ["ZREMRANGEBYRANK", key, start, stop],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Removes members in a score range (ZREMRANGEBYSCORE).
   *
   * @param key The key.
   * @param min Minimum score.
   * @param max Maximum score.
   * @returns How many were removed.
   */
  zremrangebyscore(
    key: RedisArgument,
    min: number | string,
    max: number | string,
  ): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "zremrangebyscore(key, min, max)",
      ["ZREMRANGEBYSCORE", key, sc(min), sc(max)],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Removes members in a lexicographic range (ZREMRANGEBYLEX).
   *
   * @param key The key.
   * @param min Minimum, e.g. `"[a"`.
   * @param max Maximum, e.g. `"(z"`.
   * @returns How many were removed.
   */
  zremrangebylex(key: RedisArgument, min: RedisArgument, max: RedisArgument): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "zremrangebylex(key, min, max)",
      ["ZREMRANGEBYLEX", key, min, max],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Removes and returns the member with the lowest score (ZPOPMIN).
   *
   * @param key The key.
   * @returns The member and its score, or null.
   */
  zpopmin(key: RedisArgument): Promise<ScoredMember<S> | null>;
  /**
   * Removes and returns the members with the lowest scores (ZPOPMIN key count).
   *
   * @param key The key.
   * @param count How many.
   * @returns The members and their scores, lowest first.
   */
  zpopmin(key: RedisArgument, count: number): Promise<ScoredMember<S>[]>;
  /**
   * Removes and returns members with the lowest scores (ZPOPMIN).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns One scored member or null, or a list with `count`.
   */
  zpopmin(
    key: RedisArgument,
    count?: number,
  ): Promise<ScoredMember<S> | null | ScoredMember<S>[]>;
  zpopmin(
    key: RedisArgument,
    count?: number,
  ): Promise<ScoredMember<S> | null | ScoredMember<S>[]> {
    const form = "zpopmin(key, count?)";
    return runCount(
      this,
      arguments.length,
      form,
      "ZPOPMIN",
      key,
      count,
      T.scoredOne,
      T.scored,
      N,
    ) as Promise<ScoredMember<S> | null | ScoredMember<S>[]>;
  }

  /**
   * Removes and returns the member with the highest score (ZPOPMAX).
   *
   * @param key The key.
   * @returns The member and its score, or null.
   */
  zpopmax(key: RedisArgument): Promise<ScoredMember<S> | null>;
  /**
   * Removes and returns the members with the highest scores (ZPOPMAX key count).
   *
   * @param key The key.
   * @param count How many.
   * @returns The members and their scores, highest first.
   */
  zpopmax(key: RedisArgument, count: number): Promise<ScoredMember<S>[]>;
  /**
   * Removes and returns members with the highest scores (ZPOPMAX).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns One scored member or null, or a list with `count`.
   */
  zpopmax(
    key: RedisArgument,
    count?: number,
  ): Promise<ScoredMember<S> | null | ScoredMember<S>[]>;
  zpopmax(
    key: RedisArgument,
    count?: number,
  ): Promise<ScoredMember<S> | null | ScoredMember<S>[]> {
    const form = "zpopmax(key, count?)";
    return runCount(
      this,
      arguments.length,
      form,
      "ZPOPMAX",
      key,
      count,
      T.scoredOne,
      T.scored,
      N,
    ) as Promise<ScoredMember<S> | null | ScoredMember<S>[]>;
  }

  /**
   * A random member of a sorted set (ZRANDMEMBER).
   *
   * @param key The key.
   * @returns The member, or null.
   */
  zrandmember(key: RedisArgument): Promise<S | null>;
  /**
   * Random members of a sorted set (ZRANDMEMBER key count).
   *
   * @param key The key.
   * @param count How many; negative allows repetitions.
   * @returns The members.
   */
  zrandmember(key: RedisArgument, count: number): Promise<S[]>;
  /**
   * Random members of a sorted set (ZRANDMEMBER).
   *
   * @param key The key.
   * @param count How many; omit for one.
   * @returns A member or null, or a list with `count`.
   */
  zrandmember(key: RedisArgument, count?: number): Promise<S | null | S[]>;
  zrandmember(key: RedisArgument, count?: number): Promise<S | null | S[]> {
    const form = "zrandmember(key, count?)";
    return runCount(
      this,
      arguments.length,
      form,
      "ZRANDMEMBER",
      key,
      count,
      undefined,
      T.arr,
      RO,
    ) as Promise<S | null | S[]>;
  }

  /**
   * Random members with their scores (ZRANDMEMBER ... WITHSCORES).
   *
   * @param key The key.
   * @param count How many; negative allows repetitions.
   * @returns The members and scores.
   */
  zrandmemberWithScores(key: RedisArgument, count: number): Promise<ScoredMember<S>[]> {
    return run(
      this,
      arguments.length,
      2,
      "zrandmemberWithScores(key, count)",
      ["ZRANDMEMBER", key, count, "WITHSCORES"],
      T.scored,
      RO,
    ) as Promise<ScoredMember<S>[]>;
  }

  /**
   * Stores the union of sorted sets (ZUNIONSTORE).
   *
   * @param destination Where to store it.
   * @param keys The sorted sets.
   * @param options `weights`, `aggregate`.
   * @returns The size of the result.
   */
  zunionstore(
    destination: RedisArgument,
    keys: RedisArgument[],
    options?: ZAggregateOptions,
  ): Promise<number> {
    const form = "zunionstore(destination, keys, options?)";
    return runAggregate(
      this,
      arguments.length,
      3,
      form,
      ["ZUNIONSTORE", destination],
      keys,
      options,
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Stores the intersection of sorted sets (ZINTERSTORE).
   *
   * @param destination Where to store it.
   * @param keys The sorted sets.
   * @param options `weights`, `aggregate`.
   * @returns The size of the result.
   */
  zinterstore(
    destination: RedisArgument,
    keys: RedisArgument[],
    options?: ZAggregateOptions,
  ): Promise<number> {
    const form = "zinterstore(destination, keys, options?)";
    return runAggregate(
      this,
      arguments.length,
      3,
      form,
      ["ZINTERSTORE", destination],
      keys,
      options,
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Stores the difference of sorted sets (ZDIFFSTORE).
   *
   * @param destination Where to store it.
   * @param keys The sorted sets; the first minus the others.
   * @returns The size of the result.
   */
  zdiffstore(destination: RedisArgument, keys: RedisArgument[]): Promise<number> {
    const form = "zdiffstore(destination, keys)";
    if (arguments.length > 2) tooManyArguments(arguments.length, form);
    const args = numKeys(["ZDIFFSTORE", destination], keys, form);
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * The union of sorted sets (ZUNION).
   *
   * @param keys The sorted sets.
   * @param options `weights`, `aggregate`.
   * @returns The members, by score.
   */
  zunion(keys: RedisArgument[], options?: ZAggregateOptions): Promise<S[]> {
    const form = "zunion(keys, options?)";
    return runAggregate(
      this,
      arguments.length,
      2,
      form,
      ["ZUNION"],
      keys,
      options,
      T.arr,
      RO,
    ) as Promise<S[]>;
  }

  /**
   * The union of sorted sets with scores (ZUNION ... WITHSCORES).
   *
   * @param keys The sorted sets.
   * @param options `weights`, `aggregate`.
   * @returns The members and their combined scores.
   */
  zunionWithScores(
    keys: RedisArgument[],
    options?: ZAggregateOptions,
  ): Promise<ScoredMember<S>[]> {
    const form = "zunionWithScores(keys, options?)";
    return runAggregate(
      this,
      arguments.length,
      2,
      form,
      ["ZUNION"],
      keys,
      options,
      T.scored,
      RO,
      true,
    ) as Promise<ScoredMember<S>[]>;
  }

  /**
   * The intersection of sorted sets (ZINTER).
   *
   * @param keys The sorted sets.
   * @param options `weights`, `aggregate`.
   * @returns The members, by score.
   */
  zinter(keys: RedisArgument[], options?: ZAggregateOptions): Promise<S[]> {
    const form = "zinter(keys, options?)";
    return runAggregate(
      this,
      arguments.length,
      2,
      form,
      ["ZINTER"],
      keys,
      options,
      T.arr,
      RO,
    ) as Promise<S[]>;
  }

  /**
   * The intersection of sorted sets with scores (ZINTER ... WITHSCORES).
   *
   * @param keys The sorted sets.
   * @param options `weights`, `aggregate`.
   * @returns The members and their combined scores.
   */
  zinterWithScores(
    keys: RedisArgument[],
    options?: ZAggregateOptions,
  ): Promise<ScoredMember<S>[]> {
    const form = "zinterWithScores(keys, options?)";
    return runAggregate(
      this,
      arguments.length,
      2,
      form,
      ["ZINTER"],
      keys,
      options,
      T.scored,
      RO,
      true,
    ) as Promise<ScoredMember<S>[]>;
  }

  /**
   * The members of the first sorted set that are in none of the others (ZDIFF).
   *
   * @param keys The sorted sets.
   * @returns The members, by score.
   */
  zdiff(keys: RedisArgument[]): Promise<S[]> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "zdiff(keys)");
    return this._run(numKeys(["ZDIFF"], keys, "zdiff"), T.arr, RO) as Promise<S[]>;
  }

  /**
   * The difference of sorted sets with scores (ZDIFF ... WITHSCORES).
   *
   * @param keys The sorted sets.
   * @returns The members and their scores.
   */
  zdiffWithScores(keys: RedisArgument[]): Promise<ScoredMember<S>[]> {
    const form = "zdiffWithScores(keys)";
    if (arguments.length > 1) tooManyArguments(arguments.length, form);
    const args = numKeys(["ZDIFF"], keys, form);
    args.push("WITHSCORES");
    return this._run(args, T.scored, RO) as Promise<ScoredMember<S>[]>;
  }

  /**
   * Pops members from the first non-empty sorted set (ZMPOP).
   *
   * @param keys The sorted sets, in order.
   * @param side `"MIN"` or `"MAX"`.
   * @param options `count`: how many (default 1).
   * @returns The key and the members with scores, or null when all are empty.
   */
  zmpop(
    keys: RedisArgument[],
    side: ZPopSide,
    options?: { count?: number },
  ): Promise<KeyScoredMembers<S> | null> {
    const form = "zmpop(keys, side, options?)";
    return runMpop(
      this,
      arguments.length,
      form,
      "ZMPOP",
      N,
      undefined,
      keys,
      side,
      options,
      T.keyScored,
    ) as Promise<KeyScoredMembers<S> | null>;
  }

  /**
   * Pops the lowest-scored member of the first non-empty sorted set, waiting (BZPOPMIN).
   *
   * @param keys One key or several.
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @returns The key, member and score, or null on timeout.
   */
  bzpopmin(
    keys: RedisArgument | RedisArgument[],
    timeout: number,
  ): Promise<KeyScoredMember<S> | null> {
    const form = "bzpopmin(keys, timeout)";
    return runBpop(
      this,
      arguments.length,
      form,
      "BZPOPMIN",
      keys,
      timeout,
      T.keyMemberScore,
    ) as Promise<KeyScoredMember<S> | null>;
  }

  /**
   * Pops the highest-scored member of the first non-empty sorted set, waiting (BZPOPMAX).
   *
   * @param keys One key or several.
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @returns The key, member and score, or null on timeout.
   */
  bzpopmax(
    keys: RedisArgument | RedisArgument[],
    timeout: number,
  ): Promise<KeyScoredMember<S> | null> {
    const form = "bzpopmax(keys, timeout)";
    return runBpop(
      this,
      arguments.length,
      form,
      "BZPOPMAX",
      keys,
      timeout,
      T.keyMemberScore,
    ) as Promise<KeyScoredMember<S> | null>;
  }

  /**
   * Pops members from the first non-empty sorted set, waiting if all are empty (BZMPOP).
   *
   * @param timeout Seconds to wait (fractions allowed); 0 waits forever.
   * @param keys The sorted sets, in order.
   * @param side `"MIN"` or `"MAX"`.
   * @param options `count`: how many (default 1).
   * @returns The key and the members with scores, or null on timeout.
   */
  bzmpop(
    timeout: number,
    keys: RedisArgument[],
    side: ZPopSide,
    options?: { count?: number },
  ): Promise<KeyScoredMembers<S> | null> {
    const form = "bzmpop(timeout, keys, side, options?)";
    return runMpop(
      this,
      arguments.length,
      form,
      "BZMPOP",
      BL,
      timeout,
      keys,
      side,
      options,
      T.keyScored,
    ) as Promise<KeyScoredMembers<S> | null>;
  }

  /**
   * One page of a sorted-set scan (ZSCAN). Start with cursor `"0"`; done when it returns `"0"`.
   *
   * @param key The key.
   * @param cursor The cursor from the previous page.
   * @param options `match`, `count`.
   * @returns The next cursor and the members with scores of this page.
   */
  zscanPage(
    key: RedisArgument,
    cursor: string | number,
    options?: CollectionScanOptions,
  ): Promise<[string, ScoredMember<S>[]]> {
    const form = "zscanPage(key, cursor, options?)";
    return runScanPage(
      this,
      arguments.length,
      form,
      "ZSCAN",
      key,
      cursor,
      options,
      T.zscanPage,
    ) as Promise<[string, ScoredMember<S>[]]>;
  }

  // ---------------------------------------------------------------- streams

  /**
   * Appends an entry to a stream (XADD).
   *
   * @param key The stream key.
   * @param id The entry ID, `"*"` to let the server generate it.
   * @param fields The entry's fields and values.
   * @param options `nomkstream`, trimming (`maxlen` or `minid`, `approximate`, `limit`).
   * @returns The entry ID, or null with `nomkstream` when the stream does not exist.
   */
  xadd(
    key: RedisArgument,
    id: RedisArgument,
    fields: StreamFields,
    options?: XAddOptions,
  ): Promise<string | null> {
    if (arguments.length > 4 || options !== undefined) {
      checkArgs(arguments.length, 4, "xadd(key, id, fields, options?)", O.XADD, options);
    }
    const args: RedisArgument[] = ["XADD", key];
    if (options?.nomkstream) args.push("NOMKSTREAM");
    if (options) trimArgs(args, options);
    args.push(id, ...flat(fields, "xadd"));
    return this._run(args, T.strOrNull, N) as Promise<string | null>;
  }

  /**
   * Entries in an ID range (XRANGE).
   *
   * @param key The stream key.
   * @param start Smallest ID, `"-"` for the first; `"(id"` exclusive.
   * @param end Greatest ID, `"+"` for the last.
   * @param options `count`: at most this many.
   * @returns The entries, oldest first.
   */
  xrange(
    key: RedisArgument,
    start: RedisArgument = "-",
    end: RedisArgument = "+",
    options?: { count?: number },
  ): Promise<StreamEntry<S>[]> {
    const form = "xrange(key, start?, end?, options?)";
    return runWithCount(
      this,
      arguments.length,
      4,
      form,
      ["XRANGE", key, start, end],
      options,
      T.streamEntries,
      RO,
    ) as Promise<StreamEntry<S>[]>;
  }

  /**
   * Entries in an ID range, newest first (XREVRANGE).
   *
   * @param key The stream key.
   * @param end Greatest ID, `"+"` for the last.
   * @param start Smallest ID, `"-"` for the first.
   * @param options `count`: at most this many.
   * @returns The entries, newest first.
   */
  xrevrange(
    key: RedisArgument,
    end: RedisArgument = "+",
    start: RedisArgument = "-",
    options?: { count?: number },
  ): Promise<StreamEntry<S>[]> {
    const form = "xrevrange(key, end?, start?, options?)";
    return runWithCount(
      this,
      arguments.length,
      4,
      form,
      ["XREVRANGE", key, end, start],
      options,
      T.streamEntries,
      RO,
    ) as Promise<StreamEntry<S>[]>;
  }

  /**
   * Reads entries newer than the given IDs from streams (XREAD); with `block` waits for them.
   *
   * @param streams Stream key -> last seen ID (`"$"` for only new entries).
   * @param options `count`, `block` (milliseconds, 0 waits forever).
   * @returns Entries per stream, or null when nothing arrived in time.
   */
  xread(streams: XReadStreams, options?: XReadOptions): Promise<StreamMessages<S>[] | null> {
    const form = "xread(streams, options?)";
    return runRead(
      this,
      arguments.length,
      2,
      form,
      O.XREAD,
      ["XREAD"],
      streams,
      options,
      RO,
    ) as Promise<StreamMessages<S>[] | null>;
  }

  /**
   * Reads entries as a member of a consumer group (XREADGROUP); with `block` waits for them.
   *
   * @param group The group.
   * @param consumer The consumer name.
   * @param streams Stream key -> ID (`">"` for new entries, an ID for this consumer's pending).
   * @param options `count`, `block` (milliseconds, 0 waits forever), `noack`.
   * @returns Entries per stream, or null when nothing arrived in time.
   */
  xreadgroup(
    group: RedisArgument,
    consumer: RedisArgument,
    streams: XReadStreams,
    options?: XReadGroupOptions,
  ): Promise<StreamMessages<S>[] | null> {
    const form = "xreadgroup(group, consumer, streams, options?)";
    return runRead(
      this,
      arguments.length,
      4,
      form,
      O.XREADGROUP,
      ["XREADGROUP", "GROUP", group, consumer],
      streams,
      options,
      N,
    ) as Promise<StreamMessages<S>[] | null>;
  }

  /**
   * Acknowledges entries of a consumer group (XACK).
   *
   * @param key The stream key.
   * @param group The group.
   * @param ids The entry IDs.
   * @returns How many were acknowledged.
   */
  xack(key: RedisArgument, group: RedisArgument, ...ids: RedisArgument[]): Promise<number> {
    return this._run(["XACK", key, group, ...ids], T.num, N) as Promise<number>;
  }

  /**
   * Creates a consumer group (XGROUP CREATE).
   *
   * @param key The stream key.
   * @param group The group name.
   * @param id Last delivered ID: `"$"` for only new entries, `"0"` for all.
   * @param options `mkstream`, `entriesRead`.
   * @returns `"OK"`.
   */
  xgroupCreate(
    key: RedisArgument,
    group: RedisArgument,
    id: RedisArgument,
    options?: XGroupCreateOptions,
  ): Promise<"OK"> {
    const form = "xgroupCreate(key, group, id, options?)";
    if (arguments.length > 4 || options !== undefined) {
      checkArgs(arguments.length, 4, form, O.XGROUP_CREATE, options);
    }
    const args: RedisArgument[] = ["XGROUP", "CREATE", key, group, id];
    if (options?.mkstream) args.push("MKSTREAM");
    if (options?.entriesRead !== undefined) args.push("ENTRIESREAD", options.entriesRead);
    return this._run(args, T.ok, N) as Promise<"OK">;
  }

  /**
   * Destroys a consumer group (XGROUP DESTROY).
   *
   * @param key The stream key.
   * @param group The group name.
   * @returns Whether the group existed.
   */
  xgroupDestroy(key: RedisArgument, group: RedisArgument): Promise<boolean> {
    return run(
      this,
      arguments.length,
      2,
      "xgroupDestroy(key, group)",
      ["XGROUP", "DESTROY", key, group],
      T.bool,
      N,
    ) as Promise<boolean>;
  }

  /**
   * Creates a consumer in a group (XGROUP CREATECONSUMER).
   *
   * @param key The stream key.
   * @param group The group name.
   * @param consumer The consumer name.
   * @returns Whether it was created (false when it existed).
   */
  xgroupCreateConsumer(
    key: RedisArgument,
    group: RedisArgument,
    consumer: RedisArgument,
  ): Promise<boolean> {
    return run(
      this,
      arguments.length,
      3,
      "xgroupCreateConsumer(key, group, consumer)",
      ["XGROUP", "CREATECONSUMER", key, group, consumer],
      T.bool,
      N,
    ) as Promise<boolean>;
  }

  /**
   * Deletes a consumer from a group (XGROUP DELCONSUMER).
   *
   * @param key The stream key.
   * @param group The group name.
   * @param consumer The consumer name.
   * @returns How many pending entries the consumer had.
   */
  xgroupDelConsumer(
    key: RedisArgument,
    group: RedisArgument,
    consumer: RedisArgument,
  ): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "xgroupDelConsumer(key, group, consumer)",
      ["XGROUP", "DELCONSUMER", key, group, consumer],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Sets the last delivered ID of a group (XGROUP SETID).
   *
   * @param key The stream key.
   * @param group The group name.
   * @param id The new last delivered ID (`"$"` for the last entry).
   * @param options `entriesRead`.
   * @returns `"OK"`.
   */
  xgroupSetId(
    key: RedisArgument,
    group: RedisArgument,
    id: RedisArgument,
    options?: { entriesRead?: number },
  ): Promise<"OK"> {
    const form = "xgroupSetId(key, group, id, options?)";
    if (arguments.length > 4 || options !== undefined) {
      checkArgs(arguments.length, 4, form, O.ENTRIES_READ, options);
    }
    const args: RedisArgument[] = ["XGROUP", "SETID", key, group, id];
    if (options?.entriesRead !== undefined) args.push("ENTRIESREAD", options.entriesRead);
    return this._run(args, T.ok, N) as Promise<"OK">;
  }

  /**
   * Trims a stream (XTRIM).
   *
   * @param key The stream key.
   * @param options `maxlen` or `minid`, `approximate`, `limit`.
   * @returns How many entries were deleted.
   */
  xtrim(key: RedisArgument, options: StreamTrimOptions): Promise<number> {
    checkArgs(arguments.length, 2, "xtrim(key, options)", O.XTRIM, options, true);
    if (options.maxlen === undefined && options.minid === undefined) {
      throw new TypeError("Cannot run XTRIM: give either maxlen or minid");
    }
    const args: RedisArgument[] = ["XTRIM", key];
    trimArgs(args, options);
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * The number of entries of a stream (XLEN).
   *
   * @param key The stream key.
   * @returns The length.
   */
  xlen(key: RedisArgument): Promise<number> {
    return run(this, arguments.length, 1, "xlen(key)", ["XLEN", key], T.num, RO) as Promise<number>;
  }

  /**
   * Deletes entries (XDEL).
   *
   * @param key The stream key.
   * @param ids The entry IDs.
   * @returns How many were deleted.
   */
  xdel(key: RedisArgument, ...ids: RedisArgument[]): Promise<number> {
    return this._run(["XDEL", key, ...ids], T.num, N) as Promise<number>;
  }

  /**
   * Summary of a group's pending entries (XPENDING key group).
   *
   * @param key The stream key.
   * @param group The group.
   * @returns Count, ID range and pending count per consumer.
   */
  xpending(key: RedisArgument, group: RedisArgument): Promise<PendingSummary> {
    return run(
      this,
      arguments.length,
      2,
      "xpending(key, group)",
      ["XPENDING", key, group],
      T.pendingSummary,
      RO,
    ) as Promise<PendingSummary>;
  }

  /**
   * Details of a group's pending entries (XPENDING key group [IDLE] start end count [consumer]).
   *
   * @param key The stream key.
   * @param group The group.
   * @param options `start`, `end`, `count`, `consumer`, `idle`.
   * @returns One entry per pending message.
   */
  xpendingRange(
    key: RedisArgument,
    group: RedisArgument,
    options: XPendingRangeOptions,
  ): Promise<PendingEntry[]> {
    const form = "xpendingRange(key, group, options)";
    checkArgs(arguments.length, 3, form, O.XPENDING_RANGE, options, true);
    const args: RedisArgument[] = ["XPENDING", key, group];
    if (options.idle !== undefined) args.push("IDLE", options.idle);
    args.push(options.start ?? "-", options.end ?? "+", options.count);
    if (options.consumer !== undefined) args.push(options.consumer);
    return this._run(args, T.pendingEntries, RO) as Promise<PendingEntry[]>;
  }

  /**
   * Changes the owner of pending entries (XCLAIM).
   *
   * @param key The stream key.
   * @param group The group.
   * @param consumer The new owner.
   * @param minIdleTime Only entries idle at least this many milliseconds.
   * @param ids The entry IDs.
   * @param options `idle`, `time`, `retrycount`, `force`, `lastid`.
   * @returns The claimed entries.
   */
  xclaim(
    key: RedisArgument,
    group: RedisArgument,
    consumer: RedisArgument,
    minIdleTime: number,
    ids: RedisArgument[],
    options?: XClaimOptions,
  ): Promise<StreamEntry<S>[]> {
    const form = "xclaim(key, group, consumer, minIdleTime, ids, options?)";
    const args = xclaimArgs(
      arguments.length,
      form,
      key,
      group,
      consumer,
      minIdleTime,
      ids,
      options,
    );
    return this._run(args, T.streamEntries, N) as Promise<StreamEntry<S>[]>;
  }

  /**
   * Changes the owner of pending entries, returning only IDs (XCLAIM ... JUSTID).
   *
   * @param key The stream key.
   * @param group The group.
   * @param consumer The new owner.
   * @param minIdleTime Only entries idle at least this many milliseconds.
   * @param ids The entry IDs.
   * @param options `idle`, `time`, `retrycount`, `force`, `lastid`.
   * @returns The claimed IDs.
   */
  xclaimJustId(
    key: RedisArgument,
    group: RedisArgument,
    consumer: RedisArgument,
    minIdleTime: number,
    ids: RedisArgument[],
    options?: XClaimOptions,
  ): Promise<string[]> {
    const form = "xclaimJustId(key, group, consumer, minIdleTime, ids, options?)";
    const args = xclaimArgs(
      arguments.length,
      form,
      key,
      group,
      consumer,
      minIdleTime,
      ids,
      options,
    );
    args.push("JUSTID");
    return this._run(args, T.strs, N) as Promise<string[]>;
  }

  /**
   * Claims pending entries idle for long enough, scanning from a cursor (XAUTOCLAIM).
   *
   * @param key The stream key.
   * @param group The group.
   * @param consumer The new owner.
   * @param minIdleTime Only entries idle at least this many milliseconds.
   * @param start Cursor: `"0-0"` to start.
   * @param options `count` (default 100 on the server).
   * @returns The next cursor, the claimed entries and the IDs found deleted.
   */
  xautoclaim(
    key: RedisArgument,
    group: RedisArgument,
    consumer: RedisArgument,
    minIdleTime: number,
    start: RedisArgument,
    options?: { count?: number },
  ): Promise<XAutoClaimResult<S>> {
    const form = "xautoclaim(key, group, consumer, minIdleTime, start, options?)";
    const args: RedisArgument[] = ["XAUTOCLAIM", key, group, consumer, minIdleTime, start];
    return runWithCount(this, arguments.length, 6, form, args, options, T.autoclaim, N) as Promise<
      XAutoClaimResult<S>
    >;
  }

  /**
   * Like `xautoclaim`, returning only IDs (XAUTOCLAIM ... JUSTID).
   *
   * @param key The stream key.
   * @param group The group.
   * @param consumer The new owner.
   * @param minIdleTime Only entries idle at least this many milliseconds.
   * @param start Cursor: `"0-0"` to start.
   * @param options `count` (default 100 on the server).
   * @returns The next cursor, the claimed IDs and the IDs found deleted.
   */
  xautoclaimJustId(
    key: RedisArgument,
    group: RedisArgument,
    consumer: RedisArgument,
    minIdleTime: number,
    start: RedisArgument,
    options?: { count?: number },
  ): Promise<XAutoClaimJustIdResult> {
    const form = "xautoclaimJustId(key, group, consumer, minIdleTime, start, options?)";
    return runWithCount(
      this,
      arguments.length,
      6,
      form,
      ["XAUTOCLAIM", key, group, consumer, minIdleTime, start],
      options,
      T.autoclaimJustId,
      N,
      "JUSTID",
    ) as Promise<XAutoClaimJustIdResult>;
  }

  /**
   * Information about a stream (XINFO STREAM). `first-entry` and `last-entry` are
   * `StreamEntry` objects; other values as the server sends them.
   *
   * @param key The stream key.
   * @returns A record of the server's fields (`length`, `groups`, `last-generated-id`, ...).
   */
  xinfoStream(key: RedisArgument): Promise<Record<string, unknown>> {
    return run(
      this,
      arguments.length,
      1,
      "xinfoStream(key)",
      ["XINFO", "STREAM", key],
      T.xinfoStream,
      RO,
    ) as Promise<Record<string, unknown>>;
  }

  /**
   * The consumer groups of a stream (XINFO GROUPS).
   *
   * @param key The stream key.
   * @returns One record per group (`name`, `consumers`, `pending`, `last-delivered-id`, ...).
   */
  xinfoGroups(key: RedisArgument): Promise<Record<string, RespValue>[]> {
    const form = "xinfoGroups(key)";
    return run(this, arguments.length, 1, form, ["XINFO", "GROUPS", key], T.records, RO) as Promise<
      Record<string, RespValue>[]
    >;
  }

  /**
   * The consumers of a group (XINFO CONSUMERS).
   *
   * @param key The stream key.
   * @param group The group.
   * @returns One record per consumer (`name`, `pending`, `idle`, ...).
   */
  xinfoConsumers(key: RedisArgument, group: RedisArgument): Promise<Record<string, RespValue>[]> {
    return run(
      this,
      arguments.length,
      2,
      "xinfoConsumers(key, group)",
      ["XINFO", "CONSUMERS", key, group],
      T.records,
      RO,
    ) as Promise<Record<string, RespValue>[]>;
  }

  // ---------------------------------------------------------------- bitmaps

  /**
   * Sets or clears a bit (SETBIT).
   *
   * @param key The key.
   * @param offset Bit offset.
   * @param value 0 or 1.
   * @returns The previous bit.
   */
  setbit(key: RedisArgument, offset: number, value: 0 | 1): Promise<number> {
    return run(
      this,
      arguments.length,
      3,
      "setbit(key, offset, value)",
      ["SETBIT", key, offset, value],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Reads a bit (GETBIT).
   *
   * @param key The key.
   * @param offset Bit offset.
   * @returns 0 or 1.
   */
  getbit(key: RedisArgument, offset: number): Promise<number> {
    const form = "getbit(key, offset)";
    return run(this, arguments.length, 2, form, ["GETBIT", key, offset], T.num, RO) as Promise<
      number
    >;
  }

  /**
   * Counts set bits (BITCOUNT).
   *
   * @param key The key.
   * @param options `start`, `end`, `mode` (`"BYTE"` or `"BIT"`).
   * @returns The number of bits set to 1.
   */
  bitcount(key: RedisArgument, options?: BitRangeOptions): Promise<number> {
    const args = bitRange(
      arguments.length,
      2,
      "bitcount(key, options?)",
      ["BITCOUNT", key],
      options,
    );
    return this._run(args, T.num, RO) as Promise<number>;
  }

  /**
   * The position of the first bit set to 0 or 1 (BITPOS).
   *
   * @param key The key.
   * @param bit 0 or 1.
   * @param options `start`, `end`, `mode`.
   * @returns The position, or -1.
   */
  bitpos(key: RedisArgument, bit: 0 | 1, options?: BitRangeOptions): Promise<number> {
    const form = "bitpos(key, bit, options?)";
    return this._run(
      bitRange(arguments.length, 3, form, ["BITPOS", key, bit], options),
      T.num,
      RO,
    ) as Promise<number>;
  }

  /**
   * A bitwise operation between strings (BITOP).
   *
   * @param operation `AND`, `OR`, `XOR` or `NOT` (one source key).
   * @param destination Where to store the result.
   * @param keys The source keys.
   * @returns The length of the result in bytes.
   */
  bitop(
    operation: "AND" | "OR" | "XOR" | "NOT",
    destination: RedisArgument,
    ...keys: RedisArgument[]
  ): Promise<number> {
    return this._run(["BITOP", operation, destination, ...keys], T.num, N) as Promise<number>;
  }

  /**
   * Reads and writes integers of arbitrary width inside a string (BITFIELD).
   *
   * @param key The key.
   * @param operations `GET`, `SET`, `INCRBY` and `OVERFLOW` operations, in order.
   * @returns One result per GET/SET/INCRBY; null for an INCRBY stopped by `OVERFLOW FAIL`.
   */
  bitfield(key: RedisArgument, operations: BitfieldOperation[]): Promise<(number | null)[]> {
    const form = "bitfield(key, operations)";
    if (arguments.length > 2) tooManyArguments(arguments.length, form);
    checkList(operations, form, "the operations", BITFIELD);
    const args: RedisArgument[] = ["BITFIELD", key];
    let readOnly = true;
    for (const o of operations) {
      switch (o?.op) {
        case "GET":
          args.push("GET", o.type, o.offset);
          break;
        case "SET":
          args.push("SET", o.type, o.offset, o.value);
          readOnly = false;
          break;
        case "INCRBY":
          args.push("INCRBY", o.type, o.offset, o.increment);
          readOnly = false;
          break;
        case "OVERFLOW":
          args.push("OVERFLOW", o.behavior);
          break;
        default:
          // An unknown op is refused, not left out of the command.
          if (o == null) cannotUse(o, "an operation", form, BITFIELD);
          cannotUse(
            (o as { op?: unknown }).op,
            "the op of an operation",
            form,
            '"GET", "SET", "INCRBY" or "OVERFLOW"',
          );
      }
    }
    return this._run(args, T.numsOrNull, readOnly ? RO : N) as Promise<(number | null)[]>;
  }

  // ------------------------------------------------------------ hyperloglog

  /**
   * Adds elements to a HyperLogLog (PFADD).
   *
   * @param key The key.
   * @param elements The elements.
   * @returns Whether the estimate changed.
   */
  pfadd(key: RedisArgument, ...elements: RedisArgument[]): Promise<boolean> {
    return this._run(["PFADD", key, ...elements], T.bool, N) as Promise<boolean>;
  }

  /**
   * The estimated cardinality of the union of HyperLogLogs (PFCOUNT).
   *
   * @param keys The keys.
   * @returns The estimate.
   */
  pfcount(...keys: RedisArgument[]): Promise<number> {
    return this._run(["PFCOUNT", ...keys], T.num, N) as Promise<number>;
  }

  /**
   * Merges HyperLogLogs (PFMERGE).
   *
   * @param destination Where to store the union.
   * @param sources The keys to merge.
   * @returns `"OK"`.
   */
  pfmerge(destination: RedisArgument, ...sources: RedisArgument[]): Promise<"OK"> {
    return this._run(["PFMERGE", destination, ...sources], T.ok, N) as Promise<"OK">;
  }

  // -------------------------------------------------------------------- geo

  /**
   * Adds positions to a geo set (GEOADD).
   *
   * @param key The key.
   * @param members One `{ longitude, latitude, member }` or several.
   * @param options `nx`, `xx`, `ch`.
   * @returns How many were added (or changed, with `ch`).
   */
  geoadd(
    key: RedisArgument,
    members: GeoMember | GeoMember[],
    options?: GeoAddOptions,
  ): Promise<number> {
    if (arguments.length > 3 || options !== undefined) {
      checkArgs(arguments.length, 3, "geoadd(key, members, options?)", O.GEOADD, options);
    }
    const args: RedisArgument[] = ["GEOADD", key];
    if (options?.nx) args.push("NX");
    if (options?.xx) args.push("XX");
    if (options?.ch) args.push("CH");
    try {
      for (const m of list(members)) args.push(m.longitude, m.latitude, m.member);
    } catch (e) {
      shapeError(
        e,
        members,
        "geoadd",
        "member",
        "{ longitude, latitude, member } or a list of them",
      );
    }
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * The distance between two members (GEODIST).
   *
   * @param key The key.
   * @param member1 The first member.
   * @param member2 The second member.
   * @param unit The unit. @default {"m"}
   * @returns The distance, or null when a member is missing.
   */
  geodist(
    key: RedisArgument,
    member1: RedisArgument,
    member2: RedisArgument,
    unit?: GeoUnit,
  ): Promise<number | null> {
    if (arguments.length > 4) {
      tooManyArguments(arguments.length, "geodist(key, member1, member2, unit?)");
    }
    const args: RedisArgument[] = ["GEODIST", key, member1, member2];
    if (unit) args.push(unit);
    return this._run(args, T.numOrNull, RO) as Promise<number | null>;
  }

  /**
   * Geohash strings of members (GEOHASH).
   *
   * @param key The key.
   * @param members The members.
   * @returns One 11-character geohash or null per member.
   */
  geohash(key: RedisArgument, ...members: RedisArgument[]): Promise<(string | null)[]> {
    return this._run(["GEOHASH", key, ...members], T.strsOrNull, RO) as Promise<
      (string | null)[]
    >;
  }

  /**
   * Positions of members (GEOPOS).
   *
   * @param key The key.
   * @param members The members.
   * @returns One position or null per member.
   */
  geopos(key: RedisArgument, ...members: RedisArgument[]): Promise<(GeoPosition | null)[]> {
    return this._run(["GEOPOS", key, ...members], T.geoPositions, RO) as Promise<
      (GeoPosition | null)[]
    >;
  }

  /**
   * Members inside a circle or box (GEOSEARCH).
   *
   * @param key The key.
   * @param options `from`, `by`, `order`, `count`, `any`.
   * @returns The members.
   */
  geosearch(key: RedisArgument, options: GeoSearchOptions): Promise<S[]> {
    const form = "geosearch(key, options)";
    const args = geoSearchArgs(arguments.length, 2, form, O.GEOSEARCH, ["GEOSEARCH", key], options);
    return this._run(args, T.arr, RO) as Promise<S[]>;
  }

  /**
   * Members inside a circle or box, with distance, hash and/or position (GEOSEARCH ... WITH*).
   *
   * @param key The key.
   * @param options `from`, `by`, `order`, `count`, `any`.
   * @param withOptions `withDist`, `withHash`, `withCoord`.
   * @returns The members with the requested data.
   */
  geosearchWith(
    key: RedisArgument,
    options: GeoSearchOptions,
    withOptions: GeoSearchWith,
  ): Promise<GeoSearchEntry<S>[]> {
    const form = "geosearchWith(key, options, withOptions)";
    const args = geoSearchArgs(arguments.length, 3, form, O.GEOSEARCH, ["GEOSEARCH", key], options);
    checkCommandOptions(withOptions, O.GEOSEARCH_WITH, "geosearchWith");
    const d = withOptions.withDist === true;
    const h = withOptions.withHash === true;
    const c = withOptions.withCoord === true;
    if (c) args.push("WITHCOORD");
    if (d) args.push("WITHDIST");
    if (h) args.push("WITHHASH");
    return this._run(args, T.geoSearchWith(d, h, c), RO) as Promise<GeoSearchEntry<S>[]>;
  }

  /**
   * Stores the members inside a circle or box (GEOSEARCHSTORE).
   *
   * @param destination Where to store them.
   * @param source The geo set to search.
   * @param options `from`, `by`, `order`, `count`, `any`, `storeDist` (store distances as scores).
   * @returns The number of stored members.
   */
  geosearchstore(
    destination: RedisArgument,
    source: RedisArgument,
    options: GeoSearchOptions & { storeDist?: boolean },
  ): Promise<number> {
    const form = "geosearchstore(destination, source, options)";
    const head: RedisArgument[] = ["GEOSEARCHSTORE", destination, source];
    const args = geoSearchArgs(arguments.length, 3, form, O.GEOSEARCHSTORE, head, options);
    if (options.storeDist) args.push("STOREDIST");
    return this._run(args, T.num, N) as Promise<number>;
  }

  // -------------------------------------------------------------- scripting

  /**
   * Runs a Lua script (EVAL).
   *
   * @param script The script source.
   * @param keys Key names (`KEYS[]`).
   * @param args Other arguments (`ARGV[]`).
   * @returns The script's reply, as a raw value.
   */
  eval(script: string, keys: RedisArgument[] = [], args: RedisArgument[] = []): Promise<RespValue> {
    const form = "eval(script, keys?, args?)";
    return runScript(this, arguments.length, form, "EVAL", script, keys, args, N) as Promise<
      RespValue
    >;
  }

  /**
   * Runs a cached Lua script by its SHA-1 (EVALSHA).
   *
   * @param sha1 The script digest.
   * @param keys Key names (`KEYS[]`).
   * @param args Other arguments (`ARGV[]`).
   * @returns The script's reply, as a raw value.
   */
  evalsha(
    sha1: string,
    keys: RedisArgument[] = [],
    args: RedisArgument[] = [],
  ): Promise<RespValue> {
    const form = "evalsha(sha1, keys?, args?)";
    return runScript(this, arguments.length, form, "EVALSHA", sha1, keys, args, N) as Promise<
      RespValue
    >;
  }

  /**
   * Runs a read-only Lua script (EVAL_RO).
   *
   * @param script The script source.
   * @param keys Key names (`KEYS[]`).
   * @param args Other arguments (`ARGV[]`).
   * @returns The script's reply, as a raw value.
   */
  evalRo(
    script: string,
    keys: RedisArgument[] = [],
    args: RedisArgument[] = [],
  ): Promise<RespValue> {
    const form = "evalRo(script, keys?, args?)";
    return runScript(this, arguments.length, form, "EVAL_RO", script, keys, args, RO) as Promise<
      RespValue
    >;
  }

  /**
   * Runs a cached read-only Lua script by its SHA-1 (EVALSHA_RO).
   *
   * @param sha1 The script digest.
   * @param keys Key names (`KEYS[]`).
   * @param args Other arguments (`ARGV[]`).
   * @returns The script's reply, as a raw value.
   */
  evalshaRo(
    sha1: string,
    keys: RedisArgument[] = [],
    args: RedisArgument[] = [],
  ): Promise<RespValue> {
    const form = "evalshaRo(sha1, keys?, args?)";
    return runScript(this, arguments.length, form, "EVALSHA_RO", sha1, keys, args, RO) as Promise<
      RespValue
    >;
  }

  /**
   * Runs a Lua script by its SHA-1 and sends the source only when the server does not have it
   * cached yet (EVALSHA, then EVAL on a `NOSCRIPT` error). Not available in pipelines.
   *
   * @param script The script source.
   * @param keys Key names (`KEYS[]`).
   * @param args Other arguments (`ARGV[]`).
   * @returns The script's reply, as a raw value.
   */
  evalScript(
    script: string,
    keys: RedisArgument[] = [],
    args: RedisArgument[] = [],
  ): Promise<RespValue> {
    const form = "evalScript(script, keys?, args?)";
    checkScript(arguments.length, form, keys, args);
    if (typeof script !== "string" && !((script as unknown) instanceof Uint8Array)) {
      cannotUse(script, "the script", form, 'a string, e.g. "return 1"');
    }
    return this.evalsha(sha1Hex(script), keys, args).catch((e: unknown) => {
      if (e instanceof ReplyError && e.prefix === "NOSCRIPT") return this.eval(script, keys, args);
      throw e;
    });
  }

  /**
   * Loads a script into the script cache (SCRIPT LOAD).
   *
   * @param script The script source.
   * @returns Its SHA-1 digest.
   */
  scriptLoad(script: string): Promise<string> {
    const form = "scriptLoad(script)";
    return run(this, arguments.length, 1, form, ["SCRIPT", "LOAD", script], T.str, N) as Promise<
      string
    >;
  }

  /**
   * Whether scripts are cached (SCRIPT EXISTS).
   *
   * @param sha1s The digests.
   * @returns One boolean per digest.
   */
  scriptExists(...sha1s: string[]): Promise<boolean[]> {
    return this._run(["SCRIPT", "EXISTS", ...sha1s], T.bools, N) as Promise<boolean[]>;
  }

  /**
   * Empties the script cache (SCRIPT FLUSH).
   *
   * @param options `async`: flush in the background (`ASYNC`) or not (`SYNC`).
   * @returns `"OK"`.
   */
  scriptFlush(options?: FlushOptions): Promise<"OK"> {
    const form = "scriptFlush(options?)";
    return runFlush(this, arguments.length, form, ["SCRIPT", "FLUSH"], options) as Promise<"OK">;
  }

  /**
   * Calls a function (FCALL).
   *
   * @param fn The function name.
   * @param keys Key names.
   * @param args Other arguments.
   * @returns The function's reply, as a raw value.
   */
  fcall(fn: string, keys: RedisArgument[] = [], args: RedisArgument[] = []): Promise<RespValue> {
    const form = "fcall(fn, keys?, args?)";
    return runScript(this, arguments.length, form, "FCALL", fn, keys, args, N) as Promise<
      RespValue
    >;
  }

  /**
   * Calls a read-only function (FCALL_RO).
   *
   * @param fn The function name.
   * @param keys Key names.
   * @param args Other arguments.
   * @returns The function's reply, as a raw value.
   */
  fcallRo(fn: string, keys: RedisArgument[] = [], args: RedisArgument[] = []): Promise<RespValue> {
    const form = "fcallRo(fn, keys?, args?)";
    return runScript(this, arguments.length, form, "FCALL_RO", fn, keys, args, RO) as Promise<
      RespValue
    >;
  }

  /**
   * Loads a function library (FUNCTION LOAD).
   *
   * @param code The library source, starting with `#!lua name=...`.
   * @param options `replace`: replace an existing library.
   * @returns The library name.
   */
  functionLoad(code: string, options?: { replace?: boolean }): Promise<string> {
    if (arguments.length > 2 || options !== undefined) {
      checkArgs(arguments.length, 2, "functionLoad(code, options?)", O.FUNCTION_LOAD, options);
    }
    const args: RedisArgument[] = ["FUNCTION", "LOAD"];
    if (options?.replace) args.push("REPLACE");
    args.push(code);
    return this._run(args, T.str, N) as Promise<string>;
  }

  /**
   * Deletes a function library (FUNCTION DELETE).
   *
   * @param library The library name.
   * @returns `"OK"`.
   */
  functionDelete(library: string): Promise<"OK"> {
    return run(
      this,
      arguments.length,
      1,
      "functionDelete(library)",
      ["FUNCTION", "DELETE", library],
      T.ok,
      N,
    ) as Promise<"OK">;
  }

  /**
   * Deletes all function libraries (FUNCTION FLUSH).
   *
   * @param options `async`: flush in the background (`ASYNC`) or not (`SYNC`).
   * @returns `"OK"`.
   */
  functionFlush(options?: FlushOptions): Promise<"OK"> {
    const form = "functionFlush(options?)";
    return runFlush(this, arguments.length, form, ["FUNCTION", "FLUSH"], options) as Promise<"OK">;
  }

  /**
   * Lists function libraries (FUNCTION LIST).
   *
   * @param options `libraryName` (a pattern), `withCode`.
   * @returns The libraries with their functions.
   */
  functionList(options?: { libraryName?: string; withCode?: boolean }): Promise<FunctionLibrary[]> {
    if (arguments.length > 1 || options !== undefined) {
      checkArgs(arguments.length, 1, "functionList(options?)", O.FUNCTION_LIST, options);
    }
    const args: RedisArgument[] = ["FUNCTION", "LIST"];
    if (options?.libraryName !== undefined) args.push("LIBRARYNAME", options.libraryName);
    if (options?.withCode) args.push("WITHCODE");
    return this._run(args, T.functionList, N) as Promise<FunctionLibrary[]>;
  }

  // ------------------------------------------------------ server/connection

  /**
   * Pings the server (PING).
   *
   * @returns `"PONG"`.
   */
  ping(): Promise<string>;
  /**
   * Pings the server with a message (PING message).
   *
   * @param message The message to echo.
   * @returns The message.
   */
  ping(message: RedisArgument): Promise<S>;
  /**
   * Pings the server (PING).
   *
   * @param message An optional message to echo.
   * @returns `"PONG"`, or the message.
   */
  ping(message?: RedisArgument): Promise<string | S>;
  ping(message?: RedisArgument): Promise<string | S> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "ping(message?)");
    if (message === undefined) return this._run(["PING"], T.str, N) as Promise<string>;
    return this._run(["PING", message], undefined, N) as Promise<S>;
  }

  /**
   * Echoes a message (ECHO).
   *
   * @param message The message.
   * @returns The message.
   */
  echo(message: RedisArgument): Promise<S> {
    const form = "echo(message)";
    return run(this, arguments.length, 1, form, ["ECHO", message], undefined, N) as Promise<S>;
  }

  /**
   * Server information (INFO), parsed.
   *
   * @param sections Sections to return (`"server"`, `"memory"`, `"all"`, ...); default ones if none.
   * @returns Section name (lowercase) -> field -> value.
   */
  info(...sections: string[]): Promise<Record<string, Record<string, string>>> {
    return this._run(["INFO", ...sections], T.info, N) as Promise<
      Record<string, Record<string, string>>
    >;
  }

  /**
   * The number of keys in the current database (DBSIZE).
   *
   * @returns The number of keys.
   */
  dbsize(): Promise<number> {
    return run(this, arguments.length, 0, "dbsize()", ["DBSIZE"], T.num, RO) as Promise<number>;
  }

  /**
   * Deletes all keys of the current database (FLUSHDB).
   *
   * @param options `async`: flush in the background (`ASYNC`) or not (`SYNC`).
   * @returns `"OK"`.
   */
  flushdb(options?: FlushOptions): Promise<"OK"> {
    const form = "flushdb(options?)";
    return runFlush(this, arguments.length, form, ["FLUSHDB"], options) as Promise<"OK">;
  }

  /**
   * Deletes all keys of all databases (FLUSHALL).
   *
   * @param options `async`: flush in the background (`ASYNC`) or not (`SYNC`).
   * @returns `"OK"`.
   */
  flushall(options?: FlushOptions): Promise<"OK"> {
    const form = "flushall(options?)";
    return runFlush(this, arguments.length, form, ["FLUSHALL"], options) as Promise<"OK">;
  }

  /**
   * The server time (TIME).
   *
   * @returns Unix seconds and the microseconds within the second.
   */
  time(): Promise<{ seconds: number; microseconds: number }> {
    const form = "time()";
    return run(this, arguments.length, 0, form, ["TIME"], T.time, N) as Promise<
      { seconds: number; microseconds: number }
    >;
  }

  /**
   * The Unix time of the last successful save (LASTSAVE).
   *
   * @returns Unix seconds.
   */
  lastsave(): Promise<number> {
    return run(this, arguments.length, 0, "lastsave()", ["LASTSAVE"], T.num, N) as Promise<number>;
  }

  /**
   * This connection's ID (CLIENT ID). On a pooled client any connection may answer.
   *
   * @returns The ID.
   */
  clientId(): Promise<number> {
    return run(this, arguments.length, 0, "clientId()", ["CLIENT", "ID"], T.num, N) as Promise<
      number
    >;
  }

  /**
   * Names this connection (CLIENT SETNAME).
   *
   * @param name The name (no spaces); empty to clear.
   * @returns `"OK"`.
   */
  clientSetName(name: string): Promise<"OK"> {
    const form = "clientSetName(name)";
    return run(this, arguments.length, 1, form, ["CLIENT", "SETNAME", name], T.ok, N) as Promise<
      "OK"
    >;
  }

  /**
   * This connection's name (CLIENT GETNAME).
   *
   * @returns The name, or null.
   */
  clientGetName(): Promise<string | null> {
    const form = "clientGetName()";
    return run(this, arguments.length, 0, form, ["CLIENT", "GETNAME"], T.strOrNull, N) as Promise<
      string | null
    >;
  }

  /**
   * The connected clients (CLIENT LIST), parsed.
   *
   * @param options `type` (`normal`, `master`, `replica`, `pubsub`) or `id`s.
   * @returns One record per client (`id`, `addr`, `name`, `db`, `cmd`, ...).
   */
  clientList(
    options?: { type?: "normal" | "master" | "replica" | "pubsub"; id?: number[] },
  ): Promise<Record<string, string>[]> {
    if (arguments.length > 1 || options !== undefined) {
      checkArgs(arguments.length, 1, "clientList(options?)", O.CLIENT_LIST, options);
    }
    const args: RedisArgument[] = ["CLIENT", "LIST"];
    if (options?.type) args.push("TYPE", options.type);
    if (options?.id) args.push("ID", ...options.id);
    return this._run(args, T.clientList, N) as Promise<Record<string, string>[]>;
  }

  /**
   * This connection's information (CLIENT INFO), parsed.
   *
   * @returns A record (`id`, `addr`, `name`, `db`, ...).
   */
  clientInfo(): Promise<Record<string, string>> {
    const form = "clientInfo()";
    return run(this, arguments.length, 0, form, ["CLIENT", "INFO"], T.clientInfo, N) as Promise<
      Record<string, string>
    >;
  }

  /**
   * Closes client connections matching filters (CLIENT KILL filter ...).
   *
   * @param filters `id`, `type`, `user`, `addr`, `laddr`, `skipme`, `maxage`.
   * @returns How many connections were closed.
   */
  clientKill(filters: ClientKillFilters): Promise<number> {
    checkArgs(arguments.length, 1, "clientKill(filters)", O.CLIENT_KILL, filters, true);
    const args: RedisArgument[] = ["CLIENT", "KILL"];
    for (const k of KILL_FILTERS) {
      const v = filters[k];
      if (v === undefined) continue;
      args.push(k.toUpperCase(), k === "skipme" ? (v ? "yes" : "no") : v as RedisArgument);
    }
    if (args.length === 2) throw new TypeError("Cannot run CLIENT KILL: give at least one filter");
    return this._run(args, T.num, N) as Promise<number>;
  }

  /**
   * Configuration parameters (CONFIG GET).
   *
   * @param patterns Parameter names or glob patterns.
   * @returns Parameter -> value.
   */
  configGet(...patterns: string[]): Promise<Record<string, string>> {
    return this._run(["CONFIG", "GET", ...patterns], T.strRecord, N) as Promise<
      Record<string, string>
    >;
  }

  /**
   * Sets configuration parameters (CONFIG SET).
   *
   * @param parameters Parameter -> value.
   * @returns `"OK"`.
   */
  configSet(parameters: Record<string, RedisArgument>): Promise<"OK"> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "configSet(parameters)");
    return this._run(
      ["CONFIG", "SET", ...flat(parameters, "configSet")],
      T.ok,
      N,
    ) as Promise<"OK">;
  }

  /**
   * Resets the statistics of INFO (CONFIG RESETSTAT).
   *
   * @returns `"OK"`.
   */
  configResetStat(): Promise<"OK"> {
    const form = "configResetStat()";
    return run(this, arguments.length, 0, form, ["CONFIG", "RESETSTAT"], T.ok, N) as Promise<"OK">;
  }

  /**
   * Waits until earlier writes of this connection reach replicas (WAIT). Blocking.
   *
   * @param numReplicas How many replicas must acknowledge.
   * @param timeout Milliseconds to wait; 0 waits forever.
   * @returns How many replicas acknowledged.
   */
  wait(numReplicas: number, timeout: number): Promise<number> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "wait(numReplicas, timeout)");
    return this._run(["WAIT", numReplicas, timeout], T.num, BL, timeout) as Promise<number>;
  }

  /**
   * Waits until earlier writes are fsynced to the AOF locally and on replicas (WAITAOF, Redis
   * 7.2). Blocking.
   *
   * @param numLocal 0 or 1: whether the local AOF must be synced.
   * @param numReplicas How many replicas must confirm.
   * @param timeout Milliseconds to wait; 0 waits forever.
   * @returns `[local, replicas]`: how many confirmed.
   */
  waitaof(numLocal: number, numReplicas: number, timeout: number): Promise<[number, number]> {
    if (arguments.length > 3) {
      tooManyArguments(arguments.length, "waitaof(numLocal, numReplicas, timeout)");
    }
    const args: RedisArgument[] = ["WAITAOF", numLocal, numReplicas, timeout];
    return this._run(args, T.nums, BL, timeout) as Promise<[number, number]>;
  }

  /**
   * Publishes a message (PUBLISH).
   *
   * @param channel The channel.
   * @param message The message.
   * @returns How many subscribers received it (on this node).
   */
  publish(channel: RedisArgument, message: RedisArgument): Promise<number> {
    if (arguments.length > 2) tooManyArguments(arguments.length, "publish(channel, message)");
    return this._run(["PUBLISH", channel, message], T.num, N) as Promise<number>;
  }

  /**
   * Publishes a message to a shard channel (SPUBLISH).
   *
   * @param channel The shard channel.
   * @param message The message.
   * @returns How many subscribers received it.
   */
  spublish(channel: RedisArgument, message: RedisArgument): Promise<number> {
    return run(
      this,
      arguments.length,
      2,
      "spublish(channel, message)",
      ["SPUBLISH", channel, message],
      T.num,
      N,
    ) as Promise<number>;
  }

  /**
   * Active channels (PUBSUB CHANNELS).
   *
   * @param pattern Only channels matching this glob pattern.
   * @returns The channel names.
   */
  pubsubChannels(pattern?: string): Promise<S[]> {
    if (arguments.length > 1) tooManyArguments(arguments.length, "pubsubChannels(pattern?)");
    const args: RedisArgument[] = ["PUBSUB", "CHANNELS"];
    if (pattern !== undefined) args.push(pattern);
    return this._run(args, T.arr, N) as Promise<S[]>;
  }

  /**
   * Subscriber counts of channels (PUBSUB NUMSUB).
   *
   * @param channels The channels.
   * @returns Channel -> number of subscribers.
   */
  pubsubNumsub(...channels: string[]): Promise<Record<string, number>> {
    return this._run(["PUBSUB", "NUMSUB", ...channels], T.numRecord, N) as Promise<
      Record<string, number>
    >;
  }

  /**
   * The number of pattern subscriptions (PUBSUB NUMPAT).
   *
   * @returns The count.
   */
  pubsubNumpat(): Promise<number> {
    const form = "pubsubNumpat()";
    return run(this, arguments.length, 0, form, ["PUBSUB", "NUMPAT"], T.num, N) as Promise<number>;
  }

  /**
   * Memory used by a key and its value (MEMORY USAGE).
   *
   * @param key The key.
   * @param options `samples`: nested values to sample (0 = all).
   * @returns Bytes, or null for a missing key.
   */
  memoryUsage(key: RedisArgument, options?: { samples?: number }): Promise<number | null> {
    if (arguments.length > 2 || options !== undefined) {
      checkArgs(arguments.length, 2, "memoryUsage(key, options?)", O.MEMORY_USAGE, options);
    }
    const args: RedisArgument[] = ["MEMORY", "USAGE", key];
    if (options?.samples !== undefined) args.push("SAMPLES", options.samples);
    return this._run(args, T.numOrNull, RO) as Promise<number | null>;
  }

  /**
   * Swaps two databases (SWAPDB).
   *
   * @param index1 The first database.
   * @param index2 The second database.
   * @returns `"OK"`.
   */
  swapdb(index1: number, index2: number): Promise<"OK"> {
    const form = "swapdb(index1, index2)";
    return run(this, arguments.length, 2, form, ["SWAPDB", index1, index2], T.ok, N) as Promise<
      "OK"
    >;
  }
}
