// Cluster workloads: ours (RedisClusterClient) against node-redis's cluster client and ioredis
// `Cluster`, on a real 3-primary cluster on loopback, each measurement in a fresh process,
// contenders interleaved per round.
//
//   npx -y deno@2.9.6 run -A bench/cluster.ts [--rounds N] [--duration ms] [--warmup ms]
//                                             [--runtimes deno,bun] [--out file.md]
//
// Worker mode (one client, one workload; prints one JSON line):
//   <runtime> bench/cluster.ts --worker <client> <workload> <seeds-json> <duration> <warmup>
//
// Workloads (keys spread over every slot range):
//   get-c50       GET 16 B, 50 concurrent callers, each on its own key
//   pipeline-set  SET 16 B, pipelines of 100 keys across slots (peers: their cross-slot
//                 equivalent, 100 concurrent SETs auto-pipelined per node, since neither accepts a
//                 cross-slot pipeline)
//   mget-100      MGET of 100 keys across slots (peers: grouped by slot and sent in parallel,
//                 which is what their users write, since neither splits a cross-slot MGET)
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

// deno-lint-ignore no-explicit-any
type Any = any;

const DENO_VERSION = "2.9.6";
const BUN_VERSION = "1.4.4";
const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);
const VALUE = "v".repeat(16);
const KEY_COUNT = 1000;
const keyOf = (i: number) => `bench:cluster:${i}`;

interface Adapter {
  get(key: string): Promise<unknown>;
  set(key: string, value: string): Promise<unknown>;
  pipelineSet(keys: readonly string[], value: string): Promise<unknown[]>;
  mget(keys: readonly string[]): Promise<unknown[]>;
  close(): Promise<unknown>;
}

interface Result {
  client: string;
  runtime: string;
  workload: string;
  ok: boolean;
  error?: string;
  opsPerSec?: number;
  p50Us?: number;
  p99Us?: number;
}

const WORKLOAD_LABELS: Record<string, string> = {
  "get-c50": "GET 16 B, 50 concurrent callers over many slots",
  "pipeline-set": "SET 16 B, pipelines of 100 across slots",
  "mget-100": "MGET of 100 keys across slots",
};

// ------------------------------------------------------------------------------- worker mode

const require = createRequire(import.meta.url);

/** ioredis and node-redis need cross-slot work grouped by slot; they ship the hash function. */
function slotOfPeer(key: string): number {
  const mod = require("cluster-key-slot");
  return (mod.default ?? mod)(key);
}

