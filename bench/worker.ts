// One measurement in a fresh process: one client, one workload, one server.
//
//   npx -y deno@2.9.6 run -A bench/worker.ts <client> <workload> <port> [--duration ms] [--warmup ms]
//   npx -y bun@1.4.4 bench/worker.ts <client> <workload> <port> [--duration ms] [--warmup ms]
//
// Prints exactly one JSON line on stdout (a WorkerResult). Exit codes: 0 measured, 3 the client
// could not be loaded or connected (the harness skips it for the rest of the run), 1 anything else.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import process from "node:process";
import { loadavg } from "node:os";
import { KEYS, serverStats, VALUE_100K, VALUE_16 } from "./_raw.ts";

/** What every contender has to offer the workloads. */
export interface Adapter {
  get(key: string): Promise<unknown>;
  mget(keys: readonly string[]): Promise<unknown>;
  /** Sends one explicit pipeline of `keys.length` SETs and awaits all replies. */
  pipelineSet(keys: readonly string[], value: string): Promise<unknown>;
  close(): Promise<unknown>;
}

/** The JSON line a worker prints. */
export interface WorkerResult {
  client: string;
  runtime: string;
  runtimeVersion: string;
  workload: string;
  ok: boolean;
  error?: string;
  /** Commands completed in the measured window (a pipeline of 100 SET counts 100). */
  ops?: number;
  seconds?: number;
  opsPerSec?: number;
  /** Latency of one awaited unit (see `latencyUnit`), microseconds. */
  p50Us?: number;
  p99Us?: number;
  p999Us?: number;
  latencyUnit?: "command" | "pipeline" | "burst";
  /** VmHWM of the process (Linux), else the highest sampled RSS, bytes. */
  peakRss?: number;
  /** Highest RSS sampled during warmup and measurement, bytes. */
  sampledPeakRss?: number;
  /** CPU time (user + system) of this process per command in the measured window, µs. */
  cpuUsPerOp?: number;
  /** 1-minute load average of the machine at the end of the run. */
  loadAvg?: number;
  /** Server counters over the measured window. */
  serverCommands?: number;
  serverReads?: number;
  commandsPerRead?: number;
}

// deno-lint-ignore no-explicit-any
type Any = any;

const require = createRequire(import.meta.url);
const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const runtimeVersion = runtime === "bun"
  ? String((globalThis as Any).Bun.version)
  : runtime === "deno"
  ? String((globalThis as Any).Deno.version.deno)
  : process.version;

class LoadError extends Error {}

/**
 * Our client loaded from `spec` (this checkout, or the A/B base). `groups: "every"` in `metrics`
 * stands for every group the loaded module names (its `METRIC_GROUPS`).
 */
export async function oursFrom(
  spec: string,
  url: string,
  metrics?: Any,
): Promise<Adapter> {
  const mod: Any = await import(spec);
  if (typeof mod.RedisClient !== "function") {
    throw new LoadError(`${spec} does not export RedisClient`);
  }
  if (metrics?.groups === "every") metrics = { ...metrics, groups: [...mod.METRIC_GROUPS] };
  if (metrics !== undefined) {
    // Metrics are a part (`otelMetrics` of the `./otel` entry) since the `.` size cut; an older
    // base takes the options object itself.
    const otel: Any = await import(new URL("src/observability/mod.ts", spec).href).catch(
      () => ({}),
    );
    if (typeof otel.otelMetrics === "function") metrics = otel.otelMetrics(metrics);
  }
  const c: Any = new mod.RedisClient({ url, metrics });
  return {
    get: (k) => c.get(k),
    mget: (keys) => c.mget(...keys),
    pipelineSet: (keys, v) => {
      let p: Any = c.pipeline();
      for (const k of keys) p = p.set(k, v);
      return p.exec();
    },
    close: () => c.close(),
  };
}

/** A MeterProvider of the OpenTelemetry SDK with a reader (collected at exit only, as a
 * periodic exporter would between exports). */
