/**
 * The description of a command that `COMMAND INFO` gives (Redis 7: with key specs, tips and
 * subcommands), and its parser for RESP2 and RESP3 replies.
 *
 * @example
 * ```ts
 * import { parseCommandInfo } from "./command_info.ts";
 * const info = parseCommandInfo(["get", 2, ["readonly", "fast"], 1, 1, 1]);
 * console.log(info?.name, info?.arity); // "get" 2
 * ```
 *
 * @module
 */

import type { RespValue } from "../resp/types.ts";

export type { RespValue } from "../resp/types.ts";
export type { RedisError, RedisErrorOptions, ReplyError } from "../errors.ts";

const DECODER = new TextDecoder();

/**
 * One key spec of a command (`COMMAND INFO`, Redis 7): where the search for its keys begins
 * and how the keys are found from there.
 *
 * @example
 * ```ts
 * import type { KeySpec } from "./command_info.ts";
 * // The keys of MSET: from argument 1 to the last one, every second argument.
 * const mset: KeySpec = {
 *   flags: ["OW", "update"],
 *   beginSearch: "index", index: 1, keyword: "", startfrom: 0,
 *   findKeys: "range", lastkey: -1, keystep: 2, limit: 0, keynumidx: 0, firstkey: 0,
 * };
 * ```
 */
export interface KeySpec {
  /** Key spec flags as the server spells them: `RO`, `RW`, `OW`, `RM`, `access`, `insert`, ... */
  readonly flags: readonly string[];
  /** How the search begins: at a fixed index, after a keyword, or unknown to the specs. */
  readonly beginSearch: "index" | "keyword" | "unknown";
  /** `index`: the position of the first key (the command name is 0); else 0. */
  readonly index: number;
  /** `keyword`: the keyword after which the keys are (as the server spells it); else "". */
  readonly keyword: string;
  /**
   * `keyword`: where the search for the keyword starts; negative counts from the end and
   * searches backwards. Else 0.
   */
  readonly startfrom: number;
  /** How the keys are found from the beginning: a range, a key count, or unknown. */
  readonly findKeys: "range" | "keynum" | "unknown";
  /**
   * `range`: the last key relative to the first (0 = one key); negative counts from the end of
   * the arguments. Else 0.
   */
  readonly lastkey: number;
  /** `range` and `keynum`: the distance between two keys. Else 0. */
  readonly keystep: number;
  /** `range` with a negative `lastkey`: only 1/limit of the remaining arguments (0: all). */
  readonly limit: number;
  /** `keynum`: the position of the key count relative to the beginning. Else 0. */
  readonly keynumidx: number;
  /** `keynum`: the position of the first key relative to the beginning. Else 0. */
  readonly firstkey: number;
}

/**
 * One command or subcommand as `COMMAND INFO` describes it.
 *
 * @example
 * ```ts
 * import { parseCommandInfo } from "./command_info.ts";
 * const info = parseCommandInfo(["object|encoding", 3, ["readonly"], 2, 2, 1]);
 * console.log(info?.name, info?.arity, info?.firstKey); // "object|encoding" 3 2
 * ```
 */
export interface CommandInfo {
  /** Lower-case name; a subcommand is `container|subcommand` (`client|kill`). */
  readonly name: string;
  /** Number of arguments including the name; negative: at least that many. */
  readonly arity: number;
  /** Command flags (`readonly`, `write`, `blocking`, `movablekeys`, ...). */
  readonly flags: readonly string[];
  /** The legacy key range: first key position (0: none). */
  readonly firstKey: number;
  /** The legacy key range: last key position (negative: from the end). */
  readonly lastKey: number;
  /** The legacy key range: the distance between two keys. */
  readonly step: number;
  /** Command tips (`request_policy:all_shards`, `nondeterministic_output`, ...). */
  readonly tips: readonly string[];
  /** The key specs, in the server's order. */
  readonly keySpecs: readonly KeySpec[];
  /** The command's group from `COMMAND DOCS` (`string`, `server`, ...), when known. */
  readonly group?: string;
  /** A container command's subcommands. */
  readonly subcommands: readonly CommandInfo[];
}

function bad(detail: string): TypeError {
  return new TypeError(`Cannot parse the COMMAND INFO reply: ${detail}`);
}

function text(v: RespValue | undefined, what: string): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return DECODER.decode(v);
  throw bad(`${what} is not a string`);
}

function integer(v: RespValue | undefined, what: string): number {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "bigint") return Number(v);
  throw bad(`${what} is not an integer`);
}

function texts(v: RespValue | undefined, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v) || v instanceof Set) return [...v].map((x) => text(x, what));
  throw bad(`${what} is not a list`);
}

