// The one-line text form of a command's COMMAND INFO entry used by the generated key table
// (src/commands/key_spec.ts). The generator formats rows; the lookup parses them on first use.
//
//   <name> <arity> <flags> <first>,<last>,<step> <tips> <group> [<key spec> ...]
//
// name: lower case, subcommands as "container|sub"; flags and tips: comma-separated, "-" when
// empty; group: the COMMAND DOCS group, "-" when unknown. A key spec is
// <flags>/<begin_search>/<find_keys>:
//   flags        comma-separated key spec flags (RO, RW, OW, RM, access, ...), "-" when empty
//   begin_search i<index> | k<KEYWORD>,<startfrom> | u (unknown)
//   find_keys    r<lastkey>,<keystep>,<limit> | n<keynumidx>,<firstkey>,<keystep> | u (unknown)
import type { CommandInfo, KeySpec } from "./command_info.ts";

const WORD = /^[^\s,/]+$/;

function list(items: readonly string[], what: string): string {
  for (const s of items) {
    if (!WORD.test(s)) throw new RangeError(`Cannot format the key table: bad ${what} "${s}"`);
  }
  return items.length === 0 ? "-" : items.join(",");
}

function formatSpec(s: KeySpec): string {
  const begin = s.beginSearch === "index"
    ? `i${s.index}`
    : s.beginSearch === "keyword"
    ? `k${list([s.keyword], "keyword")},${s.startfrom}`
    : "u";
  const find = s.findKeys === "range"
    ? `r${s.lastkey},${s.keystep},${s.limit}`
    : s.findKeys === "keynum"
    ? `n${s.keynumidx},${s.firstkey},${s.keystep}`
    : "u";
  return `${list(s.flags, "key spec flag")}/${begin}/${find}`;
}

/** One row of the key table for `info` (its subcommands get rows of their own). */
export function formatCommandRow(info: CommandInfo): string {
  const fields = [
    list([info.name], "command name"),
    String(info.arity),
    list(info.flags, "command flag"),
    `${info.firstKey},${info.lastKey},${info.step}`,
    list(info.tips, "tip"),
    info.group === undefined ? "-" : list([info.group], "group"),
    ...info.keySpecs.map(formatSpec),
  ];
  return fields.join(" ");
}

function ints(s: string, n: number, row: string): number[] {
  const parts = s.split(",").map(Number);
  if (parts.length !== n || !parts.every(Number.isInteger)) {
    throw new RangeError(`Cannot parse the key table row "${row}": bad numbers "${s}"`);
  }
  return parts;
}

function words(s: string): string[] {
  return s === "-" ? [] : s.split(",");
}

