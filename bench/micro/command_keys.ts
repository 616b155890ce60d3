// Key extraction of the command key table (the cluster's hot path: `commandKeyIndexes` for every
// command it routes), this checkout against another (`--base <dir>`, a checkout of the code
// before): the first lookup (the table decoded and prepared) in fresh processes, and lookups of a
// mix of commands once it is, in one process, interleaved (the order swapped every round). Each
// checkout's module keeps its own table.
//
//   deno run -A bench/micro/command_keys.ts --base ../base [--rounds 7] [--n 300000]
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";
import process from "node:process";
import type { RedisArgument } from "../../src/resp/types.ts";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    rounds: { type: "string", default: "7" },
    n: { type: "string", default: "300000" },
    first: { type: "string" },
  },
});
if (values.first) {
  console.log((await load(values.first)).firstMs);
  process.exit(0);
}
if (!values.base) {
  throw new Error(
    "Cannot compare: pass --base <dir> (a checkout to compare with)",
  );
}
const ROUNDS = Number(values.rounds);
const N = Number(values.n);

type Lookup = (args: readonly RedisArgument[]) => number[] | undefined;

async function load(
  root: string,
): Promise<{ lookup: Lookup; firstMs: number }> {
  const url = pathToFileURL(resolve(root, "src/commands/command_keys.ts")).href;
  const m = await import(url) as { commandKeyIndexes: Lookup };
  const t = performance.now();
  m.commandKeyIndexes(["GET", "k"]);
  return { lookup: m.commandKeyIndexes, firstMs: performance.now() - t };
}

const MIX: RedisArgument[][] = [
  ["GET", "user:1"],
  ["SET", "user:1", "v", "EX", 10],
  ["HSET", "h", "f", "v"],
  ["MSET", "a", "1", "b", "2", "c", "3"],
  ["DEL", "a", "b"],
  ["EVALSHA", "abc", 2, "k1", "k2", "arg"],
  ["XREAD", "COUNT", 1, "STREAMS", "s1", "s2", "0", "0"],
  ["ZUNIONSTORE", "dst", 2, "a", "b", "WEIGHTS", 1, 2],
  ["incr", "counter"],
  ["CLIENT", "KILL", "ID", 7],
];

function run(lookup: Lookup): number {
  let sink = 0;
  const t = performance.now();
  for (let i = 0; i < N; i++) sink += lookup(MIX[i % MIX.length]!)?.length ?? 0;
  const ms = performance.now() - t;
  if (sink < 0) console.log(sink);
  return N / (ms / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number) => `${(n / 1e6).toFixed(2)}M`;

/** The first lookup of `root`'s table in a fresh process of this runtime, ms. */
function firstLookup(root: string): number {
  const self = fileURLToPath(import.meta.url);
  const args = "Deno" in globalThis
    ? ["run", "-A", self, "--first", root]
    : [self, "--first", root];
  return Number(
    execFileSync(process.execPath, args, { encoding: "utf8" }).trim(),
  );
}

const first = { ours: [] as number[], base: [] as number[] };
for (let i = 0; i < 5; i++) {
  first.ours.push(firstLookup("."));
  first.base.push(firstLookup(values.base));
}
const ours = await load(".");
const base = await load(values.base);
const r = { ours: [] as number[], base: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  if (i % 2 === 0) {
    r.ours.push(run(ours.lookup));
    r.base.push(run(base.lookup));
  } else {
    r.base.push(run(base.lookup));
    r.ours.push(run(ours.lookup));
  }
}
console.log(
  `key extraction, ${MIX.length} commands in turn, ${ROUNDS} rounds of ${N}, interleaved`,
);
console.log(
  `first lookup (table decoded and prepared, fresh process, median of 5): this ${
    median(first.ours).toFixed(2)
  } ms, base ${median(first.base).toFixed(2)} ms`,
);
for (const k of ["ours", "base"] as const) {
  const xs = r[k];
  console.log(
    `${k === "ours" ? "this" : "base"}: ${fmt(median(xs))} lookups/s (${fmt(Math.min(...xs))}-${
      fmt(Math.max(...xs))
    })`,
  );
}
console.log(`this/base: ${(median(r.ours) / median(r.base)).toFixed(2)}x`);
