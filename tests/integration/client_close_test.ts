// close() and destroy(): bounded, idempotent, and what they reject with.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClosedError, RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("closing a client", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it("concurrent close() calls return the same promise", async () => {
    const client = new RedisClient({ url: server.url });
    await client.ping();
    const a = client.close();
    const b = client.close();
    assert.equal(a, b);
    await a;
    await assert.rejects(client.get("k"), ClosedError);
    await assertNoLeaks();
  });

  it("close() rejects a blocking command in flight with ClosedError", async () => {
    const client = new RedisClient({ url: server.url });
    const pop = client.blpop(["close:never"], 0);
    const settled = pop.then(() => "resolved", (e: Error) => e);
    for (let i = 0; i < 50; i++) await new Promise((r) => setTimeout(r, 5));
    await client.close();
    const e = await settled;
    assert.ok(e instanceof ClosedError, `got ${String(e)}`);
    await assertNoLeaks();
  });

  it("close() settles within closeTimeout when the server stops answering (commandTimeout 0)", async () => {
    const client = new RedisClient({ url: server.url, commandTimeout: 0, closeTimeout: 200 });
    const other = new RedisClient({ url: server.url });
    await client.ping();
    await other.sendCommand(["CLIENT", "PAUSE", "1500", "ALL"]);
    const slow = client.get("close:paused").then(() => "resolved", (e: Error) => e);
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await client.close();
    const took = Date.now() - started;
    assert.ok(took >= 150 && took < 1200, `close took ${took} ms`);
    assert.ok((await slow) instanceof ClosedError);
    await other.sendCommand(["CLIENT", "UNPAUSE"]);
    await other.close();
    await assertNoLeaks();
  });

  it("destroy() rejects queued and in-flight commands with ClosedError at once", async () => {
    const client = new RedisClient({ url: server.url, commandTimeout: 0 });
    await client.ping();
    await client.sendCommand(["CLIENT", "PAUSE", "300", "ALL"]).catch(() => {});
    const other = new RedisClient({ url: server.url });
    const slow = client.get("destroy:k").then(() => "resolved", (e: Error) => e);
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await client.destroy();
    const e = await slow;
    assert.ok(e instanceof ClosedError, `got ${String(e)}`);
    assert.ok(Date.now() - started < 250, "destroy did not wait for the paused server");
    await assert.rejects(client.ping(), ClosedError);
    await other.close();
    await assertNoLeaks();
  });
});
