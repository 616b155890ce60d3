// `deno task bench`: ours against node-redis, ioredis, Bun's built-in RedisClient and
// redis-benchmark, interleaved, each measurement in a fresh process. See bench/README.md.
//
//   deno task bench [--rounds N] [--only w1,w2] [--clients c1,c2] [--quick]
//                   [--duration ms] [--warmup ms] [--npx] [--pin same|split] [--out dir]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startRedis } from "../tests/_helpers/redis_server.ts";
import { KEYS, seed, serverStats, VALUE_16 } from "./_raw.ts";
import type { WorkerResult } from "./worker.ts";

const DENO_VERSION = "2.9.6";
const BUN_VERSION = "1.4.4";

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);

// ---------------------------------------------------------------------------------------------
// Workloads: worker ids, labels and the redis-benchmark reference for each.

interface WorkloadMeta {
  id: string;
  label: string;
  /** What the p50/p99 columns time. */
  latency: string;
  /** redis-benchmark arguments (after -h/-p) and the command. */
  ref: { c: number; P: number; cmd: string[]; label: string };
  /** Expected reference requests/s, for sizing the first redis-benchmark run. */
  refGuess: number;
  /** Ratio ours/reference the issue asks for, if any. */
  refTarget?: number;
}

const WORKLOADS: WorkloadMeta[] = [
  {
    id: "get-serial",
    refGuess: 20_000,
    label: "GET 16 B, serial",
    latency: "per command",
    ref: { c: 1, P: 1, cmd: ["GET", KEYS.small], label: "-c 1" },
    refTarget: 0.9,
  },
  {
    id: "get-c50",
    refGuess: 800_000,
    label: "GET 16 B, 50 concurrent callers",
    latency: "per command",
    ref: { c: 1, P: 50, cmd: ["GET", KEYS.small], label: "-c 1 -P 50" },
    refTarget: 0.5,
  },
  {
    id: "get-burst",
    refGuess: 1_200_000,
    label: "GET 16 B, burst of 100 000",
    latency: "per burst",
    ref: { c: 1, P: 100, cmd: ["GET", KEYS.small], label: "-c 1 -P 100" },
    refTarget: 0.7,
  },
  {
    id: "set-pipeline",
    refGuess: 1_200_000,
    label: "SET 16 B, pipelines of 100",
    latency: "per pipeline",
    ref: {
      c: 1,
      P: 100,
      cmd: ["SET", "bench:p:0", VALUE_16],
      label: "-c 1 -P 100",
    },
    refTarget: 0.7,
  },
  {
    id: "get100k-serial",
    refGuess: 7_000,
    label: "GET 100 KB, serial",
    latency: "per command",
    ref: { c: 1, P: 1, cmd: ["GET", KEYS.large], label: "-c 1" },
  },
  {
    id: "get100k-c16",
    refGuess: 10_000,
    label: "GET 100 KB, 16 concurrent",
    latency: "per command",
    ref: { c: 1, P: 16, cmd: ["GET", KEYS.large], label: "-c 1 -P 16" },
  },
  {
    id: "mget100",
    refGuess: 15_000,
    label: "MGET 100 keys, serial",
    latency: "per command",
    ref: { c: 1, P: 1, cmd: ["MGET", ...KEYS.mget], label: "-c 1" },
  },
];

// ---------------------------------------------------------------------------------------------
// Contenders, in the order they run within a round (A B C ... A B C ...).

type Runtime = "deno" | "bun" | "server";
interface Contender {
  /** `client@runtime`, or `redis-benchmark`. */
  id: string;
  client: string;
  runtime: Runtime;
  /** Set when the contender failed to load; it is skipped for the rest of the run. */
  skipped?: string;
}

const CONTENDERS: Contender[] = [
  { id: "ours@deno", client: "ours", runtime: "deno" },
  { id: "node-redis@deno", client: "node-redis", runtime: "deno" },
  { id: "ioredis@deno", client: "ioredis", runtime: "deno" },
  { id: "ours@bun", client: "ours", runtime: "bun" },
  { id: "node-redis@bun", client: "node-redis", runtime: "bun" },
  { id: "ioredis@bun", client: "ioredis", runtime: "bun" },
  { id: "bun@bun", client: "bun", runtime: "bun" },
  { id: "redis-benchmark", client: "redis-benchmark", runtime: "server" },
];

// ---------------------------------------------------------------------------------------------
// Flags.

interface Options {
  rounds: number;
  only: string[] | null;
  clients: string[] | null;
  quick: boolean;
  duration: number;
  warmup: number;
  npx: boolean;
  out: string;
  /** Another checkout of this client, measured as the `base` contender (A/B of a change). */
  base: string | undefined;
  /** Also measure ours with metrics on (default groups, every group). */
  metrics: boolean;
  /**
   * CPU placement (Linux `taskset`): the server on CPU 0 and every client process on CPU 0
   * ("same") or CPU 1 ("split"); undefined: wherever the scheduler puts them.
   */
  pin: "same" | "split" | undefined;
}

