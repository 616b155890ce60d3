/**
 * Where a command's keys are and how a cluster should run it, for any argument list: the typed
 * methods' and `sendCommand`'s alike. Answers come from the command table of redis-server
 * (generated into `key_spec.ts`, nothing is fetched at run time) and are computed exactly like
 * the server's `COMMAND GETKEYS`: key specs first, the server's hand-written key finders where
 * the specs cannot answer. Commands the table does not know (module commands, commands of newer
 * servers) answer `undefined`; an executor can then look them up once with `COMMAND INFO` and
 * {@linkcode registerCommandInfo} the result.
 *
 * @example
 * ```ts
 * import { commandKeys, commandPolicy } from "./command_keys.ts";
 * commandKeys(["MSET", "a", "1", "b", "2"]); // ["a", "b"]
 * commandKeys(["EVAL", "return 1", 1, "k", "arg"]); // ["k"]
 * commandPolicy(["DEL", "a", "b"])?.request; // "multi_shard"
 * ```
 *
 * @module
 */

import type { RedisArgument } from "../resp/types.ts";
import type { CommandInfo, KeySpec } from "./command_info.ts";
import { argIs, parseStrictInteger } from "./_argument_text.ts";
import { KEY_FINDERS, type KeyFinder } from "./_key_finders.ts";
import { decodeCommandTable, parseCommandRow } from "./_key_spec_row.ts";
import { COMMAND_TABLE } from "./key_spec.ts";

export { type CommandInfo, type KeySpec, parseCommandInfo } from "./command_info.ts";
export type { RedisArgument, RespValue } from "../resp/types.ts";
export type { RedisError, RedisErrorOptions, ReplyError } from "../errors.ts";

/** How a cluster client sends a keyless command (`request_policy` tip). */
export type RequestPolicy = "all_shards" | "all_nodes" | "multi_shard" | "special";

/** How a cluster client combines the replies of several nodes (`response_policy` tip). */
export type ResponsePolicy =
  | "one_succeeded"
  | "all_succeeded"
  | "agg_logical_and"
  | "agg_logical_or"
  | "agg_min"
  | "agg_max"
  | "agg_sum"
  | "special";

/**
 * What a router needs to know about a command beyond its keys.
 *
 * @example
 * ```ts
 * import { commandPolicy } from "./command_keys.ts";
 * const p = commandPolicy(["SCRIPT", "FLUSH"]);
 * console.log(p?.request, p?.response); // "all_nodes" "all_succeeded"
 * ```
 */
export interface CommandPolicy {
  /** Lower-case name; a subcommand is `container|subcommand`. */
  readonly name: string;
  /** The `request_policy` tip, if any. */
  readonly request: RequestPolicy | undefined;
  /** The `response_policy` tip, if any. */
  readonly response: ResponsePolicy | undefined;
  /** The command has the `readonly` flag (a cluster replica may serve it). */
  readonly readonly: boolean;
  /** The command has the `write` flag. */
  readonly write: boolean;
  /** The command may block (`blocking` flag). */
  readonly blocking: boolean;
  /** The keys' positions depend on the arguments (`movablekeys` flag). */
  readonly movableKeys: boolean;
  /** A pub/sub command (`pubsub` flag). */
  readonly pubsub: boolean;
  /** The command can have keys (`COMMAND GETKEYS` does not refuse it outright). */
  readonly hasKeys: boolean;
  /** Some key spec reads the key's value (`RO` or `RW`). */
  readonly readsKeys: boolean;
  /** Some key spec changes or removes the key (`RW`, `OW` or `RM`). */
  readonly writesKeys: boolean;
  /** `nondeterministic_output` tip: replies differ between calls or nodes. */
  readonly nondeterministicOutput: boolean;
  /** `nondeterministic_output_order` tip: the order of reply elements is arbitrary. */
  readonly nondeterministicOutputOrder: boolean;
}

const BEGIN_INDEX = 0;
const BEGIN_KEYWORD = 1;
const FIND_RANGE = 0;
const FIND_KEYNUM = 1;
const UNKNOWN = 2;

/** A key spec prepared for evaluation. */
interface Spec {
  readonly notKey: boolean;
  readonly incomplete: boolean;
  readonly begin: number;
  readonly index: number;
  /** Lower case, for `argIs`. */
  readonly keyword: string;
  readonly startfrom: number;
  readonly find: number;
  readonly lastkey: number;
  readonly keystep: number;
  readonly limit: number;
  readonly keynumidx: number;
  readonly firstkey: number;
}

