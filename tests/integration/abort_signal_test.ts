// AbortSignal on connect() and on sendCommand(): the caller stops waiting, the connection
// stays in step, and nothing leaks.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { startFakeServer } from "../_helpers/fake_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("abort signals", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it("connect({ signal }) gives up a handshake that never completes; the client stays usable", async () => {
    const silent = await startFakeServer(() => {}); // accepts, never answers
    const client = new RedisClient({ url: silent.url, connectTimeout: 10_000 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("gave up")), 50);
    const e = await client.connect({ signal: controller.signal }).catch((x: Error) => x);
    assert.ok(e instanceof ConnectionError, String(e));
    assert.equal((e.cause as Error).message, "gave up");
    assert.ok(Date.now() - started < 2000);
    await client.close();
    await silent.close();
    await assertNoLeaks();
  });

  it("an already aborted signal rejects sendCommand without sending it", async () => {
    const client = new RedisClient({ url: server.url });
    await client.set("abort:k", "1");
    const reason = new Error("not needed");
    await assert.rejects(
      client.sendCommand(["INCR", "abort:k"], { signal: AbortSignal.abort(reason) }),
      (e) => e === reason,
    );
    assert.equal(await client.get("abort:k"), "1", "the INCR was never sent");
    await client.close();
    await assertNoLeaks();
  });

  it("aborting a written command rejects it and keeps the replies in step", async () => {
    const client = new RedisClient({ url: server.url, commandTimeout: 0 });
    await client.set("abort:s", "v");
    const controller = new AbortController();
    // DEBUG SLEEP holds the reply; the abort rejects the caller at once.
    const slow = client.sendCommand(["DEBUG", "SLEEP", "0.3"], { signal: controller.signal });
    const next = client.get("abort:s");
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await assert.rejects(slow, /stop/);
    assert.equal(await next, "v", "the next command gets its own reply");
    assert.equal(await client.ping(), "PONG");
    await client.close();
    await assertNoLeaks();
  });

  it("aborting a blocking command closes its exclusive connection", async () => {
    const client = new RedisClient({ url: server.url });
    const controller = new AbortController();
    const pop = client.sendCommand(["BLPOP", "abort:q", "0"], {
      blockMs: 0,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error("enough")), 30);
    await assert.rejects(pop, /enough/);
    // The list gets an element: nobody is blocked on it any more, so it stays there.
    const other = new RedisClient({ url: server.url });
    await new Promise((r) => setTimeout(r, 50));
    await other.rpush("abort:q", "x");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await other.llen("abort:q"), 1);
    await Promise.all([client.close(), other.close()]);
    await assertNoLeaks();
  });
});
