// The command key table and its lookups, without a server: key specs (index, keyword, range,
// keynum), the server's own key finders, subcommands, names in any case or as bytes, policies,
// COMMAND INFO parsing and commands registered at run time.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type CommandInfo,
  commandInfo,
  commandKeyIndexes,
  commandKeys,
  commandPolicy,
  type KeySpec,
  parseCommandInfo,
  registerCommandInfo,
} from "../../../src/commands/command_keys.ts";
import { COMMAND_TABLE, KEY_SPEC_SERVER } from "../../../src/commands/key_spec.ts";
import {
  decodeCommandTable,
  encodeCommandTable,
  formatCommandRow,
  parseCommandRow,
} from "../../../src/commands/_key_spec_row.ts";
import {
  argIs,
  parseLooseInteger,
  parseStrictInteger,
} from "../../../src/commands/_argument_text.ts";
import type { RedisArgument } from "../../../src/resp/types.ts";

const COMMAND_ROWS = decodeCommandTable(COMMAND_TABLE);
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const keys = (...args: RedisArgument[]) => commandKeys(args);

function spec(over: Partial<KeySpec>): KeySpec {
  return {
    flags: ["RW"],
    beginSearch: "index",
    index: 1,
    keyword: "",
    startfrom: 0,
    findKeys: "range",
    lastkey: 0,
    keystep: 1,
    limit: 0,
    keynumidx: 0,
    firstkey: 0,
    ...over,
  };
}

function command(name: string, arity: number, specs: KeySpec[], more: Partial<CommandInfo> = {}) {
  return {
    name,
    arity,
    flags: [],
    firstKey: 0,
    lastKey: 0,
    step: 0,
    tips: [],
    keySpecs: specs,
    subcommands: [],
    ...more,
  } satisfies CommandInfo;
}

describe("command key table", () => {
  it("covers every command and subcommand of redis-server 7.0", () => {
    assert.match(KEY_SPEC_SERVER, /^redis-server 7\.0\.\d+$/);
    assert.ok(COMMAND_ROWS.length >= 360, `${COMMAND_ROWS.length} rows`);
    const names = COMMAND_ROWS.map((r) => r.split(" ")[0] as string);
    assert.deepEqual(names, [...names].sort(), "rows sorted by name");
    assert.equal(new Set(names).size, names.length, "no name twice");
    for (const n of ["get", "client|kill", "object|encoding", "xinfo|stream", "memory|usage"]) {
      assert.ok(names.includes(n), n);
    }
  });

  it("every row parses and formats back to itself", () => {
    for (const row of COMMAND_ROWS) assert.equal(formatCommandRow(parseCommandRow(row)), row);
  });

  it("the shipped table is its rows encoded: decoding gives them back, and it is compact", () => {
    assert.equal(encodeCommandTable(COMMAND_ROWS), COMMAND_TABLE);
    assert.deepEqual(decodeCommandTable(encodeCommandTable(COMMAND_ROWS)), COMMAND_ROWS);
    // Subcommands are written after their container: "acl|cat" as "|cat".
    assert.ok(COMMAND_TABLE.includes(";|cat "), "subcommand names shortened");
    const text = COMMAND_ROWS.join("\n").length;
    assert.ok(COMMAND_TABLE.length < text * 0.45, `${COMMAND_TABLE.length} of ${text} chars`);
  });

  it("encodes rows of any container and refuses what it cannot index", () => {
    const rows = [
      "a 1 - 0,0,0 - g",
      "a|x 2 readonly 1,1,1 - g RO,access/i1/r0,1,0 not_key/i1/r-1,1,0",
      "b 1 write 1,-1,1 nondeterministic_output - RW/kKEYS,1/n0,1,1",
      "b|y -2 - 0,0,0 - -",
    ];
    assert.deepEqual(decodeCommandTable(encodeCommandTable(rows)), rows);
    // A subcommand row without its container keeps its whole name.
    assert.deepEqual(decodeCommandTable(encodeCommandTable(["c|z 2 - 0,0,0 - g"])), [
      "c|z 2 - 0,0,0 - g",
    ]);
    const many = Array.from({ length: 63 }, (_, i) => `c${i} 1 f${i} 0,0,0 - g`);
    assert.throws(() => encodeCommandTable(many), /more than 62 values/);
    assert.throws(() => encodeCommandTable(["a 1 - 0,0,0 -"]), RangeError);
    assert.throws(() => encodeCommandTable(["a;b 1 - 0,0,0 - g"]), RangeError);
    assert.throws(() => decodeCommandTable("-;0,0,0;-;g;;a 1 00z0"), /no value for "z"/);
  });

  it("rejects malformed rows and unformattable names", () => {
    assert.throws(() => parseCommandRow("get 2"), RangeError);
    assert.throws(() => parseCommandRow("get x - 1,1,1 - string"), RangeError);
    assert.throws(() => parseCommandRow("get 2 - 1,1,1 - string RO/x1/r0,1,0"), RangeError);
    assert.throws(() => formatCommandRow(command("a b", 1, [])), RangeError);
  });
});