/** A command prepared for lookups. */
interface Entry {
  readonly info: CommandInfo;
  readonly policy: CommandPolicy;
  readonly arity: number;
  readonly specs: readonly Spec[];
  /** Some spec is not `not_key`. */
  readonly keySpecs: boolean;
  /** Some spec has `variable_flags`: the server goes to its key finder directly. */
  readonly variableFlags: boolean;
  readonly finder: KeyFinder | undefined;
  /** Subcommands by lower- and upper-case name. */
  readonly subs: Map<string, Entry> | undefined;
}

const REQUEST: ReadonlySet<string> = new Set(["all_shards", "all_nodes", "multi_shard", "special"]);
const RESPONSE: ReadonlySet<string> = new Set([
  "one_succeeded",
  "all_succeeded",
  "agg_logical_and",
  "agg_logical_or",
  "agg_min",
  "agg_max",
  "agg_sum",
  "special",
]);

function prepareSpec(s: KeySpec): Spec {
  const begin = s.beginSearch === "index" && s.index > 0
    ? BEGIN_INDEX
    : s.beginSearch === "keyword" && s.keyword !== ""
    ? BEGIN_KEYWORD
    : UNKNOWN;
  // A step below 1 would never advance: treat such a spec as one the specs cannot answer.
  const find = s.keystep < 1
    ? UNKNOWN
    : s.findKeys === "range"
    ? FIND_RANGE
    : s.findKeys === "keynum"
    ? FIND_KEYNUM
    : UNKNOWN;
  return {
    notKey: s.flags.includes("not_key"),
    incomplete: s.flags.includes("incomplete"),
    begin,
    index: s.index,
    keyword: s.keyword.toLowerCase(),
    startfrom: s.startfrom,
    find,
    lastkey: s.lastkey,
    keystep: s.keystep,
    limit: s.limit,
    keynumidx: s.keynumidx,
    firstkey: s.firstkey,
  };
}

function tip(tips: readonly string[], prefix: string, allowed: ReadonlySet<string>) {
  for (const t of tips) {
    if (t.startsWith(prefix)) {
      const v = t.slice(prefix.length);
      if (allowed.has(v)) return v;
    }
  }
  return undefined;
}

function prepare(described: CommandInfo): Entry {
  const name = described.name.toLowerCase();
  let subs: Map<string, Entry> | undefined;
  const subInfos: CommandInfo[] = [];
  if (described.subcommands.length > 0) {
    subs = new Map();
    for (const sub of described.subcommands) {
      const e = prepare(sub);
      addName(subs, subName(e.info.name, name), e);
      subInfos.push(e.info);
    }
  }
  const info: CommandInfo = { ...described, name, subcommands: subInfos };
  const specs = info.keySpecs.map(prepareSpec);
  const keySpecs = specs.some((s) => !s.notKey);
  const finder = info.flags.includes("module") ? undefined : KEY_FINDERS.get(name);
  const has = (f: string) => info.flags.includes(f);
  const spec = (f: string) => info.keySpecs.some((s) => s.flags.includes(f));
  const policy: CommandPolicy = Object.freeze({
    name,
    request: tip(info.tips, "request_policy:", REQUEST) as RequestPolicy | undefined,
    response: tip(info.tips, "response_policy:", RESPONSE) as ResponsePolicy | undefined,
    readonly: has("readonly"),
    write: has("write"),
    blocking: has("blocking"),
    movableKeys: has("movablekeys"),
    pubsub: has("pubsub"),
    hasKeys: keySpecs || finder !== undefined,
    readsKeys: spec("RO") || spec("RW"),
    writesKeys: spec("RW") || spec("OW") || spec("RM"),
    nondeterministicOutput: info.tips.includes("nondeterministic_output"),
    nondeterministicOutputOrder: info.tips.includes("nondeterministic_output_order"),
  });
  return {
    info,
    policy,
    arity: info.arity,
    specs,
    keySpecs,
    variableFlags: info.keySpecs.some((s) => s.flags.includes("variable_flags")),
    finder,
    subs,
  };
}

