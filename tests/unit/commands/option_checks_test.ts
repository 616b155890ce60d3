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
});
