// What the cluster client's errors say on a real cluster: WATCH on a migrating slot, a slot
// left without an owner, a topology reply that cannot be parsed.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { RedisError } from "../../src/errors.ts";
import { RespDecoder } from "../../src/resp/decoder.ts";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { startFakeServer } from "../_helpers/fake_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("cluster errors", () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startCluster({ replicasPerPrimary: 0, nodeTimeoutMs: 1000 });
  });
  after(async () => {
    await cluster?.stop();
  });
  beforeEach(markLeakBaseline);

  it("WATCH on a key of a migrating slot fails at once, saying the slot is migrating", async () => {
    const client = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
    try {
      const key = "watch:migrating";
      const slot = keySlot(key);
      const from = cluster.nodeForSlot(slot);
      const to = cluster.primaries().find((p) => p.id !== from.id)!;
      await client.set("warm-up", "1");
      let elapsed = -1;
      await cluster.migrateSlot(slot, to.id, {
        beforeFinalize: async () => {
          const started = Date.now();
          await assert.rejects(client.watch(key), (e: Error) => {
            assert.ok(e instanceof RedisError, String(e));
            assert.match(
              e.message,
              new RegExp(
                `^Cannot watch: slot ${slot} is migrating \\(ASK ${slot} 127\\.0\\.0\\.1:${to.port}\\); retry once the migration has ended$`,
              ),
            );
            return true;
          });
          elapsed = Date.now() - started;
        },
      });
      assert.ok(elapsed >= 0 && elapsed < 1000, `failed after ${elapsed} ms`);
      // Once the slot has moved, WATCH follows the MOVED.
      const session = await client.watch(key);
      assert.deepEqual(await session.multi().set(key, "1").exec(), ["OK"]);
      assert.equal(await to.command(["GET", key]), "1");
    } finally {
      await client.close();
    }
    await assertNoLeaks();
  });

  it("a topology reply that cannot be parsed is named, with the node that sent it", async () => {
    // A node that answers the handshake and CLUSTER INFO, and CLUSTER SHARDS with an integer.
    const respond = (socket: Socket, args: unknown[]) => {
      const name = args.slice(0, 2).map((a) => String(a).toUpperCase()).join(" ");
      if (name === "CLUSTER MYID") socket.write(`$40\r\n${"a".repeat(40)}\r\n`);
      else if (name === "CLUSTER SHARDS") socket.write(":5\r\n");
      else if (name === "CLUSTER INFO") socket.write("$24\r\ncluster_current_epoch:1\r\n\r\n");
      else socket.write("+OK\r\n");
    };
    const decoders = new Map<Socket, RespDecoder>();
    const fake = await startFakeServer((socket, chunk) => {
      let d = decoders.get(socket);
      if (d === undefined) {
        d = new RespDecoder({
          onReply: (v) => respond(socket, v as unknown[]),
          onPush: () => {},
        });
        decoders.set(socket, d);
      }
      d.feed(chunk);
    });
    const client = new RedisClusterClient({ nodes: [fake.url], protocol: 2 });
    try {
      await assert.rejects(client.get("k"), (e: Error) => {
        assert.ok(e instanceof RedisError, String(e));
        assert.match(
          e.message,
          new RegExp(
            `^Cannot discover the cluster topology: the CLUSTER SHARDS reply of "127\\.0\\.0\\.1:${fake.port}" could not be parsed \\(expected CLUSTER SHARDS to be a list\\)$`,
          ),
        );
        return true;
      });
    } finally {
      await client.close();
      await fake.close();
    }
    await assertNoLeaks();
  });

  // Last: it kills a primary of the cluster.
  it("a slot no node serves names the node that served it last", async () => {
    const client = new RedisClusterClient({
      nodes: cluster.seeds,
      topologyRefreshInterval: 0,
      maxTotalRetriesDuration: 300,
    });
    try {
      const victim = cluster.primaries()[0]!;
      const other = cluster.primaries()[1]!;
      const slot = cluster.slotsOf(victim)[0]!;
      const key = cluster.keyForSlot(slot);
      await client.set(key, "1");
      await victim.kill();
      const end = Date.now() + 15_000;
      while (!/ master,fail /.test(String(await other.command(["CLUSTER", "NODES"])))) {
        if (Date.now() > end) throw new Error("the killed primary was not marked failed");
        await sleep(50);
      }
      await client.refreshTopology();
      assert.equal(client.nodeForSlot(slot), undefined);
      await assert.rejects(client.get(key), (e: Error) => {
        assert.ok(e instanceof RedisError, String(e));
        assert.equal(
          e.message,
          `Cannot send "GET": no node serves slot ${slot} (last served by "127.0.0.1:${victim.port}")`,
        );
        return true;
      });
    } finally {
      await client.close();
    }
    await assertNoLeaks();
  });
});
