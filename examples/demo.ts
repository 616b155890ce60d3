// Smart client handoffs, live: a redis-server behind the MaintenanceSimulator, 16 workers under
// load, a MIGRATING (with a server stall longer than the command timeout) and a MOVING (endpoint
// rebind), run twice: with maintenance notifications on, and off. Prints a timeline and a table
// (stdout), and a progress line a second while it runs (stderr).
//
//   deno task demo                      starts its own redis-server
//   REDIS_URL=redis://127.0.0.1:6379 deno task demo
import { RedisClient } from "../mod.ts";
import { MaintenanceSimulator } from "../src/testing/mod.ts";
import { progress } from "./_progress.ts";
import { spawn } from "node:child_process";
import { createServer, Socket } from "node:net";

const WORKERS = 16;
const COMMAND_TIMEOUT = 1000;

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

async function startServer(): Promise<{ host: string; port: number; stop(): void }> {
  const url = Deno.env.get("REDIS_URL");
  if (url) {
    const u = new URL(url);
    return { host: u.hostname, port: Number(u.port || 6379), stop() {} };
  }
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", ""],
    {
      stdio: "ignore",
    },
  );
  child.on("error", () => {
    console.error(
      "redis-server is not installed: apt-get install -y redis-server, or set REDIS_URL",
    );
    Deno.exit(1);
  });
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((r) => {
      const s = new Socket();
      s.once("connect", () => (s.destroy(), r(true)));
      s.once("error", () => (s.destroy(), r(false)));
      s.connect(port, "127.0.0.1");
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return { host: "127.0.0.1", port, stop: () => child.kill("SIGTERM") };
}

interface Run {
  label: string;
  completed: number;
  failed: number;
  buckets: { ok: number; failed: number; notes: string[] }[];
  migratingAt?: number;
  movingAt?: number;
  replacedAt: number[];
  windowEnd?: number;
  errors: Map<string, number>;
}

const BUCKET = 500;

async function scenario(upstream: { host: string; port: number }, on: boolean): Promise<Run> {
  const sim = await MaintenanceSimulator.start({ upstream });
  const client = new RedisClient({
    ...sim.endpoint,
    commandTimeout: COMMAND_TIMEOUT,
    maintenanceNotifications: { mode: on ? "auto" : "disabled", relaxedTimeout: 10_000 },
  });
  const run: Run = {
    label: on ? "notifications on" : "notifications off",
    completed: 0,
    failed: 0,
    buckets: [],
    replacedAt: [],
    errors: new Map(),
  };
  const t0 = Date.now();
  const bucket = () => {
    const i = Math.floor((Date.now() - t0) / BUCKET);
    while (run.buckets.length <= i) run.buckets.push({ ok: 0, failed: 0, notes: [] });
    return run.buckets[i]!;
  };
  const note = (text: string) => bucket().notes.push(text);
  client.addEventListener("maintenance", (e) => {
    const d = (e as CustomEvent).detail;
    if (d.type === "window-opened") note(`${d.kind} received`);
    if (d.type === "window-closed") note(`${d.kind} window closed`);
  });
  client.addEventListener("handoff", (e) => {
    const d = (e as CustomEvent).detail;
    run.replacedAt.push(Date.now() - t0);
    note(
      `connection replaced -> ${d.to.host}:${d.to.port} (drain ${d.drainMs} ms, ${d.held} held)`,
    );
  });
  client.addEventListener("reconnecting", () => {
    run.replacedAt.push(Date.now() - t0);
    note("connection lost, reconnecting");
  });
  const ticker = progress(run.label, () => run);
  ticker.phase = "connecting";
  await client.ping();
  ticker.phase = "load";
  let stop = false;
  const workers = Array.from({ length: WORKERS }, async (_, w) => {
    let i = 0;
    while (!stop) {
      i++;
      try {
        if (i % 3 === 0) await client.incr(`demo:ctr:${w}`);
        else if (i % 3 === 1) await client.set(`demo:k:${w}`, String(i));
        else await client.get(`demo:k:${w}`);
        run.completed++;
        bucket().ok++;
      } catch (e) {
        run.failed++;
        bucket().failed++;
        const name = (e as Error).name;
        run.errors.set(name, (run.errors.get(name) ?? 0) + 1);
      }
    }
  });
  await new Promise((r) => setTimeout(r, 1000));
  run.migratingAt = Date.now() - t0;
  note("sim: MIGRATING, replies stalled 1.5 s");
  ticker.phase = "MIGRATING (stall 1.5 s)";
  await sim.migrate({ time: 1, stallMs: 1500 });
  ticker.phase = "load";
  await new Promise((r) => setTimeout(r, 500));
  run.movingAt = Date.now() - t0;
  note("sim: MOVING (rebind), window 4 s");
  ticker.phase = "MOVING window (4 s)";
  await sim.bind({ time: 4 });
  run.windowEnd = Date.now() - t0;
  note("sim: window end, old connections closed");
  ticker.phase = "after the window";
  await new Promise((r) => setTimeout(r, 1000));
  stop = true;
  await Promise.all(workers);
  ticker.stop();
  await client.close();
  await sim.close();
  return run;
}

const s = (ms: number | undefined) => ms === undefined ? "-" : `+${(ms / 1000).toFixed(1)}s`;

const server = await startServer();
console.log(
  `redis-server ${server.host}:${server.port}; ${WORKERS} workers; commandTimeout ${COMMAND_TIMEOUT} ms\n`,
);
const runs: Run[] = [];
for (const on of [false, true]) {
  const run = await scenario(server, on);
  runs.push(run);
  console.log(`== ${run.label} ==`);
  console.log("  time    completed  failed  events");
  run.buckets.forEach((b, i) => {
    console.log(
      `  ${s(i * BUCKET).padEnd(7)} ${String(b.ok).padStart(9)}  ${String(b.failed).padStart(6)}  ${
        b.notes.join("; ")
      }`,
    );
  });
  console.log();
}
server.stop();

const [off, on] = runs as [Run, Run];
const firstAfter = (r: Run) => r.replacedAt.find((t) => t >= (r.movingAt ?? 0));
const errs = (r: Run) =>
  r.errors.size === 0 ? "none" : [...r.errors].map(([k, v]) => `${v} ${k}`).join(", ");
console.log("| | notifications off | notifications on |");
console.log("| --- | --- | --- |");
console.log(`| MIGRATING (server stalls 1.5 s) | ${s(off.migratingAt)} | ${s(on.migratingAt)} |`);
console.log(`| MOVING sent by the server | ${s(off.movingAt)} | ${s(on.movingAt)} |`);
console.log(`| connection replaced | ${s(firstAfter(off))} | ${s(firstAfter(on))} |`);
console.log(
  `| window end (server closes old sockets) | ${s(off.windowEnd)} | ${s(on.windowEnd)} |`,
);
console.log(`| completed commands | ${off.completed} | ${on.completed} |`);
console.log(`| failed commands | ${off.failed} | ${on.failed} |`);
console.log(`| errors | ${errs(off)} | ${errs(on)} |`);