describe("commandKeys: index and range specs", () => {
  it("single keys, ranges, steps and negative last keys", () => {
    assert.deepEqual(keys("GET", "k"), ["k"]);
    assert.deepEqual(keys("MSET", "a", 1, "b", 2), ["a", "b"]);
    assert.deepEqual(keys("DEL", "a", "b", "c"), ["a", "b", "c"]);
    assert.deepEqual(keys("BLPOP", "a", "b", 5), ["a", "b"]);
    assert.deepEqual(keys("RENAME", "from", "to"), ["from", "to"]);
    assert.deepEqual(keys("SINTERSTORE", "d", "a", "b"), ["d", "a", "b"]);
    assert.deepEqual(commandKeyIndexes(["MSET", "a", 1, "b", 2]), [1, 3]);
  });

  it("keyless commands answer []", () => {
    assert.deepEqual(keys("PING"), []);
    assert.deepEqual(keys("CLIENT", "KILL", "ID", 7), []);
    assert.deepEqual(keys("INFO", "server"), []);
  });

  it("a wrong number of arguments finds no keys, like the server", () => {
    assert.deepEqual(keys("GET"), []);
    assert.deepEqual(keys("GET", "a", "b"), []);
    assert.deepEqual(keys("MSET", "a"), []);
  });

  it("resolves subcommands", () => {
    assert.deepEqual(keys("OBJECT", "ENCODING", "k"), ["k"]);
    assert.deepEqual(keys("MEMORY", "USAGE", "k", "SAMPLES", 5), ["k"]);
    assert.deepEqual(keys("XINFO", "STREAM", "k", "FULL"), ["k"]);
    assert.deepEqual(keys("XGROUP", "CREATE", "s", "g", "$"), ["s"]);
    assert.equal(commandInfo(["client", "kill", "ID", 7])?.name, "client|kill");
    assert.equal(commandInfo(["OBJECT"])?.name, "object");
    assert.equal(commandInfo(["OBJECT"])?.subcommands.length, 5);
  });

  it("matches names in any case and as bytes", () => {
    for (const name of ["get", "GET", "Get", "gEt"]) assert.deepEqual(keys(name, "k"), ["k"]);
    assert.deepEqual(keys(enc("get"), "k"), ["k"]);
    assert.deepEqual(keys(enc("Object"), enc("eNcOdInG"), "k"), ["k"]);
    const k = enc("binary\r\nkey");
    assert.deepEqual(keys("GET", k), [k]);
  });

  it("unknown commands and subcommands answer undefined", () => {
    assert.equal(keys("NOSUCHCOMMAND", "k"), undefined);
    assert.equal(keys("CLIENT", "NOSUCH"), undefined);
    assert.equal(keys(42, "k"), undefined);
    assert.equal(commandPolicy(["nosuch"]), undefined);
    assert.equal(commandInfo(["nosuch"]), undefined);
    assert.equal(commandKeyIndexes([]), undefined);
  });
});

