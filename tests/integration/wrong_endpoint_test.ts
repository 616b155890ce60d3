// A client pointed at the wrong thing says so: an HTTP server where Redis was expected (a
// protocol error naming the endpoint and saying it is not a Redis server), a plain port dialled
// with rediss:// (the TLS handshake that never completes, named as such), and a URL string given
// as the constructor's first argument (the server it names, not the default 127.0.0.1:6379).
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConnectionError, ProtocolError, RedisClient, TimeoutError } from "../../mod.ts";
import { nodeConnector } from "../../src/transport/node.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("a client pointed at the wrong endpoint", () => {
  let redis: RedisServer;
  let http: Server;
  let httpPort: number;
  before(async () => {
    redis = await startRedis();
    http = createServer((_req, res) => res.end("<html>not redis</html>"));
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
    httpPort = (http.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((r) => http.close(r));
    await redis.stop();
  });
  beforeEach(markLeakBaseline);

  for (const [transport, connector] of [["default", undefined], ["node:net", nodeConnector]]) {
    it(`an HTTP server is a protocol error naming the endpoint (${transport} transport)`, async () => {
      const client = new RedisClient({
        port: httpPort,
        reconnect: false,
        connectTimeout: 3000,
        connector: connector as typeof nodeConnector | undefined,
      });
      const err = await client.get("k").then(() => undefined, (e: unknown) => e);
      await client.close();
      assert.ok(err instanceof ProtocolError, `a ProtocolError, got ${String(err)}`);
      assert.match(err.message, new RegExp(`"127\\.0\\.0\\.1:${httpPort}"`));
      assert.match(err.message, /not a Redis server: it answers like an HTTP server/);
      await assertNoLeaks();
    });
  }

  it("rediss:// to a plain port says the TLS handshake timed out", async () => {
    const client = new RedisClient({
      url: `rediss://127.0.0.1:${redis.port}`,
      reconnect: false,
      connectTimeout: 300,
    });
    const err = await client.get("k").then(() => undefined, (e: unknown) => e);
    await client.close();
    assert.ok(err instanceof TimeoutError, `a TimeoutError, got ${String(err)}`);
    assert.match(
      err.message,
      new RegExp(
        `TLS handshake with 127\\.0\\.0\\.1:${redis.port} timed out after 300 ms; is the server TLS-enabled\\?`,
      ),
    );
    await assertNoLeaks();
  });

  it("rediss:// to an HTTP server says the TLS handshake failed", async () => {
    const client = new RedisClient({ url: `rediss://127.0.0.1:${httpPort}`, reconnect: false });
    const err = await client.get("k").then(() => undefined, (e: unknown) => e);
    await client.close();
    assert.ok(err instanceof ConnectionError, `a ConnectionError, got ${String(err)}`);
    assert.match(
      err.message,
      new RegExp(
        `TLS handshake with 127\\.0\\.0\\.1:${httpPort} failed: .*; is the server TLS-enabled\\?`,
      ),
    );
    await assertNoLeaks();
  });

  it("new RedisClient(url) connects to the server the URL names", async () => {
    assert.notEqual(redis.port, 6379);
    const client = new RedisClient(`redis://127.0.0.1:${redis.port}/3`);
    try {
      const reply = await client.sendCommand(["CONFIG", "GET", "port"]);
      const port = reply instanceof Map ? reply.get("port") : (reply as string[])[1];
      assert.equal(port, String(redis.port));
      assert.equal(await client.set("wrong-endpoint:k", "v"), "OK");
      const info = await client.sendCommand(["CLIENT", "INFO"]);
      assert.match(String(info), /\bdb=3\b/);
    } finally {
      await client.close();
    }
    await assertNoLeaks();
  });
});