export function sdkMetrics(): Any {
  let sdk: Any;
  try {
    sdk = require("@opentelemetry/sdk-metrics");
  } catch (e) {
    throw new LoadError(
      `@opentelemetry/sdk-metrics is not installed in bench/: ${errText(e)}`,
    );
  }
  class Reader extends sdk.MetricReader {
    onForceFlush() {
      return Promise.resolve();
    }
    onShutdown() {
      return Promise.resolve();
    }
  }
  return { meterProvider: new sdk.MeterProvider({ readers: [new Reader()] }) };
}

/** Builds an adapter per contender. Plugging in a new client is one entry here. */
const CLIENTS: Record<string, (url: string, port: number) => Promise<Adapter>> = {
  ours(url) {
    return oursFrom(new URL("../mod.ts", import.meta.url).href, url);
  },
  // Metrics on (`deno task bench --metrics`), through the real OpenTelemetry SDK: the default
  // groups, and every group.
  "ours-metrics"(url) {
    return oursFrom(
      new URL("../mod.ts", import.meta.url).href,
      url,
      sdkMetrics(),
    );
  },
  "ours-metrics-all"(url) {
    return oursFrom(new URL("../mod.ts", import.meta.url).href, url, {
      ...sdkMetrics(),
      groups: "every",
    });
  },
  // Another checkout of this client (`deno task bench --base DIR`), for A/B runs of a change.
  base(url) {
    const dir = process.env.EDGE_REDIS_BASE;
    if (!dir) {
      throw new LoadError(
        "EDGE_REDIS_BASE is not set (deno task bench --base DIR)",
      );
    }
    return oursFrom(
      new URL(`file://${dir.replace(/\/$/, "")}/mod.ts`).href,
      url,
    );
  },
  async "node-redis"(url) {
    const { createClient } = require("redis");
    const c: Any = createClient({ url });
    c.on("error", () => {});
    await c.connect();
    return {
      get: (k) => c.get(k),
      mget: (keys) => c.mGet(keys),
      pipelineSet: (keys, v) => {
        const m = c.multi();
        for (const k of keys) m.set(k, v);
        return m.execAsPipeline();
      },
      close: () => (typeof c.close === "function" ? c.close() : c.quit()),
    };
  },
  async ioredis(_url, port) {
    const mod = require("ioredis");
    const Redis = mod.default ?? mod.Redis ?? mod;
    const c: Any = new Redis({ host: "127.0.0.1", port, lazyConnect: true });
    c.on("error", () => {});
    await c.connect();
    return {
      get: (k) => c.get(k),
      mget: (keys) => c.mget(keys as string[]),
      pipelineSet: (keys, v) => {
        const p = c.pipeline();
        for (const k of keys) p.set(k, v);
        return p.exec();
      },
      close: () => c.quit(),
    };
  },
  async bun(url) {
    if (runtime !== "bun") {
      throw new LoadError("Bun's built-in RedisClient needs Bun");
    }
    const spec = "bun";
    const { RedisClient }: Any = await import(spec);
    const c: Any = new RedisClient(url);
    await c.connect();
    return {
      get: (k) => c.get(k),
      mget: (keys) => c.mget(...keys),
      // Bun's client auto-pipelines every command issued in the same tick.
      pipelineSet: (keys, v) => {
        const ps = new Array(keys.length);
        for (let i = 0; i < keys.length; i++) ps[i] = c.set(keys[i], v);
        return Promise.all(ps);
      },
      close: () => Promise.resolve(c.close()),
    };
  },
};

// ---- latency histogram: 1 µs buckets up to 100 ms, exact values above (constant memory) ----
const HIST_MAX = 100_000;
const hist = new Uint32Array(HIST_MAX);
let overflow: number[] = [];
let samples = 0;
function record(us: number): void {
  const b = Math.floor(us);
  if (b < HIST_MAX) hist[b]!++;
  else overflow.push(us);
  samples++;
}
function resetHist(): void {
  hist.fill(0);
  overflow = [];
  samples = 0;
}
function percentile(p: number): number {
  if (samples === 0) return NaN;
  const rank = Math.max(1, Math.ceil(samples * p));
  let seen = 0;
  for (let i = 0; i < HIST_MAX; i++) {
    seen += hist[i]!;
    if (seen >= rank) return i + 0.5;
  }
  overflow.sort((a, b) => a - b);
  return overflow[rank - seen - 1] ?? NaN;
}