describe("commandKeys: keyword specs", () => {
  it("XREAD / XREADGROUP: the first half after STREAMS", () => {
    assert.deepEqual(keys("XREAD", "COUNT", 1, "BLOCK", 0, "STREAMS", "a", "b", 0, 0), ["a", "b"]);
    assert.deepEqual(keys("xread", "streams", "a", "0"), ["a"]);
    // an odd count: the limit of 2 rounds down
    assert.deepEqual(keys("XREAD", "STREAMS", "a", "b", "c"), ["a"]);
    // a group named STREAMS: the search starts after GROUP <group> <consumer>
    assert.deepEqual(
      keys("XREADGROUP", "GROUP", "STREAMS", "c", "STREAMS", "k", ">"),
      ["k"],
    );
    assert.deepEqual(keys("XREAD", "COUNT", 1, "a", "b"), []);
  });

  it("GEORADIUS: the key and both destinations", () => {
    assert.deepEqual(keys("GEORADIUS", "k", 0, 0, 1, "km"), ["k"]);
    assert.deepEqual(
      keys("GEORADIUS", "k", 0, 0, 1, "km", "STOREDIST", "d2", "STORE", "d1"),
      ["k", "d1", "d2"],
    );
    assert.deepEqual(keys("GEORADIUSBYMEMBER", "k", "m", 1, "km", "STORE", "d"), ["k", "d"]);
  });

  it("MIGRATE: a backwards search for KEYS, then the server's finder", () => {
    assert.deepEqual(keys("MIGRATE", "h", 1, "k", 0, 10), ["k"]);
    assert.deepEqual(keys("MIGRATE", "h", 1, "", 0, 10, "COPY", "KEYS", "a", "b"), ["a", "b"]);
    // the backwards search finds the second KEYS; the finder takes the first
    assert.deepEqual(keys("MIGRATE", "h", 1, "", 0, 10, "KEYS", "KEYS", "b"), ["KEYS", "b"]);
    assert.deepEqual(
      keys("MIGRATE", "h", 1, "", 0, 10, "AUTH2", "KEYS", "pw", "KEYS", "a"),
      ["a"],
    );
    // KEYS with a key in the fixed position is refused
    assert.deepEqual(keys("MIGRATE", "h", 1, "k", 0, 10, "KEYS", "a"), []);
  });
});

describe("commandKeys: keynum specs", () => {
  it("EVAL, FCALL: numkeys keys after the count", () => {
    assert.deepEqual(keys("EVAL", "return 1", 2, "a", "b", "arg"), ["a", "b"]);
    assert.deepEqual(keys("EVALSHA_RO", "sha", "1", "a"), ["a"]);
    assert.deepEqual(keys("FCALL", "fn", 1, "k", "arg"), ["k"]);
    assert.deepEqual(keys("EVAL", "s", 0), []);
    assert.deepEqual(keys("EVAL", "s", 3, "a"), []);
    assert.deepEqual(keys("EVAL", "s", -1, "a"), []);
    assert.deepEqual(keys("EVAL", "s", "x", "a"), []);
  });

  it("counts the strict parser refuses go to the server's atoi finder", () => {
    assert.deepEqual(keys("EVAL", "s", "02", "a", "b"), ["a", "b"]);
    assert.deepEqual(keys("EVAL", "s", " 1", "a"), ["a"]);
    assert.deepEqual(keys("EVAL", "s", "1abc", "a"), ["a"]);
    assert.deepEqual(keys("EVAL", "s", 1.5, "a"), ["a"]);
    // the finder lists the destination last
    assert.deepEqual(keys("ZUNIONSTORE", "d", 2, "a", "b"), ["d", "a", "b"]);
    assert.deepEqual(keys("ZUNIONSTORE", "d", "02", "a", "b"), ["a", "b", "d"]);
  });

  it("list, sorted set and set commands with a key count", () => {
    assert.deepEqual(keys("LMPOP", 2, "a", "b", "LEFT"), ["a", "b"]);
    assert.deepEqual(keys("BLMPOP", 0, 2, "a", "b", "LEFT"), ["a", "b"]);
    assert.deepEqual(keys("ZMPOP", 1, "a", "MIN"), ["a"]);
    assert.deepEqual(keys("BZMPOP", 1.5, 1, "a", "MAX"), ["a"]);
    assert.deepEqual(keys("ZINTERCARD", 2, "a", "b", "LIMIT", 1), ["a", "b"]);
    assert.deepEqual(keys("SINTERCARD", 2, "a", "b"), ["a", "b"]);
    assert.deepEqual(keys("ZUNION", 2, "a", "b", "WITHSCORES"), ["a", "b"]);
    assert.deepEqual(keys("ZDIFFSTORE", "d", 1, "a"), ["d", "a"]);
  });
});

