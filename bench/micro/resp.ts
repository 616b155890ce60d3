// RESP micro-benchmarks, ours against node-redis's internals in the same process:
//   - decode throughput (MB/s, replies/s) on a mixed corpus fed in 64 KB chunks;
//   - encode of SET with 16 B and 1 KB values.
// CRC16 slot hashing is not measured: the project has no CRC16 implementation yet.
//
//   deno run -A bench/micro/resp.ts [--duration ms] [--rounds n]
//   bun bench/micro/resp.ts [--duration ms] [--rounds n]
//
// node-redis's modules come from bench/node_modules (run `npm ci --prefix bench` once, or
// `deno task bench`, which installs them).
import { createRequire } from "node:module";
import { Buffer } from "node:buffer";
import process from "node:process";

// deno-lint-ignore no-explicit-any
type Any = any;

const require = createRequire(import.meta.url);
const runtime = "Bun" in globalThis
  ? `bun ${(globalThis as Any).Bun.version}`
  : `deno ${(globalThis as Any).Deno?.version?.deno}`;

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const DURATION = flag("--duration", 1000);
const ROUNDS = flag("--rounds", 3);
const CHUNK = 64 * 1024;

// ---- corpus ----------------------------------------------------------------------------------

/** Builds the mixed corpus: what a busy connection reads, as one byte stream. */
function corpus(): { bytes: Uint8Array; replies: number; mix: string } {
  const parts: string[] = [];
  let replies = 0;
  const add = (s: string, n = 1) => {
    parts.push(s);
    replies += n;
  };
  const bulk = (s: string) => `$${s.length}\r\n${s}\r\n`;
  const big = "x".repeat(100 * 1024);
  const nested = (i: number) =>
    // a RESP3 map with nested map, array, integers and strings (HELLO / CLIENT INFO shaped)
    `%4\r\n+server\r\n+redis\r\n+id\r\n:${i}\r\n+modules\r\n*2\r\n%2\r\n+name\r\n${
      bulk("search")
    }+ver\r\n:20812\r\n%2\r\n+name\r\n${bulk("json")}+ver\r\n:20609\r\n+tags\r\n*3\r\n${bulk("a")}${
      bulk("bb")
    }${bulk("ccc")}`;
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 2000; i++) add("+OK\r\n");
    for (let i = 0; i < 2000; i++) add(`:${1000 + i * 37}\r\n`);
    for (let i = 0; i < 2000; i++) add(bulk("0123456789abcdef"));
    for (let i = 0; i < 500; i++) add(nested(i));
    add(bulk(big));
  }
  const bytes = new TextEncoder().encode(parts.join(""));
  return {
    bytes,
    replies,
    mix:
      "per 1/4: 2000 +OK, 2000 integers, 2000 16 B bulk strings, 500 nested RESP3 maps, 1 100 KB bulk",
  };
}

function chunks(
  bytes: Uint8Array,
  size: number,
  asBuffer: boolean,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    // copies: each chunk is its own allocation, like a socket read
    const part = bytes.slice(i, Math.min(bytes.length, i + size));
    out.push(
      asBuffer ? Buffer.from(part.buffer, part.byteOffset, part.length) : part,
    );
  }
  return out;
}

// ---- harness ---------------------------------------------------------------------------------

interface Case {
  name: string;
  /** One iteration; returns units of work done (replies or commands). */
  iter: () => number;
  /** Bytes processed per iteration (for MB/s), 0 if not meaningful. */
  bytesPerIter: number;
}

interface Stat {
  perSec: number;
  mbPerSec: number;
}

function measure(c: Case, ms: number): Stat {
  // warmup
  const w = performance.now() + Math.min(300, ms / 2);
  while (performance.now() < w) c.iter();
  let units = 0;
  let iters = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  let t = t0;
  while (t < end) {
    units += c.iter();
    iters++;
    t = performance.now();
  }
  const s = (t - t0) / 1000;
  return { perSec: units / s, mbPerSec: (iters * c.bytesPerIter) / s / 1e6 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Runs the cases interleaved for ROUNDS rounds, returns the median per case. */
function compare(cases: Case[]): Map<string, Stat> {
  const all = new Map<string, Stat[]>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of cases) {
      const s = measure(c, DURATION);
      all.set(c.name, [...(all.get(c.name) ?? []), s]);
    }
  }
  const out = new Map<string, Stat>();
  for (const [k, v] of all) {
    out.set(k, {
      perSec: median(v.map((s) => s.perSec)),
      mbPerSec: median(v.map((s) => s.mbPerSec)),
    });
  }
  return out;
}

