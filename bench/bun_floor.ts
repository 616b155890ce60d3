// What a client written in JavaScript on `Bun.connect` cannot go below, beside Bun's built-in
// client and ours, in ONE Bun process: windows alternate between the contenders (order rotated
// every round), each a serial GET loop; prints the median CPU µs per GET and GET/s of each and
// their ratio to the built-in's, per round.
//
//   bun bench/bun_floor.ts <port> [large|small] [--rounds n] [--window ms]
//
// Contenders:
// - floor-bytes: `Bun.connect`, the GET written by hand, the reply's bytes only counted (no
//   string made): what the socket path alone costs a JavaScript client (Bun hands a fresh Buffer
//   to `data` per read, up to 512 KB);
// - floor-string: the same, and the reply's value made a string once (`TextDecoder`), as every
//   client must return it: the floor of any JavaScript client on `Bun.connect`;
// - bun: Bun's built-in `RedisClient` (reads into native memory, makes the string natively);
// - ours: `RedisClient` of this checkout.
//
// large: the 100 KB value (`bench:k100k`), small: the 16-byte one. Needs a server with the bench
// keys (`seed()` in bench/_raw.ts).
import process from "node:process";
import { KEYS, VALUE_100K, VALUE_16 } from "./_raw.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const argv = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv.splice(i, 2)[1]) : fallback;
}
const rounds = option("--rounds", 8);
const windowMs = option("--window", 700);
const [portArg, mode = "large"] = argv;
if (
  !portArg || !("Bun" in globalThis) || (mode !== "large" && mode !== "small")
) {
  console.error(
    "Usage: bun bench/bun_floor.ts <port> [large|small] [--rounds n] [--window ms]",
  );
  process.exit(1);
}
const port = Number(portArg);
const key = mode === "large" ? KEYS.large : KEYS.small;
const valueLength = mode === "large" ? VALUE_100K.length : VALUE_16.length;

/** A serial GET loop on `Bun.connect` that does what a client must do and nothing else. */
async function floor(
  makeString: boolean,
): Promise<(ms: number) => Promise<number>> {
  const request = new TextEncoder().encode(
    `*2\r\n$3\r\nGET\r\n$${key.length}\r\n${key}\r\n`,
  );
  const header = `$${valueLength}\r\n`.length;
  const total = header + valueLength + 2;
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  // A reply split across reads is put together here (as a client's collector would).
  const acc = new Uint8Array(total);
  let got = 0;
  let done: () => void = () => {};
  let check = 0;
  const bun = (globalThis as Any).Bun;
  const socket = await bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s: unknown, chunk: Uint8Array) {
        if (makeString) {
          if (got === 0 && chunk.length >= total) {
            check += decoder.decode(chunk.subarray(header, header + valueLength))
              .length;
          } else {
            acc.set(chunk, got);
            if (got + chunk.length >= total) {
              check += decoder.decode(acc.subarray(header, header + valueLength))
                .length;
            }
          }
        }
        got += chunk.length;
        if (got >= total) {
          got = 0;
          done();
        }
      },
    },
  });
  socket.setNoDelay(true);
  const one = () =>
    new Promise<void>((resolve) => {
      done = resolve;
      socket.write(request);
    });
  return async (ms) => {
    let n = 0;
    const end = performance.now() + ms;
    while (performance.now() < end) {
      for (let i = 0; i < 20; i++) await one();
      n += 20;
    }
    if (makeString && check % valueLength !== 0) {
      throw new Error("wrong reply length");
    }
    return n;
  };
}

function loop(c: Any): (ms: number) => Promise<number> {
  return async (ms) => {
    let n = 0;
    const end = performance.now() + ms;
    while (performance.now() < end) {
      for (let i = 0; i < 20; i++) await c.get(key);
      n += 20;
    }
    return n;
  };
}

const url = `redis://127.0.0.1:${port}`;
const spec = "bun";
const builtin: Any = new (await import(spec)).RedisClient(url);
await builtin.connect();
const ours: Any = new (await import(new URL("../mod.ts", import.meta.url).href))
  .RedisClient({
  url,
});
const contenders: [string, (ms: number) => Promise<number>][] = [
  ["floor-bytes", await floor(false)],
  ["floor-string", await floor(true)],
  ["bun", loop(builtin)],
  ["ours", loop(ours)],
];
for (const [, run] of contenders) await run(500);
const cpu: Record<string, number[]> = {};
const rate: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < contenders.length; k++) {
    const [name, run] = contenders[(k + r) % contenders.length]!;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const n = await run(windowMs);
    const c = process.cpuUsage(c0);
    (cpu[name] ??= []).push((c.user + c.system) / n);
    (rate[name] ??= []).push(n / (performance.now() - t0) * 1000);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
console.log(
  `GET ${mode === "large" ? "100 KB" : "16 B"}, serial, ${rounds} rounds of ${windowMs} ms`,
);
console.log(
  "| contender | CPU µs/GET | GET/s | CPU / built-in's (median of rounds) |",
);
console.log("| --- | ---: | ---: | ---: |");
for (const [name] of contenders) {
  const ratios = cpu[name]!.map((x, i) => x / cpu.bun![i]!);
  console.log(
    `| ${name} | ${median(cpu[name]!).toFixed(1)} | ${median(rate[name]!).toFixed(0)} | ${
      median(ratios).toFixed(2)
    } |`,
  );
}
await ours.close();
builtin.close();
process.exit(0);
