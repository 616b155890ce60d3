// A/B of this checkout against another in ONE process: both clients alternate 0.7 s windows
// (order swapped every round), so the load of a shared machine hits both alike. Prints the median
// CPU µs per command and ops/s of each over 8 rounds (`--rounds n`) of 0.7 s windows
// (`--window ms`), and the median of the rounds' ours/base ratios.
//
//   deno run -A bench/ab_process.ts <base dir> <port> [serial|burst|mget|large|large16] [--rounds n] [--window ms]
//   bun bench/ab_process.ts <base dir> <port> [serial|burst|mget|large|large16] [--rounds n] [--window ms]
//
// serial: GET 16 B, one caller; burst: 10 000 GET promises at once; mget: MGET of 100 keys, one
// caller; large: GET of the 100 KB value, one caller; large16: the same, 16 callers.
//
// Needs a server with the bench keys (`seed()` in bench/_raw.ts).
import process from "node:process";
import { KEYS } from "./_raw.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const MODES: Record<string, (c: Any, ms: number) => Promise<number>> = {
  serial: (c, ms) => serial(c, ms),
  burst: (c, ms) => burst(c, ms),
  mget: (c, ms) => mget(c, ms),
  large: (c, ms) => large(c, ms),
  large16: (c, ms) => large16(c, ms),
};

const argv = process.argv.slice(2);
const roundsAt = argv.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(argv.splice(roundsAt, 2)[1]) : 8;
const windowAt = argv.indexOf("--window");
const windowMs = windowAt >= 0 ? Number(argv.splice(windowAt, 2)[1]) : 700;
const [baseDir, portArg, mode = "serial"] = argv;
if (!baseDir || !portArg || !(mode in MODES)) {
  console.error(
    "Usage: ab_process.ts <base dir> <port> [serial|burst|mget|large|large16] [--rounds n]",
  );
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

async function mget(c: Any, ms: number): Promise<number> {
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) await c.mget(...KEYS.mget);
    n += 50;
  }
  return n;
}

async function large(c: Any, ms: number): Promise<number> {
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 20; i++) await c.get(KEYS.large);
    n += 20;
  }
  return n;
}

async function large16(c: Any, ms: number): Promise<number> {
  let n = 0;
  const end = performance.now() + ms;
  const caller = async () => {
    while (performance.now() < end) {
      await c.get(KEYS.large);
      n++;
    }
  };
  await Promise.all(Array.from({ length: 16 }, caller));
  return n;
}

const run = MODES[mode]!;
await run(ours, 1000);
await run(base, 1000);
const samples: Record<string, [number, number][]> = { ours: [], base: [] };
for (let r = 0; r < rounds; r++) {
  const order: [string, Any][] = r % 2 ? [["ours", ours], ["base", base]] : [["base", base], [
    "ours",
    ours,
  ]];
  for (const [name, c] of order) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const n = await run(c, windowMs);
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
// Windows of one round are adjacent in time: their ratio is less exposed to a change of the
// machine's state (load, CPU placement) than the medians of each side.
const ratios = samples.ours!.map((o, i) => o[0] / samples.base![i]![0]);
console.log(
  `${mode} ours/base CPU per op, median of the rounds' ratios: ${median(ratios).toFixed(3)} (${
    ratios.map((x) => x.toFixed(2)).join(" ")
  })`,
);
await ours.close();
await base.close();
process.exit(0);