function parseSpec(token: string, row: string): KeySpec {
  const [flags, begin, find, extra] = token.split("/");
  if (flags === undefined || begin === undefined || find === undefined || extra !== undefined) {
    throw new RangeError(`Cannot parse the key table row "${row}": bad key spec "${token}"`);
  }
  const spec = {
    flags: words(flags),
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
  if (begin[0] === "i") {
    spec.beginSearch = "index";
    [spec.index] = ints(begin.slice(1), 1, row) as [number];
  } else if (begin[0] === "k") {
    const comma = begin.lastIndexOf(",");
    spec.beginSearch = "keyword";
    spec.keyword = begin.slice(1, comma);
    [spec.startfrom] = ints(begin.slice(comma + 1), 1, row) as [number];
  } else if (begin !== "u") {
    throw new RangeError(`Cannot parse the key table row "${row}": bad begin_search "${begin}"`);
  }
  if (find[0] === "r") {
    spec.findKeys = "range";
    [spec.lastkey, spec.keystep, spec.limit] = ints(find.slice(1), 3, row) as [
      number,
      number,
      number,
    ];
  } else if (find[0] === "n") {
    spec.findKeys = "keynum";
    [spec.keynumidx, spec.firstkey, spec.keystep] = ints(find.slice(1), 3, row) as [
      number,
      number,
      number,
    ];
  } else if (find !== "u") {
    throw new RangeError(`Cannot parse the key table row "${row}": bad find_keys "${find}"`);
  }
  return spec;
}

/** Parses one row of the key table; `subcommands` is empty (the table lists them as rows). */
export function parseCommandRow(row: string): CommandInfo {
  const f = row.split(" ");
  const [name, arity, flags, keys, tips, group] = f;
  if (
    name === undefined || arity === undefined || flags === undefined || keys === undefined ||
    tips === undefined || group === undefined
  ) {
    throw new RangeError(`Cannot parse the key table row "${row}": too few fields`);
  }
  const [firstKey, lastKey, step] = ints(keys, 3, row) as [number, number, number];
  return {
    name,
    arity: ints(arity, 1, row)[0] as number,
    flags: words(flags),
    firstKey,
    lastKey,
    step,
    tips: words(tips),
    group: group === "-" ? undefined : group,
    keySpecs: f.slice(6).map((t) => parseSpec(t, row)),
    subcommands: [],
  };
}

// The table as shipped: one string, each field of a row that repeats (flags, first/last/step,
// tips, group, key specs) replaced by one character that indexes a dictionary of its values.
//
//   <flags dict>;<keys dict>;<tips dict>;<groups dict>;<key specs dict>;<row>;<row>;...
//
// A dictionary lists its values separated by spaces. A row is `<name> <arity> <f><k><t><g><s>*`:
// one index character (DIGITS) each for the flags, first/last/step, tips and group, then one per
// key spec. A subcommand's name is `|<sub>`, its container being the last command before it (the
// rows are sorted by name).

/** The index characters of the dictionaries, in order. */
const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** The dictionaries, in the order of the index characters of a row. */
const DICTS = 5;
const SPECS = 4;

/**
 * Encodes rows (in {@linkcode formatCommandRow}'s format, sorted by name) into the shipped table.
 *
 * @param rows The rows.
 * @returns The table string.
 * @throws {RangeError} A dictionary with more values than index characters, or a row that does
 *   not parse.
 */
export function encodeCommandTable(rows: readonly string[]): string {
  const dicts: Map<string, number>[] = Array.from({ length: DICTS }, () => new Map());
  const index = (d: number, value: string): string => {
    const dict = dicts[d]!;
    let i = dict.get(value);
    if (i === undefined) {
      i = dict.size;
      if (i >= DIGITS.length) {
        throw new RangeError(`Cannot encode the key table: more than ${DIGITS.length} values`);
      }
      dict.set(value, i);
    }
    return DIGITS[i]!;
  };
  let container = "";
  const out = rows.map((row) => {
    const f = row.split(" ");
    if (f.length < 6 || f.some((x) => x === "" || x.includes(";"))) {
      throw new RangeError(`Cannot encode the key table row "${row}"`);
    }
    const [name, arity, flags, keys, tips, group] = f as [string, ...string[]];
    const bar = name.indexOf("|");
    let short = name;
    if (bar < 0) container = name;
    else if (name.slice(0, bar) === container) short = name.slice(bar);
    return `${short} ${arity} ${index(0, flags!)}${index(1, keys!)}${index(2, tips!)}${
      index(3, group!)
    }${f.slice(6).map((s) => index(SPECS, s)).join("")}`;
  });
  return [...dicts.map((d) => [...d.keys()].join(" ")), ...out].join(";");
}

/**
 * Decodes the shipped table into its rows ({@linkcode parseCommandRow}'s format).
 *
 * @param table The table string of {@linkcode encodeCommandTable}.
 * @returns The rows, in order.
 * @throws {RangeError} An index with no value in its dictionary.
 */
export function decodeCommandTable(table: string): string[] {
  const parts = table.split(";");
  const dicts = parts.slice(0, DICTS).map((d) => d.split(" "));
  const value = (d: number, c: string, row: string): string => {
    const v = dicts[d]![DIGITS.indexOf(c)];
    if (v === undefined) {
      throw new RangeError(`Cannot decode the key table row "${row}": no value for "${c}"`);
    }
    return v;
  };
  let container = "";
  const rows: string[] = new Array(parts.length - DICTS);
  for (let r = DICTS; r < parts.length; r++) {
    const row = parts[r]!;
    const a = row.indexOf(" ");
    const b = row.indexOf(" ", a + 1);
    let name = row.slice(0, a);
    if (name[0] === "|") name = container + name;
    else container = name;
    const codes = row.slice(b + 1);
    let text = `${name} ${row.slice(a + 1, b)}`;
    for (let i = 0; i < codes.length; i++) {
      text += ` ${value(i < SPECS ? i : SPECS, codes[i]!, row)}`;
    }
    rows[r - DICTS] = text;
  }
  return rows;
}