/** A RESP3 map or a RESP2 flat list of name-value pairs. */
function fields(v: RespValue | undefined, what: string): Map<string, RespValue> {
  const out = new Map<string, RespValue>();
  if (v instanceof Map) {
    for (const [k, x] of v) out.set(text(k, `a field name of ${what}`), x);
  } else if (Array.isArray(v) && v.length % 2 === 0) {
    for (let i = 0; i < v.length; i += 2) {
      out.set(text(v[i], `a field name of ${what}`), v[i + 1] as RespValue);
    }
  } else throw bad(`${what} is not a map`);
  return out;
}

/** An optional list (RESP3 sends some as sets): absent or null is empty. */
function elements(v: RespValue | undefined, what: string): RespValue[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  if (v instanceof Set) return [...v];
  throw bad(`${what} are not a list`);
}

function keySpec(v: RespValue): KeySpec {
  const f = fields(v, "a key spec");
  const bs = fields(f.get("begin_search"), "begin_search");
  const fk = fields(f.get("find_keys"), "find_keys");
  const bsType = text(bs.get("type"), "the begin_search type");
  const fkType = text(fk.get("type"), "the find_keys type");
  const bsSpec = bsType === "unknown" ? new Map() : fields(bs.get("spec"), "begin_search spec");
  const fkSpec = fkType === "unknown" ? new Map() : fields(fk.get("spec"), "find_keys spec");
  const spec = {
    flags: texts(f.get("flags"), "a key spec flag"),
    beginSearch: "unknown" as KeySpec["beginSearch"],
    index: 0,
    keyword: "",
    startfrom: 0,
    findKeys: "unknown" as KeySpec["findKeys"],
    lastkey: 0,
    keystep: 0,
    limit: 0,
    keynumidx: 0,
    firstkey: 0,
  };
  if (bsType === "index") {
    spec.beginSearch = "index";
    spec.index = integer(bsSpec.get("index"), "begin_search index");
  } else if (bsType === "keyword") {
    spec.beginSearch = "keyword";
    spec.keyword = text(bsSpec.get("keyword"), "begin_search keyword");
    spec.startfrom = integer(bsSpec.get("startfrom"), "begin_search startfrom");
  }
  if (fkType === "range") {
    spec.findKeys = "range";
    spec.lastkey = integer(fkSpec.get("lastkey"), "find_keys lastkey");
    spec.keystep = integer(fkSpec.get("keystep"), "find_keys keystep");
    spec.limit = integer(fkSpec.get("limit"), "find_keys limit");
  } else if (fkType === "keynum") {
    spec.findKeys = "keynum";
    spec.keynumidx = integer(fkSpec.get("keynumidx"), "find_keys keynumidx");
    spec.firstkey = integer(fkSpec.get("firstkey"), "find_keys firstkey");
    spec.keystep = integer(fkSpec.get("keystep"), "find_keys keystep");
  }
  return spec;
}

/**
 * Turns one entry of a `COMMAND INFO` (or `COMMAND`) reply, RESP2 or RESP3, into the table's
 * form, subcommands included. Servers before 7 have no tips, key specs or subcommands: the
 * entry then has none.
 *
 * @param entry One element of the reply: `[name, arity, flags, first, last, step, ...]`.
 * @returns The command, or `undefined` for the `null` the server answers for an unknown name.
 * @throws {TypeError} The entry does not have the shape of a `COMMAND INFO` entry.
 *
 * @example
 * ```ts
 * import { parseCommandInfo } from "./command_info.ts";
 * const info = parseCommandInfo(["get", 2, ["readonly", "fast"], 1, 1, 1]);
 * console.log(info?.flags); // ["readonly", "fast"]
 * ```
 */
export function parseCommandInfo(entry: RespValue): CommandInfo | undefined {
  if (entry === null) return undefined;
  if (!Array.isArray(entry) || entry.length < 6) throw bad("an entry is not a list of 6 or more");
  return {
    name: text(entry[0], "the name").toLowerCase(),
    arity: integer(entry[1], "the arity"),
    flags: texts(entry[2], "a flag"),
    firstKey: integer(entry[3], "the first key"),
    lastKey: integer(entry[4], "the last key"),
    step: integer(entry[5], "the step"),
    tips: texts(entry[7], "a tip"),
    keySpecs: elements(entry[8], "the key specs").map(keySpec),
    subcommands: elements(entry[9], "the subcommands").map((s) => {
      const info = parseCommandInfo(s);
      if (info === undefined) throw bad("a subcommand is null");
      return info;
    }),
  };
}
