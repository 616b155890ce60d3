/**
 * Which commands the client-side cache may answer, and which keys a write changes. Both come
 * from the command key table (`src/commands/command_keys.ts`): a command is cacheable when it
 * is read-only, not blocking, not pub/sub, has a deterministic reply, and reads exactly one key,
 * at position 1. Commands whose reply depends on the time or on chance are refused by name
 * even where the table has no tip for them. A static list stands in for commands the table does
 * not know.
 *
 * @example
 * ```ts
 * import { cacheableKeyOf, isDeniedForCache } from "./cacheable.ts";
 * cacheableKeyOf(["GET", "user:1"]); // "user:1"
 * cacheableKeyOf(["MGET", "a", "b"]); // undefined: two keys
 * isDeniedForCache("TTL"); // true
 * ```
 *
 * @module
 */

import { commandInfo, commandKeys, commandPolicy } from "../commands/command_keys.ts";
import { numberText } from "../resp/number_text.ts";
import type { RedisArgument } from "../resp/types.ts";

/**
 * Read-only commands never cached: their reply changes with time or chance, not with the key,
 * so no invalidation would ever tell (or they walk a cursor, or read other keys).
 */
const DENIED: ReadonlySet<string> = new Set([
  "TTL",
  "PTTL",
  "EXPIRETIME",
  "PEXPIRETIME",
  "OBJECT",
  "TIME",
  "RANDOMKEY",
  "SRANDMEMBER",
  "HRANDFIELD",
  "ZRANDMEMBER",
  "SPOP",
  "TOUCH",
  "SCAN",
  "SSCAN",
  "HSCAN",
  "ZSCAN",
  "MEMORY",
  "DEBUG",
  "XPENDING",
  "XINFO",
  "PFCOUNT",
  "SORT",
  "SORT_RO",
  "EVAL",
  "EVAL_RO",
  "EVALSHA",
  "EVALSHA_RO",
  "FCALL",
  "FCALL_RO",
  "LOLWUT",
]);

/**
 * Internal: Cacheable commands when the table does not know them: the name and the legacy
 * last-key position (1: one key; -1: every argument is a key, so one key only with one argument).
 * A unit test keeps it equal to what the table derives.
 */
export const FALLBACK_CACHEABLE: ReadonlyMap<string, number> = new Map([
  ...[
    "GET",
    "GETRANGE",
    "SUBSTR",
    "STRLEN",
    "GETBIT",
    "BITCOUNT",
    "BITPOS",
    "BITFIELD_RO",
    "TYPE",
    "HGET",
    "HMGET",
    "HGETALL",
    "HKEYS",
    "HVALS",
    "HLEN",
    "HEXISTS",
    "HSTRLEN",
    "LRANGE",
    "LINDEX",
    "LLEN",
    "LPOS",
    "SMEMBERS",
    "SISMEMBER",
    "SMISMEMBER",
    "SCARD",
    "ZRANGE",
    "ZRANGEBYSCORE",
    "ZREVRANGEBYSCORE",
    "ZRANGEBYLEX",
    "ZREVRANGEBYLEX",
    "ZREVRANGE",
    "ZSCORE",
    "ZMSCORE",
    "ZRANK",
    "ZREVRANK",
    "ZCARD",
    "ZCOUNT",
    "ZLEXCOUNT",
    "XRANGE",
    "XREVRANGE",
    "XLEN",
    "GEOPOS",
    "GEODIST",
    "GEOHASH",
    "GEOSEARCH",
    "GEORADIUS_RO",
    "GEORADIUSBYMEMBER_RO",
  ].map((n) => [n, 1] as const),
  ...["EXISTS", "MGET", "SINTER", "SUNION", "SDIFF"].map((n) => [n, -1] as const),
]);

/** Keyless writes that change every key. */
const FLUSHES: ReadonlySet<string> = new Set(["FLUSHALL", "FLUSHDB", "SWAPDB"]);

/**
 * Scripts and functions that may write: the table does not flag them `write` (the script
 * decides), but the keys they are given are the keys they may change. (`EVAL_RO`, `FCALL_RO`
 * cannot write.)
 */
const SCRIPTS: ReadonlySet<string> = new Set(["EVAL", "EVALSHA", "FCALL"]);