const fmt = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(0)}k` : n.toFixed(0);

// ---- contenders ------------------------------------------------------------------------------

async function loadOurs(): Promise<Any> {
  try {
    const dec: Any = await import(
      new URL("../../src/resp/decoder.ts", import.meta.url).href
    );
    const enc: Any = await import(
      new URL("../../src/resp/command_encoder.ts", import.meta.url).href
    );
    return { RespDecoder: dec.RespDecoder, CommandEncoder: enc.CommandEncoder };
  } catch (e) {
    console.log(`ours: cannot load src/resp: ${(e as Error).message}`);
    return undefined;
  }
}

function loadNodeRedis(): Any {
  try {
    const { Decoder } = require("@redis/client/dist/lib/RESP/decoder.js");
    const encodeCommand = require("@redis/client/dist/lib/RESP/encoder.js").default;
    const version = require("@redis/client/package.json").version;
    return { Decoder, encodeCommand, version };
  } catch (e) {
    console.log(
      `node-redis: cannot load @redis/client from bench/node_modules: ${(e as Error).message}`,
    );
    return undefined;
  }
}

// ---- main ------------------------------------------------------------------------------------

const ours = await loadOurs();
const nr = loadNodeRedis();
const { bytes, replies, mix } = corpus();
const plain = chunks(bytes, CHUNK, false);
const buffers = chunks(bytes, CHUNK, true);

console.log(`# RESP micro-benchmarks (${runtime})\n`);
console.log(
  `- corpus: ${(bytes.length / 1e6).toFixed(2)} MB, ${replies} replies, fed in ${
    CHUNK / 1024
  } KB chunks (${mix})`,
);
console.log(
  `- ${ROUNDS} interleaved rounds of ${DURATION} ms per case, median; node-redis ${
    nr?.version ?? "n/a"
  }\n`,
);

const decodeCases: Case[] = [];
if (ours) {
  let n = 0;
  const d = new ours.RespDecoder({
    onReply: () => void n++,
    onPush: () => void n++,
  });
  const iter = () => {
    n = 0;
    for (const c of plain) d.feed(c);
    if (n !== replies) {
      throw new Error(`ours decoded ${n} replies, expected ${replies}`);
    }
    return n;
  };
  decodeCases.push({
    name: "ours RespDecoder",
    iter,
    bytesPerIter: bytes.length,
  });
}
if (nr) {
  let n = 0;
  const d = new nr.Decoder({
    onReply: () => void n++,
    onErrorReply: () => void n++,
    onPush: () => void n++,
    getTypeMapping: () => ({}),
  });
  const iter = () => {
    n = 0;
    for (const c of buffers) d.write(c);
    if (n !== replies) {
      throw new Error(`node-redis decoded ${n} replies, expected ${replies}`);
    }
    return n;
  };
  decodeCases.push({
    name: "node-redis Decoder",
    iter,
    bytesPerIter: bytes.length,
  });
}

const lines: string[] = [];
lines.push("| Benchmark | Contender | ops/s | MB/s | ours / node-redis |");
lines.push("| --- | --- | ---: | ---: | ---: |");
const ratio = (
  a?: Stat,
  b?: Stat,
) => (a && b ? `${(a.perSec / b.perSec).toFixed(2)}x` : "—");

if (decodeCases.length) {
  const r = compare(decodeCases);
  const o = r.get("ours RespDecoder");
  const x = r.get("node-redis Decoder");
  for (const [name, s] of r) {
    lines.push(
      `| decode mixed corpus | ${name} | ${fmt(s.perSec)} replies/s | ${s.mbPerSec.toFixed(0)} | ${
        name.startsWith("ours") ? ratio(o, x) : ""
      } |`,
    );
  }
}

for (const size of [16, 1024]) {
  const value = "v".repeat(size);
  const keys = Array.from({ length: 100 }, (_, i) => `key:${i}`);
  const cases: Case[] = [];
  const frameBytes = (() => {
    const one = `*3\r\n$3\r\nSET\r\n$5\r\nkey:0\r\n$${size}\r\n${value}\r\n`.length;
    return one * 100; // approximately: key lengths vary by one byte
  })();
  if (ours) {
    const e = new ours.CommandEncoder();
    cases.push({
      name: `ours CommandEncoder.writeCommand ×100 + take()`,
      iter: () => {
        for (let i = 0; i < 100; i++) e.writeCommand(["SET", keys[i], value]);
        const out = e.take();
        if (out.length < 100) throw new Error("ours encoded nothing");
        return 100;
      },
      bytesPerIter: frameBytes,
    });
  }
  if (nr) {
    cases.push({
      name: `node-redis encodeCommand ×100 (strings)`,
      iter: () => {
        let n = 0;
        for (let i = 0; i < 100; i++) {
          n += nr.encodeCommand(["SET", keys[i], value]).length;
        }
        if (n < 100) throw new Error("node-redis encoded nothing");
        return 100;
      },
      bytesPerIter: frameBytes,
    });
    cases.push({
      name: `node-redis encodeCommand ×100 + Buffer.from (bytes)`,
      iter: () => {
        const parts: string[] = [];
        for (let i = 0; i < 100; i++) {
          parts.push(...nr.encodeCommand(["SET", keys[i], value]));
        }
        const out = Buffer.from(parts.join(""));
        if (out.length < 100) throw new Error("node-redis encoded nothing");
        return 100;
      },
      bytesPerIter: frameBytes,
    });
  }
  if (!cases.length) continue;
  const r = compare(cases);
  const o = [...r.entries()].find(([k]) => k.startsWith("ours"))?.[1];
  for (const [name, s] of r) {
    lines.push(
      `| encode SET ${size === 16 ? "16 B" : "1 KB"} | ${name} | ${fmt(s.perSec)} cmds/s | ${
        s.mbPerSec.toFixed(0)
      } | ${name.startsWith("ours") ? "" : ratio(o, s)} |`,
    );
  }
}
lines.push(
  "| CRC16 slot hashing | — | not measured: no CRC16 in the project yet | | |",
);
console.log(lines.join("\n"));
