// A server without maintenance notifications (stock redis-server) refuses the opt-in of every
// connection; in the default `auto` mode the client carries on without them and says so once,
// not once per connection, reconnect or exclusive connection.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import type { Logger } from "../../src/logger.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

function recordingLogger(lines: string[]): Logger {
  const record = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  return { debug: record, info: record, warn: record, error: record };
}

describe("maintenance notifications refused by the server", () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server?.stop();
  });

  it("are logged once per client, however many connections it opens", async () => {
    const lines: string[] = [];
    const client = new RedisClient({ url: server.url, logger: recordingLogger(lines) });
    const admin = new RedisClient({ url: server.url });
    try {
      await client.set("log:k", "v");
      // Two exclusive connections at once (blocking pops), then the shared one killed and
      // reconnected: four sockets, four refused opt-ins.
      await Promise.all([client.blpop(["log:none1"], 0.05), client.blpop(["log:none2"], 0.05)]);
      const id = await client.sendCommand(["CLIENT", "ID"]);
      await admin.sendCommand(["CLIENT", "KILL", "ID", String(id)]);
      let back = false;
      for (let i = 0; i < 100 && !back; i++) {
        back = await client.get("log:k").then((v) => v === "v", () => false);
        if (!back) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(back, "the client did not reconnect");
      assert.notEqual(await client.sendCommand(["CLIENT", "ID"]), id, "no new shared socket");
      const refused = lines.filter((l) => l.includes("does not support maintenance notifications"));
      assert.equal(refused.length, 1, refused.join("\n"));
      assert.match(refused[0]!, /continuing without them/);
    } finally {
      await client.close();
      await admin.close();
    }
  });

  it("are logged again by another client", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 2; i++) {
      await using client = new RedisClient({ url: server.url, logger: recordingLogger(lines) });
      await client.get("log:k");
    }
    assert.equal(
      lines.filter((l) => l.includes("does not support maintenance notifications")).length,
      2,
    );
  });
});
