// A/B of our cluster client: this checkout against another one (e.g. a `git worktree` of an
// earlier commit), on one real 3-primary cluster, the two run interleaved (the order alternates
// each round). Prints, per workload and runtime, both medians and their ratio.
//
//   deno run -A bench/cluster_ab.ts --base ../base [--rounds 5] [--duration 1500]
//     [--warmup 400] [--runtimes deno,bun]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startCluster } from "../tests/_helpers/cluster.ts";
import { keySlot } from "../src/cluster/slot.ts";

const WORKLOADS = ["get-c50", "pipeline-set", "mget-100"];
const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name: string, fallback: string) => {
  const i = Deno.args.indexOf(name);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : fallback;
};
const base = resolve(arg("--base", ""));
if (!existsSync(join(base, "bench", "cluster.ts"))) {
  console.error(
    `Cannot run the A/B: "${base}" has no bench/cluster.ts (give --base DIR)`,
  );
  Deno.exit(2);
}
const rounds = Number(arg("--rounds", "5"));
const duration = arg("--duration", "1500");
const warmup = arg("--warmup", "400");
const runtimes = arg("--runtimes", "deno,bun").split(",");

const cluster = await startCluster({ replicasPerPrimary: 0 });
const out: Record<string, number[]> = {};
try {
  for (let i = 0; i < 1000; i++) {
    const k = `bench:cluster:${i}`;
    await cluster.nodeForSlot(keySlot(k)).command(["SET", k, "v".repeat(16)]);
  }
  const seeds = JSON.stringify(cluster.primaries().map((p) => p.url));
  for (let r = 0; r < rounds; r++) {
    for (const w of WORKLOADS) {
      for (const rt of runtimes) {
        const order = r % 2 === 0
          ? [["base", base], ["new", here]]
          : [["new", here], ["base", base]];
        for (const [name, dir] of order) {
          const cmd = rt === "bun" ? ["npx", "-y", "bun@1.4.4", `${dir}/bench/cluster.ts`] : [
            "npx",
            "-y",
            "deno@2.9.6",
            "run",
            "-A",
            `${dir}/bench/cluster.ts`,
          ];
          const res = spawnSync(
            cmd[0]!,
            [...cmd.slice(1), "--worker", "ours", w, seeds, duration, warmup],
            { cwd: dir, encoding: "utf8" },
          );
          const line = (res.stdout ?? "").trim().split("\n").pop() ?? "";
          try {
            (out[`${w} ${rt} ${name}`] ??= []).push(JSON.parse(line).opsPerSec);
          } catch {
            console.error(
              `round ${r + 1} ${w} ${rt} ${name}: failed: ${res.stderr?.slice(-300)}`,
            );
          }
        }
      }
    }
  }
} finally {
  await cluster.stop();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
console.log("| Workload | Runtime | Base ops/s | This ops/s | This/base |");
console.log("| --- | --- | ---: | ---: | ---: |");
for (const w of WORKLOADS) {
  for (const rt of runtimes) {
    const b = out[`${w} ${rt} base`] ?? [];
    const n = out[`${w} ${rt} new`] ?? [];
    if (b.length === 0 || n.length === 0) continue;
    console.log(
      `| ${w} | ${rt} | ${Math.round(median(b))} | ${Math.round(median(n))} | ${
        (median(n) / median(b)).toFixed(2)
      } |`,
    );
  }
}
