// Client-side caching against a real redis-server: invalidation by other clients' writes for
// every cached family (RESP3 tracking and RESP2 redirect), a reply in flight when its key
// changed, flushes on reconnect and handoff, broadcast mode, bounds, the binary view, a
// stale-read count under concurrent readers and writers, and a cached miss on a cluster whose
// slot moves live.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ClientShell, RedisClient } from "../../mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { RedisSentinelClient } from "../../src/sentinel/mod.ts";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { type RedisCluster, startCluster } from "../_helpers/cluster.ts";
import { type SentinelGroup, startSentinelGroup } from "../_helpers/sentinel.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

async function until(pred: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Waits until the client answers from memory (RESP2: once its redirect is set up). */
async function cachingOn(c: ClientShell<object>): Promise<void> {
  const end = Date.now() + 3000;
  const before = stats(c).hits;
  while (stats(c).hits === before) {
    if (Date.now() > end) throw new Error("Timed out waiting for the cache to answer");
    await c.get("probe:caching-on");
    await sleep(5);
  }
}

function stats(c: ClientShell<object>) {
  const s = c.cacheStats();
  assert.ok(s, "the cache is on");
  return s;
}

/** One cached read family: seed, read, change, and the values before and after. */
interface Family {
  name: string;
  seed(w: RedisClient, k: string): Promise<unknown>;
  read(c: RedisClient, k: string): Promise<unknown>;
  change(w: RedisClient, k: string): Promise<unknown>;
  before: unknown;
  after: unknown;
}

const FAMILIES: Family[] = [
  {
    name: "GET",
    seed: (w, k) => w.set(k, "a"),
    read: (c, k) => c.get(k),
    change: (w, k) => w.set(k, "b"),
    before: "a",
    after: "b",
  },
  {
    name: "STRLEN",
    seed: (w, k) => w.set(k, "abc"),
    read: (c, k) => c.strlen(k),
    change: (w, k) => w.append(k, "de"),
    before: 3,
    after: 5,
  },
  {
    name: "GETRANGE",
    seed: (w, k) => w.set(k, "hello"),
    read: (c, k) => c.getrange(k, 0, 1),
    change: (w, k) => w.set(k, "world"),
    before: "he",
    after: "wo",
  },
  {
    name: "GETBIT",
    seed: (w, k) => w.setbit(k, 3, 0),
    read: (c, k) => c.getbit(k, 3),
    change: (w, k) => w.setbit(k, 3, 1),
    before: 0,
    after: 1,
  },
  {
    name: "EXISTS",
    seed: (w, k) => w.set(k, "x"),
    read: (c, k) => c.exists(k),
    change: (w, k) => w.del(k),
    before: 1,
    after: 0,
  },
  {
    name: "HGET",
    seed: (w, k) => w.hset(k, "f", "1"),
    read: (c, k) => c.hget(k, "f"),
    change: (w, k) => w.hset(k, "f", "2"),
    before: "1",
    after: "2",
  },
  {
    name: "HGETALL",
    seed: (w, k) => w.hset(k, "f", "1"),
    read: (c, k) => c.hgetall(k),
    change: (w, k) => w.hset(k, "g", "2"),
    before: { f: "1" },
    after: { f: "1", g: "2" },
  },
  {
    name: "HMGET",
    seed: (w, k) => w.hset(k, "f", "1"),
    read: (c, k) => c.hmget(k, "f", "g"),
    change: (w, k) => w.hset(k, "g", "2"),
    before: ["1", null],
    after: ["1", "2"],
  },
  {
    name: "LRANGE",
    seed: (w, k) => w.rpush(k, "a"),
    read: (c, k) => c.lrange(k, 0, -1),
    change: (w, k) => w.rpush(k, "b"),
    before: ["a"],
    after: ["a", "b"],
  },
  {
    name: "LLEN",
    seed: (w, k) => w.rpush(k, "a"),
    read: (c, k) => c.llen(k),
    change: (w, k) => w.lpop(k),
    before: 1,
    after: 0,
  },
  {
    name: "SMEMBERS",
    seed: (w, k) => w.sadd(k, "a"),
    read: async (c, k) => (await c.smembers(k)).sort(),
    change: (w, k) => w.sadd(k, "b"),
    before: ["a"],
    after: ["a", "b"],
  },
  {
    name: "SISMEMBER",
    seed: (w, k) => w.sadd(k, "a"),
    read: (c, k) => c.sismember(k, "b"),
    change: (w, k) => w.sadd(k, "b"),
    before: false,
    after: true,
  },
  {
    name: "ZRANGE",
    seed: (w, k) => w.zadd(k, { score: 1, member: "a" }),
    read: (c, k) => c.zrange(k, 0, -1),
    change: (w, k) => w.zadd(k, { score: 0, member: "b" }),
    before: ["a"],
    after: ["b", "a"],
  },
  {
    name: "ZSCORE",
    seed: (w, k) => w.zadd(k, { score: 1, member: "a" }),
    read: (c, k) => c.zscore(k, "a"),
    change: (w, k) => w.zincrby(k, 2, "a"),
    before: 1,
    after: 3,
  },
  {
    name: "XLEN",
    seed: (w, k) => w.xadd(k, "*", { f: "1" }),
    read: (c, k) => c.xlen(k),
    change: (w, k) => w.xadd(k, "*", { f: "2" }),
    before: 1,
    after: 2,
  },
  {
    name: "XRANGE",
    seed: (w, k) => w.xadd(k, "1-1", { f: "1" }),
    read: async (c, k) => (await c.xrange(k)).map((e) => e.id),
    change: (w, k) => w.xadd(k, "2-1", { f: "2" }),
    before: ["1-1"],
    after: ["1-1", "2-1"],
  },
  {
    name: "GEOPOS",
    seed: (w, k) => w.geoadd(k, { longitude: 13.361389, latitude: 38.115556, member: "a" }),
    read: async (c, k) => (await c.geopos(k, "b"))[0] === null,
    change: (w, k) => w.geoadd(k, { longitude: 15.087269, latitude: 37.502669, member: "b" }),
    before: true,
    after: false,
  },
  {
    name: "TYPE",
    seed: (w, k) => w.set(k, "x"),
    read: (c, k) => c.type(k),
    change: async (w, k) => {
      await w.del(k);
      await w.rpush(k, "x");
    },
    before: "string",
    after: "list",
  },
];

describe("client-side cache", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const protocol of [3, 2] as const) {
    it(`another client's write invalidates every cached family (RESP${protocol})`, async () => {
      const c = new RedisClient({ url: server.url, protocol, clientSideCache: clientSideCache() });
      const w = new RedisClient({ url: server.url });
      await cachingOn(c);
      for (const f of FAMILIES) {
        const k = `fam:${protocol}:${f.name}`;
        await f.seed(w, k);
        assert.deepEqual(await f.read(c, k), f.before, `${f.name}: first read`);
        const hits = stats(c).hits;
        assert.deepEqual(await f.read(c, k), f.before, `${f.name}: second read`);
        assert.equal(stats(c).hits, hits + 1, `${f.name}: the second read is a hit`);
        const dropped = stats(c).invalidations;
        await f.change(w, k);
        await until(() => stats(c).invalidations > dropped, `${f.name}: the invalidation`);
        assert.deepEqual(await f.read(c, k), f.after, `${f.name}: read after the write`);
      }
      await Promise.all([c.close(), w.close()]);
      await assertNoLeaks();
    });
  }

  it("turns tracking on for the shared connection, and again on a new connection", async () => {
    const c = new RedisClient({
      url: server.url,
      clientSideCache: clientSideCache({ maxEntries: 100 }),
    });
    const plain = new RedisClient({ url: server.url });
    assert.match((await c.clientInfo()).flags ?? "", /t/);
    assert.doesNotMatch((await plain.clientInfo()).flags ?? "", /t/);
    assert.equal(plain.cacheStats(), undefined);
    const id = await c.clientId();
    const reconnecting = new Promise((r) => c.addEventListener("reconnecting", r, { once: true }));
    await plain.clientKill({ id });
    await reconnecting;
    assert.match((await c.clientInfo()).flags ?? "", /t/);
    assert.notEqual(await c.clientId(), id);
    await Promise.all([c.close(), plain.close()]);
    await assertNoLeaks();
  });

  it("a reply in flight when its key changed is returned but not kept", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    const ctl = new RedisClient({ url: server.url });
    await Promise.all([c.ping(), w.set("race", "v1"), ctl.ping()]);
    for (let round = 0; round < 3; round++) {
      const value = `v${round + 1}`;
      const next = `v${round + 2}`;
      // Every client is paused: the read reaches the server first, the write second; both run
      // in one event loop turn, so the reply and the invalidation arrive together.
      await ctl.sendCommand(["CLIENT", "PAUSE", 300, "ALL"]);
      const read = c.get("race");
      await sleep(60);
      const write = w.set("race", next);
      assert.equal(await read, value, "the caller gets the reply it asked for");
      await write;
      await c.ping();
      assert.equal(stats(c).entries, 0, "the reply was not kept");
      const misses = stats(c).misses;
      assert.equal(await c.get("race"), next, "the next read goes to the server");
      assert.equal(stats(c).misses, misses + 1);
      assert.equal(await c.get("race"), next);
    }
    await Promise.all([c.close(), w.close(), ctl.close()]);
    await assertNoLeaks();
  });

  it("never caches inside MULTI, blocking or time-dependent commands", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    await c.set("nc", "v", { ex: 100 });
    await c.rpush("nc:list", "a", "b");
    await c.ping();
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await c.multi().get("nc").exec(), ["v"]);
      assert.ok((await c.ttl("nc")) > 0);
      assert.ok(["a", "b"].includes((await c.srandmember("nc:set")) ?? "a"));
      await c.blpop(["nc:list"], 1);
    }
    assert.equal(stats(c).entries, 0);
    assert.equal(stats(c).hits, 0);
    await c.close();
    await assertNoLeaks();
  });

  it("the client's own writes drop its entries before they are sent", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    await c.set("own", "1");
    await c.ping();
    assert.equal(await c.get("own"), "1");
    assert.equal(await c.get("own"), "1");
    await c.incr("own");
    assert.equal(await c.get("own"), "2");
    await c.multi().incr("own").exec();
    assert.equal(await c.get("own"), "3");
    await c.sendCommand(["INCR", "own"]);
    assert.equal(await c.get("own"), "4");
    await c.close();
    await assertNoLeaks();
  });

  it("a lost connection drops the whole cache: a write made meanwhile is seen", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    await w.set("rc", "before");
    await c.ping();
    assert.equal(await c.get("rc"), "before");
    assert.equal(await c.get("rc"), "before");
    assert.equal(stats(c).entries, 1);
    const flushes = stats(c).flushes;
    const reconnecting = new Promise((r) => c.addEventListener("reconnecting", r, { once: true }));
    await w.clientKill({ id: await c.clientId() });
    await reconnecting;
    assert.equal(stats(c).entries, 0);
    assert.ok(stats(c).flushes > flushes);
    // The server forgot what the killed connection tracked: only the flush keeps this fresh.
    await w.set("rc", "after");
    assert.equal(await c.get("rc"), "after");
    assert.equal(await c.get("rc"), "after");
    const dropped = stats(c).invalidations;
    await w.set("rc", "again");
    await until(() => stats(c).invalidations > dropped, "the invalidation on the new connection");
    assert.equal(await c.get("rc"), "again");
    await Promise.all([c.close(), w.close()]);
    await assertNoLeaks();
  });

  it("RESP2: losing the invalidation connection drops the cache until it is back", async () => {
    const c = new RedisClient({ url: server.url, protocol: 2, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    await w.set("r2", "1");
    await cachingOn(c);
    const flushes = stats(c).flushes;
    await w.clientKill({ type: "pubsub" });
    await until(() => stats(c).flushes > flushes, "the flush");
    await w.set("r2", "2");
    assert.equal(await c.get("r2"), "2");
    await cachingOn(c);
    assert.equal(await c.get("r2"), "2");
    assert.equal(await c.get("r2"), "2");
    assert.ok(stats(c).entries >= 2, "r2 is cached again");
    const dropped = stats(c).invalidations;
    await w.set("r2", "3");
    await until(() => stats(c).invalidations > dropped, "the invalidation on the new redirect");
    assert.equal(await c.get("r2"), "3");
    await Promise.all([c.close(), w.close()]);
    await assertNoLeaks();
  });

  for (const protocol of [3, 2] as const) {
    it(`a silent invalidation connection stops the hits within maxStaleness (RESP${protocol})`, async () => {
      // The cached client reaches the server through a proxy that goes silent (paused: nothing
      // forwarded either way, as a blackholed path); another client overwrites the key directly.
      const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
      const c = new RedisClient({ ...sim.endpoint, protocol, clientSideCache: clientSideCache() });
      const w = new RedisClient({ url: server.url });
      const k = `silent:${protocol}`;
      await w.set(k, "old");
      await cachingOn(c);
      assert.equal(await c.get(k), "old");
      assert.equal(await c.get(k), "old");
      sim.faults.pause();
      const pausedAt = Date.now();
      await w.set(k, "new");
      let lastStaleAt = pausedAt;
      let staleReads = 0;
      const pending: Promise<unknown>[] = [];
      while (Date.now() - pausedAt < 4_000) {
        const read = c.get(k);
        const v = await Promise.race([read, sleep(100).then(() => "pending")]);
        if (v === "pending") {
          pending.push(read);
          break;
        }
        assert.equal(v, "old");
        staleReads++;
        lastStaleAt = Date.now();
        await sleep(20);
      }
      const staleFor = lastStaleAt - pausedAt;
      assert.equal(pending.length, 1, `the cache stopped answering (${staleReads} stale hits)`);
      assert.ok(staleFor <= 1_300, `stale hits for ${staleFor} ms after the path went silent`);
      sim.faults.resume();
      assert.deepEqual(await Promise.all(pending), ["new"], "the read sent meanwhile answers");
      assert.equal(await c.get(k), "new");
      await cachingOn(c); // heard from again: hits are served again
      await Promise.all([c.close(), w.close()]);
      await sim.close();
      await assertNoLeaks();
    });
  }

  it("a MOVING handoff drops the whole cache; tracking follows the new connection", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const c = new RedisClient({ ...sim.endpoint, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    await w.set("ho", "1");
    await c.ping();
    assert.equal(await c.get("ho"), "1");
    assert.equal(await c.get("ho"), "1");
    assert.equal(stats(c).entries, 1);
    const flushes = stats(c).flushes;
    const handoff = new Promise((r) => c.addEventListener("handoff", r, { once: true }));
    const bind = sim.bind({ time: 1 });
    await handoff;
    assert.equal(stats(c).entries, 0, "the handoff dropped the cache");
    assert.ok(stats(c).flushes > flushes);
    assert.equal(await c.get("ho"), "1");
    assert.equal(await c.get("ho"), "1");
    assert.equal(stats(c).entries, 1);
    const dropped = stats(c).invalidations;
    await w.set("ho", "2");
    await until(() => stats(c).invalidations > dropped, "the invalidation after the handoff");
    assert.equal(await c.get("ho"), "2");
    await bind;
    await Promise.all([c.close(), w.close()]);
    await sim.close();
    await assertNoLeaks();
  });

  for (const protocol of [3, 2] as const) {
    it(`broadcast mode caches the prefixes only and is invalidated by prefix (RESP${protocol})`, async () => {
      const c = new RedisClient({
        url: server.url,
        protocol,
        clientSideCache: clientSideCache({ mode: "broadcast", prefixes: [`bc${protocol}:`] }),
      });
      const w = new RedisClient({ url: server.url });
      await w.set(`bc${protocol}:1`, "a");
      await w.set(`other${protocol}:1`, "a");
      await c.ping();
      const end = Date.now() + 3000;
      while (stats(c).hits === 0 && Date.now() < end) await c.get(`bc${protocol}:1`);
      assert.ok(stats(c).hits > 0, "caching");
      await c.get(`other${protocol}:1`);
      await c.get(`other${protocol}:1`);
      assert.equal(stats(c).entries, 1, "only the prefix is cached");
      const dropped = stats(c).invalidations;
      await w.set(`bc${protocol}:1`, "b");
      await until(() => stats(c).invalidations > dropped, "the broadcast invalidation");
      assert.equal(await c.get(`bc${protocol}:1`), "b");
      await Promise.all([c.close(), w.close()]);
      await assertNoLeaks();
    });
  }

  it("keeps within maxEntries and maxBytes, evicting the least recently used", async () => {
    const c = new RedisClient({
      url: server.url,
      clientSideCache: clientSideCache({ maxEntries: 50 }),
    });
    const b = new RedisClient({
      url: server.url,
      clientSideCache: clientSideCache({ maxBytes: 20_000 }),
    });
    const value = "x".repeat(1000);
    const p = c.pipeline();
    for (let i = 0; i < 200; i++) p.set(`ev:${i}`, value);
    await p.exec();
    await Promise.all([c.ping(), b.ping()]);
    for (let i = 0; i < 200; i++) {
      await c.get(`ev:${i}`);
      await b.get(`ev:${i}`);
    }
    assert.equal(stats(c).entries, 50);
    assert.equal(stats(c).evictions, 150);
    assert.ok(stats(b).bytes <= 20_000, `${stats(b).bytes} bytes`);
    assert.ok(stats(b).entries >= 10 && stats(b).entries < 20, `${stats(b).entries} entries`);
    // The most recent ones are kept.
    const hits = stats(c).hits;
    await c.get("ev:199");
    assert.equal(stats(c).hits, hits + 1);
    await c.get("ev:0");
    assert.equal(stats(c).hits, hits + 1);
    await Promise.all([c.close(), b.close()]);
    await assertNoLeaks();
  });

  it("expires entries after ttl", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache({ ttl: 100 }) });
    await c.set("ttl:k", "v");
    await c.ping();
    await c.get("ttl:k");
    await c.get("ttl:k");
    assert.equal(stats(c).hits, 1);
    await sleep(150);
    await c.get("ttl:k");
    assert.equal(stats(c).hits, 1);
    assert.equal(stats(c).evictions, 1);
    await c.close();
    await assertNoLeaks();
  });

  it("the binary view has its own entries; an invalidation drops both", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    await w.set("bin", "abc");
    await c.ping();
    const bin = c.binary();
    assert.equal(await c.get("bin"), "abc");
    assert.deepEqual(await bin.get("bin"), new TextEncoder().encode("abc"));
    assert.equal(await c.get("bin"), "abc");
    const bytes = await bin.get("bin");
    assert.ok(bytes instanceof Uint8Array);
    bytes[0] = 0; // the caller's copy
    assert.deepEqual(await bin.get("bin"), new TextEncoder().encode("abc"));
    assert.equal(stats(c).entries, 2);
    assert.equal(stats(c).hits, 3);
    const dropped = stats(c).invalidations;
    await w.set("bin", "xyz");
    await until(() => stats(c).invalidations >= dropped + 2, "both invalidated");
    assert.equal(await c.get("bin"), "xyz");
    assert.deepEqual(await bin.get("bin"), new TextEncoder().encode("xyz"));
    await Promise.all([c.close(), w.close()]);
    await assertNoLeaks();
  });

  it("a key's expiry reaches the cache when the server expires it", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    await c.ping();
    await w.set("exp:k", "v", { px: 100 });
    assert.equal(await c.get("exp:k"), "v");
    assert.equal(await c.get("exp:k"), "v");
    assert.equal(stats(c).entries, 1);
    // The server's active expiry deletes the key and sends the invalidation.
    await until(() => stats(c).entries === 0, "the expiry's invalidation");
    assert.equal(await c.get("exp:k"), null);
    await Promise.all([c.close(), w.close()]);
    await assertNoLeaks();
  });

  it("a FLUSHALL by another client (null invalidation) drops everything", async () => {
    const c = new RedisClient({ url: server.url, clientSideCache: clientSideCache() });
    const w = new RedisClient({ url: server.url });
    await w.set("fa:1", "1");
    await w.set("fa:2", "2");
    await c.ping();
    for (const k of ["fa:1", "fa:2", "fa:1", "fa:2"]) await c.get(k);
    assert.equal(stats(c).entries, 2);
    const flushes = stats(c).flushes;
    await w.flushall();
    await until(() => stats(c).flushes > flushes, "the null invalidation");
    assert.equal(await c.get("fa:1"), null);
    await Promise.all([c.close(), w.close()]);
    await assertNoLeaks();
  });

  for (const mode of ["default", "broadcast"] as const) {
    it(`8 readers, 4 writers: no stale read once a write is acknowledged and a round trip passed (${mode})`, async () => {
      const keys = [0, 1, 2, 3].map((i) => `stale:${mode}:${i}`);
      const readers = Array.from(
        { length: 8 },
        () =>
          new RedisClient({
            url: server.url,
            clientSideCache: clientSideCache(
              mode === "broadcast" ? { mode, prefixes: ["stale:"] } : {},
            ),
          }),
      );
      const writers = keys.map(() => new RedisClient({ url: server.url }));
      for (const k of keys) await writers[0]!.set(k, "0");
      await Promise.all(readers.map((r) => r.ping()));
      const settled = keys.map(() => 0);
      let stale = 0;
      let reads = 0;
      let running = true;
      const write = async (i: number) => {
        for (let v = 1; running; v++) {
          await writers[i]!.set(keys[i]!, String(v));
          // One round trip on every reader's connection: its invalidation (sent before this
          // write was acknowledged) is ahead of the PONG.
          await Promise.all(readers.map((r) => r.ping()));
          settled[i] = v;
          await sleep(2);
        }
      };
      const read = async (r: RedisClient, seed: number) => {
        for (let n = seed; running; n++) {
          const i = n % keys.length;
          const floor = settled[i]!;
          const got = Number(await r.get(keys[i]!));
          reads++;
          if (got < floor) stale++;
          if (n % 16 === 0) await sleep(0);
        }
      };
      const work = [
        ...keys.map((_, i) => write(i)),
        ...readers.map((r, j) => read(r, j)),
      ];
      await sleep(1500);
      running = false;
      await Promise.all(work);
      const hits = readers.reduce((a, r) => a + stats(r).hits, 0);
      const invalidations = readers.reduce((a, r) => a + stats(r).invalidations, 0);
      console.log(
        `  stale reads (${mode}): ${stale} of ${reads}; ${hits} hits, ${invalidations} invalidations, ` +
          `${settled.reduce((a, b) => a + b, 0)} writes`,
      );
      assert.equal(stale, 0);
      assert.ok(hits > reads / 2, `${hits} hits of ${reads} reads`);
      assert.ok(invalidations > 0);
      await Promise.all([...readers, ...writers].map((c) => c.close()));
      await assertNoLeaks();
    });
  }

  it("rejects bad cache options with RangeError or TypeError where the part is made", () => {
    assert.throws(() => clientSideCache({ maxEntries: 0 }), RangeError);
    assert.throws(() => clientSideCache({ mode: "bcast" as "broadcast" }), TypeError);
  });
});