function subName(name: string, container: string): string {
  const bar = name.indexOf("|");
  if (bar < 0 || name.slice(0, bar) !== container) {
    throw new RangeError(
      `Cannot register the command "${name}": it is not a subcommand of "${container}"`,
    );
  }
  return name.slice(bar + 1);
}

function addName(map: Map<string, Entry>, name: string, entry: Entry): void {
  map.set(name, entry);
  map.set(name.toUpperCase(), entry);
}

let table: Map<string, Entry> | undefined;

function commands(): Map<string, Entry> {
  if (table !== undefined) return table;
  const tops: CommandInfo[] = [];
  const subs = new Map<string, CommandInfo[]>();
  for (const row of decodeCommandTable(COMMAND_TABLE)) {
    const info = parseCommandRow(row);
    const bar = info.name.indexOf("|");
    if (bar < 0) tops.push(info);
    else {
      const container = info.name.slice(0, bar);
      const list = subs.get(container);
      if (list) list.push(info);
      else subs.set(container, [info]);
    }
  }
  const map = new Map<string, Entry>();
  for (const info of tops) {
    const withSubs = { ...info, subcommands: subs.get(info.name) ?? [] };
    addName(map, info.name, prepare(withSubs));
  }
  table = map;
  return map;
}

const DECODER = new TextDecoder();

function find(map: Map<string, Entry>, name: RedisArgument | undefined): Entry | undefined {
  if (typeof name === "string") return map.get(name) ?? map.get(name.toLowerCase());
  if (name instanceof Uint8Array) return map.get(DECODER.decode(name).toLowerCase());
  return undefined;
}

/** The table entry of `args`: the subcommand's for a container command. */
function resolve(args: readonly RedisArgument[]): Entry | undefined {
  const e = find(commands(), args[0]);
  if (e === undefined || e.subs === undefined || args.length < 2) return e;
  return find(e.subs, args[1]);
}

