// CPU-profiles one worker run and prints the functions with the most self time.
//
//   deno run -A bench/profile.ts <client> <workload> [--runtime deno|bun] [--duration ms] [--top n]
//   deno run -A bench/profile.ts --summarize file.cpuprofile [--top n] [--callers fn]
//
// Note: Bun's profiles have no "(idle)" entry; time spent waiting for the socket is charged to
// the last function on the stack (often a native `write` or `decode`). Read them with the
// CPU µs/op column of the benchmark at hand.
//
// Starts its own redis-server, seeds it, runs bench/worker.ts under `--cpu-prof` (Deno and Bun
// both write Chrome .cpuprofile files), keeps the profile in bench/.tmp/prof/ and summarises it.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { startRedis } from "../tests/_helpers/redis_server.ts";
import { seed } from "./_raw.ts";

interface ProfileNode {
  id: number;
  callFrame: {
    functionName: string;
    url: string;
    lineNumber: number;
    columnNumber: number;
  };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);

function arg(name: string, fallback?: string): string | undefined {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Deno.args[i + 1] : fallback;
}

/** Self time per function (ms), highest first, as Markdown table lines. */
export function summarize(profile: CpuProfile, top = 25): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  }
  const byFn = new Map<string, number>();
  for (const [id, ms] of self) {
    const f = byId.get(id)?.callFrame;
    if (!f) continue;
    const file = f.url ? f.url.replace(/^file:\/\//, "").replace(rootDir + "/", "") : "";
    const key = `${f.functionName || "(anonymous)"}${file ? ` ${file}:${f.lineNumber + 1}` : ""}`;
    byFn.set(key, (byFn.get(key) ?? 0) + ms);
  }
  const rows = [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  const out = [
    `total sampled: ${total.toFixed(0)} ms`,
    "",
    "| self ms | self % | function |",
    "| ---: | ---: | --- |",
  ];
  for (const [k, ms] of rows) {
    out.push(
      `| ${ms.toFixed(1)} | ${(ms / total * 100).toFixed(1)} | ${k.replace(/\|/g, "\\|")} |`,
    );
  }
  return out;
}

/** Where the self time of function `name` comes from: its callers up to `depth` frames up. */
export function callers(
  profile: CpuProfile,
  name: string,
  depth = 4,
  top = 8,
): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stacks = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    if (byId.get(id)?.callFrame.functionName !== name) continue;
    const chain: string[] = [];
    for (
      let cur = parent.get(id), d = 0;
      cur !== undefined && d < depth;
      cur = parent.get(cur), d++
    ) {
      const f = byId.get(cur)!.callFrame;
      const file = f.url.replace(/^file:\/\//, "").replace(rootDir + "/", "");
      chain.push(
        `${f.functionName || "(anonymous)"}${file ? ` ${file}:${f.lineNumber + 1}` : ""}`,
      );
    }
    const key = chain.join(" < ");
    stacks.set(
      key,
      (stacks.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000,
    );
  }
  const out = [``, `callers of ${name}:`, ""];
  for (const [k, ms] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    out.push(`- ${ms.toFixed(1)} ms: ${k}`);
  }
  return out;
}

async function main(): Promise<void> {
  const top = Number(arg("--top", "25"));
  const file = arg("--summarize");
  const callersOf = arg("--callers");
  if (file) {
    const profile: CpuProfile = JSON.parse(readFileSync(file, "utf8"));
    console.log(summarize(profile, top).join("\n"));
    if (callersOf) console.log(callers(profile, callersOf).join("\n"));
    return;
  }
  const [client, workload] = Deno.args.filter((a, i, all) =>
    !a.startsWith("--") && !(all[i - 1] ?? "").startsWith("--")
  );
  if (!client || !workload) {
    console.error(
      "Usage: deno run -A bench/profile.ts <client> <workload> [--runtime deno|bun]",
    );
    Deno.exit(2);
  }
  const runtime = arg("--runtime", "deno");
  const duration = arg("--duration", "3000")!;
  const dir = join(
    benchDir,
    ".tmp",
    "prof",
    `${client}-${workload}-${runtime}-${Date.now()}`,
  );
  mkdirSync(dir, { recursive: true });
  const server = await startRedis();
  try {
    await seed(server.port);
    const worker = relative(rootDir, join(benchDir, "worker.ts"));
    const tail = [
      worker,
      client,
      workload,
      String(server.port),
      "--duration",
      duration,
    ];
    const cmd = runtime === "bun"
      ? ["npx", "-y", "bun@1.4.4", "--cpu-prof", "--cpu-prof-dir", dir, ...tail]
      : [
        Deno.execPath(),
        "run",
        "-A",
        "--no-lock",
        "--cpu-prof",
        "--cpu-prof-dir",
        dir,
        ...tail,
      ];
    console.error(`profile: ${cmd.join(" ")}`);
    const r = spawnSync(cmd[0]!, cmd.slice(1), {
      cwd: rootDir,
      encoding: "utf8",
    });
    console.log(r.stdout.trim());
    if (r.status !== 0) console.error(r.stderr);
  } finally {
    await server.stop();
  }
  const profiles = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size);
  if (!profiles[0]) {
    console.error(`profile: no .cpuprofile written to ${dir}`);
    Deno.exit(1);
  }
  console.log(`\nprofile: ${relative(rootDir, profiles[0])}\n`);
  const profile: CpuProfile = JSON.parse(readFileSync(profiles[0], "utf8"));
  console.log(summarize(profile, top).join("\n"));
  if (callersOf) console.log(callers(profile, callersOf).join("\n"));
}

if (import.meta.main) await main();