describe("client-side cache: sentinel", () => {
  beforeEach(markLeakBaseline);
  let group: SentinelGroup;
  before(async () => {
    group = await startSentinelGroup({ replicas: 1, persistence: false });
  });
  after(async () => {
    await group?.stop();
  });

  it("a master switch drops the whole cache; tracking follows the new master", async () => {
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      clientSideCache: clientSideCache(),
    });
    await client.set("sw", "1");
    assert.equal(await client.get("sw"), "1");
    assert.equal(await client.get("sw"), "1");
    assert.equal(stats(client).entries, 1);
    const flushes = stats(client).flushes;
    const switched = new Promise<void>((resolve) =>
      client.addEventListener("switch", (e) => {
        if ((e as CustomEvent<{ from?: unknown }>).detail.from !== undefined) resolve();
      })
    );
    const next = await group.failover();
    await switched;
    assert.equal(stats(client).entries, 0, "the switch dropped the cache");
    assert.ok(stats(client).flushes > flushes);
    assert.equal(await client.get("sw"), "1");
    assert.equal(await client.get("sw"), "1");
    assert.equal(stats(client).entries, 1);
    const dropped = stats(client).invalidations;
    await group.command(next, ["SET", "sw", "2"]);
    await until(
      () => stats(client).invalidations > dropped,
      "the invalidation from the new master",
    );
    assert.equal(await client.get("sw"), "2");
    await client.close();
    await assertNoLeaks();
  });
});

