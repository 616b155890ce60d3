// The cost of metrics in ONE process: four clients of this checkout take turns in 0.4 s windows
// (the order rotates every round), so the load of a shared machine hits all alike: metrics off,
// off again (the control: what two identical clients differ by here), on with the default groups
// and on with every group, through the OpenTelemetry SDK's MeterProvider (a reader that is never
// collected, as a periodic exporter between exports). Prints the median CPU µs per command and
// ops/s of each, for GET 16 B with 50 concurrent callers, over 15 rounds (or `rounds`).
//
//   deno run -A bench/metrics_ab.ts <port> [rounds]
//   bun bench/metrics_ab.ts <port> [rounds]
//
// Needs a server with the bench keys (`seed()` in bench/_raw.ts) and `npm ci --prefix bench`.
// The clients and the workload are the harness's own (bench/worker.ts).
import process from "node:process";
import { type Adapter, oursFrom, sdkMetrics, WORKLOADS } from "./worker.ts";

const port = process.argv[2];
const rounds = Number(process.argv[3] ?? 15);
if (!port || !(rounds > 0)) {
  console.error("Usage: metrics_ab.ts <port> [rounds]");
  process.exit(1);
}
const url = `redis://127.0.0.1:${port}`;
const mod = new URL("../mod.ts", import.meta.url).href;
const metrics = sdkMetrics();
const all = sdkMetrics();
const clients: [string, Adapter][] = [
  ["off", await oursFrom(mod, url)],
  ["off (control)", await oursFrom(mod, url)],
  ["default groups", await oursFrom(mod, url, metrics)],
  ["every group", await oursFrom(mod, url, { ...all, groups: "every" })],
];
const workload = WORKLOADS["get-c50"]!;
const c50 = (c: Adapter, ms: number) => workload.run(c, performance.now() + ms, false);

for (const [, c] of clients) await workload.check(c);
for (const [, c] of clients) await c50(c, 1000);
const samples = new Map<string, [number, number][]>(clients.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < clients.length; i++) {
    const [name, c] = clients[(i + r) % clients.length]!;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const n = await c50(c, 400);
    const cpu = process.cpuUsage(cpu0);
    samples.get(name)!.push([(cpu.user + cpu.system) / n, n / (performance.now() - t0) * 1000]);
  }
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const off = median(samples.get("off")!.map((x) => x[0]));
// Against the mean of the two clients with metrics off: the control's distance is the noise.
const offs = (off + median(samples.get("off (control)")!.map((x) => x[0]))) / 2;
for (const [name, s] of samples) {
  const cpu = median(s.map((x) => x[0]));
  console.log(
    `GET x50 ${name}: ${cpu.toFixed(3)} CPU µs/op (${(cpu / off).toFixed(3)}x off, ${
      (cpu / offs).toFixed(3)
    }x the offs' mean), ${median(s.map((x) => x[1])).toFixed(0)} ops/s`,
  );
}
for (const [, c] of clients) await c.close();
await metrics.meterProvider.shutdown();
await all.meterProvider.shutdown();
process.exit(0);
