// The argument checks of the typed commands, for callers the type checker does not see (plain
// JavaScript writing a peer's form): nothing a method would drop is taken silently. Each
// refusal is a TypeError naming the expected form, thrown before anything is sent.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisCommands } from "../../../src/commands/commands.ts";
import { Recorder } from "./_recorder.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** Asserts that `fn` throws a TypeError matching every pattern and that nothing was sent. */
function refused(r: Recorder, fn: () => unknown, ...patterns: RegExp[]): void {
  const before = r.calls.length;
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof TypeError, `a TypeError, got ${String(e)}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
  assert.equal(r.calls.length, before, "nothing was sent");
}

describe("command argument checks", () => {
  it("set refuses the ioredis form (EX, 60) and the node-redis form ({ EX: 60 })", () => {
    const r = new Recorder() as Any;
    refused(
      r,
      () => r.set("k", "v", "EX", 60),
      /set with 4 arguments/,
      /set\(key, value, options\?\)/,
    );
    refused(r, () => r.set("k", "v", "EX"), /the string "EX" as the options of set/, /\{ ex: 60/);
    refused(r, () => r.set("k", "v", { EX: 60 }), /`EX` of set/, /Did you mean `ex`\?/);
    refused(r, () => r.set("k", "v", { ex: 60, NX: true }), /Did you mean `nx`\?/);
    refused(r, () => r.set("k", "v", () => {}), /a function as the options of set/);
    r.set("k", "v", { ex: 60, nx: true });
    assert.deepEqual(r.calls.at(-1).args, ["SET", "k", "v", "EX", 60, "NX"]);
  });

  it("zrange refuses withScores, pointing at zrangeWithScores", () => {
    const r = new Recorder() as Any;
    refused(r, () => r.zrange("z", 0, -1, { withScores: true }), /zrangeWithScores/);
    refused(r, () => r.zrange("z", 0, -1, "WITHSCORES"), /options of zrange/);
    refused(r, () => r.zrange("z", 0, -1, { BY: "SCORE" }), /byScore: true/);
    refused(r, () => r.zunion(["a"], { withScores: true }), /zunionWithScores/);
    refused(r, () => r.zrange("z", 0, -1, { byscore: true }), /Did you mean `byScore`\?/);
  });

  it("eval and fcall refuse a key count with inline keys (the ioredis form)", () => {
    const r = new Recorder() as Any;
    refused(r, () => r.eval("return 1", 0, "x"), /key count \(0\)/, /eval\(script, \["key1"\]/);
    refused(r, () => r.evalsha("abc", 1, "k", "a"), /evalsha with 4 arguments/);
    refused(r, () => r.fcall("f", "k"), /the string "k" as the keys of fcall/);
    refused(r, () => r.eval("return 1", ["k"], "a"), /the string "a" as the arguments of eval/);
    r.eval("return 1", ["k"], ["a"]);
    assert.deepEqual(r.calls.at(-1).args, ["EVAL", "return 1", 1, "k", "a"]);
  });

  it("a callback or an extra argument is refused, not ignored", () => {
    const r = new Recorder() as Any;
    refused(r, () => r.get("k", () => {}), /get with 2 arguments: expected get\(key\)/);
    refused(r, () => r.hset("h", "f1", "v1", "f2", "v2"), /hset with 5 arguments/);
    refused(r, () => r.mset("a", "1", "b", "2"), /mset with 4 arguments/);
    refused(r, () => r.expire("k", 60, "NX"), /the string "NX" as the options of expire/);
    refused(r, () => r.scanPage(0, "MATCH", "a*"), /scanPage with 3 arguments/);
  });

  it("every method of fixed arity refuses more arguments than it takes", () => {
    const r = new Recorder() as Any;
    const proto = RedisCommands.prototype as Any;
    let checked = 0;
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === "constructor" || name.startsWith("_") || typeof proto[name] !== "function") {
        continue;
      }
      const source = String(proto[name]);
      const params = source.slice(source.indexOf("("), source.indexOf(")"));
      if (params.includes("...")) continue; // variadic: takes any number
      refused(r, () => r[name](...Array(12).fill("x")), new RegExp(`${name} with 12 arguments`));
      checked++;
    }
    assert.ok(checked > 150, `only ${checked} methods checked`);
  });

  it("an options object of unknown keys is refused on every command that takes one", () => {
    const r = new Recorder() as Any;
    const cases: [string, unknown[]][] = [
      ["getex", ["k", { EX: 1 }]],
      ["expire", ["k", 1, { NX: true }]],
      ["scanPage", [0, { MATCH: "a" }]],
      ["hscanPage", ["h", 0, { cnt: 1 }]],
      ["copy", ["a", "b", { REPLACE: true }]],
      ["sort", ["k", { ALPHA: true }]],
      ["lpos", ["k", "e", { RANK: 1 }]],
      ["zadd", ["z", { score: 1, member: "m" }, { NX: true }]],
      ["xadd", ["s", "*", { f: "v" }, { MAXLEN: 1 }]],
      ["xread", [{ s: "0" }, { COUNT: 1 }]],
      ["xtrim", ["s", { MAXLEN: 1 }]],
      ["xclaim", ["s", "g", "c", 0, ["0-1"], { justId: true }]],
      ["bitcount", ["k", { START: 0 }]],
      ["geosearch", ["k", { from: { member: "m" }, by: { radius: 1, unit: "m" }, withDist: 1 }]],
      ["flushdb", [{ ASYNC: true }]],
      ["lmpop", [["k"], "LEFT", { COUNT: 1 }]],
      ["memoryUsage", ["k", { SAMPLES: 1 }]],
    ];
    for (const [name, args] of cases) {
      refused(r, () => r[name](...args), new RegExp(`of ${name}`));
    }
  });

  it("a missing or wrongly shaped list, record or member names the method and what it expects", () => {
    const r = new Recorder() as Any;
    const byRadius = { radius: 1, unit: "m" };
    // [method, arguments, what the message says it got and expects]
    const cases: [string, unknown[], RegExp][] = [
      [
        "bitfield",
        ["k"],
        /undefined as the operations of bitfield: expected a list, e\.g\. \[\{ op/,
      ],
      ["bitfield", ["k", 1], /the number 1 as the operations of bitfield/],
      ["bitfield", ["k", [null]], /null as an operation of bitfield: expected a list/],
      // An unknown op was left out of the command (BITFIELD k with nothing of it).
      [
        "bitfield",
        ["k", [{ op: "get", type: "u8", offset: 0 }]],
        /the string "get" as the op of an operation of bitfield: expected "GET", "SET"/,
      ],
      ["lmpop", [undefined, "LEFT"], /undefined as the keys of lmpop: expected a list/],
      ["zmpop", [{ a: 1 }, "MIN"], /an object as the keys of zmpop: expected a list/],
      ["blmpop", [1], /undefined as the keys of blmpop: expected a list/],
      ["bzmpop", [1, 1, "MIN"], /the number 1 as the keys of bzmpop: expected a list/],
      ["sintercard", [1], /the number 1 as the keys of sintercard: expected a list/],
      ["zdiff", [], /undefined as the keys of zdiff: expected a list/],
      // A string or bytes is not spread into characters: ZDIFF 2 a b is not what was meant.
      ["zdiff", ["ab"], /the string "ab" as the keys of zdiff: expected a list/],
      ["lmpop", ["ab", "LEFT"], /the string "ab" as the keys of lmpop/],
      ["sintercard", [new Uint8Array([97, 98])], /as the keys of sintercard: expected a list/],
      ["zunionstore", ["d", new Set(["a"])], /as the keys of zunionstore: expected a list/],
      ["zdiffWithScores", [{}], /an object as the keys of zdiffWithScores/],
      ["zdiffstore", ["d"], /undefined as the keys of zdiffstore/],
      ["zunion", [1], /the number 1 as the keys of zunion: expected a list/],
      ["zunionWithScores", [], /undefined as the keys of zunionWithScores/],
      ["zinter", [{ k: 1 }], /an object as the keys of zinter/],
      ["zinterWithScores", [0.5], /the number 0.5 as the keys of zinterWithScores/],
      ["zunionstore", ["d"], /undefined as the keys of zunionstore/],
      ["zinterstore", ["d", 2], /the number 2 as the keys of zinterstore/],
      ["xclaim", ["s", "g", "c", 0], /undefined as the IDs of xclaim: expected a list/],
      ["xclaimJustId", ["s", "g", "c", 0, 7], /the number 7 as the IDs of xclaimJustId/],
      ["mset", [], /undefined as the pairs of mset: expected a record or \[name, value\] pairs/],
      ["mset", [[["a", "1"], { b: "2" }]], /an object as a pair of mset: expected a record/],
      // A pair is two: "k1" would destructure into MSET k 1.
      ["mset", [["k1"]], /the string "k1" as a pair of mset/],
      ["hset", ["h", [["f"]]], /as a pair of hset/],
      ["mset", [[["a", "1", "b"]]], /as a pair of mset/],
      ["msetnx", [null], /null as the pairs of msetnx: expected a record/],
      ["hset", ["h"], /undefined as the pairs of hset: expected a record or \[name, value\] pairs/],
      ["hset", ["h", [["f", "v"], 5]], /the number 5 as a pair of hset/],
      ["xadd", ["s", "*"], /undefined as the pairs of xadd: expected a record/],
      ["xadd", ["s", "*", [null]], /null as a pair of xadd/],
      ["configSet", [], /undefined as the pairs of configSet: expected a record/],
      ["configSet", [[{ maxmemory: "1mb" }]], /an object as a pair of configSet/],
      ["xread", [], /undefined as the streams of xread: expected a record or \[\{ key, id \}\]/],
      ["xread", [[{ key: "s", id: "0" }, null]], /null as a stream of xread/],
      ["xreadgroup", ["g", "c"], /undefined as the streams of xreadgroup/],
      ["zadd", ["z"], /undefined as the members of zadd: expected \{ score, member \} or a list/],
      ["zadd", ["z", [{ score: 1, member: "a" }, null]], /null as a member of zadd/],
      ["zaddIncr", ["z"], /undefined as the member of zaddIncr: expected \{ score, member \}/],
      [
        "geoadd",
        ["g"],
        /undefined as the members of geoadd: expected \{ longitude, latitude, member \}/,
      ],
      ["geoadd", ["g", [undefined]], /undefined as a member of geoadd/],
      ["evalScript", [], /undefined as the script of evalScript: expected a string/],
      ["evalScript", [1.5], /the number 1.5 as the script of evalScript: expected a string/],
      ["evalScript", [["return 1"]], /an array as the script of evalScript: expected a string/],
      ["zunion", [["a", "b"], { weights: 2 }], /the number 2 as the weights of zunion/],
      [
        "zinterstore",
        ["d", ["a"], { weights: "1" }],
        /the string "1" as the weights of zinterstore/,
      ],
      [
        "geosearch",
        ["g", { by: byRadius }],
        /undefined as the option `from` of geosearch: expected an object, e\.g\. \{ from:/,
      ],
      [
        "geosearchWith",
        ["g", { from: { member: "m" } }, { withDist: true }],
        /undefined as the option `by` of geosearchWith/,
      ],
      [
        "geosearchstore",
        ["d", "g", { from: "m", by: byRadius }],
        /the string "m" as the option `from` of geosearchstore/,
      ],
    ];
    for (const [name, args, message] of cases) {
      refused(
        r,
        () => r[name](...args),
        new RegExp(`^Cannot use .+ of ${name}: expected `),
        message,
      );
    }
  });

  it("the shape checks leave well-formed and other arguments as they were", () => {
    const r = new Recorder() as Any;
    const sent = (fn: () => unknown) => (fn(), r.calls.at(-1).args);
    assert.deepEqual(sent(() => r.mset({ a: "1" })), ["MSET", "a", "1"]);
    assert.deepEqual(sent(() => r.hset("h", [["f", "v"]])), ["HSET", "h", "f", "v"]);
    assert.deepEqual(sent(() => r.zadd("z", { score: 1, member: "a" })), ["ZADD", "z", 1, "a"]);
    assert.deepEqual(sent(() => r.zdiff(["a", "b"])), ["ZDIFF", 2, "a", "b"]);
    assert.deepEqual(sent(() => r.xread([{ key: "s", id: "0" }])), ["XREAD", "STREAMS", "s", "0"]);
    assert.deepEqual(sent(() => r.bitfield("k", [])), ["BITFIELD", "k"]);
    // A throwing getter is the caller's own error, not a shape error.
    const boom = new Error("boom");
    const pairs = Object.defineProperty({}, "a", {
      enumerable: true,
      get: () => {
        throw boom;
      },
    });
    assert.throws(() => r.mset(pairs), (e: unknown) => e === boom);
    assert.throws(() => r.xread(pairs), (e: unknown) => e === boom);
  });
});
