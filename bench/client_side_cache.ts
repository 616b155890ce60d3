// Client-side caching: cached GET over a hot set of 1 000 keys with 50 concurrent callers, ours
// cached against ours uncached and node-redis with its own client-side cache, each measurement in
// a fresh process, in the same run; and the memory one cached entry takes.
//
//   npx -y deno@2.9.6 run -A bench/client_side_cache.ts [--runtimes deno,bun] [--rounds N]
//                                                       [--duration ms] [--warmup ms] [--out dir]
//
// Writes <out>/client_side_cache.json and .md (default bench/results/).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const DENO_VERSION = "2.9.6";
const BUN_VERSION = "1.4.4";
const HOT_KEYS = 1000;
const CALLERS = 50;
const MEMORY_KEYS = 20_000;
const VALUE = "v".repeat(16);

const benchDir = dirname(fileURLToPath(import.meta.url));

// deno-lint-ignore no-explicit-any
type Any = any;

interface Contender {
  get(key: string): Promise<unknown>;
  /** Cache hits and misses so far, when the contender caches. */
  hitRatio(): number | undefined;
  /** The cache's own estimate of its bytes per entry, when it keeps one. */
  estimate?(): number;
  close(): Promise<unknown>;
}

interface WorkerOutput {
  contender: string;
  runtime: string;
  ok: boolean;
  error?: string;
  opsPerSec?: number;
  hitRatio?: number;
  /** Heap bytes per cached entry (16-byte values, 12-character keys), when the contender caches. */
  bytesPerEntry?: number;
  /** What the cache itself counts per entry (ours only). */
  estimatedBytesPerEntry?: number;
}

const CONTENDERS: Record<string, (url: string) => Promise<Contender>> = {
  async ours(url) {
    const { RedisClient } = await import(
      new URL("../mod.ts", import.meta.url).href
    );
    const c: Any = new RedisClient({ url });
    await c.connect();
    return {
      get: (k) => c.get(k),
      hitRatio: () => undefined,
      close: () => c.close(),
    };
  },
  async "ours-cached"(url) {
    const { RedisClient } = await import(
      new URL("../mod.ts", import.meta.url).href
    );
    const { clientSideCache } = await import(
      new URL("../src/cache/mod.ts", import.meta.url).href
    );
    const c: Any = new RedisClient({
      url,
      clientSideCache: clientSideCache({ maxEntries: 100_000 }),
    });
    await c.connect();
    return {
      get: (k) => c.get(k),
      hitRatio: () => {
        const s = c.cacheStats();
        return s.hits / Math.max(1, s.hits + s.misses);
      },
      estimate: () => {
        const s = c.cacheStats();
        return Math.round(s.bytes / Math.max(1, s.entries));
      },
      close: () => c.close(),
    };
  },
  async "node-redis-cached"(url) {
    const require = createRequire(join(benchDir, "worker.ts"));
    const { createClient } = require("redis");
    const c: Any = createClient({
      url,
      RESP: 3,
      clientSideCache: { ttl: 0, maxEntries: 100_000, evictPolicy: "LRU" },
    });
    c.on("error", () => {});
    await c.connect();
    return {
      get: (k) => c.get(k),
      hitRatio: () => c.clientSideCache?.stats().hitRate(),
      close: () => c.quit(),
    };
  },
};

function gc(): void {
  const g = globalThis as Any;
  if (g.Bun) g.Bun.gc(true);
  else if (typeof g.gc === "function") g.gc();
}

async function heapUsed(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().heapUsed;
}

async function worker(
  name: string,
  port: number,
  warmup: number,
  duration: number,
) {
  const runtime = "Bun" in globalThis ? "bun" : "deno";
  const url = `redis://127.0.0.1:${port}`;
  const out: WorkerOutput = { contender: name, runtime, ok: false };
  try {
    const make = CONTENDERS[name];
    if (!make) throw new Error(`unknown contender ${name}`);
    if (name !== "ours") {
      // Memory: a fresh client fills its cache with MEMORY_KEYS entries.
      const m = await make(url);
      await m.get("csc:mem:0");
      const before = await heapUsed();
      for (let i = 0; i < MEMORY_KEYS; i += 500) {
        const batch: Promise<unknown>[] = [];
        for (let j = i; j < i + 500; j++) batch.push(m.get(`csc:mem:${j}`));
        await Promise.all(batch);
      }
      const after = await heapUsed();
      out.bytesPerEntry = Math.round((after - before) / MEMORY_KEYS);
      out.estimatedBytesPerEntry = m.estimate?.();
      await m.close();
    }
    const c = await make(url);
    const keys = Array.from({ length: HOT_KEYS }, (_, i) => `csc:hot:${i}`);
    // Hits resolve without I/O, so a loop of hits never yields to timers: the callers watch the
    // clock themselves.
    const start = performance.now() + warmup;
    const end = start + duration;
    let ops = 0;
    const caller = async (seed: number) => {
      for (let i = seed;; i += 7) {
        const now = performance.now();
        if (now >= end) return;
        await c.get(keys[i % HOT_KEYS]!);
        if (now >= start) ops++;
      }
    };
    await Promise.all(
      Array.from({ length: CALLERS }, (_, i) => caller(i * 13)),
    );
    const seconds = duration / 1000;
    out.opsPerSec = Math.round(ops / seconds);
    out.hitRatio = c.hitRatio();
    await c.close();
    out.ok = true;
  } catch (e) {
    out.error = (e as Error).message;
  }
  console.log(JSON.stringify(out));
  process.exit(out.ok ? 0 : 1);
}

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
    let s = "";
    p.stdout.on("data", (d) => (s += d));
    p.on("close", () => resolve(s));
  });
}

