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
});
