// an argument the encoder refuses must reject that command, not throw out of the
// connection's flush (an uncaught exception) and leave the command pending forever.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import type { RedisArgument } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

describe("invalid arguments", () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it("sendCommand with an argument that is not a RedisArgument rejects with TypeError", async () => {
    const client = new RedisClient({ url: server.url });
    await client.connect();
    // A JavaScript caller (or a cast) passes a value the encoder cannot write.
    const bad = ["SET", "step:bad", null] as unknown as RedisArgument[];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([
      client.sendCommand(bad).then(() => "resolved", (e: unknown) => e),
      new Promise((res) => timer = setTimeout(() => res("timeout"), 1000)),
    ]);
    clearTimeout(timer);
    // The connection keeps working for the next command.
    const next = await Promise.race([
      client.get("step:bad"),
      new Promise((res) => timer = setTimeout(() => res("timeout"), 1000)),
    ]);
    clearTimeout(timer);
    await client.close();
    assert.ok(r instanceof TypeError, `rejects with TypeError, got ${String(r)}`);
    assert.equal(next, null);
  });

  it("set and zrange in a peer's form are refused, store nothing and lose no scores", async () => {
    // deno-lint-ignore no-explicit-any
    const client = new RedisClient({ url: server.url }) as any;
    try {
      for (
        const call of [
          () => client.set("peer:k", "v", "EX", 60), // ioredis
          () => client.set("peer:k", "v", { EX: 60 }), // node-redis
        ]
      ) {
        assert.throws(call, (e: unknown) => e instanceof TypeError && /\bex\b/.test(e.message));
      }
      assert.equal(await client.exists("peer:k"), 0, "nothing was stored without its TTL");
      await client.zadd("peer:z", [{ score: 1, member: "a" }]);
      assert.throws(
        () => client.zrange("peer:z", 0, -1, { withScores: true }),
        /zrangeWithScores/,
      );
      assert.deepEqual(await client.zrangeWithScores("peer:z", 0, -1), [{ member: "a", score: 1 }]);
      assert.throws(() => client.eval("return 1", 0, "x"), /key count/);
      assert.equal(await client.set("peer:k", "v", { ex: 60 }), "OK");
      assert.ok((await client.ttl("peer:k")) > 0);
    } finally {
      await client.close();
    }
  });

  it("sendCommand refuses the command as separate arguments and unknown options", async () => {
    // deno-lint-ignore no-explicit-any
    const client = new RedisClient({ url: server.url }) as any;
    try {
      await assert.rejects(
        client.sendCommand("SET", "peer:raw", "v"),
        /the string "SET" as a command: .*sendCommand\(\["GET", "k"\]\)/,
      );
      await assert.rejects(
        client.sendCommand(["GET", "peer:raw"], { timout: 100 }),
        /`timout` of sendCommand: no such option. Did you mean `timeout`\?/,
      );
      assert.equal(await client.exists("peer:raw"), 0);
      assert.equal(await client.sendCommand(["GET", "peer:raw"], { timeout: 1000 }), null);
    } finally {
      await client.close();
    }
  });
});
