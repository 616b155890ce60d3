// A/B of a fresh client's connect + first GET (+ close), this checkout against another, in ONE
// process: the two alternate one client at a time (order swapped every round), so the load of a
// shared machine hits both alike. Optionally through a proxy that delays every chunk by
// `delay` ms each way (a network round trip of 2 x delay), where the round trips show.
// Prints the median and quartiles of each and the ratio of the medians.
//
//   deno run -A bench/ab_connect.ts <base dir> <port> [rounds] [delay ms]
//   bun bench/ab_connect.ts <base dir> <port> [rounds] [delay ms]
//
// Needs a server with the bench keys (`seed()` in bench/_raw.ts).
import process from "node:process";
import { delayProxy } from "./_delay_proxy.ts";
import { KEYS } from "./_raw.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const [baseDir, portArg, roundsArg = "300", delayArg = "0"] = process.argv
  .slice(2);
if (!baseDir || !portArg) {
  console.error("Usage: ab_connect.ts <base dir> <port> [rounds] [delay ms]");
  process.exit(1);
}
const rounds = Number(roundsArg);
const delay = Number(delayArg);

const proxy = delay > 0 ? await delayProxy(Number(portArg), delay) : undefined;
const url = `redis://127.0.0.1:${proxy?.port ?? portArg}`;
const Ours: Any = (await import(new URL("../mod.ts", import.meta.url).href)).RedisClient;
const Base: Any = (await import(`file://${baseDir.replace(/\/$/, "")}/mod.ts`)).RedisClient;

async function once(C: Any): Promise<number> {
  const t0 = performance.now();
  const c = new C({ url });
  await c.get(KEYS.small);
  const t = performance.now() - t0;
  await c.close();
  return t;
}

for (let i = 0; i < 20; i++) {
  await once(Ours);
  await once(Base);
}
const samples: Record<string, number[]> = { ours: [], base: [] };
for (let r = 0; r < rounds; r++) {
  const order: [string, Any][] = r % 2 ? [["ours", Ours], ["base", Base]] : [["base", Base], [
    "ours",
    Ours,
  ]];
  for (const [name, C] of order) samples[name]!.push(await once(C));
}
const q = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * f)]!;
for (const name of ["ours", "base"]) {
  const s = samples[name]!;
  console.log(
    `connect+GET ${name}: median ${q(s, 0.5).toFixed(3)} ms (p25 ${q(s, 0.25).toFixed(3)}, p75 ${
      q(s, 0.75).toFixed(3)
    }), ${rounds} clients, delay ${delay} ms each way`,
  );
}
console.log(
  `ratio ours/base (medians): ${(q(samples.ours!, 0.5) / q(samples.base!, 0.5)).toFixed(3)}`,
);
proxy?.close();
process.exit(0);