function parseArgs(argv: string[]): Options {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (name: string) => get(name)?.split(",").map((s) => s.trim()).filter(Boolean) ?? null;
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(
      `Usage: deno task bench [options]
  --rounds N         interleaved rounds (default 3, --quick 1)
  --only a,b         workloads: ${WORKLOADS.map((w) => w.id).join(", ")}
  --clients a,b      contenders by id or client name: ${CONTENDERS.map((c) => c.id).join(", ")}
  --quick            short measurements (300 ms, 100 ms warmup) and 1 round, for smoke tests
  --duration ms      measured time per run (default 1500)
  --warmup ms        warmup per run, same process, not measured (default 400)
  --npx              start every worker through npx instead of the resolved runtime binary
  --no-cluster       skip the cluster workloads (bench/cluster.ts, also skipped with --only)
  --no-cache         skip the client-side cache workload (bench/client_side_cache.ts, also with --only)
  --base dir         also measure the checkout in dir as "base@deno"/"base@bun" (A/B of a change)
  --metrics          also measure ours with OpenTelemetry metrics on (the SDK's MeterProvider):
                     "ours-metrics" (default groups) and "ours-metrics-all" (every group)
  --pin same|split   pin redis-server to CPU 0 and every client process (workers and
                     redis-benchmark) to CPU 0 (same) or CPU 1 (split), with taskset: a serial
                     round trip costs about 20 µs on one CPU and 50 µs across two on this kind of
                     machine, and an unpinned run lands each fresh process on either
  --out dir          results directory (default bench/results)`,
    );
    Deno.exit(0);
  }
  const quick = argv.includes("--quick");
  const opts: Options = {
    quick,
    rounds: Number(get("--rounds") ?? (quick ? 1 : 3)),
    only: list("--only"),
    clients: list("--clients"),
    duration: Number(get("--duration") ?? (quick ? 300 : 1500)),
    warmup: Number(get("--warmup") ?? (quick ? 100 : 400)),
    npx: argv.includes("--npx"),
    out: get("--out") ?? join(benchDir, "results"),
    base: get("--base"),
    metrics: argv.includes("--metrics"),
    pin: undefined,
  };
  const pin = get("--pin");
  if (pin !== undefined) {
    if (pin !== "same" && pin !== "split") {
      throw new TypeError(`Cannot pin "${pin}": use --pin same or --pin split`);
    }
    if (spawnSync("taskset", ["-V"]).status !== 0) {
      throw new TypeError("Cannot pin the processes: taskset is not available");
    }
    opts.pin = pin;
  }
  if (opts.base !== undefined) {
    if (!existsSync(join(opts.base, "mod.ts"))) {
      throw new TypeError(
        `Cannot use "${opts.base}" as the base: it has no mod.ts`,
      );
    }
    Deno.env.set("EDGE_REDIS_BASE", resolve(opts.base));
    CONTENDERS.push(
      { id: "base@deno", client: "base", runtime: "deno" },
      { id: "base@bun", client: "base", runtime: "bun" },
    );
  }
  if (opts.metrics) {
    // Right after ours in each round, so the three are interleaved.
    const at = CONTENDERS.findIndex((c) => c.id === "ours@deno") + 1;
    CONTENDERS.splice(
      at,
      0,
      { id: "ours-metrics@deno", client: "ours-metrics", runtime: "deno" },
      {
        id: "ours-metrics-all@deno",
        client: "ours-metrics-all",
        runtime: "deno",
      },
    );
    const atBun = CONTENDERS.findIndex((c) => c.id === "ours@bun") + 1;
    CONTENDERS.splice(
      atBun,
      0,
      { id: "ours-metrics@bun", client: "ours-metrics", runtime: "bun" },
      {
        id: "ours-metrics-all@bun",
        client: "ours-metrics-all",
        runtime: "bun",
      },
    );
  }
  for (const w of opts.only ?? []) {
    if (!WORKLOADS.some((x) => x.id === w)) {
      throw new RangeError(
        `Cannot select workload "${w}": known are ${WORKLOADS.map((x) => x.id)}`,
      );
    }
  }
  for (const c of opts.clients ?? []) {
    if (!CONTENDERS.some((x) => x.id === c || x.client === c)) {
      throw new RangeError(
        `Cannot select contender "${c}": known are ${CONTENDERS.map((x) => x.id).join(", ")}`,
      );
    }
  }
  if (!(opts.rounds >= 1)) {
    throw new RangeError(`Cannot run ${opts.rounds} rounds: use 1 or more`);
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Setup: peer dependencies and runtime binaries.

function ensurePeers(): void {
  if (
    existsSync(join(benchDir, "node_modules", "redis")) &&
    existsSync(join(benchDir, "node_modules", "ioredis")) &&
    existsSync(join(benchDir, "node_modules", "@opentelemetry", "sdk-metrics"))
  ) return;
  const lock = existsSync(join(benchDir, "package-lock.json"));
  const args = lock ? ["ci", "--prefix", benchDir] : ["install", "--prefix", benchDir];
  console.error(`bench: installing peer clients: npm ${args.join(" ")}`);
  const r = spawnSync("npm", args, { stdio: "inherit", cwd: benchDir });
  if (r.status !== 0) {
    console.error(
      `bench: npm ${args[0]} failed (status ${r.status}); node-redis and ioredis will be skipped`,
    );
  }
}

interface RuntimeCmd {
  /** argv prefix that runs a TypeScript file. */
  prefix: string[];
  version: string;
}

function resolveRuntimes(
  useNpx: boolean,
): Partial<Record<Runtime, RuntimeCmd>> {
  const out: Partial<Record<Runtime, RuntimeCmd>> = {};
  const denoRun = ["run", "-A", "--no-lock"];
  if (useNpx) {
    out.deno = {
      prefix: ["npx", "-y", `deno@${DENO_VERSION}`, ...denoRun],
      version: DENO_VERSION,
    };
    out.bun = {
      prefix: ["npx", "-y", `bun@${BUN_VERSION}`],
      version: BUN_VERSION,
    };
    return out;
  }
  // Resolve the binary behind npx once: npx costs ~0.7 s per start, which adds up over ~170 runs.
  if (Deno.version.deno === DENO_VERSION) {
    out.deno = { prefix: [Deno.execPath(), ...denoRun], version: DENO_VERSION };
  } else {
    const p = spawnSync("npx", [
      "-y",
      `deno@${DENO_VERSION}`,
      "eval",
      "console.log(Deno.execPath())",
    ], {
      encoding: "utf8",
    });
    const path = p.stdout?.trim();
    if (p.status === 0 && path) {
      out.deno = { prefix: [path, ...denoRun], version: DENO_VERSION };
    } else {console.error(
        `bench: cannot resolve deno@${DENO_VERSION}: ${p.stderr?.trim()}`,
      );}
  }
  const b = spawnSync("npx", [
    "-y",
    `bun@${BUN_VERSION}`,
    "-e",
    "console.log(process.execPath)",
  ], {
    encoding: "utf8",
  });
  const bunPath = b.stdout?.trim();
  if (b.status === 0 && bunPath) {
    out.bun = { prefix: [bunPath], version: BUN_VERSION };
  } else {console.error(
      `bench: cannot resolve bun@${BUN_VERSION}: ${b.stderr?.trim()}`,
    );}
  return out;
}

// ---------------------------------------------------------------------------------------------
// One measurement.

interface Sample {
  contender: string;
  workload: string;
  round: number;
  ok: boolean;
  error?: string;
  opsPerSec?: number;
  p50Us?: number;
  p99Us?: number;
  p999Us?: number;
  peakRss?: number;
  commandsPerRead?: number;
  cpuUsPerOp?: number;
  loadAvg?: number;
  ops?: number;
  seconds?: number;
  wallSeconds: number;
  /** For redis-benchmark: the exact command line. */
  command?: string;
}

function run(
  cmd: string[],
  timeoutMs: number,
): Promise<
  { code: number | null; stdout: string; stderr: string; timedOut: boolean }
> {
  return new Promise((resolve) => {
    const child = spawn(cmd[0]!, cmd.slice(1), {
      cwd: rootDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

async function measureWorker(
  c: Contender,
  w: WorkloadMeta,
  port: number,
  rt: RuntimeCmd,
  opts: Options,
  round: number,
): Promise<Sample> {
  const cmd = [
    ...pinned(opts),
    ...rt.prefix,
    relative(rootDir, join(benchDir, "worker.ts")),
    c.client,
    w.id,
    String(port),
    "--duration",
    String(opts.duration),
    "--warmup",
    String(opts.warmup),
  ];
  const t0 = performance.now();
  // Slow peers need ~2 s per burst of 100 000 and always run at least one in warmup and one measured.
  const r = await run(cmd, opts.duration + opts.warmup + 60_000);
  const wallSeconds = (performance.now() - t0) / 1000;
  const line = r.stdout.trim().split("\n").filter((l) => l.startsWith("{"))
    .pop();
  let res: WorkerResult | undefined;
  try {
    res = line ? JSON.parse(line) : undefined;
  } catch { /* reported below */ }
  if (!res || !res.ok) {
    const why = res?.error ??
      (r.timedOut
        ? "timed out"
        : `exit ${r.code}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`);
    if (r.code === 3) c.skipped = why;
    return {
      contender: c.id,
      workload: w.id,
      round,
      ok: false,
      error: why,
      wallSeconds,
    };
  }
  return {
    contender: c.id,
    workload: w.id,
    round,
    ok: true,
    opsPerSec: res.opsPerSec,
    p50Us: res.p50Us,
    p99Us: res.p99Us,
    p999Us: res.p999Us,
    peakRss: res.peakRss,
    commandsPerRead: res.commandsPerRead,
    cpuUsPerOp: res.cpuUsPerOp,
    loadAvg: res.loadAvg,
    ops: res.ops,
    seconds: res.seconds,
    wallSeconds,
  };
}

/** The `taskset` prefix of a client process under `--pin`. */
function pinned(opts: Options): string[] {
  return opts.pin === undefined ? [] : ["taskset", "-c", opts.pin === "same" ? "0" : "1"];
}

/** Requests per redis-benchmark run, adjusted after each run to last about `duration`. */
const refRequests = new Map<string, number>();

async function measureReference(
  w: WorkloadMeta,
  port: number,
  opts: Options,
  round: number,
): Promise<Sample> {
  const { c, P } = w.ref;
  let n = refRequests.get(w.id) ??
    Math.round(w.refGuess * opts.duration / 1000);
  n = Math.max(c * P, Math.ceil(n / (c * P)) * c * P);
  const args = [
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-c",
    String(c),
    "-P",
    String(P),
    "-n",
    String(n),
    "--csv",
  ];
  const cmd = [...pinned(opts), "redis-benchmark", ...args, ...w.ref.cmd];
  const shown = `redis-benchmark -c ${c}${P > 1 ? ` -P ${P}` : ""} -n ${n} ${w.ref.cmd[0]} ${
    w.ref.cmd.length > 3 ? `<${w.ref.cmd.length - 1} keys>` : w.ref.cmd.slice(1).join(" ")
  }`;
  const t0 = performance.now();
  const before = await serverStats(port);
  const r = await run(cmd, opts.duration * 10 + 60_000);
  const after = await serverStats(port);
  const wallSeconds = (performance.now() - t0) / 1000;
  // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  const row = r.stdout.trim().split("\n").map((l) =>
    l.split(",").map((f) => f.replace(/^"|"$/g, ""))
  )
    .find((f) => f.length >= 7 && f[0] !== "test");
  if (r.code !== 0 || !row) {
    return {
      contender: "redis-benchmark",
      workload: w.id,
      round,
      ok: false,
      error: `redis-benchmark exit ${r.code}: ${r.stderr.trim().split("\n").pop()}`,
      wallSeconds,
      command: shown,
    };
  }
  const rps = Number(row[1]);
  refRequests.set(w.id, Math.round(rps * opts.duration / 1000));
  // Every INFO call counts one command and one read, and closing the connection another read.
  const cmds = after.commands - before.commands - 1;
  const reads = after.reads - before.reads - 2;
  return {
    contender: "redis-benchmark",
    workload: w.id,
    round,
    ok: true,
    opsPerSec: rps,
    p50Us: Number(row[4]) * 1000,
    p99Us: Number(row[6]) * 1000,
    commandsPerRead: reads > 0 ? cmds / reads : NaN,
    loadAvg: loadavg()[0],
    ops: n,
    seconds: n / rps,
    wallSeconds,
    command: shown,
  };
}

// ---------------------------------------------------------------------------------------------
// Aggregation and output.

interface Cell {
  contender: string;
  workload: string;
  rounds: number;
  errors: string[];
  median?: number;
  min?: number;
  max?: number;
  p50Us?: number;
  p99Us?: number;
  p999Us?: number;
  peakRss?: number;
  commandsPerRead?: number;
  cpuUsPerOp?: number;
  command?: string;
}

function median(xs: number[]): number {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function aggregate(samples: Sample[]): Map<string, Cell> {
  const cells = new Map<string, Cell>();
  for (const s of samples) {
    const key = `${s.workload}|${s.contender}`;
    const cell = cells.get(key) ??
      { contender: s.contender, workload: s.workload, rounds: 0, errors: [] };
    cells.set(key, cell);
    if (!s.ok) cell.errors.push(s.error ?? "failed");
    if (s.command) cell.command = s.command;
  }
  for (const cell of cells.values()) {
    const ok = samples.filter((s) =>
      s.ok && s.workload === cell.workload && s.contender === cell.contender
    );
    cell.rounds = ok.length;
    if (ok.length === 0) continue;
    const ops = ok.map((s) => s.opsPerSec!);
    cell.median = median(ops);
    cell.min = Math.min(...ops);
    cell.max = Math.max(...ops);
    cell.p50Us = median(ok.map((s) => s.p50Us ?? NaN));
    cell.p99Us = median(ok.map((s) => s.p99Us ?? NaN));
    cell.p999Us = median(ok.map((s) => s.p999Us ?? NaN));
    cell.peakRss = median(ok.map((s) => s.peakRss ?? NaN));
    cell.commandsPerRead = median(ok.map((s) => s.commandsPerRead ?? NaN));
    cell.cpuUsPerOp = median(ok.map((s) => s.cpuUsPerOp ?? NaN));
  }
  return cells;
}

const fmtOps = (n: number | undefined): string => {
  if (n === undefined || !Number.isFinite(n)) return "—";
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(0);
};
const fmtRange = (c: Cell | undefined): string =>
  c?.median === undefined
    ? "—"
    : c.rounds > 1
    ? `${fmtOps(c.median)} (${fmtOps(c.min)}–${fmtOps(c.max)})`
    : fmtOps(c.median);
const fmtUs = (n: number | undefined): string => {
  if (n === undefined || !Number.isFinite(n)) return "—";
  if (n >= 1_000_000) return `${(n / 1e6).toFixed(2)} s`;
  if (n >= 10_000) return `${(n / 1000).toFixed(1)} ms`;
  return `${n >= 100 ? n.toFixed(0) : n.toFixed(1)} µs`;
};
const fmtTail = (c: Cell): string => `${fmtUs(c.p50Us)} / ${fmtUs(c.p99Us)} / ${fmtUs(c.p999Us)}`;
const fmtMb = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? "—" : (n / 1048576).toFixed(0);
const fmtCpu = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? "—" : n >= 10 ? n.toFixed(0) : n.toFixed(2);
const fmtRatio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || !Number.isFinite(a) ||
    !Number.isFinite(b) || b === 0
    ? "—"
    : `${(a / b).toFixed(2)}x`;
const ratio = (
  a: number | undefined,
  b: number | undefined,
): number | undefined =>
  a === undefined || b === undefined || !Number.isFinite(a) ||
    !Number.isFinite(b) || b === 0
    ? undefined
    : a / b;

interface SummaryRow {
  workload: string;
  runtime: "deno" | "bun";
  ours?: Cell;
  bestPeer?: Cell;
  builtin?: Cell;
  reference?: Cell;
  oursOverPeer?: number;
  oursOverBuiltin?: number;
  oursOverReference?: number;
}

function summarize(
  cells: Map<string, Cell>,
  workloads: WorkloadMeta[],
): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const w of workloads) {
    for (const rt of ["deno", "bun"] as const) {
      const get = (id: string) => {
        const c = cells.get(`${w.id}|${id}`);
        return c?.median === undefined ? undefined : c;
      };
      const peers = ["node-redis", "ioredis"].map((p) => get(`${p}@${rt}`))
        .filter((c) => c !== undefined);
      const bestPeer = peers.sort((a, b) => b.median! - a.median!)[0];
      const row: SummaryRow = {
        workload: w.id,
        runtime: rt,
        ours: get(`ours@${rt}`),
        bestPeer,
        builtin: rt === "bun" ? get("bun@bun") : undefined,
        reference: get("redis-benchmark"),
      };
      row.oursOverPeer = ratio(row.ours?.median, bestPeer?.median);
      row.oursOverBuiltin = ratio(row.ours?.median, row.builtin?.median);
      row.oursOverReference = ratio(row.ours?.median, row.reference?.median);
      rows.push(row);
    }
  }
  return rows;
}

const peerName = (c: Cell | undefined) => c ? c.contender.split("@")[0]! : "—";

function targets(
  rows: SummaryRow[],
  cells: Map<string, Cell>,
  workloads: WorkloadMeta[],
): string[] {
  const out: string[] = [];
  const mark = (v: number | undefined, min: number) =>
    v === undefined ? "⏳ not measured" : v >= min ? `✅ ${v.toFixed(2)}x` : `❌ ${v.toFixed(2)}x`;
  for (const r of rows) {
    const w = workloads.find((x) => x.id === r.workload)!;
    if (r.runtime === "bun") {
      out.push(
        `- ${w.label}, Bun: ours/built-in ≥ 1.0x: ${mark(r.oursOverBuiltin, 1.0)}`,
      );
      out.push(
        `- ${w.label}, Bun: ours/best npm peer ≥ 1.1x: ${mark(r.oursOverPeer, 1.1)}`,
      );
    } else {
      out.push(
        `- ${w.label}, Deno: ours/best peer ≥ 1.1x: ${mark(r.oursOverPeer, 1.1)}`,
      );
    }
    if (w.refTarget !== undefined) {
      out.push(
        `- ${w.label}, ${
          r.runtime === "bun" ? "Bun" : "Deno"
        }: ours/redis-benchmark ${w.ref.label} ≥ ${w.refTarget}x: ${
          mark(r.oursOverReference, w.refTarget)
        }`,
      );
    }
  }
  const builtinRss = cells.get("get-burst|bun@bun")?.peakRss;
  for (const rt of ["bun", "deno"]) {
    const ours = cells.get(`get-burst|ours@${rt}`)?.peakRss;
    if (builtinRss === undefined) continue;
    out.push(
      `- Burst peak RSS, ours on ${rt === "bun" ? "Bun" : "Deno"} ≤ Bun built-in (${
        fmtMb(builtinRss)
      } MB): ${
        ours === undefined
          ? "⏳ not measured"
          : ours <= builtinRss
          ? `✅ ${fmtMb(ours)} MB`
          : `❌ ${fmtMb(ours)} MB`
      }`,
    );
  }
  return out;
}

function markdown(
  samples: Sample[],
  cells: Map<string, Cell>,
  rows: SummaryRow[],
  workloads: WorkloadMeta[],
  meta: Record<string, string>,
): string {
  const L: string[] = [];
  L.push(`# Benchmark results`, "");
  for (const [k, v] of Object.entries(meta)) L.push(`- ${k}: ${v}`);
  L.push("");
  L.push(`## Summary (ops/s: median of rounds, min–max in parentheses)`, "");
  L.push(
    "| Workload | Runtime | Ours | Best peer | Peer ops/s | Ours/peer | Bun built-in | Ours/built-in | redis-benchmark | Ref ops/s | Ours/ref |",
  );
  L.push(
    "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
  );
  for (const r of rows) {
    const w = workloads.find((x) => x.id === r.workload)!;
    const oursCell = cells.get(`${r.workload}|ours@${r.runtime}`);
    const ours = r.ours ? fmtRange(r.ours) : oursCell?.errors.length ? "failed" : "skipped";
    L.push(
      `| ${w.label} | ${r.runtime === "bun" ? "Bun" : "Deno"} | ${ours} | ${
        peerName(r.bestPeer)
      } | ${fmtRange(r.bestPeer)} | ${fmtRatio(r.ours?.median, r.bestPeer?.median)} | ${
        r.runtime === "bun" ? fmtRange(r.builtin) : "—"
      } | ${
        r.runtime === "bun" ? fmtRatio(r.ours?.median, r.builtin?.median) : "—"
      } | ${w.ref.label} | ${fmtRange(r.reference)} | ${
        fmtRatio(r.ours?.median, r.reference?.median)
      } |`,
    );
  }
  if (CONTENDERS.some((c) => c.client === "base")) {
    L.push(
      "",
      `## A/B: this checkout against the base (${Deno.env.get("EDGE_REDIS_BASE")})`,
      "",
    );
    L.push(
      "| Workload | Runtime | Ours | Base | Ours/base | p50 / p99 / p99.9 ours | base | CPU µs/op ours | base |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const w of workloads) {
      for (const rt of ["deno", "bun"] as const) {
        const ours = cells.get(`${w.id}|ours@${rt}`);
        const base = cells.get(`${w.id}|base@${rt}`);
        if (ours?.median === undefined || base?.median === undefined) continue;
        L.push(
          `| ${w.label} | ${rt === "bun" ? "Bun" : "Deno"} | ${fmtRange(ours)} | ${
            fmtRange(base)
          } | ${fmtRatio(ours.median, base.median)} | ${fmtTail(ours)} | ${fmtTail(base)} | ${
            fmtCpu(ours.cpuUsPerOp)
          } | ${fmtCpu(base.cpuUsPerOp)} |`,
        );
      }
    }
  }
  if (CONTENDERS.some((c) => c.client === "ours-metrics")) {
    L.push("", "## Metrics on (OpenTelemetry SDK) against off", "");
    L.push(
      "| Workload | Runtime | Off | Default groups | Every group | Default/off | Every/off |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const w of workloads) {
      for (const rt of ["deno", "bun"] as const) {
        const off = cells.get(`${w.id}|ours@${rt}`);
        const def = cells.get(`${w.id}|ours-metrics@${rt}`);
        const all = cells.get(`${w.id}|ours-metrics-all@${rt}`);
        if (off?.median === undefined || def?.median === undefined) continue;
        L.push(
          `| ${w.label} | ${rt === "bun" ? "Bun" : "Deno"} | ${fmtRange(off)} | ${
            fmtRange(def)
          } | ${all ? fmtRange(all) : "-"} | ${fmtRatio(def.median, off.median)} | ${
            all?.median !== undefined ? fmtRatio(all.median, off.median) : "-"
          } |`,
        );
      }
    }
  }
  L.push("", "## Targets of issue 3", "");
  L.push(...targets(rows, cells, workloads));
  L.push("", "## Every contender", "");
  L.push(
    "| Workload | Contender | ops/s median | min | max | p50 | p99 | p99.9 | latency of | peak RSS MB | CPU µs/op | cmds/read |",
  );
  L.push(
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
  );
  for (const w of workloads) {
    for (const c of CONTENDERS) {
      const cell = cells.get(`${w.id}|${c.id}`);
      if (!cell) continue;
      const name = c.id === "redis-benchmark" ? `redis-benchmark ${w.ref.label}` : c.id;
      if (cell.median === undefined) {
        const why = c.skipped ? "skipped" : "failed";
        L.push(
          `| ${w.label} | ${name} | ${why} | — | — | — | — | — | — | — | — | — |`,
        );
        continue;
      }
      L.push(
        `| ${w.label} | ${name} | ${fmtOps(cell.median)} | ${fmtOps(cell.min)} | ${
          fmtOps(cell.max)
        } | ${fmtUs(cell.p50Us)} | ${fmtUs(cell.p99Us)} | ${fmtUs(cell.p999Us)} | ${
          c.runtime === "server" ? "per request" : w.latency
        } | ${fmtMb(cell.peakRss)} | ${fmtCpu(cell.cpuUsPerOp)} | ${
          Number.isFinite(cell.commandsPerRead) ? cell.commandsPerRead!.toFixed(1) : "—"
        } |`,
      );
    }
  }
  const skipped = CONTENDERS.filter((c) => c.skipped);
  const failures = samples.filter((s) => !s.ok && !skipped.some((c) => c.id === s.contender));
  if (skipped.length || failures.length) {
    L.push("", "## Skipped and failed runs", "");
    for (const c of skipped) L.push(`- ${c.id} skipped: ${c.skipped}`);
    for (const s of failures) {
      L.push(`- ${s.contender} ${s.workload} round ${s.round}: ${s.error}`);
    }
  }
  L.push("");
  return L.join("\n");
}

// ---------------------------------------------------------------------------------------------

function pkgVersion(name: string): string {
  try {
    return JSON.parse(
      readFileSync(
        join(benchDir, "node_modules", name, "package.json"),
        "utf8",
      ),
    ).version;
  } catch {
    return "not installed";
  }
}

/** The commit measured, and whether the working tree had changes (ours is loaded from it). */
function gitDescribe(): string {
  const git = (...args: string[]) =>
    spawnSync("git", args, { cwd: rootDir, encoding: "utf8" }).stdout?.trim() ??
      "";
  const sha = git("rev-parse", "--short", "HEAD");
  if (!sha) return "not a git checkout";
  const dirty = git("status", "--porcelain", "--", "mod.ts", "src").length > 0;
  return `${sha}${dirty ? " + uncommitted changes in mod.ts/src" : ""}`;
}

function cpuModel(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? "unknown CPU"}`;
}

async function main(): Promise<void> {
  const opts = parseArgs(Deno.args);
  const started = Date.now();
  const loadBefore = loadavg()[0]!;
  ensurePeers();
  const runtimes = resolveRuntimes(opts.npx);
  const workloads = WORKLOADS.filter((w) => !opts.only || opts.only.includes(w.id));
  const contenders = CONTENDERS.filter((c) =>
    !opts.clients || opts.clients.includes(c.id) ||
    opts.clients.includes(c.client)
  );
  for (const c of contenders) {
    if (c.runtime !== "server" && !runtimes[c.runtime]) {
      c.skipped = `${c.runtime} is not available`;
    }
  }

  const server = await startRedis();
  if (opts.pin !== undefined) {
    // every thread of the server (its I/O and background threads too)
    const r = spawnSync("taskset", ["-a", "-p", "-c", "0", String(server.pid)], {
      encoding: "utf8",
    });
    if (r.status !== 0) {
      await server.stop();
      throw new Error(`Cannot pin redis-server to CPU 0: ${r.stderr.trim()}`);
    }
  }
  const samples: Sample[] = [];
  let redisVersion = "unknown";
  try {
    await seed(server.port);
    const v = spawnSync("redis-server", ["--version"], { encoding: "utf8" }).stdout ??
      "";
    redisVersion = v.match(/v=(\S+)/)?.[1] ?? "unknown";
    console.error(
      `bench: redis-server ${redisVersion} on 127.0.0.1:${server.port}; ${opts.rounds} round(s) × ${workloads.length} workload(s) × ${contenders.length} contender(s), ${opts.duration} ms each after ${opts.warmup} ms warmup`,
    );
    for (let round = 1; round <= opts.rounds; round++) {
      for (const w of workloads) {
        for (const c of contenders) {
          if (c.skipped) continue;
          const s = c.runtime === "server"
            ? await measureReference(w, server.port, opts, round)
            : await measureWorker(
              c,
              w,
              server.port,
              runtimes[c.runtime]!,
              opts,
              round,
            );
          samples.push(s);
          const what = `[${round}/${opts.rounds}] ${w.id.padEnd(15)} ${c.id.padEnd(16)}`;
          if (s.ok) {
            console.error(
              `${what} ${fmtOps(s.opsPerSec).padStart(7)} ops/s  p50 ${fmtUs(s.p50Us)}  p99 ${
                fmtUs(s.p99Us)
              }  p99.9 ${fmtUs(s.p999Us)}  rss ${fmtMb(s.peakRss)} MB  cpu ${
                fmtCpu(s.cpuUsPerOp)
              } µs/op  cmds/read ${s.commandsPerRead?.toFixed(1)}  load ${
                s.loadAvg?.toFixed(1)
              }  (${s.wallSeconds.toFixed(1)} s)`,
            );
          } else if (c.skipped) {
            console.error(
              `${what} SKIPPED for the rest of the run: ${c.skipped}`,
            );
          } else {
            console.error(`${what} FAILED: ${s.error}`);
          }
        }
      }
    }
  } finally {
    await server.stop();
  }

  const cells = aggregate(samples);
  const rows = summarize(cells, workloads);
  const meta: Record<string, string> = {
    date: new Date().toISOString(),
    machine: `${cpuModel()}, ${Deno.build.os}`,
    "redis-server": redisVersion,
    runtimes: `deno ${runtimes.deno?.version ?? "n/a"}, bun ${runtimes.bun?.version ?? "n/a"}`,
    peers: `redis (node-redis) ${pkgVersion("redis")}, ioredis ${pkgVersion("ioredis")}`,
    settings:
      `${opts.rounds} round(s), ${opts.duration} ms measured after ${opts.warmup} ms warmup, fresh process per run, interleaved`,
    command: `deno task bench ${Deno.args.join(" ")}`.trim(),
    "CPU placement": opts.pin === undefined
      ? "not pinned (the scheduler's)"
      : `redis-server on CPU 0, every client process on CPU ${opts.pin === "same" ? 0 : 1}`,
    code: gitDescribe(),
    "total time": `${((Date.now() - started) / 1000).toFixed(0)} s`,
    "1-min load average": `${loadBefore.toFixed(1)} at start, ${
      loadavg()[0]!.toFixed(1)
    } at end (this run alone keeps about 2 busy); median over the runs ${
      median(samples.map((s) => s.loadAvg ?? NaN)).toFixed(1)
    }`,
  };
  const md = markdown(samples, cells, rows, workloads, meta);
  console.log(md);
  mkdirSync(opts.out, { recursive: true });
  writeFileSync(join(opts.out, "latest.md"), md);
  writeFileSync(
    join(opts.out, "latest.json"),
    JSON.stringify(
      {
        meta,
        workloads,
        contenders: contenders.map((c) => ({ ...c })),
        summary: rows.map((r) => ({
          workload: r.workload,
          runtime: r.runtime,
          ours: r.ours?.median ?? null,
          bestPeer: r.bestPeer
            ? { name: peerName(r.bestPeer), opsPerSec: r.bestPeer.median }
            : null,
          builtin: r.builtin?.median ?? null,
          reference: r.reference?.median ?? null,
          oursOverPeer: r.oursOverPeer ?? null,
          oursOverBuiltin: r.oursOverBuiltin ?? null,
          oursOverReference: r.oursOverReference ?? null,
        })),
        cells: [...cells.values()],
        samples,
      },
      null,
      2,
    ) + "\n",
  );
  console.error(
    `bench: wrote ${relative(rootDir, join(opts.out, "latest.md"))} and latest.json`,
  );
  if (!opts.only && !Deno.args.includes("--no-cluster")) {
    // The cluster workloads (bench/cluster.ts) start their own 3-primary cluster.
    const r = spawnSync(Deno.execPath(), [
      "run",
      "-A",
      join(benchDir, "cluster.ts"),
      "--rounds",
      String(opts.rounds),
      "--duration",
      String(opts.duration),
      "--warmup",
      String(opts.warmup),
      "--out",
      join(opts.out, "cluster.md"),
    ], { stdio: "inherit", cwd: rootDir });
    if (r.status !== 0) console.error("bench: the cluster workloads failed");
  }
  if (!opts.only && !Deno.args.includes("--no-cache")) {
    // Cached GET (ours cached / uncached, node-redis cached) on its own redis-server.
    const r = spawnSync(Deno.execPath(), [
      "run",
      "-A",
      join(benchDir, "client_side_cache.ts"),
      "--rounds",
      String(opts.rounds),
      "--duration",
      String(opts.duration),
      "--warmup",
      String(opts.warmup),
      "--out",
      opts.out,
    ], { stdio: "inherit", cwd: rootDir });
    if (r.status !== 0) {
      console.error("bench: the client-side cache workload failed");
    }
  }
}

if (import.meta.main) await main();