/**
 * Whether a command name is refused by the cache whatever the table says.
 *
 * @param name The command name (upper case).
 * @returns `true` for time- or chance-dependent commands, cursors, scripts.
 *
 * @example
 * ```ts
 * import { isDeniedForCache } from "./cacheable.ts";
 * isDeniedForCache("SRANDMEMBER"); // true
 * ```
 */
export function isDeniedForCache(name: string): boolean {
  return DENIED.has(name.toUpperCase());
}

/** Per command name: the legacy last-key position if cacheable, `NaN` if not. */
const lastKeys = new Map<string, number>();

function deriveLastKey(name: string): number {
  const upper = name.toUpperCase();
  if (DENIED.has(upper)) return NaN;
  const policy = commandPolicy([name]);
  const info = commandInfo([name]);
  if (policy === undefined || info === undefined) return FALLBACK_CACHEABLE.get(upper) ?? NaN;
  const ok = policy.readonly && !policy.write && !policy.blocking && !policy.pubsub &&
    !policy.movableKeys && !policy.nondeterministicOutput && info.subcommands.length === 0 &&
    info.firstKey === 1 && info.step === 1 && (info.lastKey === 1 || info.lastKey === -1);
  return ok ? info.lastKey : NaN;
}

/**
 * The key a cacheable read reads, or `undefined` when the cache must not answer it.
 *
 * @param args The command as sent (the name first, matched ignoring case).
 * @returns The key as a string (byte keys decoded as UTF-8), or `undefined`: not cacheable, not
 *   exactly one key, or a key whose name would not survive the round trip of an invalidation
 *   message (bytes that are not UTF-8, a string with lone surrogates).
 *
 * @example
 * ```ts
 * import { cacheableKeyOf } from "./cacheable.ts";
 * cacheableKeyOf(["HGET", "h", "f"]); // "h"
 * cacheableKeyOf(["EXISTS", "a"]); // "a"
 * cacheableKeyOf(["TTL", "a"]); // undefined
 * ```
 */
export function cacheableKeyOf(args: readonly RedisArgument[]): string | undefined {
  const name = args[0];
  if (typeof name !== "string") return undefined;
  let last = lastKeys.get(name);
  if (last === undefined) {
    last = deriveLastKey(name);
    lastKeys.set(name, last);
  }
  if (last !== 1 && !(last === -1 && args.length === 2)) return undefined;
  return keyText(args[1]);
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A key as the invalidation messages name it.
 *
 * @param k The key argument.
 * @returns Its text, or `undefined` when it has none that round-trips.
 */
export function keyText(k: RedisArgument | undefined): string | undefined {
  if (typeof k === "string") return k.isWellFormed() ? k : undefined;
  // As the encoder sends it (`Infinity` is `+inf`), so the server's invalidation matches.
  if (typeof k === "number") return Number.isNaN(k) ? undefined : numberText(k);
  if (k instanceof Uint8Array) {
    try {
      return UTF8.decode(k);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Per command name: 1 write with keys, 2 flush of everything, 0 neither. */
const writes = new Map<string, number>();

/**
 * What a command changes, for the cache to drop before the server says so.
 *
 * @param args The command as sent.
 * @returns `"all"` for `FLUSHALL`/`FLUSHDB`/`SWAPDB`, the keys of a write the table knows, or
 *   `undefined` (not a write, or unknown to the table).
 *
 * @example
 * ```ts
 * import { writtenKeys } from "./cacheable.ts";
 * writtenKeys(["FLUSHDB"]); // "all"
 * ```
 */
export function writtenKeys(args: readonly RedisArgument[]): string[] | "all" | undefined {
  const name = args[0];
  if (typeof name !== "string") return undefined;
  let kind = writes.get(name);
  if (kind === undefined) {
    const upper = name.toUpperCase();
    kind = FLUSHES.has(upper) ? 2 : SCRIPTS.has(upper) || commandPolicy([name])?.write ? 1 : 0;
    writes.set(name, kind);
  }
  if (kind === 0) return undefined;
  if (kind === 2) return "all";
  const keys = commandKeys(args);
  if (keys === undefined || keys.length === 0) return undefined;
  const out: string[] = [];
  for (const k of keys) {
    const t = keyText(k);
    if (t !== undefined) out.push(t);
  }
  return out;
}
