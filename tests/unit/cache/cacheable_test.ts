// Which commands the client-side cache answers, and which keys a write drops.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  cacheableKeyOf,
  FALLBACK_CACHEABLE,
  isDeniedForCache,
  keyText,
  writtenKeys,
} from "../../../src/cache/cacheable.ts";
import { COMMAND_TABLE } from "../../../src/commands/key_spec.ts";
import { decodeCommandTable } from "../../../src/commands/_key_spec_row.ts";

const enc = new TextEncoder();

describe("cacheable commands", () => {
  it("the families of the typed reads are cacheable, keyed by their one key", () => {
    for (
      const args of [
        ["GET", "k"],
        ["HGET", "k", "f"],
        ["HGETALL", "k"],
        ["HMGET", "k", "a", "b"],
        ["SMEMBERS", "k"],
        ["SISMEMBER", "k", "m"],
        ["ZRANGE", "k", 0, -1],
        ["ZSCORE", "k", "m"],
        ["LRANGE", "k", 0, -1],
        ["STRLEN", "k"],
        ["EXISTS", "k"],
        ["XRANGE", "k", "-", "+"],
        ["GEOPOS", "k", "m"],
        ["GETBIT", "k", 3],
      ]
    ) {
      assert.equal(cacheableKeyOf(args), "k", String(args[0]));
    }
  });

  it("refuses time- and chance-dependent, blocking, keyless, multi-key and write commands", () => {
    for (
      const args of [
        ["TTL", "k"],
        ["PTTL", "k"],
        ["EXPIRETIME", "k"],
        ["OBJECT", "FREQ", "k"],
        ["OBJECT", "IDLETIME", "k"],
        ["TIME"],
        ["RANDOMKEY"],
        ["SRANDMEMBER", "k"],
        ["HRANDFIELD", "k"],
        ["ZRANDMEMBER", "k"],
        ["SPOP", "k"],
        ["BLPOP", "k", 0],
        ["MGET", "a", "b"],
        ["EXISTS", "a", "b"],
        ["LCS", "a", "b"],
        ["SET", "k", "v"],
        ["INCR", "k"],
        ["SSCAN", "k", 0],
        ["PING"],
        ["EVAL_RO", "return 1", 1, "k"],
        ["NOSUCHCOMMAND", "k"],
      ]
    ) {
      assert.equal(cacheableKeyOf(args), undefined, args.join(" "));
    }
    assert.ok(isDeniedForCache("ttl"));
    assert.ok(!isDeniedForCache("GET"));
  });

  it("matches names ignoring case", () => {
    assert.equal(cacheableKeyOf(["get", "k"]), "k");
    assert.equal(cacheableKeyOf(["ttl", "k"]), undefined);
  });

  it("keys whose name would not survive an invalidation message are not cached", () => {
    assert.equal(cacheableKeyOf(["GET", enc.encode("é")]), "é");
    assert.equal(
      cacheableKeyOf(["GET", new Uint8Array([0xff, 0xfe])]),
      undefined,
    );
    assert.equal(cacheableKeyOf(["GET", "bad\uD800"]), undefined);
    assert.equal(keyText(42), "42");
  });

  it("the static list equals what the command table derives", () => {
    const derived: string[] = [];
    for (const row of decodeCommandTable(COMMAND_TABLE)) {
      const name = row.slice(0, row.indexOf(" "));
      if (name.includes("|")) continue;
      const upper = name.toUpperCase();
      if (cacheableKeyOf([upper, "k"]) !== undefined) derived.push(upper);
    }
    assert.ok(derived.length > 40, `only ${derived.length} derived`);
    assert.deepEqual(derived.sort(), [...FALLBACK_CACHEABLE.keys()].sort());
  });

  it("writes name the keys they change; flushes change everything", () => {
    assert.deepEqual(writtenKeys(["SET", "k", "v"]), ["k"]);
    assert.deepEqual(writtenKeys(["MSET", "a", "1", "b", "2"]), ["a", "b"]);
    assert.deepEqual(writtenKeys(["DEL", "a", enc.encode("b")]), ["a", "b"]);
    assert.equal(writtenKeys(["FLUSHALL"]), "all");
    assert.equal(writtenKeys(["flushdb", "ASYNC"]), "all");
    assert.equal(writtenKeys(["GET", "k"]), undefined);
    assert.equal(writtenKeys(["PING"]), undefined);
  });
});
