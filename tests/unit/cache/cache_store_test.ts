// The bounded LRU store of the client-side cache: bounds, key index, ttl, in-flight tickets.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type CacheEntry, CacheStore } from "../../../src/cache/cache_store.ts";

function store(
  o: {
    maxEntries?: number;
    maxBytes?: number;
    ttl?: number;
    now?: () => number;
  } = {},
) {
  return new CacheStore<string>({
    maxEntries: o.maxEntries ?? 100,
    maxBytes: o.maxBytes ?? 1 << 20,
    ttl: o.ttl ?? 0,
    clock: o.now ? { now: o.now } : undefined,
  });
}

/** The key each entry name was last stored under, so the tests can look entries up by name. */
const keyOf = new Map<string, string>();

function put(
  s: CacheStore<string>,
  key: string,
  id: string,
  value: string,
  bytes = 10,
): boolean {
  keyOf.set(id, key);
  return s.settle(s.begin(key), key, id, value, bytes);
}

function get(
  s: CacheStore<string>,
  id: string,
): CacheEntry<string> | undefined {
  return s.get(keyOf.get(id) ?? id, id);
}

describe("CacheStore", () => {
  it("keeps a settled reply and counts hits and misses", () => {
    const s = store();
    assert.equal(get(s, "a"), undefined);
    assert.equal(put(s, "k", "a", "v"), true);
    assert.equal(get(s, "a")?.value, "v");
    assert.deepEqual(s.stats(), {
      hits: 1,
      misses: 1,
      entries: 1,
      bytes: 10,
      evictions: 0,
      invalidations: 0,
      flushes: 0,
      expired: 0,
      bytesSaved: 10,
    });
  });

  it("evicts the least recently used entry past maxEntries", () => {
    const s = store({ maxEntries: 3 });
    put(s, "k1", "1", "a");
    put(s, "k2", "2", "b");
    put(s, "k3", "3", "c");
    get(s, "1"); // 2 is now the least recently used
    put(s, "k4", "4", "d");
    assert.equal(s.size, 3);
    assert.equal(get(s, "2"), undefined);
    assert.ok(get(s, "1") && get(s, "3") && get(s, "4"));
    assert.equal(s.stats().evictions, 1);
  });

  it("evicts past maxBytes and never keeps a reply larger than maxBytes", () => {
    const s = store({ maxBytes: 100 });
    for (let i = 0; i < 10; i++) put(s, `k${i}`, `${i}`, "x", 30);
    assert.equal(s.size, 3);
    assert.equal(s.stats().bytes, 90);
    assert.equal(put(s, "big", "big", "x", 101), false);
    assert.equal(get(s, "big"), undefined);
    assert.ok(s.stats().bytes <= 100);
    assert.deepEqual(["7", "8", "9"].map((id) => get(s, id)?.value), [
      "x",
      "x",
      "x",
    ]);
  });

  it("drops every entry of an invalidated key and only those", () => {
    const s = store();
    put(s, "k", "GET k", "v");
    put(s, "k", "STRLEN k", "1");
    put(s, "k", "bGET k", "v");
    put(s, "other", "GET other", "w");
    s.invalidate(["k"]);
    assert.equal(get(s, "GET k"), undefined);
    assert.equal(get(s, "STRLEN k"), undefined);
    assert.equal(get(s, "bGET k"), undefined);
    assert.equal(get(s, "GET other")?.value, "w");
    assert.equal(s.stats().invalidations, 3);
    assert.equal(s.stats().entries, 1);
    assert.equal(s.stats().bytes, 10);
  });

  it("the same command name under two keys is two entries", () => {
    const s = store();
    s.settle(s.begin("a"), "a", "GET", "1", 10);
    s.settle(s.begin("b"), "b", "GET", "2", 10);
    assert.equal(s.get("a", "GET")?.value, "1");
    assert.equal(s.get("b", "GET")?.value, "2");
    assert.equal(s.get("a", "STRLEN"), undefined);
    s.invalidate(["a"]);
    assert.equal(s.get("a", "GET"), undefined);
    assert.equal(s.get("b", "GET")?.value, "2");
  });

  it("removes an entry from the middle of a key's list", () => {
    const s = store({ maxEntries: 3 });
    put(s, "k", "1", "a");
    put(s, "k", "2", "b");
    put(s, "k", "3", "c");
    get(s, "1");
    get(s, "3");
    put(s, "x", "4", "d"); // evicts 2, in the middle of k's list
    s.invalidate(["k"]);
    assert.equal(s.size, 1);
    assert.equal(get(s, "4")?.value, "d");
  });

  it("does not keep a reply whose key was invalidated while it was on its way", () => {
    const s = store();
    const t = s.begin("k");
    s.invalidate(["k"]);
    assert.equal(s.settle(t, "k", "GET k", "old", 10), false);
    assert.equal(get(s, "GET k"), undefined);
    // A read sent after the invalidation is kept.
    assert.equal(put(s, "k", "GET k", "new"), true);
  });

  it("an invalidation before a read was sent does not spoil it, even with another read on its way", () => {
    const s = store();
    const t1 = s.begin("k");
    s.invalidate(["k"]);
    const t2 = s.begin("k");
    assert.equal(s.settle(t1, "k", "a", "old", 10), false);
    assert.equal(s.settle(t2, "k", "b", "new", 10), true);
  });

  it("a flush spoils every read on its way; a released read leaves no trace", () => {
    const s = store();
    const t1 = s.begin("a");
    const t2 = s.begin("b");
    s.begin("c");
    s.release("c");
    s.invalidateAll();
    assert.equal(s.settle(t1, "a", "a", "x", 10), false);
    assert.equal(s.settle(t2, "b", "b", "x", 10), false);
    assert.equal(s.stats().flushes, 1);
    assert.equal(put(s, "c", "c", "x"), true);
  });

  it("invalidateWhere drops matching keys and spoils matching reads on their way", () => {
    const s = store();
    put(s, "{a}1", "1", "x");
    put(s, "{b}1", "2", "x");
    const t = s.begin("{a}2");
    s.invalidateWhere((k) => k.startsWith("{a}"));
    assert.equal(get(s, "1"), undefined);
    assert.equal(get(s, "2")?.value, "x");
    assert.equal(s.settle(t, "{a}2", "3", "x", 10), false);
  });

  it("expires entries after ttl with the injected clock", () => {
    let now = 1000;
    const s = store({ ttl: 50, now: () => now });
    put(s, "k", "a", "v");
    now = 1049;
    assert.equal(get(s, "a")?.value, "v");
    now = 1050;
    assert.equal(get(s, "a"), undefined);
    assert.equal(s.stats().evictions, 1);
    assert.equal(s.stats().expired, 1);
    assert.equal(s.size, 0);
  });

  it("replacing an entry of the same command keeps the counts right", () => {
    const s = store();
    put(s, "k", "a", "v1", 10);
    put(s, "k", "a", "v2", 20);
    assert.equal(s.size, 1);
    assert.equal(s.stats().bytes, 20);
    assert.equal(get(s, "a")?.value, "v2");
    s.invalidate(["k"]);
    assert.equal(s.stats().bytes, 0);
  });
});
