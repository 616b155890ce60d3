// A/B of this checkout against another in ONE process: both clients alternate 0.7 s windows
// (order swapped every round), so the load of a shared machine hits both alike. Prints the median
// CPU µs per command and ops/s of each over 8 rounds.
//
//   deno run -A bench/ab_process.ts <base dir> <port> [serial|burst]
//   bun bench/ab_process.ts <base dir> <port> [serial|burst]
//
// Needs a server with the bench keys (`seed()` in bench/_raw.ts).
import process from "node:process";
import { KEYS } from "./_raw.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const [baseDir, portArg, mode = "serial"] = process.argv.slice(2);
if (!baseDir || !portArg) {
  console.error("Usage: ab_process.ts <base dir> <port> [serial|burst]");
  process.exit(1);
}
const url = `redis://127.0.0.1:${portArg}`;
const ours: Any = new (await import(new URL("../mod.ts", import.meta.url).href)).RedisClient({
  url,
});
const base: Any = new (await import(`file://${baseDir.replace(/\/$/, "")}/mod.ts`)).RedisClient({
  url,
});

async function serial(c: Any, ms: number): Promise<number> {
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++) await c.get(KEYS.small);
    n += 200;
  }
  return n;
}

async function burst(c: Any, ms: number): Promise<number> {
  let n = 0;
  const end = performance.now() + ms;
  const ps: Promise<unknown>[] = new Array(10_000);
  while (performance.now() < end) {
    for (let i = 0; i < ps.length; i++) ps[i] = c.get(KEYS.small);
    await Promise.all(ps);
    n += ps.length;
  }
  return n;
}

const run = mode === "burst" ? burst : serial;
await run(ours, 1000);
await run(base, 1000);
const samples: Record<string, [number, number][]> = { ours: [], base: [] };
for (let r = 0; r < 8; r++) {
  const order: [string, Any][] = r % 2 ? [["ours", ours], ["base", base]] : [["base", base], [
    "ours",
    ours,
  ]];
  for (const [name, c] of order) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const n = await run(c, 700);
    const cpu = process.cpuUsage(cpu0);
    samples[name]!.push([(cpu.user + cpu.system) / n, n / (performance.now() - t0) * 1000]);
  }
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of ["ours", "base"]) {
  const s = samples[name]!;
  console.log(
    `${mode} ${name}: ${median(s.map((x) => x[0])).toFixed(3)} CPU µs/op, ${
      median(s.map((x) => x[1])).toFixed(0)
    } ops/s (windows: ${s.map((x) => x[0].toFixed(2)).join(" ")})`,
  );
}
await ours.close();
await base.close();
process.exit(0);
