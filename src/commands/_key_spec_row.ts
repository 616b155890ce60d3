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
