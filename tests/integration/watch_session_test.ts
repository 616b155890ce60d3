// A WATCH session is one exclusive connection: losing it must fail the session, never run the
// transaction without its WATCH.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("WATCH sessions", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const protocol of [3, 2] as const) {
    it(`a session whose connection is killed fails instead of reconnecting without its WATCH (RESP${protocol})`, async () => {
      const client = new RedisClient({ url: server.url, protocol, clientName: "watcher" });
      const other = new RedisClient({ url: server.url, protocol });
      const key = `watch:lost:${protocol}`;
      await client.set(key, "1");
      const tx = await client.watch(key);
      assert.equal(await tx.get(key), "1");
      // Kill every connection of the watching client (the shared one reconnects by itself).
      await other.sendCommand(["CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal"]);
      await sleep(50);
      await other.set(key, "changed by another client");
      await assert.rejects(tx.get(key), ConnectionError);
      await assert.rejects(tx.multi().set(key, "overwrite").exec(), ConnectionError);
      assert.equal(await other.get(key), "changed by another client", "no lost update");
      // The client itself carries on.
      assert.equal(await client.get(key), "changed by another client");
      await Promise.all([client.close(), other.close()]);
      await assertNoLeaks();
    });
  }

  it("a session still aborts the transaction when a watched key changes", async () => {
    const client = new RedisClient({ url: server.url });
    const key = "watch:changed";
    await client.set(key, "1");
    const tx = await client.watch(key);
    await client.set(key, "2");
    assert.equal(await tx.multi().set(key, "3").exec(), null);
    assert.equal(await client.get(key), "2");
    await client.close();
    await assertNoLeaks();
  });
});