describe("client-side cache: cluster", () => {
  beforeEach(markLeakBaseline);
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startCluster({ replicasPerPrimary: 0 });
  });
  after(async () => {
    await cluster?.stop();
  });

  it("a cached miss of a slot moved live is served at most clusterMissTtl; hits stay", async () => {
    const client = new RedisClusterClient({
      nodes: cluster.seeds,
      topologyRefreshInterval: 0,
      clientSideCache: clientSideCache({ clusterMissTtl: 500 }),
    });
    const writer = new RedisClusterClient({ nodes: cluster.seeds, topologyRefreshInterval: 0 });
    try {
      const key = "csc:moving";
      const present = "csc:present{csc:moving}";
      const slot = keySlot(key);
      const to = cluster.primaries().find((p) => p.id !== cluster.nodeForSlot(slot).id)!;
      const steady = "csc:steady";
      assert.notEqual(cluster.nodeForSlot(keySlot(steady)).id, cluster.nodeForSlot(slot).id);
      await writer.set(present, "p");
      await writer.set(steady, "s");
      await cachingOn(client);
      assert.equal(await client.get(steady), "s");
      assert.equal(await client.get(key), null);
      assert.equal(await client.get(present), "p");
      const hits = stats(client).hits;
      assert.equal(await client.get(key), null);
      assert.equal(await client.get(present), "p");
      assert.equal(stats(client).hits, hits + 2, "both from memory");
      // The slot moves; the key is written on its new owner, which never saw this client read it.
      await cluster.migrateSlot(slot, to.id);
      await writer.set(key, "v");
      const written = Date.now();
      let value: string | null = null;
      while (value === null && Date.now() - written < 5000) {
        value = await client.get(key);
        if (value === null) await sleep(20);
      }
      const stale = Date.now() - written;
      console.log(`cached miss after a live slot move: served stale for ${stale} ms`);
      assert.equal(value, "v", `still the cached miss after ${stale} ms`);
      assert.ok(stale <= 500 + 400, `stale for ${stale} ms`);
      // A reply of an existing key has no such bound: still from memory past clusterMissTtl.
      const h = stats(client).hits;
      assert.equal(await client.get(steady), "s");
      assert.equal(stats(client).hits, h + 1, "an existing key's reply outlives clusterMissTtl");
      // The existing key of the moved slot was invalidated when it migrated: read anew there.
      await writer.set(present, "q");
      let p = await client.get(present);
      const end = Date.now() + 1000;
      while (p !== "q" && Date.now() < end) {
        await sleep(10);
        p = await client.get(present);
      }
      assert.equal(p, "q");
    } finally {
      await writer.close();
      await client.close();
    }
    await assertNoLeaks();
  });
});