describe("commandKeys: the server's key finders", () => {
  it("SORT: the key and the last STORE, skipping option arguments", () => {
    assert.deepEqual(keys("SORT", "k"), ["k"]);
    assert.deepEqual(keys("SORT", "k", "STORE", "d", "LIMIT", 0, 1, "STORE", "e"), ["k", "e"]);
    assert.deepEqual(keys("SORT", "k", "LIMIT", "STORE", 1, "STORE", "d"), ["k", "d"]);
    assert.deepEqual(keys("SORT", "k", "GET", "STORE"), ["k"]);
    assert.deepEqual(keys("SORT", "k", "BY", "w_*", "store", "d"), ["k", "d"]);
    assert.deepEqual(keys("SORT_RO", "k", "BY", "w_*"), ["k"]);
  });

  it("SET and BITFIELD (variable flags)", () => {
    assert.deepEqual(keys("SET", "k", "v", "GET"), ["k"]);
    assert.deepEqual(keys("BITFIELD", "k", "GET", "u8", 0), ["k"]);
  });
});

describe("commandKeys: not_key specs", () => {
  it("shard channels only when asked for", () => {
    assert.deepEqual(keys("SPUBLISH", "ch", "m"), []);
    assert.deepEqual(commandKeys(["SPUBLISH", "ch", "m"], true), ["ch"]);
    assert.deepEqual(commandKeys(["SSUBSCRIBE", "a", "b"], true), ["a", "b"]);
    assert.deepEqual(commandKeyIndexes(["SUNSUBSCRIBE", "a"], true), [1]);
    assert.deepEqual(commandKeys(["GET", "k"], true), ["k"]);
  });
});

describe("commandPolicy", () => {
  it("request and response policies from the tips", () => {
    const del = commandPolicy(["DEL", "a"]);
    assert.equal(del?.request, "multi_shard");
    assert.equal(del?.response, "agg_sum");
    assert.equal(commandPolicy(["keys", "*"])?.request, "all_shards");
    assert.equal(commandPolicy(["keys", "*"])?.nondeterministicOutputOrder, true);
    const flush = commandPolicy(["SCRIPT", "FLUSH"]);
    assert.equal(flush?.name, "script|flush");
    assert.equal(flush?.request, "all_nodes");
    assert.equal(flush?.response, "all_succeeded");
    assert.equal(commandPolicy(["SCRIPT", "EXISTS", "x"])?.response, "agg_logical_and");
    assert.equal(commandPolicy(["WAIT", 1, 0])?.response, "agg_min");
    assert.equal(commandPolicy(["INFO"])?.response, "special");
    assert.equal(commandPolicy(["INFO"])?.nondeterministicOutput, true);
    assert.equal(commandPolicy(["GET", "k"])?.request, undefined);
    assert.equal(commandPolicy(["GET", "k"])?.response, undefined);
  });

  it("read, write, blocking, movable keys, pub/sub", () => {
    const get = commandPolicy(["GET", "k"]);
    assert.equal(get?.readonly, true);
    assert.equal(get?.write, false);
    assert.equal(get?.readsKeys, true);
    assert.equal(get?.writesKeys, false);
    assert.equal(get?.hasKeys, true);
    const set = commandPolicy(["SET", "k", "v"]);
    assert.equal(set?.readonly, false);
    assert.equal(set?.write, true);
    assert.equal(set?.writesKeys, true);
    assert.equal(commandPolicy(["MSET", "a", 1])?.readsKeys, false);
    assert.equal(commandPolicy(["BLPOP", "a", 0])?.blocking, true);
    assert.equal(commandPolicy(["EVAL", "s", 0])?.movableKeys, true);
    assert.equal(commandPolicy(["EVAL", "s", 0])?.readonly, false);
    assert.equal(commandPolicy(["EVAL_RO", "s", 0])?.readonly, true);
    assert.equal(commandPolicy(["SUBSCRIBE", "c"])?.pubsub, true);
    assert.equal(commandPolicy(["PING"])?.hasKeys, false);
    assert.equal(commandPolicy(["SPUBLISH", "c", "m"])?.hasKeys, false);
  });

  it("one shared frozen object per command", () => {
    const a = commandPolicy(["GET", "a"]);
    assert.equal(commandPolicy([enc("get"), "b"]), a);
    assert.ok(Object.isFrozen(a));
  });
});

