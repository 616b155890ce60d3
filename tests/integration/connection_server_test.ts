// The connection against a real redis-server: a user name without a password, a refused client
// name, a server at its maxclients limit, a large first command, and a restart into LOADING.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Connection, type ConnectionOptions } from "../../src/connection/connection.ts";
import { defaultConnector } from "../../src/transport/default.ts";
import { silentLogger } from "../../src/logger.ts";
import { ConnectionError, RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

function connection(server: RedisServer, o: Partial<ConnectionOptions> = {}): Connection {
  return new Connection({
    endpoint: { host: server.host, port: server.port },
    connector: defaultConnector,
    protocol: 3,
    db: 0,
    connectTimeout: 5000,
    commandTimeout: 5000,
    reconnect: { baseDelay: 20, maxDelay: 100 },
    maxQueueLength: 100_000,
    maxQueueBytes: 64 * 1024 * 1024,
    logger: silentLogger,
    ...o,
  });
}

describe("Connection against redis-server", () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });
  beforeEach(markLeakBaseline);

  for (const protocol of [3, 2] as const) {
    it(`RESP${protocol}: a user name without a password runs as that user, not as default`, async () => {
      const admin = connection(server);
      await admin.send(
        ["ACL", "SETUSER", "reporting", "on", "nopass", "+@all", "~*"],
        undefined,
        0,
      );
      const conn = connection(server, { protocol, username: "reporting" });
      assert.equal(await conn.send(["ACL", "WHOAMI"], undefined, 0), "reporting");
      await conn.close();
      // A user that needs a password is refused clearly, never run as default.
      await admin.send(["ACL", "SETUSER", "auditor", "on", ">a-password", "+@all"], undefined, 0);
      const refused = connection(server, { protocol, username: "auditor" });
      await assert.rejects(
        refused.connect(),
        (e: Error) =>
          e instanceof ConnectionError && /Cannot authenticate .* as "auditor"/.test(e.message),
      );
      refused.destroy();
      await admin.close();
      await assertNoLeaks();
    });
  }

  it("a server at its maxclients limit is reported as such, not as an authentication failure", async () => {
    const full = await startRedis({ args: ["--requirepass", "pw"] });
    const holder = connection(full, { password: "pw" });
    try {
      // The one client allowed is this one.
      await holder.send(["CONFIG", "SET", "maxclients", "1"], undefined, 0);
      for (const protocol of [3, 2] as const) {
        const refused = connection(full, { protocol, password: "pw" });
        await assert.rejects(refused.connect(), (e: Error) => {
          assert.ok(e instanceof ConnectionError, String(e));
          assert.match(
            e.message,
            new RegExp(
              `^Cannot connect to "127\\.0\\.0\\.1:${full.port}": the server refused the connection: max number of clients reached`,
            ),
          );
          assert.doesNotMatch(e.message, /authenticate|pw/);
          return true;
        });
        refused.destroy();
      }
      const client = new RedisClient({ url: full.url, password: "pw", reconnect: false });
      await assert.rejects(client.connect(), /the server refused the connection: max number/);
      await client.close();
    } finally {
      await holder.close();
      await full.stop();
    }
    await assertNoLeaks();
  });

  it("a client name the server refuses fails the connect as a client-name error", async () => {
    const conn = connection(server, { clientName: "my app", password: undefined });
    await assert.rejects(
      conn.connect(),
      /Cannot set the client name on .*Client names cannot contain spaces/,
    );
    conn.destroy();
    await assertNoLeaks();
  });

  it("a 22 MiB first command is sent (the queue bound counts real bytes)", async () => {
    const client = new RedisClient({ url: server.url });
    const big = "x".repeat(22 * 1024 * 1024);
    assert.equal(await client.set("big", big), "OK");
    assert.equal(await client.strlen("big"), big.length);
    await client.del("big");
    await client.close();
    await assertNoLeaks();
  });

  it("after a restart into LOADING, commands wait for the data set instead of failing", async () => {
    const own = await startRedis();
    try {
      const conn = connection(own, { commandTimeout: 15_000 });
      await conn.send(["DEBUG", "POPULATE", "500000", "k", "16"], undefined, 0);
      await conn.send(["SAVE"], undefined, 0);
      await own.kill();
      // The loss is noticed before the server is back (commands on the dead socket would fail).
      for (let i = 0; i < 200 && conn.ready; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(conn.ready, false);
      await own.restart();
      // Issued while the server loads: refused with LOADING, held and sent again.
      const results = await Promise.allSettled([
        conn.send(["DBSIZE"], undefined, 0),
        conn.send(["GET", "k:1"], undefined, 0),
        conn.send(["SET", "after", "1"], undefined, 0),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ["fulfilled", "fulfilled", "fulfilled"],
        String(
          results.map((r) => r.status === "rejected" ? (r.reason as Error).message : "").join(" "),
        ),
      );
      assert.equal((results[0] as PromiseFulfilledResult<unknown>).value, 500000);
      await conn.close();
    } finally {
      await own.stop();
    }
    await assertNoLeaks();
  });
});