async function main() {
  const { startRedis } = await import("../tests/_helpers/redis_server.ts");
  const runtimes = arg("runtimes", "deno,bun").split(",");
  const rounds = Number(arg("rounds", "2"));
  const warmup = arg("warmup", "1000");
  const duration = arg("duration", "3000");
  const outDir = arg("out", join(benchDir, "results"));
  const server = await startRedis({ debugCommand: false });
  const self = fileURLToPath(import.meta.url);
  const results: WorkerOutput[] = [];
  try {
    const { RedisClient } = await import("../mod.ts");
    const seed = new RedisClient({ url: server.url });
    const p = seed.pipeline();
    for (let i = 0; i < HOT_KEYS; i++) p.set(`csc:hot:${i}`, VALUE);
    for (let i = 0; i < MEMORY_KEYS; i++) p.set(`csc:mem:${i}`, VALUE);
    await p.exec();
    await seed.close();
    for (let round = 0; round < rounds; round++) {
      for (const runtime of runtimes) {
        for (const name of Object.keys(CONTENDERS)) {
          const wargs = [
            "--worker",
            name,
            "--port",
            String(server.port),
            "--warmup",
            warmup,
          ];
          wargs.push("--duration", duration);
          const line = runtime === "bun"
            ? await run("npx", ["-y", `bun@${BUN_VERSION}`, self, ...wargs])
            : await run("npx", [
              "-y",
              `deno@${DENO_VERSION}`,
              "run",
              "-A",
              "--v8-flags=--expose-gc",
              self,
              ...wargs,
            ]);
          const r = JSON.parse(
            line.trim().split("\n").pop() || "{}",
          ) as WorkerOutput;
          console.error(
            `round ${round + 1} ${runtime} ${name}: ${JSON.stringify(r)}`,
          );
          results.push(r);
        }
      }
    }
  } finally {
    await server.stop();
  }
  const rows: string[] = [
    `Cached GET, hot set of ${HOT_KEYS} keys (16-byte values), ${CALLERS} concurrent callers; ` +
    `best of ${rounds} rounds of ${duration} ms; load ${loadavg()[0]!.toFixed(1)}.`,
    "",
    "| Runtime | Contender | ops/s | hit ratio | heap bytes per cached entry |",
    "| ------- | --------- | ----: | --------: | --------------------------: |",
  ];
  for (const runtime of runtimes) {
    for (const name of Object.keys(CONTENDERS)) {
      const mine = results.filter((r) => r.ok && r.runtime === runtime && r.contender === name);
      if (mine.length === 0) {
        rows.push(`| ${runtime} | ${name} | failed | | |`);
        continue;
      }
      const best = mine.reduce((
        a,
        b,
      ) => ((b.opsPerSec ?? 0) > (a.opsPerSec ?? 0) ? b : a));
      const mem = mine.map((r) => r.bytesPerEntry).filter((x) => x !== undefined) as number[];
      rows.push(
        `| ${runtime} | ${name} | ${best.opsPerSec} | ${
          best.hitRatio === undefined ? "—" : best.hitRatio.toFixed(3)
        } | ${mem.length ? Math.min(...mem) : "—"} |`,
      );
    }
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, "client_side_cache.json"),
    JSON.stringify(results, null, 2) + "\n",
  );
  writeFileSync(join(outDir, "client_side_cache.md"), rows.join("\n") + "\n");
  console.log(rows.join("\n"));
}

if (process.argv.includes("--worker")) {
  await worker(
    arg("worker", ""),
    Number(arg("port", "6379")),
    Number(arg("warmup", "1000")),
    Number(arg("duration", "3000")),
  );
} else {
  await main();
}