describe("parseCommandInfo", () => {
  const resp2 = [
    "mig",
    -6,
    ["write", "movablekeys"],
    3,
    3,
    1,
    ["@keyspace"],
    ["nondeterministic_output"],
    [
      [
        "flags",
        ["RW", "access"],
        "begin_search",
        ["type", "index", "spec", ["index", 3]],
        "find_keys",
        ["type", "range", "spec", ["lastkey", 0, "keystep", 1, "limit", 0]],
      ],
      [
        "notes",
        "a note",
        "flags",
        ["RW", "incomplete"],
        "begin_search",
        ["type", "keyword", "spec", ["keyword", "KEYS", "startfrom", -2]],
        "find_keys",
        ["type", "keynum", "spec", ["keynumidx", 0, "firstkey", 1, "keystep", 1]],
      ],
      [
        "flags",
        [],
        "begin_search",
        ["type", "unknown", "spec", []],
        "find_keys",
        ["type", "unknown", "spec", []],
      ],
    ],
    [],
  ];
  const m = (...kv: unknown[]) => {
    const out = new Map();
    for (let i = 0; i < kv.length; i += 2) out.set(kv[i], kv[i + 1]);
    return out;
  };
  const resp3 = [
    enc("MIG"),
    -6,
    new Set(["write", "movablekeys"]),
    3,
    3n,
    1,
    new Set(["@keyspace"]),
    new Set(["nondeterministic_output"]),
    new Set([
      m(
        "flags",
        new Set(["RW", "access"]),
        "begin_search",
        m("type", "index", "spec", m("index", 3)),
        "find_keys",
        m("type", "range", "spec", m("lastkey", 0, "keystep", 1, "limit", 0)),
      ),
      m(
        "notes",
        "a note",
        "flags",
        new Set(["RW", "incomplete"]),
        "begin_search",
        m("type", "keyword", "spec", m("keyword", "KEYS", "startfrom", -2)),
        "find_keys",
        m("type", "keynum", "spec", m("keynumidx", 0, "firstkey", 1, "keystep", 1)),
      ),
      m(
        "flags",
        new Set(),
        "begin_search",
        m("type", "unknown"),
        "find_keys",
        m("type", "unknown"),
      ),
    ]),
    new Set(),
  ];
  const expected: CommandInfo = command("mig", -6, [
    spec({ flags: ["RW", "access"], index: 3 }),
    spec({
      flags: ["RW", "incomplete"],
      beginSearch: "keyword",
      index: 0,
      keyword: "KEYS",
      startfrom: -2,
      findKeys: "keynum",
      keystep: 1,
      firstkey: 1,
    }),
    spec({ flags: [], beginSearch: "unknown", index: 0, findKeys: "unknown", keystep: 0 }),
  ], {
    flags: ["write", "movablekeys"],
    firstKey: 3,
    lastKey: 3,
    step: 1,
    tips: ["nondeterministic_output"],
  });

  it("reads RESP2 and RESP3 entries alike", () => {
    assert.deepEqual(parseCommandInfo(resp2), expected);
    assert.deepEqual(parseCommandInfo(resp3 as never), expected);
  });

  it("reads subcommands, entries of servers before 7, and null", () => {
    const info = parseCommandInfo(["box", -2, [], 0, 0, 0, [], [], [], [[
      "box|open",
      3,
      ["readonly"],
      2,
      2,
      1,
    ]]]);
    assert.equal(info?.subcommands[0]?.name, "box|open");
    assert.deepEqual(info?.subcommands[0]?.keySpecs, []);
    assert.equal(parseCommandInfo(null), undefined);
  });

  it("rejects malformed entries with a TypeError", () => {
    assert.throws(() => parseCommandInfo("get"), TypeError);
    assert.throws(() => parseCommandInfo(["get", 2]), TypeError);
    assert.throws(() => parseCommandInfo(["get", "2", [], 1, 1, 1]), TypeError);
    assert.throws(() => parseCommandInfo(["get", 2, [], 1, 1, 1, [], [], ["odd"]]), TypeError);
    assert.throws(
      () => parseCommandInfo(["get", 2, [], 1, 1, 1, [], [], [], [null]]),
      /Cannot parse the COMMAND INFO reply/,
    );
  });
});

