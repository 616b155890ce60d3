import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RespValue } from "../../../src/resp/types.ts";
import { ReplyError } from "../../../src/errors.ts";
import { enc, Recorder } from "./_recorder.ts";
import { sha1Hex } from "../../../src/commands/_sha1.ts";

function binary(...replies: RespValue[]): Recorder<Uint8Array> {
  const r = new Recorder<Uint8Array>();
  r.replies.push(...replies);
  return r;
}

describe("binary view replies (bulk strings as Uint8Array)", () => {
  it("keeps values as bytes and decodes record keys", async () => {
    const bytes = new Uint8Array([0xff, 0x0d, 0x0a, 0x00]);
    const r2 = binary([enc("f"), bytes]);
    assert.deepEqual(await r2.hgetall("h"), { f: bytes });
    const r3 = binary(new Map<RespValue, RespValue>([[enc("f"), bytes]]));
    const rec: Record<string, Uint8Array> = await r3.hgetall("h");
    assert.ok(rec["f"] instanceof Uint8Array);
    assert.deepEqual(rec["f"], bytes);
  });

  it("parses numeric bulk strings given as bytes", async () => {
    const r = binary(enc("1.5"), enc("inf"), [enc("2"), null], enc("7.25"));
    assert.equal(await r.zscore("z", "m"), 1.5);
    assert.equal(await r.zscore("z", "m"), Infinity);
    assert.deepEqual(await r.zmscore("z", "a", "b"), [2, null]);
    assert.equal(await r.incrbyfloat("k", 1), 7.25);
  });

  it("returns scored members as bytes with numeric scores", async () => {
    const r = binary([enc("a"), enc("1"), enc("b"), enc("-inf")]);
    assert.deepEqual(await r.zrangeWithScores("z", 0, -1), [
      { member: enc("a"), score: 1 },
      { member: enc("b"), score: -Infinity },
    ]);
  });

  it("decodes keys, ids and cursors to text", async () => {
    const r = binary(
      [enc("q"), enc("job")],
      [[enc("s"), [[enc("1-0"), [enc("f"), new Uint8Array([0xfe])]]]]],
      [enc("42"), [enc("k1")]],
    );
    assert.deepEqual(await r.blpop("q", 0), { key: "q", element: enc("job") });
    assert.deepEqual(await r.xread({ s: "0" }), [{
      key: "s",
      entries: [{ id: "1-0", fields: { f: new Uint8Array([0xfe]) } }],
    }]);
    assert.deepEqual(await r.scanPage(0), ["42", [enc("k1")]]);
  });

  it("parses INFO and CLIENT LIST given as bytes", async () => {
    const r = binary(enc("# CPU\r\nused_cpu_sys:1.5\r\n"), enc("id=1 name=a\n"));
    assert.deepEqual(await r.info(), { cpu: { used_cpu_sys: "1.5" } });
    assert.deepEqual(await r.clientList(), [{ id: "1", name: "a" }]);
  });
});

describe("reply transform edge cases", () => {
  it("reads RESP3 booleans, big numbers and doubles", async () => {
    const r = new Recorder();
    r.replies.push(true, false, 12n, 2.5);
    assert.equal(await r.sismember("s", "a"), true);
    assert.equal(await r.expire("k", 1), false);
    assert.equal(await r.incr("k"), 12);
    assert.equal(await r.zincrby("z", 1, "a"), 2.5);
  });

  it("rejects a reply that is not a number", async () => {
    const r = new Recorder();
    r.replies.push("not-a-number");
    await assert.rejects(r.zscore("z", "m"), TypeError);
  });

  it("rejects a reply of the wrong type", async () => {
    const r = new Recorder();
    r.replies.push(5);
    await assert.rejects(r.hgetall("h"), TypeError);
  });

  it("parses INFO lines before any section header into a default section", async () => {
    const r = new Recorder();
    r.replies.push("a:1\r\n# Stats\r\nb:2:3\r\n");
    assert.deepEqual(await r.info(), { default: { a: "1" }, stats: { b: "2:3" } });
  });
});

