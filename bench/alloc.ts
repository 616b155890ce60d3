// Allocation per command, counted by the runtimes' own tools, load-independent (unlike ops/s).
//
//   deno run -A bench/alloc.ts [--base DIR] [--n 2000] [--burst 10000] [--repeat 7] [--no-builtin]
//
// Starts a redis-server, seeds it, and runs a probe (this file with --probe) per checkout and
// runtime, in a fresh process each. A probe warms the client up, then measures windows of `n`
// serial GETs, of one burst of `burst` GET promises, of 5n GETs from 50 concurrent callers and of
// n/4 serial MGETs of 100 keys; before each window it forces a full GC.
// - Bun: `bun:jsc` heapStats() before and after a window with no collection in it: the growth of
//   `heapCapacity` is the bytes the window allocated on the JS heap, the growth of the per-type
//   counts of `objectTypeCounts` (it counts cells not collected yet) the objects it created, and
//   `extraMemorySize` the bytes outside the heap (ArrayBuffer stores, such as socket chunks).
// - Deno: `Deno.memoryUsage().heapUsed` growth over a window, with a young generation large
//   enough (`--min-semi-space-size`) that no scavenge runs in it; `--trace-gc` lines printed
//   inside a window mark it as spoiled, and it is dropped.
// The median of the unspoiled windows is reported per command.
//
// Besides what a command allocates, "in flight" is what it keeps alive while it waits for its
// reply (what a burst's peak RSS is made of): `burst` GETs issued in one go, a full GC, the growth
// of the live heap (Bun: `heapSize` and the live objects by type; Deno: `heapUsed`) per GET, then
// the replies awaited. Bun's built-in `RedisClient` is probed too under Bun (`--no-builtin` to
// skip it), for the same numbers side by side.
import { spawn, spawnSync } from "node:child_process";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KEYS, seed } from "./_raw.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const BEGIN = "@@alloc-begin";
/** Marks a probe's result line. */
const RESULT = "@@alloc-result ";
/** The module path that stands for Bun's built-in client. */
const BUILTIN = "bun:builtin";
const END = "@@alloc-end";

/** One probe's result per workload. */
interface ProbeResult {
  workload: string;
  /** JS heap bytes allocated per command (median over clean windows). */
  bytes: number;
  /** Objects created per GET (Bun only). */
  objects?: number;
  /** Bytes outside the JS heap per GET (Bun only: ArrayBuffer stores). */
  extra?: number;
  /** The object types created most, per GET (Bun only). */
  types?: Record<string, number>;
  windows: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
}

// ---------------------------------------------------------------------------------------------
// The probe (runs inside the measured runtime).

