// Client-side failover, live: two redis-server processes ("east", weight 2, and "west", weight
// 1), 8 workers of INCR, east killed and restarted. Prints every switch and the failed commands.
//
//   deno run -A examples/multi_db.ts        or        bun examples/multi_db.ts
import { MultiDbClient } from "../src/multi_db/mod.ts";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function server(port: number): ChildProcess {
  return spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
}

const [eastPort, westPort] = [await freePort(), await freePort()];
let east = server(eastPort);
const west = server(westPort);
await sleep(300);

const started = Date.now();
const t = () => `${((Date.now() - started) / 1000).toFixed(2)}s`;
const client = new MultiDbClient({
  databases: [
    { url: `redis://127.0.0.1:${eastPort}`, name: "east", weight: 2 },
    { url: `redis://127.0.0.1:${westPort}`, name: "west", weight: 1 },
  ],
  commandTimeout: 500,
  connectTimeout: 300,
  healthCheck: { interval: 250, timeout: 300, probes: 1 },
  failureDetector: { minNumOfFailures: 5, failureRateThreshold: 0 },
  gracePeriod: 2000,
  failbackCheckInterval: 250,
});
client.addEventListener("switch", (e) => {
  console.log(`${t()}  switch ${e.detail.from} -> ${e.detail.to} (${e.detail.reason})`);
});
await client.connect();
console.log(`${t()}  active: ${client.activeDatabase}`);

let stop = false;
let ok = 0;
const failed: string[] = [];
const workers = Array.from({ length: 8 }, async (_, w) => {
  while (!stop) {
    try {
      await client.incr(`counter:${w}`);
      ok++;
    } catch (e) {
      failed.push(`${t()} ${(e as Error).name}`);
    }
  }
});

await sleep(500);
console.log(`${t()}  SIGKILL east`);
east.kill("SIGKILL");
await sleep(1000);
console.log(`${t()}  east restarted (failback after the 2 s grace period)`);
east = server(eastPort);
await sleep(3000);
stop = true;
await Promise.all(workers);
console.log(`${t()}  ${ok} INCRs acknowledged, ${failed.length} failed: ${failed.join(", ")}`);
console.table(
  client.databases().map((d) => ({
    name: d.name,
    weight: d.weight,
    health: d.health,
    circuit: d.circuit,
    active: d.active,
  })),
);
await client.close();
east.kill();
west.kill();
