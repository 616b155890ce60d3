// What the cluster client says when it cannot work: a seed that is not a cluster node, every
// seed down, announced addresses that cannot be reached (and the nodeAddressMap that fixes it).
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, RedisError } from "../../src/errors.ts";
import { RedisClusterClient } from "../../src/cluster/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("cluster client bad input", () => {
  beforeEach(markLeakBaseline);

  describe("a seed that is not a cluster node", () => {
    let server: RedisServer;
    before(async () => {
      server = await startRedis();
    });
    after(async () => {
      await server?.stop();
    });

    it("rejects with an error saying so", async () => {
      const client = new RedisClusterClient({ nodes: [server.url] });
      await assert.rejects(client.get("k"), (e: Error) => {
        assert.ok(e instanceof RedisError);
        assert.match(e.message, /is not a cluster node \(cluster support disabled\)/);
        assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${server.port}`));
        return true;
      });
      await client.close();
      await assertNoLeaks();
    });
  });

  it("rejects with a ConnectionError naming every seed when all are down", async () => {
    const ports = [await freePort(), await freePort()];
    const client = new RedisClusterClient({
      nodes: ports.map((p) => `redis://127.0.0.1:${p}`),
      connectTimeout: 1000,
    });
    await assert.rejects(client.set("k", "v"), (e: Error) => {
      assert.ok(e instanceof ConnectionError);
      assert.equal(e.written, false);
      for (const p of ports) assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${p}`));
      assert.match(e.message, /^Cannot discover the cluster topology: no seed node answered/);
      return true;
    });
    await assert.rejects(
      client.pipeline().get("k").exec().then((r) => {
        throw r[0];
      }),
      ConnectionError,
    );
    await client.close();
    await assertNoLeaks();
  });

  it("rejects bad options at construction", () => {
    assert.throws(() => new RedisClusterClient({ nodes: [] }), TypeError);
    assert.throws(
      () => new RedisClusterClient({ nodes: ["redis://h:1"], maxAttempts: 0 }),
      RangeError,
    );
    assert.throws(
      () => new RedisClusterClient({ nodes: ["h:1"], readFrom: "nearest" as never }),
      RangeError,
    );
  });

  describe("announced addresses that cannot be reached", () => {
    let cluster: RedisCluster;
    const announced = new Map<number, number>();
    before(async () => {
      cluster = await startCluster({
        primaries: 3,
        replicasPerPrimary: 0,
        announce: async (n) => {
          const port = await freePort();
          announced.set(port, n.port);
          return { host: n.host, port };
        },
      });
    });
    after(async () => {
      await cluster?.stop();
    });

    it("fails with a ConnectionError naming the unreachable address", async () => {
      const client = new RedisClusterClient({
        nodes: cluster.seeds,
        connectTimeout: 500,
        commandTimeout: 500,
        maxTotalRetriesDuration: 1500,
      });
      await assert.rejects(client.set("k", "v"), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        const ports = [...announced.keys()].map(String).join("|");
        assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:(${ports})`), e.message);
        return true;
      });
      await client.close();
      await assertNoLeaks();
    });

    it("works with a nodeAddressMap", async () => {
      const map: Record<string, string> = {};
      for (const [a, real] of announced) map[`127.0.0.1:${a}`] = `127.0.0.1:${real}`;
      const client = new RedisClusterClient({ nodes: cluster.seeds, nodeAddressMap: map });
      assert.equal(await client.set("k", "v"), "OK");
      assert.equal(await client.get("k"), "v");
      assert.deepEqual(await client.mget("a", "b", "k"), [null, null, "v"]);
      assert.ok(
        client.nodes().every((n) =>
          [...announced.values()].some((p) => n.address === `127.0.0.1:${p}`)
        ),
      );
      await client.close();
      await assertNoLeaks();
    });
  });
});
