// a blocking command in a pipeline loses its block time (Batch records args, transform
// and flags only), so it runs with no timeout at all instead of block time + commandTimeout.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient, TimeoutError } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

describe("blocking commands in a pipeline", () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it("a pipelined BLPOP times out after its block time plus commandTimeout", async () => {
    const client = new RedisClient({ url: server.url, commandTimeout: 200 });
    const admin = new RedisClient({ url: server.url });
    try {
      await client.blpop("step:pl:q", 0.01); // an idle exclusive connection is ready
      await admin.connect();
      // The server stops answering normal clients for 1.5 s.
      await admin.sendCommand(["CLIENT", "PAUSE", "1500", "ALL"]);
      const start = Date.now();
      const [r] = await client.pipeline().blpop("step:pl:q", 0.1).exec();
      const ms = Date.now() - start;
      assert.ok(r instanceof TimeoutError, `a TimeoutError value, got ${String(r)} after ${ms} ms`);
      assert.ok(ms < 1000, `timed out after ${ms} ms (expected ~300)`);
    } finally {
      await admin.sendCommand(["CLIENT", "UNPAUSE"]).catch(() => {});
      await admin.close();
      await client.close();
    }
  });
});