function groupBySlot(keys: readonly string[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  keys.forEach((k, i) => {
    const s = slotOfPeer(k);
    const g = groups.get(s);
    if (g) g.push(i);
    else groups.set(s, [i]);
  });
  return groups;
}

async function splitMget(
  keys: readonly string[],
  mget: (keys: string[]) => Promise<unknown[]>,
): Promise<unknown[]> {
  const groups = [...groupBySlot(keys)];
  const replies = await Promise.all(
    groups.map(([, idx]) => mget(idx.map((i) => keys[i]!))),
  );
  const out = new Array(keys.length);
  groups.forEach(([, idx], g) => idx.forEach((i, j) => (out[i] = replies[g]![j])));
  return out;
}

const CLIENTS: Record<string, (seeds: string[]) => Promise<Adapter>> = {
  async ours(seeds) {
    const mod: Any = await import(
      new URL("../src/cluster/mod.ts", import.meta.url).href
    );
    const c: Any = new mod.RedisClusterClient({ nodes: seeds });
    await c.connect();
    return {
      get: (k) => c.get(k),
      set: (k, v) => c.set(k, v),
      pipelineSet: (keys, v) => {
        const p: Any = c.pipeline();
        for (const k of keys) p.set(k, v);
        return p.exec();
      },
      mget: (keys) => c.mget(...keys),
      close: () => c.close(),
    };
  },
  async "node-redis"(seeds) {
    const { createCluster } = require("redis");
    const c: Any = createCluster({ rootNodes: seeds.map((url) => ({ url })) });
    c.on("error", () => {});
    await c.connect();
    return {
      get: (k) => c.get(k),
      set: (k, v) => c.set(k, v),
      pipelineSet: (keys, v) => Promise.all(keys.map((k) => c.set(k, v))),
      mget: (keys) => splitMget(keys, (ks) => c.mGet(ks)),
      close: () => (typeof c.close === "function" ? c.close() : c.quit()),
    };
  },
  async ioredis(seeds) {
    const mod = require("ioredis");
    const Cluster = mod.Cluster ?? mod.default?.Cluster;
    const c: Any = new Cluster(
      seeds.map((s) => {
        const u = new URL(s);
        return { host: u.hostname, port: Number(u.port) };
      }),
      { enableAutoPipelining: true, lazyConnect: true },
    );
    c.on("error", () => {});
    await c.connect();
    return {
      get: (k) => c.get(k),
      set: (k, v) => c.set(k, v),
      pipelineSet: (keys, v) => Promise.all(keys.map((k) => c.set(k, v))),
      mget: (keys) => splitMget(keys, (ks) => c.mget(ks)),
      close: () => c.quit(),
    };
  },
};

const hist: number[] = [];
const now = () => performance.now();

async function runWorkload(
  c: Adapter,
  workload: string,
  deadline: number,
  rec: boolean,
): Promise<number> {
  let ops = 0;
  const time = async (fn: () => Promise<unknown>) => {
    const t = now();
    await fn();
    if (rec) hist.push((now() - t) * 1000);
  };
  if (workload === "get-c50") {
    const loop = async (i: number) => {
      const key = keyOf((i * 19) % KEY_COUNT);
      while (now() < deadline) {
        await time(() => c.get(key));
        ops++;
      }
    };
    await Promise.all(Array.from({ length: 50 }, (_, i) => loop(i)));
    return ops;
  }
  if (workload === "pipeline-set") {
    let round = 0;
    while (now() < deadline) {
      const keys = Array.from(
        { length: 100 },
        (_, i) => keyOf((round * 100 + i) % KEY_COUNT),
      );
      await time(() => c.pipelineSet(keys, VALUE));
      ops += 100;
      round++;
    }
    return ops;
  }
  if (workload === "mget-100") {
    let round = 0;
    while (now() < deadline) {
      const keys = Array.from(
        { length: 100 },
        (_, i) => keyOf((round * 37 + i * 7) % KEY_COUNT),
      );
      await time(() => c.mget(keys));
      ops++;
      round++;
    }
    return ops;
  }
  throw new Error(`Unknown workload "${workload}"`);
}

async function check(c: Adapter, workload: string): Promise<void> {
  if (workload === "get-c50" && (await c.get(keyOf(1))) !== VALUE) {
    throw new Error("GET returned something else");
  }
  if (workload === "mget-100") {
    const keys = Array.from({ length: 100 }, (_, i) => keyOf(i));
    const r = await c.mget(keys);
    if (r.length !== 100 || r.some((v) => v !== VALUE)) {
      throw new Error("MGET returned something else");
    }
  }
  if (workload === "pipeline-set") {
    const r = await c.pipelineSet([keyOf(0), keyOf(500)], VALUE);
    if (r.length !== 2) throw new Error("the pipeline returned something else");
  }
}

async function worker(args: string[]): Promise<void> {
  const [client, workload, seedsJson, duration, warmup] = args;
  const runtime = "Bun" in globalThis ? "bun" : "deno";
  const result: Result = {
    client: client!,
    runtime,
    workload: workload!,
    ok: false,
  };
  try {
    const make = CLIENTS[client!];
    if (!make) throw new Error(`Unknown client "${client}"`);
    const c = await make(JSON.parse(seedsJson!));
    await check(c, workload!);
    await runWorkload(c, workload!, now() + Number(warmup), false);
    hist.length = 0;
    const start = now();
    const ops = await runWorkload(c, workload!, start + Number(duration), true);
    const seconds = (now() - start) / 1000;
    hist.sort((a, b) => a - b);
    result.ok = true;
    result.opsPerSec = ops / seconds;
    result.p50Us = hist[Math.floor(hist.length * 0.5)];
    result.p99Us = hist[Math.floor(hist.length * 0.99)];
    await c.close();
  } catch (e) {
    result.error = String((e as Error)?.message ?? e);
  }
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}

// ------------------------------------------------------------------------------- harness

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

function runChild(cmd: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(cmd[0]!, cmd.slice(1), {
      cwd: rootDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.resume();
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return "—";
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}k`;
  return n.toFixed(0);
}

async function harness(): Promise<void> {
  const rounds = Number(flag("--rounds", "3"));
  const duration = Number(flag("--duration", "2000"));
  const warmup = Number(flag("--warmup", "500"));
  const runtimes = flag("--runtimes", "deno,bun").split(",");
  const out = flag("--out", join(benchDir, "results", "cluster.md"));
  const { startCluster } = await import("../tests/_helpers/cluster.ts");
  const cluster = await startCluster({ replicasPerPrimary: 0 });
  try {
    // Seed the keys through each owner.
    const { keySlot } = await import("../src/cluster/slot.ts");
    for (let i = 0; i < KEY_COUNT; i++) {
      await cluster.nodeForSlot(keySlot(keyOf(i))).command([
        "SET",
        keyOf(i),
        VALUE,
      ]);
    }
    const seeds = cluster.primaries().map((p) => p.url);
    const results: Result[] = [];
    const cmdFor = (rt: string): string[] =>
      rt === "bun" ? ["npx", "-y", `bun@${BUN_VERSION}`, join(benchDir, "cluster.ts")] : [
        "npx",
        "-y",
        `deno@${DENO_VERSION}`,
        "run",
        "-A",
        join(benchDir, "cluster.ts"),
      ];
    for (let r = 0; r < rounds; r++) {
      for (const workload of Object.keys(WORKLOAD_LABELS)) {
        for (const rt of runtimes) {
          for (const client of Object.keys(CLIENTS)) {
            const line = await runChild([
              ...cmdFor(rt),
              "--worker",
              client,
              workload,
              JSON.stringify(seeds),
              String(duration),
              String(warmup),
            ], duration + warmup + 60_000);
            const json = line.trim().split("\n").pop() ?? "";
            let res: Result;
            try {
              res = JSON.parse(json);
            } catch {
              res = {
                client,
                runtime: rt,
                workload,
                ok: false,
                error: json.slice(0, 200),
              };
            }
            results.push(res);
            console.error(
              `round ${r + 1} ${workload} ${client}@${rt}: ${
                res.ok ? `${fmt(res.opsPerSec!)} ops/s` : `failed: ${res.error}`
              }`,
            );
          }
        }
      }
    }
    const rows: string[] = [
      `Cluster workloads, 3 primaries on loopback, ${rounds} rounds of ${duration} ms (medians, range), load ${
        loadavg()[0]!.toFixed(1)
      }, ${new Date().toISOString()}`,
      "",
      "| Workload | Runtime | Ours | node-redis | ioredis | Ours/best peer |",
      "| --- | --- | ---: | ---: | ---: | ---: |",
    ];
    for (const workload of Object.keys(WORKLOAD_LABELS)) {
      for (const rt of runtimes) {
        const cell = (client: string) => {
          const xs = results.filter((x) =>
            x.ok && x.client === client && x.runtime === rt &&
            x.workload === workload
          ).map((x) => x.opsPerSec!);
          return {
            m: median(xs),
            lo: Math.min(...xs),
            hi: Math.max(...xs),
            n: xs.length,
          };
        };
        const ours = cell("ours");
        const nr = cell("node-redis");
        const io = cell("ioredis");
        const best = Math.max(nr.n ? nr.m : 0, io.n ? io.m : 0);
        const show = (c: { m: number; lo: number; hi: number; n: number }) =>
          c.n === 0 ? "failed" : `${fmt(c.m)} (${fmt(c.lo)}–${fmt(c.hi)})`;
        rows.push(
          `| ${WORKLOAD_LABELS[workload]} | ${rt === "bun" ? "Bun" : "Deno"} | ${show(ours)} | ${
            show(nr)
          } | ${show(io)} | ${best > 0 && ours.n ? `${(ours.m / best).toFixed(2)}x` : "—"} |`,
        );
      }
    }
    const table = rows.join("\n") + "\n";
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, table);
    console.log(table);
  } finally {
    await cluster.stop();
  }
}

if (process.argv.includes("--worker")) {
  await worker(process.argv.slice(process.argv.indexOf("--worker") + 1));
} else {
  await harness();
}
