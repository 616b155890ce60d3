// The argument checks of the command builders, A/B in one process: the builders of a base
// commit (default HEAD~1... pass --base) against the working tree's, on a recorder whose `_run`
// keeps the last arguments (no socket: the builder is all that is measured). Rounds alternate
// A and B; the table gives ns per call (the fastest round of each: the least disturbed by other
// load) and the median of the rounds' B/A ratios.
//
//   deno run -A bench/micro/command_checks.ts --base <commit> [--calls n] [--rounds n]
//   bun bench/micro/command_checks.ts --base <commit> [--calls n] [--rounds n]
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

// deno-lint-ignore no-explicit-any
type Any = any;

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const BASE = flag("--base", "HEAD");
const CALLS = Number(flag("--calls", "500000"));
const ROUNDS = Number(flag("--rounds", "21"));

/** The base commit's commands.ts, its relative imports pointed at the working tree. */
function baseModule(): string {
  const text = execFileSync("git", ["show", `${BASE}:src/commands/commands.ts`], {
    cwd: root,
    encoding: "utf8",
  });
  const dir = pathToFileURL(join(root, "src/commands")).href;
  const src = pathToFileURL(join(root, "src")).href;
  const out = text.replaceAll('from "./', `from "${dir}/`).replaceAll('from "../', `from "${src}/`);
  const file = join(mkdtempSync(join(tmpdir(), "command-checks-")), "commands_base.ts");
  writeFileSync(file, out);
  return pathToFileURL(file).href;
}

function recorder(Base: Any): Any {
  return new (class extends Base {
    last: unknown;
    _run(args: unknown[]): unknown {
      this.last = args;
      return undefined;
    }
  })();
}

const a = recorder((await import(baseModule())).RedisCommands);
const b = recorder((await import(join(root, "src/commands/commands.ts"))).RedisCommands);

const EX = { ex: 10 };
const ZM = { score: 1, member: "m" };
const FV = { f: "v" };
const AB = { a: "1", b: "2" };
const AB_PAIRS = [["a", "1"], ["b", "2"]];
const workloads: [string, (r: Any) => void][] = [
  ["get(k)", (r) => r.get("k")],
  ["set(k, v)", (r) => r.set("k", "v")],
  ["set(k, v, { ex: 10 })", (r) => r.set("k", "v", EX)],
  ["hget(k, f)", (r) => r.hget("k", "f")],
  ["zrange(k, 0, -1)", (r) => r.zrange("k", 0, -1)],
  ["expire(k, 10)", (r) => r.expire("k", 10)],
  ["zadd(k, { score, member })", (r) => r.zadd("k", ZM)],
  ["hset(k, f, v)", (r) => r.hset("k", "f", "v")],
  ["hset(k, { f: v })", (r) => r.hset("k", FV)],
  ["mset({ a, b })", (r) => r.mset(AB)],
  ["mset([[a, 1], [b, 2]])", (r) => r.mset(AB_PAIRS)],
  ["xadd(k, *, { f: v })", (r) => r.xadd("k", "*", FV)],
  ["lrange(k, 0, -1)", (r) => r.lrange("k", 0, -1)],
  ["spop(k)", (r) => r.spop("k")],
];

function run(r: Any, fn: (r: Any) => void): number {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) fn(r);
  return ((performance.now() - t0) * 1e6) / CALLS;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
const runtime = "Bun" in globalThis
  ? `bun ${(globalThis as Any).Bun.version}`
  : `deno ${(globalThis as Any).Deno?.version?.deno}`;
console.log(`${runtime}, base ${BASE}, ${CALLS} calls x ${ROUNDS} rounds (A/B alternating)`);
console.log("| call | base ns (min) | this ns (min) | this/base (median of rounds) |");
console.log("| --- | ---: | ---: | ---: |");
for (const [name, fn] of workloads) {
  run(a, fn);
  run(b, fn); // warm-up
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      as.push(run(a, fn));
      bs.push(run(b, fn));
    } else {
      bs.push(run(b, fn));
      as.push(run(a, fn));
    }
  }
  const ratios = as.map((x, i) => bs[i]! / x);
  const ma = Math.min(...as);
  const mb = Math.min(...bs);
  console.log(
    `| ${name} | ${ma.toFixed(1)} | ${mb.toFixed(1)} | ${median(ratios).toFixed(2)}x |`,
  );
}
