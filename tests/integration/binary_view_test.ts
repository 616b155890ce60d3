// The binary view against a real redis-server: pipelines, transactions and the scan iterators
// reply bulk strings as bytes (values that are not valid UTF-8 come back intact), on RESP2 and
// RESP3, and the string view of the same client is unaffected.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient, ReplyError } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

const BYTES = new Uint8Array([0xff, 0x00, 0xfe, 0x80, 0x41]); // not UTF-8
const bytes = (v: unknown) => {
  assert.ok(v instanceof Uint8Array, `expected bytes, got ${typeof v}`);
  return [...v];
};

for (const protocol of [2, 3] as const) {
  describe(`binary view (RESP${protocol})`, () => {
    let server: RedisServer;
    let client: RedisClient;
    before(async () => {
      server = await startRedis();
    });
    after(async () => {
      await server.stop();
    });
    beforeEach(async () => {
      markLeakBaseline();
      client = new RedisClient({ url: server.url, protocol });
      await client.sendCommand(["FLUSHALL"]);
    });
    afterEach(async () => {
      await client.close();
      await assertNoLeaks();
    });

    it("pipelines reply bytes, errors as values, in order", async () => {
      await client.set("bin:k", BYTES);
      await client.hset("bin:h", { f: BYTES });
      const [value, missing, hash, err, n] = await client.binary().pipeline()
        .get("bin:k").get("bin:none").hgetall("bin:h").incr("bin:k").strlen("bin:k").exec();
      assert.deepEqual(bytes(value), [...BYTES]);
      assert.equal(missing, null);
      assert.deepEqual(bytes((hash as Record<string, Uint8Array>).f), [...BYTES]);
      assert.ok(err instanceof ReplyError);
      assert.equal(n, 5);
      // The string view of the same client still answers strings.
      const [text] = await client.pipeline().set("bin:t", "é").get("bin:t").exec()
        .then((r) => r.slice(1));
      assert.equal(text, "é");
    });

    it("transactions reply bytes", async () => {
      const r = await client.binary().multi().set("bin:k", BYTES).get("bin:k").lrange(
        "bin:l",
        0,
        -1,
      )
        .exec();
      assert.ok(r !== null);
      const [ok, value, list] = r;
      assert.equal(ok, "OK");
      assert.deepEqual(bytes(value), [...BYTES]);
      assert.deepEqual(list, []);
      assert.equal(typeof (await client.multi().get("bin:k").exec())?.[0], "string");
    });

    it("scan, hscan, sscan and zscan iterate bytes", async () => {
      const keys = [0, 1, 2].map((i) => new Uint8Array([0xff, 0x61 + i]));
      for (const k of keys) await client.set(k, "v");
      await client.hset("bin:h", { a: BYTES });
      await client.sadd("bin:s", BYTES);
      await client.zadd("bin:z", { score: 2, member: BYTES });
      const b = client.binary();
      const seen: number[][] = [];
      for await (const k of b.scan({ count: 1 })) seen.push(bytes(k));
      assert.deepEqual(
        seen.filter((k) => k[0] === 0xff).sort((x, y) => x[1]! - y[1]!),
        keys.map((k) => [...k]),
      );
      const fields: [number[], number[]][] = [];
      for await (const [f, v] of b.hscan("bin:h")) fields.push([bytes(f), bytes(v)]);
      assert.deepEqual(fields, [[[0x61], [...BYTES]]]);
      const members: number[][] = [];
      for await (const m of b.sscan("bin:s")) members.push(bytes(m));
      assert.deepEqual(members, [[...BYTES]]);
      const scored: [number[], number][] = [];
      for await (const { member, score } of b.zscan("bin:z")) scored.push([bytes(member), score]);
      assert.deepEqual(scored, [[[...BYTES], 2]]);
    });
  });
}