/** The key spec evaluation of redis-server 7.0; `undefined` where the server falls back. */
function specKeys(
  e: Entry,
  args: readonly RedisArgument[],
  includeNotKeys: boolean,
): number[] | undefined {
  const argc = args.length;
  const out: number[] = [];
  for (const s of e.specs) {
    if (s.notKey && !includeNotKeys) continue;
    let first = 0;
    if (s.begin === BEGIN_INDEX) first = s.index;
    else if (s.begin === BEGIN_KEYWORD) {
      const start = s.startfrom > 0 ? s.startfrom : argc + s.startfrom;
      const end = s.startfrom > 0 ? argc - 1 : 0;
      for (let i = start; i !== end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (argIs(args[i], s.keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first === 0) continue; // keyword absent: this spec has no keys
    } else return undefined;
    let last: number;
    if (s.find === FIND_RANGE) {
      if (s.lastkey >= 0) last = first + s.lastkey;
      else if (s.limit === 0) last = argc + s.lastkey;
      else last = first + Math.trunc((argc - first) / s.limit) + s.lastkey;
    } else if (s.find === FIND_KEYNUM) {
      if (s.keynumidx >= argc - first) return undefined;
      const n = parseStrictInteger(args[first + s.keynumidx]);
      if (n === undefined || n < 0) return undefined;
      first += s.firstkey;
      last = first + n - 1;
    } else return undefined;
    if (last >= argc || last < first || first >= argc) return undefined;
    for (let i = first; i <= last; i += s.keystep) out.push(i);
    if (s.incomplete) return undefined;
  }
  return out;
}

/**
 * The positions of the keys in `args` (the command name is position 0), as `COMMAND GETKEYS`
 * finds them: `[]` for a keyless command and wherever the server would find no keys (wrong
 * number of arguments, a bad key count, ...).
 *
 * @param args The command and its arguments, as sent; names are matched ignoring case.
 * @param includeNotKeys Also the arguments of key specs flagged `not_key`: the shard channels
 *   of `SPUBLISH`, `SSUBSCRIBE` and `SUNSUBSCRIBE`, which route like keys in a cluster.
 * @returns The positions in order, or `undefined` for a command (or subcommand) the table
 *   does not know.
 *
 * @example
 * ```ts
 * import { commandKeyIndexes } from "./command_keys.ts";
 * commandKeyIndexes(["XREAD", "COUNT", 1, "STREAMS", "a", "b", "0", "0"]); // [4, 5]
 * commandKeyIndexes(["PING"]); // []
 * commandKeyIndexes(["NOSUCHCOMMAND"]); // undefined
 * ```
 */
export function commandKeyIndexes(
  args: readonly RedisArgument[],
  includeNotKeys: boolean = false,
): number[] | undefined {
  const e = resolve(args);
  if (e === undefined) return undefined;
  const argc = args.length;
  if ((e.arity > 0 && argc !== e.arity) || argc < -e.arity) return [];
  if ((e.keySpecs || (includeNotKeys && e.specs.length > 0)) && !e.variableFlags) {
    const keys = specKeys(e, args, includeNotKeys);
    if (keys !== undefined) return keys;
  }
  return e.finder !== undefined ? e.finder(args) : [];
}

/**
 * The keys in `args`: the arguments at {@linkcode commandKeyIndexes}.
 *
 * @param args The command and its arguments, as sent.
 * @param includeNotKeys Also the shard channels of `SPUBLISH`, `SSUBSCRIBE`, `SUNSUBSCRIBE`.
 * @returns The keys in order, or `undefined` for a command the table does not know.
 *
 * @example
 * ```ts
 * import { commandKeys } from "./command_keys.ts";
 * commandKeys(["ZUNIONSTORE", "dst", 2, "a", "b", "WEIGHTS", 1, 2]); // ["dst", "a", "b"]
 * commandKeys(["MEMORY", "USAGE", "k"]); // ["k"]
 * ```
 */
export function commandKeys(
  args: readonly RedisArgument[],
  includeNotKeys: boolean = false,
): RedisArgument[] | undefined {
  const idx = commandKeyIndexes(args, includeNotKeys);
  if (idx === undefined) return undefined;
  const out: RedisArgument[] = new Array(idx.length);
  for (let i = 0; i < idx.length; i++) out[i] = args[idx[i] as number] as RedisArgument;
  return out;
}

/**
 * The routing policy of the command in `args` (a subcommand's own for a container command).
 *
 * @param args The command and its arguments (only the name and subcommand are read).
 * @returns The policy (one shared frozen object per command), or `undefined` for a command the
 *   table does not know.
 *
 * @example
 * ```ts
 * import { commandPolicy } from "./command_keys.ts";
 * commandPolicy(["GET", "k"])?.readonly; // true
 * commandPolicy(["WAIT", 1, 0])?.response; // "agg_min"
 * ```
 */
export function commandPolicy(args: readonly RedisArgument[]): CommandPolicy | undefined {
  return resolve(args)?.policy;
}

/**
 * The table's description of the command in `args` (a subcommand's for a container command).
 *
 * @param args The command and its arguments (only the name and subcommand are read).
 * @returns The command's info, or `undefined` for a command the table does not know.
 *
 * @example
 * ```ts
 * import { commandInfo } from "./command_keys.ts";
 * commandInfo(["client", "kill", "ID", 7])?.name; // "client|kill"
 * ```
 */
export function commandInfo(args: readonly RedisArgument[]): CommandInfo | undefined {
  return resolve(args)?.info;
}

/**
 * Adds a command the table does not know, or replaces one, for every later lookup in this
 * process: typically the answer of `COMMAND INFO <name>` for a module command, parsed with
 * {@linkcode parseCommandInfo}. Register a container command with its subcommands (the reply
 * for the container's name carries them); a lone subcommand (`name` with a `|`) is added to a
 * container the table already has.
 *
 * @param info The command.
 * @throws {RangeError} A subcommand whose container is unknown.
 *
 * @example
 * ```ts ignore
 * import { parseCommandInfo, registerCommandInfo } from "./command_keys.ts";
 * const [entry] = await client.sendCommand(["COMMAND", "INFO", "json.get"]) as RespValue[];
 * const info = parseCommandInfo(entry);
 * if (info) registerCommandInfo(info);
 * ```
 */
export function registerCommandInfo(info: CommandInfo): void {
  const map = commands();
  const name = info.name.toLowerCase();
  const bar = name.indexOf("|");
  if (bar < 0) {
    addName(map, name, prepare(info));
    return;
  }
  const container = map.get(name.slice(0, bar));
  if (container === undefined || container.subs === undefined) {
    throw new RangeError(
      `Cannot register the command "${name}": "${name.slice(0, bar)}" is not a known container`,
    );
  }
  addName(container.subs, name.slice(bar + 1), prepare(info));
}