async function probe(
  modPath: string,
  port: number,
  n: number,
  burst: number,
  repeat: number,
) {
  const isBun = "Bun" in globalThis;
  const url = `redis://127.0.0.1:${port}`;
  let c: Any;
  if (modPath === BUILTIN) {
    const spec = "bun";
    c = new (await import(spec)).RedisClient(url);
    await c.connect();
  } else {
    c = new (await import(modPath)).RedisClient({ url });
  }
  const key = KEYS.small;
  const serial = async (count: number) => {
    for (let i = 0; i < count; i++) await c.get(key);
  };
  const ps: Promise<unknown>[] = new Array(burst);
  const burstOnce = async () => {
    for (let i = 0; i < burst; i++) ps[i] = c.get(key);
    await Promise.all(ps);
    ps.fill(undefined as unknown as Promise<unknown>);
  };
  // Warm up every path (JIT tiers, pools, buffers grown to their working size).
  const concurrent = async (count: number) => {
    const loop = async () => {
      for (let i = 0; i < count / 50; i++) await c.get(key);
    };
    const loops = [];
    for (let i = 0; i < 50; i++) loops.push(loop());
    await Promise.all(loops);
  };
  const mget = async (count: number) => {
    for (let i = 0; i < count; i++) await c.mget(...KEYS.mget);
  };
  await serial(20_000);
  await concurrent(20_000);
  await mget(2_000);
  for (let i = 0; i < 5; i++) await burstOnce();
  const gc: () => void = isBun ? () => (globalThis as Any).Bun.gc(true) : (globalThis as Any).gc;
  const jsc: Any = isBun ? await import("bun:jsc") : undefined;
  const out: ProbeResult[] = [];
  for (
    const [workload, count, body] of [
      ["get-serial", n, () => serial(n)],
      ["get-burst", burst, burstOnce],
      ["get-c50", n * 5, () => concurrent(n * 5)],
      ["mget100", n / 4, () => mget(n / 4)],
    ] as const
  ) {
    const bytes: number[] = [];
    const objects: number[] = [];
    const extra: number[] = [];
    const types: Record<string, number[]> = {};
    for (let r = 0; r < repeat; r++) {
      await new Promise((res) => setTimeout(res, 5));
      gc();
      if (isBun) {
        const a = jsc.heapStats();
        await body();
        const b = jsc.heapStats();
        // A collection inside the window changes the marked count: drop that window.
        if (b.objectCount !== a.objectCount) continue;
        bytes.push((b.heapCapacity - a.heapCapacity) / count);
        extra.push((b.extraMemorySize - a.extraMemorySize) / count);
        let total = 0;
        for (const t of Object.keys(b.objectTypeCounts)) {
          const d = b.objectTypeCounts[t] - (a.objectTypeCounts[t] ?? 0);
          total += d;
          (types[t] ??= []).push(d / count);
        }
        objects.push(total / count);
      } else {
        console.log(BEGIN, workload);
        const a = (globalThis as Any).Deno.memoryUsage().heapUsed;
        await body();
        const b = (globalThis as Any).Deno.memoryUsage().heapUsed;
        console.log(END, workload, (b - a) / count);
      }
    }
    const top: Record<string, number> = {};
    for (const [t, v] of Object.entries(types)) {
      const m = median(v);
      if (m >= 0.05) top[t] = Math.round(m * 100) / 100;
    }
    out.push({
      workload,
      bytes: median(bytes),
      objects: isBun ? median(objects) : undefined,
      extra: isBun ? median(extra) : undefined,
      types: isBun ? top : undefined,
      windows: bytes.length,
    });
  }
  // In flight: what `burst` unanswered GETs keep alive.
  const live: number[] = [];
  const liveObjects: number[] = [];
  const liveTypes: Record<string, number[]> = {};
  for (let r = 0; r < repeat; r++) {
    await new Promise((res) => setTimeout(res, 5));
    gc();
    const a = isBun ? jsc.heapStats() : (globalThis as Any).Deno.memoryUsage().heapUsed;
    for (let i = 0; i < burst; i++) ps[i] = c.get(key);
    gc();
    const b = isBun ? jsc.heapStats() : (globalThis as Any).Deno.memoryUsage().heapUsed;
    await Promise.all(ps);
    ps.fill(undefined as unknown as Promise<unknown>);
    if (!isBun) {
      live.push((b - a) / burst);
      continue;
    }
    live.push((b.heapSize - a.heapSize) / burst);
    let total = 0;
    for (const t of Object.keys(b.objectTypeCounts)) {
      const d = b.objectTypeCounts[t] - (a.objectTypeCounts[t] ?? 0);
      total += d;
      (liveTypes[t] ??= []).push(d / burst);
    }
    liveObjects.push(total / burst);
  }
  const liveTop: Record<string, number> = {};
  for (const [t, v] of Object.entries(liveTypes)) {
    const m = median(v);
    if (m >= 0.05) liveTop[t] = Math.round(m * 100) / 100;
  }
  out.push({
    workload: "get-in-flight",
    bytes: median(live),
    objects: isBun ? median(liveObjects) : undefined,
    types: isBun ? liveTop : undefined,
    windows: live.length,
  });
  await c.close();
  console.log(RESULT + JSON.stringify(out));
}

// ---------------------------------------------------------------------------------------------
// The driver.

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

function runCmd(cmd: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0]!, cmd.slice(1), {
      cwd: rootDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("close", (code) => {
      if (code === 0) resolve(out);
      else {reject(
          new Error(`${cmd.join(" ")} exited with ${code}: ${err.slice(-500)}`),
        );}
    });
  });
}