// ---- memory ----
let sampledPeak = 0;
function sampleRss(): void {
  const rss = process.memoryUsage.rss ? process.memoryUsage.rss() : process.memoryUsage().rss;
  if (rss > sampledPeak) sampledPeak = rss;
}
function vmHwm(): number {
  try {
    const m = readFileSync("/proc/self/status", "utf8").match(
      /^VmHWM:\s+(\d+)\s+kB/m,
    );
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

// ---- workloads ----
export interface Workload {
  unit: "command" | "pipeline" | "burst";
  /** Sanity check of the replies, run once before warmup. */
  check(c: Adapter): Promise<void>;
  /** Runs until `deadline` (performance.now()), returns commands completed. */
  run(c: Adapter, deadline: number, rec: boolean): Promise<number>;
}

const now = () => performance.now();

function expectString(v: unknown, len: number, what: string): void {
  const n = typeof v === "string" ? v.length : v instanceof Uint8Array ? v.length : -1;
  if (n !== len) {
    throw new Error(`Unexpected reply to ${what}: ${String(v).slice(0, 60)}`);
  }
}

function serialGet(key: string, len: number): Workload {
  return {
    unit: "command",
    check: async (c) => expectString(await c.get(key), len, `GET ${key}`),
    async run(c, deadline, rec) {
      let ops = 0;
      let t = now();
      while (t < deadline) {
        await c.get(key);
        const t2 = now();
        if (rec) record((t2 - t) * 1000);
        t = t2;
        ops++;
      }
      return ops;
    },
  };
}

function concurrentGet(key: string, len: number, callers: number): Workload {
  return {
    unit: "command",
    check: async (c) => expectString(await c.get(key), len, `GET ${key}`),
    async run(c, deadline, rec) {
      let ops = 0;
      const loop = async () => {
        let t = now();
        while (t < deadline) {
          await c.get(key);
          const t2 = now();
          if (rec) record((t2 - t) * 1000);
          t = t2;
          ops++;
        }
      };
      const loops = [];
      for (let i = 0; i < callers; i++) loops.push(loop());
      await Promise.all(loops);
      return ops;
    },
  };
}

const BURST = 100_000;
/** Warmup bursts are smaller: slow clients need ~2 s per burst of 100 000. */
const WARMUP_BURST = 10_000;
const burstGet: Workload = {
  unit: "burst",
  check: async (c) => expectString(await c.get(KEYS.small), 16, "GET"),
  async run(c, deadline, rec) {
    let ops = 0;
    const size = rec ? BURST : WARMUP_BURST;
    let ps: Promise<unknown>[] = new Array(size);
    do {
      const t = now();
      for (let i = 0; i < size; i++) ps[i] = c.get(KEYS.small);
      const replies = await Promise.all(ps);
      const t2 = now();
      if (rec) record((t2 - t) * 1000);
      expectString(replies[size - 1], 16, "GET in burst");
      ops += size;
      sampleRss();
    } while (now() < deadline);
    ps = [];
    return ops;
  },
};

const pipelineSet: Workload = {
  unit: "pipeline",
  async check(c) {
    const r = await c.pipelineSet(KEYS.pipeline, VALUE_16);
    if (!Array.isArray(r) || r.length !== KEYS.pipeline.length) {
      throw new Error(`Unexpected pipeline reply: ${String(r).slice(0, 60)}`);
    }
  },
  async run(c, deadline, rec) {
    let ops = 0;
    let t = now();
    while (t < deadline) {
      await c.pipelineSet(KEYS.pipeline, VALUE_16);
      const t2 = now();
      if (rec) record((t2 - t) * 1000);
      t = t2;
      ops += KEYS.pipeline.length;
    }
    return ops;
  },
};

const mget: Workload = {
  unit: "command",
  async check(c) {
    const r = await c.mget(KEYS.mget);
    if (!Array.isArray(r) || r.length !== 100 || r[99] !== VALUE_16) {
      throw new Error(`Unexpected MGET reply: ${String(r).slice(0, 60)}`);
    }
  },
  async run(c, deadline, rec) {
    let ops = 0;
    let t = now();
    while (t < deadline) {
      await c.mget(KEYS.mget);
      const t2 = now();
      if (rec) record((t2 - t) * 1000);
      t = t2;
      ops++;
    }
    return ops;
  },
};

/** Workload ids, in table order. */
export const WORKLOADS: Record<string, Workload> = {
  "get-serial": serialGet(KEYS.small, 16),
  "get-c50": concurrentGet(KEYS.small, 16, 50),
  "get-burst": burstGet,
  "set-pipeline": pipelineSet,
  "get100k-serial": serialGet(KEYS.large, VALUE_100K.length),
  "get100k-c16": concurrentGet(KEYS.large, VALUE_100K.length, 16),
  "mget100": mget,
};

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function emit(r: WorkerResult): void {
  process.stdout.write(JSON.stringify(r) + "\n");
}

async function main(): Promise<number> {
  const positional = process.argv.slice(2).filter((a, i, all) =>
    !a.startsWith("--") && !(all[i - 1] ?? "").startsWith("--")
  );
  const [client, workloadId, portArg] = positional;
  const base = {
    client: client ?? "?",
    runtime,
    runtimeVersion,
    workload: workloadId ?? "?",
  };
  const make = client ? CLIENTS[client] : undefined;
  const workload = workloadId ? WORKLOADS[workloadId] : undefined;
  const port = Number(portArg);
  if (!make || !workload || !Number.isInteger(port)) {
    emit({
      ...base,
      ok: false,
      error: `Usage: worker.ts <${Object.keys(CLIENTS).join("|")}> <${
        Object.keys(WORKLOADS).join("|")
      }> <port> [--duration ms] [--warmup ms]`,
    });
    return 1;
  }
  const duration = flag("--duration", 1500);
  const warmup = flag("--warmup", 500);
  const url = `redis://127.0.0.1:${port}`;

  let c: Adapter;
  try {
    c = await make(url, port);
    await workload.check(c);
  } catch (e) {
    emit({
      ...base,
      ok: false,
      error: `Cannot load or use ${client}: ${errText(e)}`,
    });
    return 3;
  }

  // VmHWM is exact and free; poll RSS only where the kernel does not keep the peak for us.
  const sampler = Number.isFinite(vmHwm()) ? undefined : setInterval(sampleRss, 20);
  try {
    sampleRss();
    await workload.run(c, now() + warmup, false);
    resetHist();
    const before = await serverStats(port);
    const cpu0 = process.cpuUsage();
    const t0 = now();
    const ops = await workload.run(c, t0 + duration, true);
    const seconds = (now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const after = await serverStats(port);
    sampleRss();
    // The INFO call that took `after` counts as one command and one read, and the closing of the
    // connection that took `before` as one more read: leave them out.
    const serverCommands = after.commands - before.commands - 1;
    const serverReads = after.reads - before.reads - 2;
    const result: WorkerResult = {
      ...base,
      ok: true,
      ops,
      seconds,
      opsPerSec: ops / seconds,
      p50Us: percentile(0.5),
      p99Us: percentile(0.99),
      p999Us: percentile(0.999),
      latencyUnit: workload.unit,
      cpuUsPerOp: (cpu.user + cpu.system) / ops,
      loadAvg: loadavg()[0],
      peakRss: 0,
      sampledPeakRss: sampledPeak,
      serverCommands,
      serverReads,
      commandsPerRead: serverReads > 0 ? serverCommands / serverReads : NaN,
    };
    clearInterval(sampler);
    await c.close();
    const hwm = vmHwm();
    result.peakRss = Number.isFinite(hwm) ? hwm : sampledPeak;
    emit(result);
    return 0;
  } catch (e) {
    clearInterval(sampler);
    emit({ ...base, ok: false, error: errText(e) });
    return 1;
  }
}

function errText(e: unknown): string {
  if (e instanceof Error) {
    const first = `${e.name}: ${e.message}`.split("\n")[0]!;
    const at = (e.stack ?? "").split("\n").find((l) => l.trim().startsWith("at "))?.trim();
    return e.message ? first : `${first} ${at ?? ""}`.trim();
  }
  return String(e);
}

if (import.meta.main ?? true) {
  const code = await main();
  // Some clients keep timers or sockets alive after close(); never let that stall the harness.
  process.exit(code);
}
