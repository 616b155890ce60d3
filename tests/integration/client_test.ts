import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient, ReplyError } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("RedisClient against a real redis-server", () => {
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
      it("connects lazily, sets and gets, and closes everything", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        assert.equal(await client.set(`p${protocol}:k`, "v"), "OK");
        assert.equal(await client.get(`p${protocol}:k`), "v");
        assert.equal(await client.get(`p${protocol}:missing`), null);
        await client.close();
        await assertNoLeaks();
      });

      it("pipelines 10 000 commands in order", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const p = client.pipeline();
        for (let i = 0; i < 10_000; i++) p.set(`pl${protocol}:${i}`, String(i));
        for (let i = 0; i < 10_000; i++) p.get(`pl${protocol}:${i}`);
        const results = await p.exec();
        assert.equal(results.length, 20_000);
        for (let i = 0; i < 10_000; i++) {
          assert.equal(results[i], "OK");
          assert.equal(results[10_000 + i], String(i));
        }
        await client.close();
        await assertNoLeaks();
      });

      it("auto-pipelines 10 000 concurrent commands and keeps their order", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const key = `ap${protocol}`;
        await client.del(key);
        const replies = await Promise.all(
          Array.from({ length: 10_000 }, () => client.incr(key)),
        );
        assert.deepEqual(replies, Array.from({ length: 10_000 }, (_, i) => i + 1));
        await client.close();
      });

      it("round-trips 1 MB and binary values", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const big = "x".repeat(1024 * 1024);
        await client.set(`big${protocol}`, big);
        assert.equal((await client.get(`big${protocol}`))?.length, big.length);
        const bytes = new Uint8Array([0xff, 0xfe, 13, 10, 0, 13, 10, 0x80, 0xc3]);
        await client.set(`bin${protocol}`, bytes);
        const back = await client.binary().get(`bin${protocol}`);
        assert.ok(back instanceof Uint8Array);
        assert.deepEqual([...back!], [...bytes]);
        // A binary view and a string view interleave correctly.
        const [s, b] = await Promise.all([
          client.get(`big${protocol}`),
          client.binary().get(`bin${protocol}`),
        ]);
        assert.equal(s?.length, big.length);
        assert.deepEqual([...b!], [...bytes]);
        await client.close();
      });

      it("returns large values to many callers at once, a 10 MB value and 50 000 entries intact", async () => {
        // Replies of these sizes straddle the runtime's reads (Bun delivers up to 512 KB per
        // read, so one 100 KB reply in about five is put together from two of them).
        const client = new RedisClient({ url: server.url, protocol });
        const unit = "abcdefghijklmnopqrstuvwxyz0123456789é€";
        const value = unit.repeat(Math.ceil(100 * 1024 / unit.length)).slice(0, 100 * 1024);
        await client.set(`lv${protocol}`, value);
        for (let round = 0; round < 8; round++) {
          const replies = await Promise.all(
            Array.from({ length: 16 }, () => client.get(`lv${protocol}`)),
          );
          for (const r of replies) assert.ok(r === value, "a 100 KB value came back altered");
        }
        const huge = value.repeat(100);
        await client.set(`hv${protocol}`, huge);
        const [small, back, after] = await Promise.all([
          client.get(`lv${protocol}`),
          client.get(`hv${protocol}`),
          client.strlen(`hv${protocol}`),
        ]);
        assert.ok(small === value);
        assert.ok(back === huge, "a 10 MB value came back altered");
        assert.equal(after, new TextEncoder().encode(huge).length);
        const list = `le${protocol}`;
        await client.del(list);
        const items = Array.from({ length: 50_000 }, (_, i) => `item:${i}`);
        assert.equal(await client.rpush(list, ...items), 50_000);
        assert.deepEqual(await client.lrange(list, 0, -1), items);
        await client.close();
        await assertNoLeaks();
      });

      it("reports error replies as ReplyError without breaking the stream", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        await client.set(`str${protocol}`, "a");
        await assert.rejects(client.lpush(`str${protocol}`, "x"), (e: unknown) => {
          assert.ok(e instanceof ReplyError);
          assert.equal(e.prefix, "WRONGTYPE");
          return true;
        });
        assert.equal(await client.get(`str${protocol}`), "a");
        const [ok, err, v] = await client.pipeline().set(`s2${protocol}`, "1").lpush(
          `s2${protocol}`,
          "x",
        ).get(`s2${protocol}`).exec();
        assert.equal(ok, "OK");
        assert.ok(err instanceof ReplyError);
        assert.equal(v, "1");
        await client.close();
      });

      it("runs MULTI/EXEC atomically and WATCH sessions on an exclusive connection", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const key = `tx${protocol}`;
        await client.del(key);
        const res = await client.multi().incr(key).incr(key).get(key).exec();
        assert.deepEqual(res, [1, 2, "2"]);
        const tx = await client.watch(key);
        assert.equal(await tx.get(key), "2");
        await client.set(key, "changed"); // from the shared connection: aborts the transaction
        assert.equal(await tx.multi().set(key, "mine").exec(), null);
        assert.equal(await client.get(key), "changed");
        const tx2 = await client.watch(key);
        await tx2.get(key);
        assert.deepEqual(await tx2.multi().set(key, "mine").exec(), ["OK"]);
        assert.equal(await client.get(key), "mine");
        await client.close();
        await assertNoLeaks();
      });

      it("keeps serving the shared connection while BLPOP blocks", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const key = `bl${protocol}`;
        await client.del(key);
        const t0 = Date.now();
        const blocked = client.blpop([key], 3);
        for (let i = 0; i < 50; i++) await client.sendCommand(["PING"]);
        const fast = Date.now() - t0;
        assert.ok(fast < 1000, `50 PINGs took ${fast} ms while BLPOP was blocking`);
        await client.rpush(key, "item");
        const r = await blocked;
        assert.ok(r !== null);
        await client.close();
        await assertNoLeaks();
      });

      it("delivers pub/sub messages in order and keeps serving commands", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const pub = new RedisClient({ url: server.url, protocol });
        const got: string[] = [];
        const sub = await client.subscribe(`news${protocol}`, (m) => got.push(m));
        if (protocol === 3) assert.equal(await client.sendCommand(["PING"]), "PONG");
        for (let i = 0; i < 100; i++) {
          await pub.sendCommand(["PUBLISH", `news${protocol}`, String(i)]);
        }
        for (let i = 0; i < 100 && got.length < 100; i++) await sleep(10);
        assert.deepEqual(got, Array.from({ length: 100 }, (_, i) => String(i)));
        await sub.unsubscribe();
        // Iterator form.
        const it2 = await client.psubscribe(`ev${protocol}:*`);
        await pub.sendCommand(["PUBLISH", `ev${protocol}:a`, "one"]);
        const first = await it2[Symbol.asyncIterator]().next();
        assert.deepEqual(first.value, {
          channel: `ev${protocol}:a`,
          message: "one",
          pattern: `ev${protocol}:*`,
        });
        await it2.unsubscribe();
        await client.close();
        await pub.close();
        await assertNoLeaks();
      });

      it("iterates keys, hash fields, set members and scored members to the end", async () => {
        const client = new RedisClient({ url: server.url, protocol });
        const pre = `it${protocol}`;
        for (let i = 0; i < 250; i++) await client.set(`${pre}:k:${i}`, "v");
        const keys: string[] = [];
        for await (const k of client.scan({ match: `${pre}:k:*`, count: 20 })) keys.push(k);
        assert.equal(new Set(keys).size, 250);
        const fields: Record<string, string> = {};
        for (let i = 0; i < 300; i++) fields[`f${i}`] = String(i);
        await client.hset(`${pre}:h`, fields);
        const seen = new Map<string, string>();
        for await (const [f, v] of client.hscan(`${pre}:h`, { count: 30 })) seen.set(f, v);
        assert.equal(seen.size, 300);
        assert.equal(seen.get("f299"), "299");
        await client.sadd(`${pre}:s`, ...Array.from({ length: 300 }, (_, i) => `m${i}`));
        const members = new Set<string>();
        for await (const m of client.sscan(`${pre}:s`, { count: 30 })) members.add(m);
        assert.equal(members.size, 300);
        await client.zadd(
          `${pre}:z`,
          Array.from({ length: 300 }, (_, i) => ({ score: i, member: `z${i}` })),
        );
        const scores = new Map<string, number>();
        for await (const { member, score } of client.zscan(`${pre}:z`, { count: 30 })) {
          scores.set(member, score);
        }
        assert.equal(scores.size, 300);
        assert.equal(scores.get("z42"), 42);
        await client.close();
      });

      it("selects the database given in the URL", async () => {
        const c2 = new RedisClient({ url: `${server.url}/2`, protocol });
        const c0 = new RedisClient({ url: server.url, protocol });
        await c2.set(`db${protocol}`, "two");
        assert.equal(await c0.get(`db${protocol}`), null);
        assert.equal(await c2.get(`db${protocol}`), "two");
        await c2.close();
        await c0.close();
      });
    });
  }

  it("answers every RESP3 type through sendCommand", async () => {
    const client = new RedisClient({ url: server.url });
    assert.ok((await client.sendCommand(["DEBUG", "PROTOCOL", "map"])) instanceof Map);
    assert.ok((await client.sendCommand(["DEBUG", "PROTOCOL", "set"])) instanceof Set);
    assert.equal(typeof (await client.sendCommand(["DEBUG", "PROTOCOL", "double"])), "number");
    assert.equal(typeof (await client.sendCommand(["DEBUG", "PROTOCOL", "bignum"])), "bigint");
    assert.equal(await client.sendCommand(["DEBUG", "PROTOCOL", "null"]), null);
    assert.equal(await client.sendCommand(["DEBUG", "PROTOCOL", "true"]), true);
    assert.equal(await client.sendCommand(["DEBUG", "PROTOCOL", "false"]), false);
    assert.equal(typeof (await client.sendCommand(["DEBUG", "PROTOCOL", "verbatim"])), "string");
    // attrib: the reply comes, the attribute beside it does not replace it
    assert.notEqual(await client.sendCommand(["DEBUG", "PROTOCOL", "attrib"]), undefined);
    await client.close();
  });

  it("emits connect, ready and close events", async () => {
    const client = new RedisClient({ url: server.url });
    const seen: string[] = [];
    for (const n of ["connect", "ready", "close"] as const) {
      client.addEventListener(n, () => seen.push(n));
    }
    await client.connect();
    await client.close();
    assert.deepEqual(seen, ["connect", "ready", "close"]);
  });

  it("refuses commands after close with ClosedError", async () => {
    const client = new RedisClient({ url: server.url });
    await client.sendCommand(["PING"]);
    await client.close();
    await assert.rejects(client.get("k"), { name: "ClosedError" });
    await assertNoLeaks();
  });
});