describe("argument validation", () => {
  it("rejects a negative blocking timeout", () => {
    const r = new Recorder();
    assert.throws(() => r.blpop("q", -1), RangeError);
    assert.throws(() => r.bzpopmin("q", NaN), RangeError);
    assert.equal(r.calls.length, 0);
  });

  it("rejects hset with a field and no value", () => {
    const r = new Recorder();
    assert.throws(() => r.hset("h", "f"), TypeError);
  });

  it("rejects xtrim without a strategy and clientKill without a filter", () => {
    const r = new Recorder();
    assert.throws(() => r.xtrim("s", {}), TypeError);
    assert.throws(() => r.clientKill({}), TypeError);
  });
});

describe("evalScript", () => {
  const script = "return redis.call('GET', KEYS[1])";
  const sha = sha1Hex(script);

  it("runs EVALSHA when the script is cached", async () => {
    const r = new Recorder();
    r.replies.push("v");
    assert.equal(await r.evalScript(script, ["k"], ["a"]), "v");
    assert.deepEqual(r.calls.map((c) => c.args), [["EVALSHA", sha, 1, "k", "a"]]);
  });

  it("falls back to EVAL on NOSCRIPT", async () => {
    const r = new Recorder();
    r.replies.push(new ReplyError("NOSCRIPT No matching script. Please use EVAL."), "v");
    assert.equal(await r.evalScript(script, ["k"]), "v");
    assert.deepEqual(r.calls.map((c) => c.args), [
      ["EVALSHA", sha, 1, "k"],
      ["EVAL", script, 1, "k"],
    ]);
  });

  it("passes other errors through", async () => {
    const r = new Recorder();
    r.replies.push(new ReplyError("WRONGTYPE Operation against a key"));
    await assert.rejects(r.evalScript(script, ["k"]), (e: unknown) => {
      assert.ok(e instanceof ReplyError);
      assert.equal(e.prefix, "WRONGTYPE");
      return true;
    });
    assert.equal(r.calls.length, 1);
  });
});

describe("sha1Hex", () => {
  it("matches known digests", () => {
    assert.equal(sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert.equal(sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert.equal(
      sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
    );
    assert.equal(sha1Hex("a".repeat(1_000_000)), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    // Redis's own digest of `return 1` (SCRIPT LOAD "return 1").
    assert.equal(sha1Hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  });

  it("hashes strings as UTF-8 and bytes as they are", () => {
    assert.equal(sha1Hex("é"), sha1Hex(new Uint8Array([0xc3, 0xa9])));
    for (const n of [55, 56, 63, 64, 65, 119, 120]) {
      assert.equal(sha1Hex("x".repeat(n)), sha1Hex(new Uint8Array(n).fill(0x78)));
    }
  });
});

describe("records with hostile keys", () => {
  it("keeps a __proto__ field as an own property", async () => {
    for (
      const reply of [
        ["__proto__", "x", "a", "1"],
        new Map<RespValue, RespValue>([["__proto__", "x"], ["a", "1"]]),
      ]
    ) {
      const r = new Recorder();
      r.replies.push(reply);
      const h = await r.hgetall("h");
      assert.equal(Object.getPrototypeOf(h), Object.prototype);
      assert.ok(Object.hasOwn(h, "__proto__"));
      assert.equal(h["__proto__"], "x");
      assert.deepEqual(Object.keys(h), ["__proto__", "a"]);
    }
    const r = new Recorder();
    r.replies.push([["1-0", ["__proto__", "p"]]], "# __proto__\r\n__proto__:1\r\n");
    const [e] = await r.xrange("s");
    assert.equal(e?.fields["__proto__"], "p");
    assert.ok(Object.hasOwn(e!.fields, "__proto__"));
    const info = await r.info();
    assert.ok(Object.hasOwn(info, "__proto__"));
    assert.equal(info["__proto__"]?.["__proto__"], "1");
  });
});
