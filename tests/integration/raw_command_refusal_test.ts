// sendCommand on the client, in a pipeline and in a transaction refuses the commands that would
// change the shared connection for every caller, whatever the form of the command name.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("raw commands that would change the shared connection", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  const forms: [string, (string | Uint8Array)[]][] = [
    ["CLIENT REPLY SKIP", ["CLIENT", "REPLY", "SKIP"]],
    ["client reply off (lower case)", ["client", "reply", "off"]],
    ["MULTI", ["MULTI"]],
    ["SELECT as bytes", [bytes("SELECT"), "1"]],
    ["SUBSCRIBE as bytes", [bytes("subscribe"), "ch"]],
    ["HELLO", ["HELLO", "2"]],
  ];

  for (const [name, args] of forms) {
    it(`${name}: refused by the client, a pipeline and a transaction; the connection stays sane`, async () => {
      const client = new RedisClient({ url: server.url });
      await client.set("raw:k", "v");
      await assert.rejects(client.sendCommand(args), TypeError);
      const [a, b] = await client.pipeline().sendCommand(args).get("raw:k").exec();
      assert.ok(a instanceof TypeError, `pipeline: ${String(a)}`);
      assert.equal(b, "v");
      await assert.rejects(client.multi().sendCommand(args).get("raw:k").exec(), TypeError);
      // Nothing changed for the other callers: replies still match, same database, not in MULTI.
      assert.equal(await client.get("raw:k"), "v");
      assert.equal(await client.sendCommand(["ECHO", "x"]), "x");
      const [n] = (await client.multi().incr("raw:n").exec())!;
      assert.equal(typeof n, "number");
      await client.close();
      await assertNoLeaks();
    });
  }

  it("an allowed raw command runs in all three paths", async () => {
    const client = new RedisClient({ url: server.url });
    assert.equal(await client.sendCommand(["SET", "raw:ok", "1"]), "OK");
    assert.deepEqual(await client.pipeline().sendCommand(["GET", "raw:ok"]).exec(), ["1"]);
    assert.deepEqual(await client.multi().sendCommand(["INCR", "raw:ok"]).exec(), [2]);
    await client.close();
    await assertNoLeaks();
  });
});
