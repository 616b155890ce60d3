// Subscriptions: listener isolation and the bound of an unread iterator.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

async function until(pred: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await sleep(5);
}

describe("subscriptions", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const protocol of [3, 2] as const) {
    it(`a throwing listener does not stop delivery to the other subscriptions (RESP${protocol})`, async () => {
      const client = new RedisClient({ url: server.url, protocol });
      const errors: Error[] = [];
      client.addEventListener("error", (e) => errors.push((e as CustomEvent).detail));
      const a: string[] = [];
      const b: string[] = [];
      await client.subscribe("iso", (m) => {
        a.push(m);
        throw new Error(`listener a failed on ${m}`);
      });
      await client.subscribe("iso", (m) => b.push(m));
      for (const m of ["1", "2", "3"]) await client.publish("iso", m);
      await until(() => b.length === 3);
      assert.deepEqual(a, ["1", "2", "3"]);
      assert.deepEqual(b, ["1", "2", "3"]);
      assert.deepEqual(errors.map((e) => e.message), [
        "listener a failed on 1",
        "listener a failed on 2",
        "listener a failed on 3",
      ]);
      assert.equal(await client.ping(), "PONG", "the connection was not reset");
      await client.close();
      await assertNoLeaks();
    });
  }

  it("an iterator nobody reads keeps at most maxBufferedMessages, dropping the oldest", async () => {
    const client = new RedisClient({ url: server.url, maxBufferedMessages: 100 });
    const publisher = new RedisClient({ url: server.url });
    const errors: Error[] = [];
    client.addEventListener("error", (e) => errors.push((e as CustomEvent).detail));
    const sub = await client.subscribe("bounded");
    const p = publisher.pipeline();
    for (let i = 0; i < 1000; i++) p.publish("bounded", String(i));
    await p.exec();
    await until(() => sub.dropped === 900);
    assert.equal(sub.buffered, 100);
    assert.equal(sub.dropped, 900);
    assert.equal(errors.length, 1, "one error event per overflow");
    assert.ok(errors[0] instanceof RangeError);
    const first = await sub[Symbol.asyncIterator]().next();
    assert.deepEqual(first.value, { channel: "bounded", message: "900" });
    await sub.unsubscribe();
    await Promise.all([client.close(), publisher.close()]);
    await assertNoLeaks();
  });

  it("rejects a bad maxBufferedMessages", () => {
    assert.throws(() => new RedisClient({ maxBufferedMessages: 0 }), RangeError);
    assert.throws(() => new RedisClient({ maxBufferedMessages: 1.5 }), RangeError);
  });
});