describe("registerCommandInfo", () => {
  it("adds a module command found at run time", () => {
    assert.equal(keys("TESTMOD.GET", "k"), undefined);
    registerCommandInfo(
      command("testmod.get", 2, [spec({ flags: ["RO"] })], { flags: ["readonly"] }),
    );
    assert.deepEqual(keys("testmod.get", "k"), ["k"]);
    assert.deepEqual(keys("TESTMOD.GET", "k"), ["k"]);
    assert.equal(commandPolicy(["TestMod.Get", "k"])?.readonly, true);
  });

  it("adds containers with their subcommands, and lone subcommands", () => {
    registerCommandInfo(command("testmod.cfg", -2, [], {
      subcommands: [command("testmod.cfg|set", -3, [spec({ index: 2, lastkey: -1, keystep: 2 })])],
    }));
    assert.deepEqual(keys("TESTMOD.CFG", "SET", "a", 1, "b", 2), ["a", "b"]);
    registerCommandInfo(command("testmod.cfg|get", 3, [spec({ index: 2 })]));
    assert.deepEqual(keys("testmod.cfg", "get", "x"), ["x"]);
    assert.equal(keys("testmod.cfg", "del", "x"), undefined);
    registerCommandInfo(command("TestMod.Mixed", -2, [], {
      subcommands: [command("TESTMOD.MIXED|Sub", 3, [spec({ index: 2 })])],
    }));
    assert.deepEqual(keys("testmod.mixed", "SUB", "k"), ["k"]);
    assert.equal(commandInfo(["TESTMOD.MIXED", "sub", "k"])?.name, "testmod.mixed|sub");
    assert.equal(commandInfo(["TESTMOD.MIXED"])?.subcommands[0]?.name, "testmod.mixed|sub");
    assert.throws(() => registerCommandInfo(command("get|sub", 2, [])), /not a known container/);
    assert.throws(() => registerCommandInfo(command("nosuchmod.x|y", 2, [])), RangeError);
    assert.throws(
      () =>
        registerCommandInfo(command("testmod.bad", -2, [], {
          subcommands: [command("other|sub", 2, [])],
        })),
      RangeError,
    );
  });

  it("evaluates keyword searches from the end and keynum specs of module commands", () => {
    registerCommandInfo(command("testmod.kw", -2, [
      spec({ beginSearch: "keyword", index: 0, keyword: "INTO", startfrom: -1, lastkey: -1 }),
    ]));
    // from the end backwards: the last INTO counts
    assert.deepEqual(keys("testmod.kw", "INTO", "a", "into", "b", "c"), ["b", "c"]);
    assert.deepEqual(keys("testmod.kw", "x"), []);
    registerCommandInfo(command("testmod.num", -2, [
      spec({ findKeys: "keynum", keynumidx: 1, firstkey: 2, keystep: 1 }),
    ]));
    assert.deepEqual(keys("testmod.num", "opt", 2, "a", "b", "rest"), ["a", "b"]);
    // no server key finder for module commands: a refused count finds nothing
    assert.deepEqual(keys("testmod.num", "opt", "02", "a", "b"), []);
  });

  it("a spec that would never advance finds nothing instead of looping", () => {
    registerCommandInfo(command("testmod.zero", -2, [spec({ lastkey: -1, keystep: 0 })]));
    assert.deepEqual(keys("testmod.zero", "a", "b"), []);
  });
});

describe("argument text", () => {
  it("the strict integer parser (string2ll)", () => {
    assert.equal(parseStrictInteger("0"), 0);
    assert.equal(parseStrictInteger("-12"), -12);
    assert.equal(parseStrictInteger(enc("34")), 34);
    assert.equal(parseStrictInteger(7), 7);
    for (const bad of ["", "-", "-0", "01", " 1", "1 ", "+1", "1a", 1.5, Infinity]) {
      assert.equal(parseStrictInteger(bad), undefined, String(bad));
    }
  });

  it("the loose integer parser (atoi)", () => {
    assert.equal(parseLooseInteger(" \t+12x"), 12);
    assert.equal(parseLooseInteger("-3"), -3);
    assert.equal(parseLooseInteger("x"), 0);
    assert.equal(parseLooseInteger(2.9), 2);
    assert.equal(parseLooseInteger(1e21), 1);
    assert.equal(parseLooseInteger(enc("05")), 5);
  });

  it("keyword tests ignore case and read bytes", () => {
    assert.ok(argIs("StReAmS", "streams"));
    assert.ok(argIs(enc("STREAMS"), "streams"));
    assert.ok(!argIs("STREAM", "streams"));
    assert.ok(!argIs(enc("STREAMZ"), "streams"));
    assert.ok(argIs(12, "12"));
    assert.ok(!argIs(undefined, "x"));
  });
});