/** Reads a Deno probe's output: windows with a GC line between their markers are dropped. */
function parseDeno(out: string): ProbeResult[] {
  const lines = out.split("\n");
  // A --trace-gc line may share the result's line (V8 prints a GC line in two writes).
  const line = lines.findLast((l) => l.includes(RESULT)) ?? "";
  const results = JSON.parse(
    line.includes(RESULT) ? line.slice(line.indexOf(RESULT) + RESULT.length) : "[]",
  ) as ProbeResult[];
  const windows = new Map<string, number[]>();
  let inWindow = false;
  let spoiled = false;
  for (const l of lines) {
    if (l.startsWith(BEGIN)) {
      inWindow = true;
      spoiled = false;
    } else if (l.startsWith(END)) {
      inWindow = false;
      const [, workload, value] = l.split(" ");
      if (!spoiled) windows.set(workload!, [...(windows.get(workload!) ?? []), Number(value)]);
    } else if (inWindow && /Scavenge|Mark-Compact|Minor/.test(l)) {
      spoiled = true;
    }
  }
  for (const r of results) {
    if (!windows.has(r.workload) && r.workload === "get-in-flight") continue; // no markers
    r.bytes = median(windows.get(r.workload) ?? []);
    r.windows = windows.get(r.workload)?.length ?? 0;
  }
  return results;
}

function binaries(): { deno: string; bun: string } {
  const deno = spawnSync("npx", [
    "-y",
    "deno@2.9.6",
    "eval",
    "console.log(Deno.execPath())",
  ], {
    encoding: "utf8",
  }).stdout.trim();
  const bun = spawnSync("npx", [
    "-y",
    "bun@1.4.4",
    "-e",
    "console.log(process.execPath)",
  ], {
    encoding: "utf8",
  }).stdout.trim();
  return { deno, bun };
}

async function driver(argv: string[]): Promise<void> {
  const { startRedis } = await import("../tests/_helpers/redis_server.ts");
  const n = arg(argv, "--n") ?? "2000";
  const burst = arg(argv, "--burst") ?? "10000";
  const repeat = arg(argv, "--repeat") ?? "7";
  const base = arg(argv, "--base");
  const server = await startRedis();
  const bins = binaries();
  try {
    await seed(server.port);
    const targets: [string, string, ("deno" | "bun")[]][] = [
      ["ours", join(rootDir, "mod.ts"), ["deno", "bun"]],
    ];
    if (base) targets.unshift(["base", join(base, "mod.ts"), ["deno", "bun"]]);
    if (!argv.includes("--no-builtin")) targets.push(["bun", BUILTIN, ["bun"]]);
    const self = fileURLToPath(import.meta.url);
    const rows: string[] = [];
    for (const [name, mod, runtimes] of targets) {
      for (const runtime of runtimes) {
        const probeArgs = [
          "--probe",
          mod,
          String(server.port),
          n,
          burst,
          repeat,
        ];
        const cmd = runtime === "deno"
          ? [
            bins.deno,
            "run",
            "-A",
            "--no-lock",
            "--v8-flags=--expose-gc,--trace-gc,--min-semi-space-size=128,--max-semi-space-size=128",
            self,
            ...probeArgs,
          ]
          : [bins.bun, self, ...probeArgs];
        const out = await runCmd(cmd);
        const results = runtime === "deno"
          ? parseDeno(out)
          : JSON.parse(out.trim().split("\n").at(-1)!.slice(RESULT.length)) as ProbeResult[];
        for (const r of results) {
          const types = r.types
            ? Object.entries(r.types).sort((a, b) => b[1] - a[1]).slice(0, 6)
              .map(([t, v]) => `${t} ${v}`).join(", ")
            : "";
          rows.push(
            `| ${name}@${runtime} | ${r.workload} | ${r.bytes.toFixed(0)} | ${
              r.objects?.toFixed(2) ?? "—"
            } | ${r.extra?.toFixed(0) ?? "—"} | ${r.windows} | ${types} |`,
          );
        }
      }
    }
    console.log(
      `allocation per command (16 B values), median of ${repeat} windows: ${n} serial GETs, a burst of ${burst}, ${
        Number(n) * 5
      } GETs from 50 callers, ${
        Number(n) / 4
      } serial MGETs of 100 keys; get-in-flight: live heap per GET with ${burst} unanswered (heap B, live objects)`,
    );
    console.log("");
    console.log(
      "| target | workload | JS heap B/cmd | objects/cmd | off-heap B/cmd | clean windows | most created (per cmd) |",
    );
    console.log("| --- | --- | ---: | ---: | ---: | ---: | --- |");
    for (const r of rows) console.log(r);
  } finally {
    await server.stop();
  }
}

const argv = process.argv.slice(2);
const p = argv.indexOf("--probe");
if (p >= 0) {
  const [mod, port, n, burst, repeat] = argv.slice(p + 1);
  await probe(mod!, Number(port), Number(n), Number(burst), Number(repeat));
  process.exit(0);
} else {
  await driver(argv);
}
