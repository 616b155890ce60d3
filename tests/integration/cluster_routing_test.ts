// Routing of the typed methods on a real cluster: every family lands on the node serving the
// key's slot, hash tags keep keys together, cross-slot commands split or refuse, keyless
// commands fan out and aggregate, pipelines, transactions, WATCH, blocking commands, SCAN,
// replica reads.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ReplyError } from "../../src/errors.ts";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("cluster routing", () => {
  let cluster: RedisCluster;

  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await cluster?.stop();
  });
  beforeEach(async () => {
    markLeakBaseline();
    await Promise.all(cluster.primaries().map((p) => p.command(["FLUSHALL"])));
  });

  /** The key is on the node serving its slot (as the server computes the slot), only there. */
  async function assertOnOwner(key: string): Promise<void> {
    const slot = await cluster.keySlot(key);
    assert.equal(slot, keySlot(key), `slot of ${key}`);
    for (const p of cluster.primaries()) {
      const owner = p.id === cluster.nodeForSlot(slot).id;
      const has = owner
        ? await p.command(["EXISTS", key])
        : await p.command(["CLUSTER", "COUNTKEYSINSLOT", slot]);
      assert.equal(has, owner ? 1 : 0, `${key} on ${p.port}`);
    }
  }

  async function withClient<T>(
    fn: (c: RedisClusterClient) => Promise<T>,
    options: Partial<ConstructorParameters<typeof RedisClusterClient>[0]> = {},
  ): Promise<T> {
    const c = new RedisClusterClient({ nodes: cluster.seeds, ...options });
    try {
      return await fn(c);
    } finally {
      await c.close();
      await assertNoLeaks();
    }
  }

  it("sends every command family to the node serving the key", async () => {
    await withClient(async (c) => {
      await c.set("s:1", "v");
      assert.equal(await c.get("s:1"), "v");
      assert.equal(await c.incr("s:n"), 1);
      await c.append("s:a", "xy");
      assert.equal(await c.hset("h:1", { f: "1", g: "2" }), 2);
      assert.deepEqual(await c.hgetall("h:1"), { f: "1", g: "2" });
      assert.equal(await c.rpush("l:1", "a", "b"), 2);
      assert.deepEqual(await c.lrange("l:1", 0, -1), ["a", "b"]);
      assert.equal(await c.sadd("set:1", "x", "y"), 2);
      assert.equal(await c.zadd("z:1", [{ score: 1, member: "m" }]), 1);
      assert.match((await c.xadd("x:1", "*", { f: "v" }))!, /^\d+-\d+$/);
      assert.equal(await c.geoadd("g:1", { longitude: 13.4, latitude: 52.5, member: "b" }), 1);
      assert.equal(await c.pfadd("hll:1", "a", "b"), true);
      assert.equal(await c.setbit("b:1", 7, 1), 0);
      assert.equal(await c.expire("s:1", 100), true);
      assert.deepEqual(
        await c.eval("return redis.call('SET', KEYS[1], ARGV[1])", ["e:1"], ["v"]),
        "OK",
      );
      const sha = await c.scriptLoad("return redis.call('GET', KEYS[1])");
      assert.equal(await c.evalsha(sha, ["e:1"]), "v");
      assert.equal(await c.sendCommand(["SET", "raw:1", "r"]), "OK");
      for (
        const k of [
          "s:1",
          "s:n",
          "s:a",
          "h:1",
          "l:1",
          "set:1",
          "z:1",
          "x:1",
          "g:1",
          "hll:1",
          "b:1",
          "e:1",
          "raw:1",
        ]
      ) {
        await assertOnOwner(k);
      }
      // The keys are spread over the three primaries.
      const owners = new Set(
        ["s:1", "h:1", "l:1", "set:1", "z:1", "x:1", "g:1", "b:1"].map((k) =>
          cluster.nodeForSlot(keySlot(k)).id
        ),
      );
      assert.equal(owners.size, 3);
    });
  });

  it("keeps keys with one hash tag together for multi-key commands", async () => {
    await withClient(async (c) => {
      await c.sadd("{u1}.a", "x", "y");
      await c.sadd("{u1}.b", "y", "z");
      assert.deepEqual((await c.sinter("{u1}.a", "{u1}.b")).sort(), ["y"]);
      assert.equal(await c.sunionstore("{u1}.c", "{u1}.a", "{u1}.b"), 3);
      await c.zadd("{u1}.z1", [{ score: 1, member: "a" }]);
      await c.zadd("{u1}.z2", [{ score: 2, member: "a" }]);
      assert.equal(await c.zunionstore("{u1}.z3", ["{u1}.z1", "{u1}.z2"]), 1);
      assert.equal(await c.rename("{u1}.c", "{u1}.d"), "OK");
      assert.equal(await c.copy("{u1}.d", "{u1}.e"), true);
      assert.equal(await c.pfadd("{u1}.h1", "a"), true);
      assert.equal(await c.pfmerge("{u1}.h2", "{u1}.h1"), "OK");
      await c.set("{u1}.s", "ab");
      assert.equal(await c.bitop("OR", "{u1}.bo", "{u1}.s"), 2);
      await c.rpush("{u1}.l", "e");
      assert.equal(await c.lmove("{u1}.l", "{u1}.l2", "LEFT", "RIGHT"), "e");
      for (const k of ["{u1}.a", "{u1}.d", "{u1}.e", "{u1}.z3", "{u1}.h2", "{u1}.l2"]) {
        await assertOnOwner(k);
      }
    });
  });

  it("splits MGET, MSET, DEL, UNLINK, EXISTS and TOUCH across slots and merges in order", async () => {
    await withClient(async (c) => {
      const keys = Array.from({ length: 30 }, (_, i) => `multi:${i}`);
      assert.ok(new Set(keys.map((k) => cluster.nodeForSlot(keySlot(k)).id)).size === 3);
      const pairs: Record<string, string> = {};
      keys.forEach((k, i) => (pairs[k] = `v${i}`));
      assert.equal(await c.mset(pairs), "OK");
      assert.deepEqual(await c.mget(...keys, "multi:none"), [...keys.map((_, i) => `v${i}`), null]);
      assert.equal(await c.exists(...keys, "multi:none", keys[0]!), 31);
      assert.equal(await c.touch(...keys.slice(0, 10)), 10);
      assert.equal(await c.del(...keys.slice(0, 10)), 10);
      assert.equal(await c.unlink(...keys.slice(10), "multi:none"), 20);
      for (const p of cluster.primaries()) assert.equal(await p.command(["DBSIZE"]), 0);
    });
  });

  it("refuses other cross-slot commands before sending, naming the slots", async () => {
    await withClient(async (c) => {
      const a = keySlot("a");
      const b = keySlot("b");
      await assert.rejects(c.sunion("a", "b"), (e: Error) => {
        assert.ok(e instanceof TypeError);
        assert.match(e.message, new RegExp(`${Math.min(a, b)}, ${Math.max(a, b)}`));
        return true;
      });
      await assert.rejects(c.rename("a", "b"), TypeError);
      await assert.rejects(c.multi().set("a", 1).set("b", 1).exec(), /different slots/);
      await assert.rejects(c.watch("a", "b"), /different slots/);
      await assert.rejects(c.sendCommand(["SUNION", "a", "b"]), TypeError);
      await assert.rejects(c.sendCommand(["READONLY"]), /readFrom/);
      await assert.rejects(c.sendCommand(["asking"]), TypeError);
      await assert.rejects(c.sendCommand(["MULTI"]), TypeError);
      assert.deepEqual(c.stats().moved, 0);
    });
    await withClient(async (c) => {
      await assert.rejects(c.mget("a", "b"), /different slots/);
      assert.deepEqual(await c.mget("{t}a", "{t}b"), [null, null]);
    }, { crossSlot: "refuse" });
  });

  it("fans keyless commands out by their policy and aggregates", async () => {
    await withClient(async (c) => {
      const keys = Array.from({ length: 20 }, (_, i) => `fan:${i}`);
      await c.mset(Object.fromEntries(keys.map((k) => [k, "1"])));
      assert.equal(await c.dbsize(), 20);
      assert.deepEqual((await c.keys("fan:*")).sort(), [...keys].sort());
      const sha = await c.scriptLoad("return 7");
      // SCRIPT LOAD went to every node: any primary can run it.
      for (const p of cluster.primaries()) {
        assert.deepEqual(await p.command(["SCRIPT", "EXISTS", sha]), [1]);
      }
      assert.deepEqual(await c.scriptExists(sha, "0".repeat(40)), [true, false]);
      await cluster.primaries()[1]!.command(["SCRIPT", "FLUSH"]);
      assert.deepEqual(await c.scriptExists(sha), [false], "AND over the nodes");
      assert.equal(await c.ping(), "PONG");
      assert.equal(await c.flushall(), "OK");
      assert.equal(await c.dbsize(), 0);
      assert.equal(await c.sendCommand(["DBSIZE"]), 0);
    });
  });

  it("runs pipelines across nodes in order, with errors as values", async () => {
    await withClient(async (c) => {
      const p = c.pipeline();
      for (let i = 0; i < 50; i++) p.set(`pipe:${i}`, i).get(`pipe:${i}`);
      p.incr("pipe:0").hset("pipe:1", { f: "x" });
      const r = await p.exec();
      for (let i = 0; i < 50; i++) {
        assert.equal(r[2 * i], "OK");
        assert.equal(r[2 * i + 1], String(i));
      }
      assert.equal(r[100], 1);
      assert.ok(r[101] instanceof ReplyError && r[101].prefix === "WRONGTYPE");
      const mixed = await c.pipeline().mget("pipe:1", "pipe:2", "pipe:3").sunion("a", "b").exec();
      assert.deepEqual(mixed[0], ["1", "2", "3"]);
      assert.ok(mixed[1] instanceof TypeError);
    });
  });

  it("runs transactions and WATCH sessions on the slot's node", async () => {
    await withClient(async (c) => {
      assert.deepEqual(await c.multi().set("{tx}a", "1").incr("{tx}a").get("{tx}a").exec(), [
        "OK",
        2,
        "2",
      ]);
      await assertOnOwner("{tx}a");
      const session = await c.watch("{tx}a");
      const n = Number(await session.get("{tx}a"));
      assert.deepEqual(await session.multi().set("{tx}a", n + 1).exec(), ["OK"]);
      const s2 = await c.watch("{tx}a");
      await c.set("{tx}a", "changed");
      assert.equal(await s2.multi().set("{tx}a", "mine").exec(), null);
      assert.equal(await c.get("{tx}a"), "changed");
    });
  });

  it("runs blocking commands on the node's exclusive connections", async () => {
    await withClient(async (c) => {
      const popped = c.blpop("block:l", 2);
      await sleep(50);
      // The shared connection of that node keeps serving meanwhile.
      assert.equal(await c.set("block:other", "1"), "OK");
      assert.equal(await c.rpush("block:l", "e"), 1);
      assert.deepEqual(await popped, { key: "block:l", element: "e" });
    });
  });

  it("scans every primary", async () => {
    await withClient(async (c) => {
      const keys = Array.from({ length: 60 }, (_, i) => `scan:${i}`);
      await c.mset(Object.fromEntries(keys.map((k) => [k, "1"])));
      await c.set("other", "1");
      const seen: string[] = [];
      for await (const k of c.scan({ match: "scan:*", count: 7 })) seen.push(k);
      assert.deepEqual(seen.sort(), [...keys].sort());
      await c.hset(
        "scan:h",
        Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, "v"])),
      );
      let fields = 0;
      for await (const _ of c.hscan("scan:h")) fields++;
      assert.equal(fields, 30);
    });
  });

  it("scanPage walks every primary with a cursor naming the node, then returns 0", async () => {
    await withClient(async (c) => {
      const keys = Array.from({ length: 90 }, (_, i) => `page:${i}`);
      await c.mset(Object.fromEntries(keys.map((k) => [k, "1"])));
      const ids = new Set(cluster.primaries().map((p) => p.id));
      const seen: string[] = [];
      const named = new Set<string>();
      let cursor = "0";
      let pages = 0;
      do {
        const [next, page] = await c.scanPage(cursor, { match: "page:*", count: 10 });
        seen.push(...page);
        if (next !== "0") {
          const m = /^([0-9]+):([0-9a-f]{40})$/.exec(next);
          assert.ok(m, `cursor ${next}`);
          assert.ok(ids.has(m[2]!), `cursor ${next} names a primary`);
          named.add(m[2]!);
        }
        cursor = next;
        assert.ok(++pages < 200, "the walk ends");
      } while (cursor !== "0");
      assert.deepEqual(seen.sort(), [...keys].sort());
      assert.equal(named.size, 3, "every primary was walked");
      // The raw command walks the same way; the binary view too.
      const [raw] = await c.sendCommand(["SCAN", "0", "COUNT", "1000"]) as [string, unknown];
      assert.match(raw, /^0:[0-9a-f]{40}$/);
      const bytes: string[] = [];
      for await (const k of c.binary().scan({ match: "page:*" })) {
        bytes.push(new TextDecoder().decode(k));
      }
      assert.deepEqual(bytes.sort(), [...keys].sort());
      // A cursor naming no primary, and one this client never returned.
      await assert.rejects(
        c.scanPage(`5:${"f".repeat(40)}`),
        (e: Error) =>
          e.name === "RedisError" &&
          /serves no slot now .*start again from cursor "0"/.test(e.message),
      );
      await assert.rejects(c.scanPage("12345"), TypeError);
    });
  });

  it("randomkey returns a key when only one primary, any of them, has keys", async () => {
    await withClient(async (c) => {
      for (const p of cluster.primaries()) {
        await c.flushall();
        const key = cluster.keyForSlot(cluster.slotsOf(p)[0]!, "rk");
        await c.set(key, "1");
        for (let i = 0; i < 9; i++) assert.equal(await c.randomkey(), key, `on ${p.port}`);
      }
      await c.flushall();
      assert.equal(await c.randomkey(), null);
    });
  });

  it("works on RESP2: topology, routing, splits, fan-out, pipelines, shard pub/sub", async () => {
    await withClient(async (c) => {
      assert.equal(await c.set("r2:a", "1"), "OK");
      await assertOnOwner("r2:a");
      assert.deepEqual(await c.mget("r2:a", "r2:b", "r2:c"), ["1", null, null]);
      assert.equal(await c.dbsize(), 1);
      assert.deepEqual(await c.pipeline().incr("r2:n").get("r2:a").exec(), [1, "1"]);
      const got: string[] = [];
      const sub = await c.ssubscribe(
        ["r2:s1", "r2:s2", "r2:s3"],
        (m, ch) => got.push(`${ch}=${m}`),
      );
      for (const ch of ["r2:s1", "r2:s2", "r2:s3"]) assert.equal(await c.spublish(ch, "x"), 1);
      const end = Date.now() + 3000;
      while (got.length < 3 && Date.now() < end) await sleep(10);
      assert.deepEqual(got.sort(), ["r2:s1=x", "r2:s2=x", "r2:s3=x"]);
      await sub.unsubscribe();
    }, { protocol: 2 });
  });

  it("prefers replicas for reads with prefer-replica", async () => {
    await withClient(async (c) => {
      await c.set("pref:1", "v");
      const owner = cluster.nodeForSlot(keySlot("pref:1"));
      await owner.command(["WAIT", 1, 2000]);
      const end = Date.now() + 10_000;
      for (;;) {
        await c.refreshTopology();
        if (
          c.nodes().some((n) =>
            n.role === "replica" && n.health === "online" && n.primary === `127.0.0.1:${owner.port}`
          )
        ) break;
        if (Date.now() > end) throw new Error("replica never online");
        await owner.command(["INCR", "pref:tick"]).catch(() => {});
        await sleep(200);
      }
      const replica = cluster.replicasOf(owner)[0]!;
      const calls = async () =>
        Number(
          /cmdstat_get:calls=(\d+)/.exec(String(await replica.command(["INFO", "commandstats"])))
            ?.[1] ?? 0,
        );
      const before = await calls();
      for (let i = 0; i < 5; i++) assert.equal(await c.get("pref:1"), "v");
      assert.ok((await calls()) - before >= 5);
    }, { readFrom: "prefer-replica" });
  });

  it("reads from replicas with readFrom replica, writes on primaries", async () => {
    await withClient(async (c) => {
      await c.set("rep:1", "v");
      const owner = cluster.nodeForSlot(keySlot("rep:1"));
      await owner.command(["WAIT", 1, 2000]);
      // Replicas are routed to once the cluster reports them online (after replication).
      const end = Date.now() + 10_000;
      for (;;) {
        await c.refreshTopology();
        if (
          c.nodes().some((n) =>
            n.role === "replica" && n.health === "online" && n.primary === `127.0.0.1:${owner.port}`
          )
        ) break;
        if (Date.now() > end) throw new Error("replica never online");
        await owner.command(["INCR", "rep:tick"]).catch(() => {});
        await sleep(200);
      }
      const replica = cluster.replicasOf(owner)[0]!;
      const before = String(await replica.command(["INFO", "commandstats"]));
      const calls = (s: string) => Number(/cmdstat_get:calls=(\d+)/.exec(s)?.[1] ?? 0);
      for (let i = 0; i < 10; i++) assert.equal(await c.get("rep:1"), "v");
      const afterStats = String(await replica.command(["INFO", "commandstats"]));
      assert.ok(calls(afterStats) - calls(before) >= 10, "the replica served the reads");
      assert.equal(await c.set("rep:1", "w"), "OK");
      assert.equal(await owner.command(["GET", "rep:1"]), "w");
    }, { readFrom: "replica" });
  });
});
