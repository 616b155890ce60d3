// error messages must never carry the password. A server without HELLO (Redis 5, a
// proxy, or `rename-command HELLO ""`) answers "unknown command ... with args beginning with:"
// followed by the arguments, AUTH's password among them; the client puts that text in its error.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

describe("password in error messages", () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis({
      args: ["--requirepass", "s3cret-pw", "--rename-command", "HELLO", ""],
    });
  });
  after(async () => {
    await server.stop();
  });

  it("a RESP3 connect refused by a server without HELLO does not leak the password", async () => {
    const errors: Error[] = [];
    const client = new RedisClient({
      url: `redis://:s3cret-pw@127.0.0.1:${server.port}`,
      protocol: 3,
      reconnect: false,
    });
    client.addEventListener("error", (e) => errors.push((e as CustomEvent).detail as Error));
    const err = await client.connect().then(() => undefined, (e: Error) => e);
    await client.close();
    assert.ok(err instanceof Error, "connect() fails");
    assert.ok(err.message.includes(String(server.port)), "the message names the endpoint");
    assert.ok(!err.message.includes("s3cret-pw"), `the message leaks the password: ${err.message}`);
    for (const e of errors) assert.ok(!e.message.includes("s3cret-pw"), "an error event leaks it");
  });
});
