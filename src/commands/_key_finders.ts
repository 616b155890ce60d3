// The hand-written key finders of redis-server 7.0 (its "getkeys" procedures). The server uses
// them where a command's key specs cannot answer alone: a spec marked incomplete or unknown
// (MIGRATE ... KEYS, SORT ... STORE), specs with variable flags (SET, BITFIELD), or specs that
// refused the arguments (a key count written "02" is read by atoi here). Each returns the
// positions of the keys, or [] where the server finds none.
import type { RedisArgument } from "../resp/types.ts";
import { argIs, argIsEmpty, parseLooseInteger } from "./_argument_text.ts";

/** Returns the positions of the keys in `args` (the command name at 0). */
export type KeyFinder = (args: readonly RedisArgument[]) => number[];

/**
 * A key count at `countAt`, that many keys from `firstAt` every `step`, and a destination key
 * at `storeAt` (0: none) listed after them.
 */
function counted(storeAt: number, countAt: number, firstAt: number, step: number): KeyFinder {
  return (args) => {
    const n = parseLooseInteger(args[countAt]);
    if (n < 1 || n > Math.trunc((args.length - firstAt) / step)) return [];
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(firstAt + i * step);
    if (storeAt > 0) out.push(storeAt);
    return out;
  };
}

/** SORT: the sorted key, and the destination of the last STORE option. */
function sortKeys(args: readonly RedisArgument[]): number[] {
  let store = 0;
  for (let i = 2; i < args.length; i++) {
    const a = args[i];
    if (argIs(a, "limit")) i += 2;
    else if (argIs(a, "store") && i + 1 < args.length) store = i + 1;
    else if (argIs(a, "get") || argIs(a, "by")) i += 1;
  }
  return store > 0 ? [1, store] : [1];
}

/** MIGRATE: the key at 3, or with the KEYS option (and an empty key at 3) the keys after it. */
function migrateKeys(args: readonly RedisArgument[]): number[] {
  let first = 3;
  let n = 1;
  for (let i = 6; i < args.length; i++) {
    const a = args[i];
    if (argIs(a, "keys")) {
      if (!argIsEmpty(args[3])) return [];
      first = i + 1;
      n = args.length - first;
      break;
    }
    if (argIs(a, "auth")) i += 1;
    else if (argIs(a, "auth2")) i += 2;
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(first + i);
  return out;
}

/** GEORADIUS, GEORADIUSBYMEMBER: the key, and the destination of the last STORE/STOREDIST. */
function georadiusKeys(args: readonly RedisArgument[]): number[] {
  let store = 0;
  for (let i = 5; i < args.length; i++) {
    const a = args[i];
    if ((argIs(a, "store") || argIs(a, "storedist")) && i + 1 < args.length) {
      store = i + 1;
      i++;
    }
  }
  return store > 0 ? [1, store] : [1];
}

/** XREAD, XREADGROUP: the first half of the arguments after the STREAMS option. */
function xreadKeys(args: readonly RedisArgument[]): number[] {
  let streams = -1;
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (argIs(a, "block") || argIs(a, "count")) i += 1;
    else if (argIs(a, "group")) i += 2;
    else if (argIs(a, "noack")) continue;
    else {
      if (argIs(a, "streams")) streams = i;
      break;
    }
  }
  const rest = args.length - streams - 1;
  if (streams === -1 || rest === 0 || rest % 2 !== 0) return [];
  const out: number[] = [];
  for (let i = streams + 1; i < args.length - rest / 2; i++) out.push(i);
  return out;
}

/** The key at 1 (SET, BITFIELD, SORT_RO: their specs carry variable flags or unknown parts). */
function firstKey(): number[] {
  return [1];
}

const scriptKeys = counted(0, 2, 3, 1);
const storeAndCounted = counted(1, 2, 3, 1);
const countedAt1 = counted(0, 1, 2, 1);

/** The server's key finder of each command that has one, by lower-case name. */
export const KEY_FINDERS: ReadonlyMap<string, KeyFinder> = new Map<string, KeyFinder>([
  ["eval", scriptKeys],
  ["evalsha", scriptKeys],
  ["eval_ro", scriptKeys],
  ["evalsha_ro", scriptKeys],
  ["fcall", scriptKeys],
  ["fcall_ro", scriptKeys],
  ["blmpop", scriptKeys],
  ["bzmpop", scriptKeys],
  ["zunionstore", storeAndCounted],
  ["zinterstore", storeAndCounted],
  ["zdiffstore", storeAndCounted],
  ["zunion", countedAt1],
  ["zinter", countedAt1],
  ["zdiff", countedAt1],
  ["zintercard", countedAt1],
  ["sintercard", countedAt1],
  ["lmpop", countedAt1],
  ["zmpop", countedAt1],
  ["sort", sortKeys],
  ["sort_ro", firstKey],
  ["migrate", migrateKeys],
  ["georadius", georadiusKeys],
  ["georadiusbymember", georadiusKeys],
  ["xread", xreadKeys],
  ["xreadgroup", xreadKeys],
  ["set", firstKey],
  ["bitfield", firstKey],
]);
