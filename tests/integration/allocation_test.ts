// What one command allocates, counted by the runtime itself (load-independent, unlike time): on
// Bun the objects a window of serial GETs creates (`bun:jsc` heapStats, which counts cells not
// collected yet), on Deno the bytes (V8's sampling heap profiler through `node:inspector`,
// counting objects collected since). Bounds sit between the hot path before and after its
// allocation work (bench/alloc.ts measures the same): Bun 9.09 -> 8.09 objects per GET, Deno
// 3100 -> 2330 bytes per GET; an MGET of 100 keys 11 088 -> 8 803 bytes on Deno, 9 156 -> 8 402
// heap bytes on Bun.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { otelMetrics } from "../../src/observability/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { metricsHarness } from "../_helpers/otel.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const isBun = "Bun" in globalThis;
const WINDOW = 2000;
const KEYS = Array.from({ length: 100 }, (_, i) => `alloc:m:${i}`);

/**
 * Objects created (and heap bytes, at the heap's block granularity) per call of `body` on Bun,
 * medians of windows with no collection in them.
 */
async function bunAllocationPer(
  body: () => Promise<void>,
  count: number,
): Promise<{ objects: number; bytes: number }> {
  const jsc: Any = await import("bun:jsc");
  const gc = (globalThis as Any).Bun.gc as (full: boolean) => void;
  const per: number[] = [];
  const bytes: number[] = [];
  for (let r = 0; r < 7; r++) {
    gc(true);
    const a = jsc.heapStats();
    await body();
    const b = jsc.heapStats();
    if (b.objectCount !== a.objectCount) continue; // a collection ran: the counts are off
    let total = 0;
    for (const t of Object.keys(b.objectTypeCounts)) {
      total += b.objectTypeCounts[t] - (a.objectTypeCounts[t] ?? 0);
    }
    per.push(total / count);
    bytes.push((b.heapCapacity - a.heapCapacity) / count);
  }
  assert.ok(per.length >= 3, `only ${per.length} windows without a collection`);
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
  return { objects: median(per), bytes: median(bytes) };
}

/** Bytes allocated per call of `body` on Deno (V8's sampling heap profiler, every 32 bytes). */
async function v8BytesPer(body: () => Promise<void>, count: number): Promise<number> {
  const { Session } = await import("node:inspector");
  const s = new Session();
  s.connect();
  const post = (method: string, params: object = {}): Promise<Any> =>
    new Promise((resolve, reject) =>
      s.post(method, params, (e: Error | null, r: Any) => e ? reject(e) : resolve(r))
    );
  try {
    await post("HeapProfiler.enable");
    await post("HeapProfiler.startSampling", {
      samplingInterval: 32,
      includeObjectsCollectedByMinorGC: true,
      includeObjectsCollectedByMajorGC: true,
    });
    await body();
    const { profile } = await post("HeapProfiler.stopSampling");
    let total = 0;
    const walk = (n: Any): void => {
      total += n.selfSize;
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    return total / count;
  } finally {
    await post("HeapProfiler.disable").catch(() => {});
    s.disconnect();
  }
}

describe("allocation per command", () => {
  let server: RedisServer;
  let client: RedisClient;
  before(async () => {
    server = await startRedis();
    client = new RedisClient({ url: server.url });
    await client.set("alloc:k", "0123456789abcdef");
    for (const k of KEYS) await client.set(k, "0123456789abcdef");
  });
  after(async () => {
    await client.close();
    await server.stop();
  });

  const serial = async (n: number) => {
    for (let i = 0; i < n; i++) await client.get("alloc:k");
  };

  it("a serial GET allocates less than before the hot path work", async () => {
    await serial(20_000); // every tier of the JIT, pools and buffers at their working size
    assert.equal(await client.get("alloc:k"), "0123456789abcdef");
    if (isBun) {
      const { objects } = await bunAllocationPer(() => serial(WINDOW), WINDOW);
      // promise (4 cells: promise, its two resolving functions, their scope), the argument
      // array, the reply string, the socket's chunk and the encoded batch's view: 8
      assert.ok(objects < 8.6, `${objects.toFixed(2)} objects per serial GET (was 9.09)`);
    } else {
      const bytes = await v8BytesPer(() => serial(20_000), 20_000);
      // Deno's own read and write ops take about 1550 bytes of it
      assert.ok(bytes < 2700, `${bytes.toFixed(0)} bytes per serial GET (was 3100)`);
    }
  });

  it("the default metric groups allocate nothing more per command (no promise reaction)", async () => {
    const h = await metricsHarness();
    const metered = new RedisClient({
      url: server.url,
      metrics: otelMetrics({ meterProvider: h.meterProvider }),
    });
    try {
      const run = (c: RedisClient) => async (n: number) => {
        for (let i = 0; i < n; i++) await c.get("alloc:k");
      };
      const off = run(client);
      const on = run(metered);
      await off(20_000);
      await on(20_000);
      assert.equal(await metered.get("alloc:k"), "0123456789abcdef");
      if (isBun) {
        const a = (await bunAllocationPer(() => off(WINDOW), WINDOW)).objects;
        const b = (await bunAllocationPer(() => on(WINDOW), WINDOW)).objects;
        // a rejection handler on each command's promise: 2 more (8.16 -> 10.16); none: +0
        assert.ok(b - a < 0.8, `${a.toFixed(2)} objects per GET off, ${b.toFixed(2)} on`);
      } else {
        const a = await v8BytesPer(() => off(20_000), 20_000);
        const b = await v8BytesPer(() => on(20_000), 20_000);
        // a rejection handler on each command's promise: 220 bytes more (2365 -> 2585); none: +13
        assert.ok(b - a < 60, `${a.toFixed(0)} bytes per GET off, ${b.toFixed(0)} on`);
      }
    } finally {
      await metered.close();
      await h.shutdown();
    }
  });

  it("an MGET of 100 keys sizes its reply array once", async () => {
    const mget = async (n: number) => {
      for (let i = 0; i < n; i++) await client.mget(...KEYS);
    };
    await mget(3000);
    const r = await client.mget(...KEYS);
    assert.equal(r.length, 100);
    assert.equal(r[99], "0123456789abcdef");
    if (isBun) {
      const { bytes } = await bunAllocationPer(() => mget(500), 500);
      assert.ok(bytes < 8800, `${bytes.toFixed(0)} heap bytes per MGET (was 9156)`);
    } else {
      const bytes = await v8BytesPer(() => mget(3000), 3000);
      // 100 reply strings, the argument array and the reply array make most of it
      assert.ok(bytes < 9600, `${bytes.toFixed(0)} bytes per MGET (was 11 088)`);
    }
  });
});
