// The Cloudflare Workers row: requests per second of a worker doing GET under workerd (the
// open-source Workers runtime), ours against a hand-written `cloudflare:sockets` RESP loop (the
// floor), in the same run, interleaved; the connect cost of a client per request; and the cold
// start (workerd spawned to the first answered GET) of a worker of `.` alone and of the test
// worker against one that only answers "ok".
//
//   npx -y deno@2.9.6 task bench:workers [--seconds 2] [--rounds 3] [--concurrency 8]
//
// Each request opens its own connection (the Workers I/O model: a socket belongs to the request
// that opened it), so "ours" and "raw" both connect, GET and close per request; the module-scope
// client opens a socket from each request that uses it. "ours (Durable Object)" reuses one client
// held by a Durable Object across requests.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { ESBUILD } from "../scripts/_bundle.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bundleWorker, ensureWorkerd, startWorkerd } from "../tests/workers/_workerd.ts";
import { freePort, startRedis } from "../tests/_helpers/redis_server.ts";
import { delayProxy } from "./_delay_proxy.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "8" },
    // Milliseconds each way between the workers and Redis (a delaying proxy; 0 = none).
    delay: { type: "string", default: "0" },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const DELAY = Number(values.delay);
const COLD_RUNS = 7;

async function load(url: string): Promise<number> {
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      const body = await r.text();
      if (!r.ok) {
        throw new Error(`Cannot bench ${url}: status ${r.status}: ${body}`);
      }
      done++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return done / ((performance.now() - t0) / 1000);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function fmt(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : n.toFixed(0);
}

/** Milliseconds from spawning workerd to the first answered request to `path`, for one script. */
async function coldStart(
  bin: string,
  script: string,
  path: string,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-cold-"));
  const port = await freePort();
  writeFileSync(join(dir, "w.js"), script);
  writeFileSync(
    join(dir, "c.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = (modules = [(name = "w.js", esModule = embed "w.js")],
    compatibilityDate = "2025-09-01")),
    (name = "internet", network = (allow = ["public", "local"]))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
`,
  );
  const t0 = performance.now();
  const child = spawn(bin, ["serve", join(dir, "c.capnp")], {
    stdio: "ignore",
  });
  try {
    while (performance.now() - t0 < 20_000) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}${path}`);
        const body = await r.text();
        if (r.ok) return performance.now() - t0;
        throw new Error(
          `Cannot measure the cold start: status ${r.status}: ${body}`,
        );
      } catch (e) {
        if ((e as Error).message.startsWith("Cannot measure")) throw e;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(
      "Cannot measure the cold start: workerd did not answer within 20 s",
    );
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

/**
 * ioredis as a worker under `nodejs_compat` (its `node:net` is workerd's, on `cloudflare:sockets`),
 * the best npm peer that runs there: node-redis is left out. Bundled from bench/node_modules (the
 * peers `deno task bench` installs) with the shims it needs: a `require` for its CommonJS
 * built-ins, `debug`'s browser build (the Node one needs `node:tty`) and a `process.version`.
 * Returns the bundle's path, or undefined when ioredis is not installed and cannot be.
 */
function ioredisWorker(dir: string): string | undefined {
  if (!existsSync(join(BENCH_DIR, "node_modules", "ioredis"))) {
    spawnSync("npm", ["ci", "--prefix", BENCH_DIR], {
      stdio: "ignore",
      cwd: BENCH_DIR,
    });
    if (!existsSync(join(BENCH_DIR, "node_modules", "ioredis"))) {
      return undefined;
    }
  }
  const source = `import Redis from "ioredis";
export default {
  async fetch(request) {
    const q = new URL(request.url).searchParams;
    const target = new URL(q.get("url"));
    const client = new Redis({ host: target.hostname, port: Number(target.port), lazyConnect: true });
    try {
      return Response.json({ value: await client.get(q.get("key") ?? "w:bench") });
    } finally {
      client.disconnect();
    }
  },
};
`;
  const out = join(dir, "ioredis_worker.js");
  const r = spawnSync("npx", [
    "-y",
    ESBUILD,
    "--bundle",
    "--format=esm",
    "--platform=node",
    "--target=es2022",
    "--minify",
    "--external:node:*",
    "--log-level=error",
    "--alias:debug=./node_modules/debug/src/browser.js",
    `--define:process.version="v22.0.0"`,
    `--banner:js=import { createRequire as __cr } from "node:module"; const require = __cr("/");`,
    `--outfile=${out}`,
  ], { cwd: BENCH_DIR, input: source, encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`Cannot bundle the ioredis worker: ${r.stderr}`);
  }
  return out;
}

const redis = await startRedis();
const delayed = DELAY > 0 ? await delayProxy(redis.port, DELAY) : undefined;
/** Where the workers reach Redis: through the delaying proxy with `--delay`. */
const dataUrl = delayed ? `redis://127.0.0.1:${delayed.port}` : redis.url;
const peerDir = mkdtempSync(join(tmpdir(), "edge-redis-peer-"));
const peerScript = ioredisWorker(peerDir);
const peer = peerScript
  ? await startWorkerd({
    script: peerScript,
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: {},
  })
  : undefined;
const bundle = await bundleWorker({ sharedUrl: dataUrl, minify: true });
const worker = await startWorkerd({ script: bundle.file });
try {
  const q = `url=${encodeURIComponent(dataUrl)}&key=w:bench`;
  await fetch(`${worker.url}/get?${q}`).then((r) => r.text());
  // 16-byte value, like the GET rows of `deno task bench`.
  const seed = await startRedisClient(redis.url);
  await seed.set("w:bench", "x".repeat(16));
  await seed.close();
  const cases: [string, string][] = [
    ["ours, client per request", `${worker.url}/get?${q}`],
    ["raw cloudflare:sockets loop (floor)", `${worker.url}/raw/get?${q}`],
    ...(peer
      ? [[
        "ioredis (nodejs_compat), client per request",
        `${peer.url}/?${q}`,
      ]] as [
        string,
        string,
      ][]
      : []),
    [
      "ours, module-scope client (a socket per request)",
      `${worker.url}/shared/get?key=w:bench`,
    ],
    [
      "ours, Durable Object client (INCR)",
      `${worker.url}/do/incr?url=${encodeURIComponent(dataUrl)}&key=w:do:bench`,
    ],
    ['"ok" worker route (no Redis)', `${worker.url}/ok`],
  ];
  const results = new Map<string, number[]>(cases.map(([n]) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url] of cases) results.get(name)!.push(await load(url));
  }
  const cost = await fetch(`${worker.url}/cost?${q}&n=200`).then((r) => r.json());
  const bin = ensureWorkerd();
  const ours = await Deno.readTextFile(bundle.file);
  const minBundle = await bundleWorker({
    entry: "bench/workers_min.ts",
    minify: true,
  });
  const min = await Deno.readTextFile(minBundle.file);
  minBundle.remove();
  const ok = `export default { fetch() { return new Response("ok"); } };`;
  const get = `/get?${q}`;
  const cold = {
    ours: [] as number[],
    min: [] as number[],
    minOk: [] as number[],
    ok: [] as number[],
  };
  for (let i = 0; i < COLD_RUNS; i++) {
    cold.ok.push(await coldStart(bin, ok, "/"));
    cold.minOk.push(await coldStart(bin, min, "/"));
    cold.min.push(await coldStart(bin, min, `/?${q}`));
    cold.ours.push(await coldStart(bin, ours, get));
  }
  const floor = median(results.get(cases[1]![0])!);
  console.log(
    `workerd, GET 16 B over HTTP, ${CONCURRENCY} concurrent HTTP clients, ${ROUNDS} rounds of ${SECONDS} s, interleaved${
      DELAY > 0 ? `, Redis behind a proxy adding ${DELAY} ms each way` : ""
    }\n`,
  );
  console.log("| Worker | requests/s (median, min-max) | vs floor |");
  console.log("| --- | ---: | ---: |");
  for (const [name] of cases) {
    const xs = results.get(name)!;
    console.log(
      `| ${name} | ${fmt(median(xs))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}) | ${
        (median(xs) / floor).toFixed(2)
      }x |`,
    );
  }
  console.log(
    `\nconnect cost inside one request (n=200): fresh client + GET + close ${
      cost.freshMs.toFixed(2)
    } ms, GET on one client ${cost.reusedMs.toFixed(2)} ms`,
  );
  const range = (xs: number[]) =>
    `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;
  console.log(
    `cold start (spawn to first answer, median of ${COLD_RUNS}, interleaved): "ok" worker ${
      range(cold.ok)
    }; \`.\` alone, first "ok" ${range(cold.minOk)}, first GET ${range(cold.min)} (${
      (new TextEncoder().encode(min).length / 1024).toFixed(0)
    } KB minified); test worker, first GET ${range(cold.ours)} (${
      (bundle.bytes / 1024).toFixed(0)
    } KB minified, cluster included)`,
  );
} finally {
  await worker.stop();
  await peer?.stop();
  rmSync(peerDir, { recursive: true, force: true });
  bundle.remove();
  delayed?.close();
  await redis.stop();
}

async function startRedisClient(url: string) {
  const { RedisClient } = await import("../mod.ts");
  return new RedisClient({ url });
}
