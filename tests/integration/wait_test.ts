// WAIT must count the writes of the connection that made them. RedisClient runs WAIT
// (a blocking command) on an exclusive connection that never wrote anything, so WAIT reports
// replicas as caught up while the shared connection's write was never acknowledged.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { sleep } from "../_helpers/leaks.ts";

describe("WAIT", () => {
  let primary: RedisServer;
  let replica: RedisServer;
  before(async () => {
    primary = await startRedis({ args: ["--repl-diskless-sync-delay", "0"] });
    replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(primary.port)] });
    const admin = new RedisClient({ url: primary.url });
    for (let i = 0; i < 200; i++) {
      const info = await admin.sendCommand(["INFO", "replication"]);
      if (String(info).includes("state=online")) break;
      await sleep(25);
    }
    await admin.close();
  });
  after(async () => {
    await replica.stop();
    await primary.stop();
  });

  it("client.wait() counts the acknowledgements of the client's own earlier write", async () => {
    const client = new RedisClient({ url: primary.url, commandTimeout: 3000 });
    const onReplica = new RedisClient({ url: replica.url, commandTimeout: 5000 });
    await client.set("step:wait:warm", "1");
    assert.equal(await client.wait(1, 2000), 1, "the replica is online and acknowledges");
    // The replica stops acknowledging for 1.5 s; a write made now cannot be acknowledged
    // within WAIT's 300 ms.
    const sleeping = onReplica.sendCommand(["DEBUG", "SLEEP", "1.5"]).catch(() => {});
    await sleep(100);
    await client.set("step:wait:k", "v");
    // The same WAIT sent raw runs on the shared connection, the one that wrote.
    const [onShared, acked] = await Promise.all([
      client.sendCommand(["WAIT", 1, 300]),
      client.wait(1, 300),
    ]);
    await sleeping;
    await onReplica.close();
    await client.close();
    assert.equal(onShared, 0, "premise: on the writing connection WAIT sees no acknowledgement");
    assert.equal(acked, 0, "WAIT must not report the unacknowledged write as replicated");
  });
});
