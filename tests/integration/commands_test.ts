// Every command family against a real redis-server, over RESP3 and RESP2.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient, ReplyError } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";
import { sha1Hex } from "../../src/commands/_sha1.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("typed commands against a real redis-server", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const protocol of [3, 2] as const) {
    describe(`RESP${protocol}`, () => {
      // Each protocol gets its own database so that FLUSHDB in one does not disturb the other.
      const db = protocol === 3 ? 0 : 1;
      let c: RedisClient;
      before(async () => {
        c = new RedisClient({ url: `${server.url}/${db}`, protocol });
        await c.flushdb();
      });
      after(async () => {
        await c.close();
        await assertNoLeaks();
      });

      it("strings", async () => {
        assert.equal(await c.set("s:a", "1"), "OK");
        assert.equal(await c.set("s:a", "2", { nx: true }), null);
        assert.equal(await c.set("s:a", "2", { xx: true, get: true }), "1");
        assert.equal(await c.set("s:ttl", "x", { px: 50_000 }), "OK");
        assert.ok((await c.pttl("s:ttl")) > 49_000);
        assert.equal(await c.set("s:ttl", "y", { keepttl: true }), "OK");
        assert.ok((await c.ttl("s:ttl")) > 40);
        assert.equal(await c.mset({ "s:m1": "a", "s:m2": 2 }), "OK");
        assert.deepEqual(await c.mget("s:m1", "s:m2", "s:none"), ["a", "2", null]);
        assert.equal(await c.msetnx([["s:m1", "z"], ["s:m3", "z"]]), false);
        assert.equal(await c.msetnx({ "s:m3": "z" }), true);
        assert.equal(await c.setnx("s:m3", "q"), false);
        assert.equal(await c.setex("s:ex", 100, "v"), "OK");
        assert.equal(await c.psetex("s:pex", 100_000, "v"), "OK");
        assert.equal(await c.getset("s:ex", "w"), "v");
        assert.equal(await c.getdel("s:ex"), "w");
        assert.equal(await c.get("s:ex"), null);
        assert.equal(await c.getex("s:pex", { persist: true }), "v");
        assert.equal(await c.ttl("s:pex"), -1);
        assert.equal(await c.append("s:app", "ab"), 2);
        assert.equal(await c.append("s:app", "cd"), 4);
        assert.equal(await c.strlen("s:app"), 4);
        assert.equal(await c.getrange("s:app", 1, 2), "bc");
        assert.equal(await c.setrange("s:app", 1, "XY"), 4);
        assert.equal(await c.get("s:app"), "aXYd");
        assert.equal(await c.incr("s:n"), 1);
        assert.equal(await c.incrby("s:n", 10), 11);
        assert.equal(await c.decr("s:n"), 10);
        assert.equal(await c.decrby("s:n", 4), 6);
        assert.equal(await c.incrbyfloat("s:n", 0.5), 6.5);
        await c.mset({ "s:l1": "ohmytext", "s:l2": "mynewtext" });
        assert.equal(await c.lcs("s:l1", "s:l2"), "mytext");
        assert.equal(await c.lcsLen("s:l1", "s:l2"), 6);
        const idx = await c.lcsIdx("s:l1", "s:l2", { withMatchLen: true });
        assert.equal(idx.len, 6);
        assert.deepEqual(idx.matches[0], { key1: [4, 7], key2: [5, 8], length: 4 });
      });

      it("keys", async () => {
        await c.mset({ "k:a": "1", "k:b": "2" });
        assert.equal(await c.exists("k:a", "k:b", "k:none", "k:a"), 3);
        assert.equal(await c.expire("k:a", 100), true);
        assert.equal(await c.expire("k:a", 200, { nx: true }), false);
        assert.equal(await c.expire("k:a", 300, { gt: true }), true);
        assert.ok((await c.expiretime("k:a")) > Date.now() / 1000);
        assert.ok((await c.pexpiretime("k:a")) > Date.now());
        assert.equal(await c.pexpire("k:b", 100_000), true);
        assert.equal(await c.persist("k:b"), true);
        assert.equal(await c.expireat("k:b", Math.floor(Date.now() / 1000) + 100), true);
        assert.equal(await c.pexpireat("k:b", Date.now() + 100_000), true);
        assert.equal(await c.ttl("k:none"), -2);
        assert.equal(await c.type("k:a"), "string");
        assert.equal(await c.type("k:none"), "none");
        assert.equal(await c.rename("k:a", "k:c"), "OK");
        assert.equal(await c.renamenx("k:c", "k:b"), false);
        assert.deepEqual((await c.keys("k:*")).sort(), ["k:b", "k:c"]);
        assert.notEqual(await c.randomkey(), null);
        assert.equal(await c.touch("k:b", "k:c", "k:none"), 2);
        assert.equal(await c.copy("k:b", "k:d"), true);
        assert.equal(await c.copy("k:b", "k:d"), false);
        assert.equal(await c.copy("k:b", "k:d", { replace: true }), true);
        await c.set("k:int", 12345);
        assert.equal(await c.objectEncoding("k:int"), "int");
        assert.equal(await c.objectEncoding("k:none"), null);
        assert.equal(typeof await c.objectIdletime("k:int"), "number");
        assert.ok((await c.objectRefcount("k:int"))! >= 1);
        const dumped = await c.dump("k:b");
        assert.ok(dumped instanceof Uint8Array);
        assert.equal(await c.dump("k:none"), null);
        assert.equal(await c.restore("k:restored", 0, dumped), "OK");
        assert.equal(await c.get("k:restored"), "2");
        await assert.rejects(c.restore("k:restored", 0, dumped), ReplyError);
        assert.equal(await c.restore("k:restored", 0, dumped, { replace: true }), "OK");
        assert.equal(await c.unlink("k:restored", "k:d"), 2);
        assert.equal(await c.del("k:b", "k:c", "k:none"), 2);
        await c.rpush("k:sort", "3", "1", "2");
        await c.mset({ "k:w_1": "c", "k:w_2": "b", "k:w_3": "a" });
        assert.deepEqual(await c.sort("k:sort"), ["1", "2", "3"]);
        assert.deepEqual(
          await c.sort("k:sort", { order: "DESC", limit: { offset: 0, count: 2 } }),
          [
            "3",
            "2",
          ],
        );
        assert.deepEqual(await c.sort("k:sort", { by: "k:w_*", alpha: true }), ["3", "2", "1"]);
        assert.deepEqual(await c.sort("k:sort", { get: ["#", "k:w_*"] }), [
          "1",
          "c",
          "2",
          "b",
          "3",
          "a",
        ]);
        assert.equal(await c.sortStore("k:sort", "k:sorted"), 3);
        assert.deepEqual(await c.lrange("k:sorted", 0, -1), ["1", "2", "3"]);
        // SCAN pages until the cursor comes back to "0".
        for (let i = 0; i < 50; i++) await c.set(`k:scan:${i}`, i);
        await c.hset("k:scanhash", "f", "v");
        const seen = new Set<string>();
        let cursor = "0";
        do {
          const [next, keys] = await c.scanPage(cursor, { match: "k:scan*", count: 10 });
          for (const k of keys) seen.add(k);
          cursor = next;
        } while (cursor !== "0");
        assert.equal(seen.size, 51);
        const hashes: string[] = [];
        cursor = "0";
        do {
          const [next, keys] = await c.scanPage(cursor, { type: "hash", count: 100 });
          hashes.push(...keys);
          cursor = next;
        } while (cursor !== "0");
        assert.deepEqual(hashes, ["k:scanhash"]);
      });

      it("hashes", async () => {
        assert.equal(await c.hset("h", "a", "1"), 1);
        assert.equal(await c.hset("h", { b: "2", c: 3 }), 2);
        assert.equal(await c.hset("h", [["a", "one"]]), 0);
        assert.equal(await c.hsetnx("h", "a", "x"), false);
        assert.equal(await c.hsetnx("h", "d", "4"), true);
        assert.equal(await c.hget("h", "a"), "one");
        assert.equal(await c.hget("h", "z"), null);
        assert.deepEqual(await c.hmget("h", "a", "z", "c"), ["one", null, "3"]);
        assert.deepEqual(await c.hgetall("h"), { a: "one", b: "2", c: "3", d: "4" });
        assert.deepEqual(await c.hgetall("h:none"), {});
        assert.equal(await c.hexists("h", "a"), true);
        assert.equal(await c.hexists("h", "z"), false);
        assert.equal(await c.hincrby("h", "c", 7), 10);
        assert.equal(await c.hincrbyfloat("h", "c", 0.25), 10.25);
        assert.deepEqual((await c.hkeys("h")).sort(), ["a", "b", "c", "d"]);
        assert.deepEqual((await c.hvals("h")).sort(), ["10.25", "2", "4", "one"]);
        assert.equal(await c.hlen("h"), 4);
        assert.equal(await c.hstrlen("h", "a"), 3);
        assert.ok(["a", "b", "c", "d"].includes((await c.hrandfield("h"))!));
        assert.equal(await c.hrandfield("h:none"), null);
        assert.equal((await c.hrandfield("h", 2)).length, 2);
        const pairs = await c.hrandfieldWithValues("h", 4);
        assert.equal(pairs.length, 4);
        const all = await c.hgetall("h");
        for (const [f, v] of pairs) assert.equal(all[f], v);
        assert.equal(await c.hdel("h", "a", "b", "z"), 2);
        const scanned: Record<string, string> = {};
        let cursor = "0";
        do {
          const [next, entries] = await c.hscanPage("h", cursor, { count: 1 });
          for (const [f, v] of entries) scanned[f] = v;
          cursor = next;
        } while (cursor !== "0");
        assert.deepEqual(scanned, { c: "10.25", d: "4" });
      });

      it("lists", async () => {
        assert.equal(await c.lpushx("l", "x"), 0);
        assert.equal(await c.rpush("l", "a", "b", "c"), 3);
        assert.equal(await c.lpush("l", "z"), 4);
        assert.equal(await c.rpushx("l", "d"), 5);
        assert.equal(await c.lpushx("l", "y"), 6);
        assert.deepEqual(await c.lrange("l", 0, -1), ["y", "z", "a", "b", "c", "d"]);
        assert.equal(await c.llen("l"), 6);
        assert.equal(await c.lindex("l", -1), "d");
        assert.equal(await c.lindex("l", 99), null);
        assert.equal(await c.lset("l", 0, "Y"), "OK");
        assert.equal(await c.linsert("l", "AFTER", "a", "a2"), 7);
        assert.equal(await c.linsert("l", "BEFORE", "nope", "x"), -1);
        assert.equal(await c.lpos("l", "a2"), 3);
        assert.equal(await c.lpos("l", "nope"), null);
        await c.rpush("l", "a", "a");
        assert.deepEqual(await c.lposCount("l", "a", 0), [2, 7, 8]);
        assert.equal(await c.lpos("l", "a", { rank: -1 }), 8);
        assert.equal(await c.lrem("l", -2, "a"), 2);
        assert.equal(await c.lpop("l"), "Y");
        assert.deepEqual(await c.lpop("l", 2), ["z", "a"]);
        assert.equal(await c.rpop("l"), "d");
        assert.deepEqual(await c.rpop("l", 1), ["c"]);
        assert.equal(await c.lpop("l:none"), null);
        assert.equal(await c.lpop("l:none", 2), null);
        assert.equal(await c.ltrim("l", 0, 0), "OK");
        assert.deepEqual(await c.lrange("l", 0, -1), ["a2"]);
        assert.equal(await c.lmove("l", "l2", "LEFT", "RIGHT"), "a2");
        assert.equal(await c.lmove("l", "l2", "LEFT", "RIGHT"), null);
        await c.rpush("l3", "1", "2", "3");
        assert.deepEqual(await c.lmpop(["l:none", "l3"], "RIGHT", { count: 2 }), {
          key: "l3",
          elements: ["3", "2"],
        });
        assert.equal(await c.lmpop(["l:none"], "LEFT"), null);
      });

      it("blocking list commands", async () => {
        const t0 = Date.now();
        assert.equal(await c.blpop("bl:none", 0.1), null);
        assert.ok(Date.now() - t0 >= 90);
        assert.equal(await c.brpop(["bl:none", "bl:none2"], 0.05), null);
        const waiting = c.blpop(["bl:none", "bl:q"], 0);
        await c.rpush("bl:q", "job");
        assert.deepEqual(await waiting, { key: "bl:q", element: "job" });
        await c.rpush("bl:q", "1", "2");
        assert.deepEqual(await c.brpop("bl:q", 1), { key: "bl:q", element: "2" });
        assert.equal(await c.blmove("bl:q", "bl:d", "LEFT", "LEFT", 1), "1");
        assert.equal(await c.blmove("bl:q", "bl:d", "LEFT", "LEFT", 0.05), null);
        assert.equal(await c.brpoplpush("bl:d", "bl:q", 1), "1");
        assert.equal(await c.brpoplpush("bl:d", "bl:q", 0.05), null);
        assert.deepEqual(await c.blmpop(1, ["bl:q"], "LEFT", { count: 5 }), {
          key: "bl:q",
          elements: ["1"],
        });
        assert.equal(await c.blmpop(0.05, ["bl:q"], "LEFT"), null);
      });

      it("sets", async () => {
        assert.equal(await c.sadd("set:a", "1", "2", "3"), 3);
        assert.equal(await c.sadd("set:b", "2", "3", "4"), 3);
        assert.deepEqual((await c.smembers("set:a")).sort(), ["1", "2", "3"]);
        assert.equal(await c.sismember("set:a", "1"), true);
        assert.equal(await c.sismember("set:a", "9"), false);
        assert.deepEqual(await c.smismember("set:a", "1", "9"), [true, false]);
        assert.equal(await c.scard("set:a"), 3);
        assert.deepEqual((await c.sinter("set:a", "set:b")).sort(), ["2", "3"]);
        assert.equal(await c.sintercard(["set:a", "set:b"]), 2);
        assert.equal(await c.sintercard(["set:a", "set:b"], { limit: 1 }), 1);
        assert.equal(await c.sinterstore("set:i", "set:a", "set:b"), 2);
        assert.deepEqual((await c.sunion("set:a", "set:b")).sort(), ["1", "2", "3", "4"]);
        assert.equal(await c.sunionstore("set:u", "set:a", "set:b"), 4);
        assert.deepEqual(await c.sdiff("set:a", "set:b"), ["1"]);
        assert.equal(await c.sdiffstore("set:d", "set:a", "set:b"), 1);
        assert.equal(await c.smove("set:a", "set:b", "1"), true);
        assert.equal(await c.smove("set:a", "set:b", "1"), false);
        assert.equal(await c.srem("set:b", "1", "9"), 1);
        assert.ok(["2", "3", "4"].includes((await c.srandmember("set:b"))!));
        assert.equal((await c.srandmember("set:b", -5)).length, 5);
        assert.equal(await c.srandmember("set:none"), null);
        const popped = await c.spop("set:u");
        assert.ok(popped !== null && ["1", "2", "3", "4"].includes(popped));
        assert.equal((await c.spop("set:u", 2)).length, 2);
        assert.equal(await c.scard("set:u"), 1);
        const seen: string[] = [];
        let cursor = "0";
        do {
          const [next, members] = await c.sscanPage("set:b", cursor);
          seen.push(...members);
          cursor = next;
        } while (cursor !== "0");
        assert.deepEqual(seen.sort(), ["2", "3", "4"]);
      });

      it("sorted sets", async () => {
        assert.equal(
          await c.zadd("z", [
            { score: 1, member: "a" },
            { score: 2, member: "b" },
            { score: 3, member: "c" },
          ]),
          3,
        );
        assert.equal(await c.zadd("z", { score: -Infinity, member: "min" }), 1);
        assert.equal(await c.zadd("z", { score: 5, member: "a" }, { gt: true, ch: true }), 1);
        assert.equal(await c.zadd("z", { score: 1, member: "a" }, { gt: true, ch: true }), 0);
        assert.equal(await c.zaddIncr("z", { score: 1, member: "a" }), 6);
        assert.equal(await c.zaddIncr("z", { score: 1, member: "a" }, { nx: true }), null);
        assert.equal(await c.zincrby("z", 0.5, "b"), 2.5);
        assert.equal(await c.zscore("z", "b"), 2.5);
        assert.equal(await c.zscore("z", "min"), -Infinity);
        assert.equal(await c.zscore("z", "none"), null);
        assert.deepEqual(await c.zmscore("z", "a", "none"), [6, null]);
        assert.equal(await c.zrank("z", "min"), 0);
        assert.equal(await c.zrevrank("z", "a"), 0);
        assert.equal(await c.zrank("z", "none"), null);
        assert.equal(await c.zcard("z"), 4);
        assert.equal(await c.zcount("z", "(2.5", Infinity), 2);
        assert.deepEqual(await c.zrange("z", 0, -1), ["min", "b", "c", "a"]);
        assert.deepEqual(await c.zrange("z", 0, 1, { rev: true }), ["a", "c"]);
        assert.deepEqual(
          await c.zrange("z", Infinity, 2, {
            byScore: true,
            rev: true,
            limit: { offset: 0, count: 2 },
          }),
          ["a", "c"],
        );
        assert.deepEqual(await c.zrangeWithScores("z", 0, -1), [
          { member: "min", score: -Infinity },
          { member: "b", score: 2.5 },
          { member: "c", score: 3 },
          { member: "a", score: 6 },
        ]);
        await c.zadd("zl", ["a", "b", "c", "d"].map((m) => ({ score: 0, member: m })));
        assert.equal(await c.zlexcount("zl", "[b", "+"), 3);
        assert.deepEqual(await c.zrange("zl", "(a", "[c", { byLex: true }), ["b", "c"]);
        assert.equal(await c.zrangestore("z2", "z", 1, 2), 2);
        assert.deepEqual(await c.zrange("z2", 0, -1), ["b", "c"]);
        assert.equal(await c.zremrangebylex("zl", "-", "[b"), 2);
        assert.equal(await c.zremrangebyrank("zl", 0, 0), 1);
        assert.equal(await c.zremrangebyscore("z2", -Infinity, 2.5), 1);
        assert.equal(await c.zrem("z2", "c", "none"), 1);
        assert.deepEqual(await c.zpopmin("z"), { member: "min", score: -Infinity });
        assert.deepEqual(await c.zpopmax("z", 2), [
          { member: "a", score: 6 },
          { member: "c", score: 3 },
        ]);
        assert.equal(await c.zpopmin("z:none"), null);
        assert.deepEqual(await c.zpopmin("z:none", 2), []);
        assert.equal(await c.zrandmember("z"), "b");
        assert.deepEqual(await c.zrandmember("z", 1), ["b"]);
        assert.deepEqual(await c.zrandmemberWithScores("z", 1), [{ member: "b", score: 2.5 }]);
        await c.zadd("za", [{ score: 1, member: "x" }, { score: 2, member: "y" }]);
        await c.zadd("zb", [{ score: 10, member: "y" }, { score: 20, member: "w" }]);
        assert.deepEqual(await c.zunion(["za", "zb"]), ["x", "y", "w"]);
        assert.deepEqual(await c.zunionWithScores(["za", "zb"], { aggregate: "MAX" }), [
          { member: "x", score: 1 },
          { member: "y", score: 10 },
          { member: "w", score: 20 },
        ]);
        assert.deepEqual(await c.zinter(["za", "zb"]), ["y"]);
        assert.deepEqual(await c.zinterWithScores(["za", "zb"], { weights: [2, 1] }), [
          { member: "y", score: 14 },
        ]);
        assert.deepEqual(await c.zdiff(["za", "zb"]), ["x"]);
        assert.deepEqual(await c.zdiffWithScores(["za", "zb"]), [{ member: "x", score: 1 }]);
        assert.equal(await c.zunionstore("zu", ["za", "zb"]), 3);
        assert.equal(await c.zinterstore("zi", ["za", "zb"], { aggregate: "MIN" }), 1);
        assert.equal(await c.zscore("zi", "y"), 2);
        assert.equal(await c.zdiffstore("zd", ["za", "zb"]), 1);
        assert.deepEqual(await c.zmpop(["z:none", "zu"], "MAX", { count: 2 }), {
          key: "zu",
          members: [{ member: "w", score: 20 }, { member: "y", score: 12 }],
        });
        assert.equal(await c.zmpop(["z:none"], "MIN"), null);
        assert.deepEqual(await c.bzpopmin(["z:none", "za"], 1), {
          key: "za",
          member: "x",
          score: 1,
        });
        assert.deepEqual(await c.bzpopmax("za", 1), { key: "za", member: "y", score: 2 });
        assert.equal(await c.bzpopmax("za", 0.05), null);
        assert.deepEqual(await c.bzmpop(1, ["zb"], "MIN"), {
          key: "zb",
          members: [{ member: "y", score: 10 }],
        });
        assert.equal(await c.bzmpop(0.05, ["z:none"], "MIN"), null);
        const scanned: { member: string; score: number }[] = [];
        let cursor = "0";
        do {
          const [next, page] = await c.zscanPage("zb", cursor);
          scanned.push(...page);
          cursor = next;
        } while (cursor !== "0");
        assert.deepEqual(scanned, [{ member: "w", score: 20 }]);
      });

      it("streams", async () => {
        const id1 = await c.xadd("st", "*", { a: "1", b: "2" });
        assert.match(id1!, /^\d+-\d+$/);
        const id2 = await c.xadd("st", "*", [["a", "3"]]);
        assert.equal(await c.xadd("st:none", "*", { a: 1 }, { nomkstream: true }), null);
        assert.equal(await c.xlen("st"), 2);
        assert.deepEqual(await c.xrange("st"), [
          { id: id1, fields: { a: "1", b: "2" } },
          { id: id2, fields: { a: "3" } },
        ]);
        assert.deepEqual(await c.xrevrange("st", "+", "-", { count: 1 }), [
          { id: id2, fields: { a: "3" } },
        ]);
        assert.deepEqual(await c.xread({ st: id1! }), [
          { key: "st", entries: [{ id: id2, fields: { a: "3" } }] },
        ]);
        assert.equal(await c.xread({ st: "$" }, { block: 50 }), null);
        // From id2, not "$": the XADD may reach the server before the XREAD on its pooled connection.
        const later = c.xread([{ key: "st", id: id2! }], { block: 0 });
        await new Promise((r) => setTimeout(r, 20));
        const id3 = await c.xadd("st", "*", { late: "yes" });
        assert.deepEqual(await later, [
          { key: "st", entries: [{ id: id3, fields: { late: "yes" } }] },
        ]);
        assert.equal(await c.xgroupCreate("st", "g", "0"), "OK");
        assert.equal(await c.xgroupCreate("st:new", "g", "$", { mkstream: true }), "OK");
        assert.equal(await c.xgroupCreateConsumer("st", "g", "c1"), true);
        const read = await c.xreadgroup("g", "c1", { st: ">" }, { count: 2 });
        assert.deepEqual(read?.[0]?.entries.map((e) => e.id), [id1, id2]);
        assert.equal(
          await c.xreadgroup("g", "c1", { st: ">" }, { count: 5, block: 50 })
            .then((r) => r?.[0]?.entries.length),
          1,
        );
        assert.equal(await c.xreadgroup("g", "c1", { st: ">" }, { block: 50 }), null);
        const summary = await c.xpending("st", "g");
        assert.equal(summary.count, 3);
        assert.equal(summary.minId, id1);
        assert.deepEqual(summary.consumers, [{ name: "c1", pending: 3 }]);
        const detail = await c.xpendingRange("st", "g", { count: 10 });
        assert.deepEqual(detail.map((p) => [p.id, p.consumer, p.deliveries]), [
          [id1, "c1", 1],
          [id2, "c1", 1],
          [id3, "c1", 1],
        ]);
        assert.equal(await c.xack("st", "g", id1!), 1);
        const claimed = await c.xclaim("st", "g", "c2", 0, [id2!]);
        assert.deepEqual(claimed, [{ id: id2, fields: { a: "3" } }]);
        assert.deepEqual(await c.xclaimJustId("st", "g", "c2", 0, [id3!]), [id3]);
        const auto = await c.xautoclaim("st", "g", "c3", 0, "0-0", { count: 1 });
        assert.deepEqual(auto.entries, [{ id: id2, fields: { a: "3" } }]);
        assert.deepEqual(auto.deleted, []);
        const autoIds = await c.xautoclaimJustId("st", "g", "c3", 0, auto.next);
        assert.deepEqual(autoIds.ids, [id3]);
        assert.equal(autoIds.next, "0-0");
        const info = await c.xinfoStream("st");
        assert.equal(info["length"], 3);
        assert.deepEqual(info["first-entry"], { id: id1, fields: { a: "1", b: "2" } });
        const groups = await c.xinfoGroups("st");
        assert.equal(groups[0]?.["name"], "g");
        assert.equal(groups[0]?.["pending"], 2);
        const consumers = await c.xinfoConsumers("st", "g");
        assert.deepEqual(consumers.map((x) => x["name"]).sort(), ["c1", "c2", "c3"]);
        assert.equal(await c.xgroupDelConsumer("st", "g", "c3"), 2);
        assert.equal(await c.xgroupSetId("st", "g", "0"), "OK");
        assert.equal(await c.xdel("st", id1!), 1);
        assert.equal(await c.xtrim("st", { maxlen: 1 }), 1);
        assert.equal(await c.xadd("st", "*", { a: 1 }, { maxlen: 1 }) !== null, true);
        assert.equal(await c.xlen("st"), 1);
        assert.equal(await c.xtrim("st", { minid: "0-1", approximate: true, limit: 10 }), 0);
        assert.equal(await c.xgroupDestroy("st", "g"), true);
        assert.equal(await c.xgroupDestroy("st", "g"), false);
      });

      it("bitmaps and HyperLogLog", async () => {
        assert.equal(await c.setbit("bits", 7, 1), 0);
        assert.equal(await c.setbit("bits", 7, 1), 1);
        assert.equal(await c.getbit("bits", 7), 1);
        assert.equal(await c.getbit("bits", 6), 0);
        await c.set("bits2", new Uint8Array([0xff, 0xf0, 0x00]));
        assert.equal(await c.bitcount("bits"), 1);
        assert.equal(await c.bitcount("bits2", { start: 0, end: 0 }), 8);
        assert.equal(await c.bitcount("bits2", { start: 0, end: 3, mode: "BIT" }), 4);
        assert.equal(await c.bitpos("bits", 1), 7);
        assert.equal(await c.bitpos("bits2", 0, { start: 1 }), 12);
        assert.equal(await c.bitop("OR", "bits3", "bits", "bits2"), 3);
        assert.deepEqual(
          await c.bitfield("bf", [
            { op: "SET", type: "u8", offset: 0, value: 200 },
            { op: "GET", type: "u8", offset: 0 },
            { op: "OVERFLOW", behavior: "SAT" },
            { op: "INCRBY", type: "u8", offset: 0, increment: 100 },
            { op: "OVERFLOW", behavior: "FAIL" },
            { op: "INCRBY", type: "u8", offset: 0, increment: 1 },
          ]),
          [0, 200, 255, null],
        );
        assert.equal(await c.pfadd("hll", "a", "b", "c"), true);
        assert.equal(await c.pfadd("hll", "a"), false);
        await c.pfadd("hll2", "c", "d");
        assert.equal(await c.pfcount("hll"), 3);
        assert.equal(await c.pfcount("hll", "hll2"), 4);
        assert.equal(await c.pfmerge("hll3", "hll", "hll2"), "OK");
        assert.equal(await c.pfcount("hll3"), 4);
      });

      it("geo", async () => {
        assert.equal(
          await c.geoadd("geo", [
            { longitude: 13.361389, latitude: 38.115556, member: "Palermo" },
            { longitude: 15.087269, latitude: 37.502669, member: "Catania" },
          ]),
          2,
        );
        const d = await c.geodist("geo", "Palermo", "Catania", "km");
        assert.ok(d !== null && Math.abs(d - 166.2742) < 0.001);
        assert.equal(await c.geodist("geo", "Palermo", "nowhere"), null);
        assert.deepEqual(await c.geohash("geo", "Palermo", "nowhere"), ["sqc8b49rny0", null]);
        const [p, none] = await c.geopos("geo", "Palermo", "nowhere");
        assert.ok(p && Math.abs(p.longitude - 13.361389) < 1e-5);
        assert.ok(Math.abs(p.latitude - 38.115556) < 1e-5);
        assert.equal(none, null);
        assert.deepEqual(
          await c.geosearch("geo", {
            from: { longitude: 15, latitude: 37 },
            by: { radius: 200, unit: "km" },
            order: "ASC",
          }),
          ["Catania", "Palermo"],
        );
        const withAll = await c.geosearchWith("geo", {
          from: { member: "Palermo" },
          by: { width: 400, height: 400, unit: "km" },
          order: "DESC",
          count: 1,
        }, { withDist: true, withHash: true, withCoord: true });
        assert.equal(withAll.length, 1);
        assert.equal(withAll[0]?.member, "Catania");
        assert.ok(Math.abs(withAll[0]!.distance! - 166.2742) < 0.001);
        assert.equal(typeof withAll[0]?.hash, "number");
        assert.ok(Math.abs(withAll[0]!.coordinates!.longitude - 15.087269) < 1e-5);
        assert.equal(
          await c.geosearchstore("geo2", "geo", {
            from: { member: "Palermo" },
            by: { radius: 10, unit: "km" },
          }),
          1,
        );
        assert.equal(
          await c.geosearchstore("geo3", "geo", {
            from: { member: "Palermo" },
            by: { radius: 500, unit: "km" },
            storeDist: true,
          }),
          2,
        );
        assert.ok(Math.abs((await c.zscore("geo3", "Catania"))! - 166.2742) < 0.001);
      });

      it("scripting and functions", async () => {
        assert.equal(await c.eval("return 1"), 1);
        assert.deepEqual(await c.eval("return {KEYS[1], ARGV[1]}", ["k"], ["v"]), ["k", "v"]);
        await c.set("sc:k", "val");
        assert.equal(await c.evalRo("return redis.call('GET', KEYS[1])", ["sc:k"]), "val");
        assert.equal(await c.scriptFlush({ async: false }), "OK");
        const script = `return redis.call('GET', KEYS[1]) .. '${protocol}'`;
        const sha = await c.scriptLoad(script);
        assert.match(sha, /^[0-9a-f]{40}$/);
        assert.deepEqual(await c.scriptExists(sha, "0".repeat(40)), [true, false]);
        assert.equal(await c.evalsha(sha, ["sc:k"]), `val${protocol}`);
        assert.equal(await c.evalshaRo(sha, ["sc:k"]), `val${protocol}`);
        await assert.rejects(c.evalsha("0".repeat(40)), (e: unknown) => {
          assert.ok(e instanceof ReplyError);
          assert.equal(e.prefix, "NOSCRIPT");
          return true;
        });
        // evalScript: NOSCRIPT -> EVAL, then the script is cached and EVALSHA works.
        await c.scriptFlush();
        const fresh = `return 'fresh' .. ARGV[1]`;
        assert.equal(await c.evalScript(fresh, [], ["!"]), "fresh!");
        assert.deepEqual(await c.scriptExists(sha1Hex(fresh)), [true]);
        assert.equal(await c.scriptLoad(fresh), sha1Hex(fresh));
        assert.equal(await c.evalScript(fresh, [], ["?"]), "fresh?");

        await c.functionFlush();
        const lib = "#!lua name=testlib\n" +
          "redis.register_function('echo1', function(keys, args) return args[1] end)\n" +
          "redis.register_function{function_name='get1', callback=function(keys) " +
          "return redis.call('GET', keys[1]) end, flags={'no-writes'}}\n";
        assert.equal(await c.functionLoad(lib), "testlib");
        await assert.rejects(c.functionLoad(lib), ReplyError);
        assert.equal(await c.functionLoad(lib, { replace: true }), "testlib");
        assert.equal(await c.fcall("echo1", [], ["hi"]), "hi");
        assert.equal(await c.fcallRo("get1", ["sc:k"]), "val");
        const libs = await c.functionList({ withCode: true });
        assert.equal(libs.length, 1);
        assert.equal(libs[0]?.libraryName, "testlib");
        assert.equal(libs[0]?.engine, "LUA");
        assert.equal(libs[0]?.libraryCode, lib);
        const fns = [...libs[0]!.functions].sort((a, b) => a.name.localeCompare(b.name));
        assert.deepEqual(fns, [
          { name: "echo1", description: null, flags: [] },
          { name: "get1", description: null, flags: ["no-writes"] },
        ]);
        assert.deepEqual(await c.functionList({ libraryName: "nope*" }), []);
        assert.equal(await c.functionDelete("testlib"), "OK");
        assert.equal(await c.functionFlush({ async: true }), "OK");
      });

      it("server and connection", async () => {
        assert.equal(await c.ping(), "PONG");
        assert.equal(await c.ping("hello"), "hello");
        assert.equal(await c.echo("e\r\nx"), "e\r\nx");
        const info = await c.info();
        assert.equal(info["server"]?.["redis_version"]?.split(".")[0], "7");
        assert.ok(info["keyspace"] !== undefined);
        const mem = await c.info("memory");
        assert.ok(mem["memory"]?.["used_memory"] !== undefined);
        assert.equal(mem["server"], undefined);
        await c.set("srv:k", "v");
        assert.ok((await c.dbsize()) >= 1);
        const t = await c.time();
        assert.ok(Math.abs(t.seconds - Date.now() / 1000) < 60);
        assert.ok(t.microseconds >= 0 && t.microseconds < 1_000_000);
        assert.equal(typeof await c.lastsave(), "number");
        const id = await c.clientId();
        assert.ok(id > 0);
        assert.equal(await c.clientSetName(`cmd-test-${protocol}`), "OK");
        assert.equal(await c.clientGetName(), `cmd-test-${protocol}`);
        const me = await c.clientInfo();
        assert.equal(me["name"], `cmd-test-${protocol}`);
        assert.equal(me["db"], String(db));
        const list = await c.clientList({ type: "normal" });
        assert.ok(list.some((x) => x["id"] === String(id)));
        assert.deepEqual((await c.clientList({ id: [id] })).map((x) => x["id"]), [String(id)]);
        const other = new RedisClient({ url: server.url, protocol });
        await other.clientSetName("victim");
        const victimId = await other.clientId();
        assert.equal(await c.clientKill({ id: victimId }), 1);
        await other.close();
        assert.equal(await c.clientKill({ id: 999_999_999 }), 0);
        const cfg = await c.configGet("maxmemory*");
        assert.equal(cfg["maxmemory"], "0");
        assert.ok("maxmemory-policy" in cfg);
        assert.equal(await c.configSet({ "maxmemory-policy": "allkeys-lfu" }), "OK");
        assert.equal(typeof await c.objectFreq("srv:k"), "number");
        assert.equal(await c.configSet({ "maxmemory-policy": "noeviction" }), "OK");
        assert.equal(await c.configResetStat(), "OK");
        assert.equal(await c.wait(0, 100), 0);
        assert.equal(await c.publish("nobody", "m"), 0);
        assert.equal(await c.spublish("nobody", "m"), 0);
        const sub = await c.subscribe(`cmdchan${protocol}`, () => {});
        assert.ok((await c.pubsubChannels("cmdchan*")).includes(`cmdchan${protocol}`));
        assert.deepEqual(await c.pubsubNumsub(`cmdchan${protocol}`, "nobody"), {
          [`cmdchan${protocol}`]: 1,
          nobody: 0,
        });
        assert.equal(await c.pubsubNumpat(), 0);
        await sub.unsubscribe();
        assert.ok((await c.memoryUsage("srv:k"))! > 0);
        assert.equal(await c.memoryUsage("srv:none"), null);
        assert.equal(await c.swapdb(14, 15), "OK");
        assert.equal(await c.swapdb(14, 15), "OK");
        // WAITAOF exists from Redis 7.2 on; the 7.0 server answers an error, a newer one [0, 0].
        const aof = await c.waitaof(0, 0, 10).catch((e: unknown) => e);
        if (aof instanceof ReplyError) assert.match(aof.message, /unknown command/i);
        else assert.deepEqual(aof, [0, 0]);
        assert.equal(await c.ping(), "PONG");
        assert.equal(await c.flushdb({ async: true }), "OK");
        assert.equal(await c.dbsize(), 0);
        await c.set("srv:k2", "v");
        assert.equal(await c.flushall({ async: false }), "OK");
        assert.equal(await c.dbsize(), 0);
      });

      it("binary values through the binary view", async () => {
        const b = c.binary();
        const bytes = new Uint8Array([0xff, 0xfe, 0x0d, 0x0a, 0x00, 0x80, 0xc3, 0x28, 0x0d]);
        const key = new Uint8Array([0x6b, 0xff, 0x0d, 0x0a]);
        assert.equal(await b.set(key, bytes), "OK");
        const got = await b.get(key);
        assert.ok(got instanceof Uint8Array);
        assert.deepEqual(got, bytes);
        assert.equal(await c.strlen(key), bytes.length);
        // Hash with a binary field and value: keys of the record are decoded text.
        await b.hset("bin:h", enc("f"), bytes);
        const h = await b.hgetall("bin:h");
        assert.deepEqual(h["f"], bytes);
        assert.deepEqual(await b.hmget("bin:h", "f", "none"), [bytes, null]);
        // Lists, sets, sorted sets and streams keep the bytes.
        await b.rpush("bin:l", bytes, enc("\r\n"));
        assert.deepEqual(await b.lrange("bin:l", 0, -1), [bytes, enc("\r\n")]);
        assert.deepEqual(await b.blpop("bin:l", 1), { key: "bin:l", element: bytes });
        await b.sadd("bin:s", bytes);
        assert.deepEqual(await b.smembers("bin:s"), [bytes]);
        await b.zadd("bin:z", { score: 1.5, member: bytes });
        assert.deepEqual(await b.zrangeWithScores("bin:z", 0, -1), [{ member: bytes, score: 1.5 }]);
        assert.equal(await b.zscore("bin:z", bytes), 1.5);
        const id = await b.xadd("bin:st", "*", [["f", bytes]]);
        assert.deepEqual(await b.xrange("bin:st"), [{ id, fields: { f: bytes } }]);
        // DUMP is binary on both views; RESTORE takes the bytes back.
        const dumped = await c.dump(key);
        assert.ok(dumped instanceof Uint8Array);
        await c.restore("bin:restored", 0, dumped!);
        assert.deepEqual(await b.get("bin:restored"), bytes);
        // The string view decodes the same value (lossily) without breaking the stream.
        assert.equal(typeof await c.get(key), "string");
        assert.equal(await c.ping(), "PONG");
        assert.deepEqual(await b.echo(bytes), bytes);
      });

      it("pipelines and transactions apply the same reply transforms", async () => {
        await c.del("pt:h", "pt:z");
        const piped = await c.pipeline()
          .hset("pt:h", { a: "1", b: "2" })
          .hgetall("pt:h")
          .zadd("pt:z", [{ score: 1.5, member: "m" }])
          .zrangeWithScores("pt:z", 0, -1)
          .zscore("pt:z", "m")
          .sismember("pt:none", "x")
          .blpop("pt:none", 0.01)
          .exec();
        assert.deepEqual(piped, [
          2,
          { a: "1", b: "2" },
          1,
          [{ member: "m", score: 1.5 }],
          1.5,
          false,
          null,
        ]);
        const tx = await c.multi().hgetall("pt:h").zpopmin("pt:z").exists("pt:h").exec();
        assert.deepEqual(tx, [{ a: "1", b: "2" }, { member: "m", score: 1.5 }, 1]);
      });

      it("1 MB values", async () => {
        const big = "v".repeat(1024 * 1024);
        assert.equal(await c.set("big:s", big), "OK");
        assert.equal(await c.get("big:s"), big);
        assert.equal(await c.strlen("big:s"), big.length);
        const bytes = new Uint8Array(1024 * 1024);
        for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
        await c.hset("big:h", "f", bytes);
        const back = await c.binary().hget("big:h", "f");
        assert.deepEqual(back, bytes);
        await c.rpush("big:l", bytes, big);
        const [lb, ls] = await c.binary().lrange("big:l", 0, -1);
        assert.deepEqual(lb, bytes);
        assert.equal(lb!.length, bytes.length);
        assert.equal(ls!.length, big.length);
        const id = await c.xadd("big:st", "*", { payload: big });
        const [entry] = await c.xrange("big:st");
        assert.equal(entry?.id, id);
        assert.equal(entry?.fields["payload"], big);
      });
    });
  }
});
