// The OpenTelemetry metrics and trace SDKs for tests (test-only, never a dependency of the library):
// under Deno from an `npm:` specifier, under Bun from tests/otel/node_modules, installed with
// npm from tests/otel/package.json by scripts/test.ts before Bun starts. `metricsHarness()` gives
// a real MeterProvider with a reader collected on demand, and reads the points back by name.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { afterEach, beforeEach } from "node:test";
import { assertNoLeaks, markLeakBaseline } from "./leaks.ts";
import { fileURLToPath } from "node:url";

const HERE = join(dirname(dirname(fileURLToPath(import.meta.url))), "otel");
const VERSIONS = { metrics: "2.12.1", trace: "2.12.1" };

// deno-lint-ignore no-explicit-any
type Sdk = any;

/** `@opentelemetry/sdk-metrics` or `@opentelemetry/sdk-trace-base`. */
async function loadSdk(which: "metrics" | "trace"): Promise<Sdk> {
  const name = which === "metrics" ? "@opentelemetry/sdk-metrics" : "@opentelemetry/sdk-trace-base";
  if (typeof (globalThis as { Deno?: unknown }).Deno !== "undefined") {
    return await import(`npm:${name}@${VERSIONS[which]}`);
  }
  if (!existsSync(join(HERE, "node_modules", name))) {
    execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: HERE,
      stdio: "ignore",
    });
    // Bun remembers in this process that the packages were missing: only a new one sees them.
    throw new Error(
      "tests/otel was just installed; run the tests again (deno task test installs it before Bun starts)",
    );
  }
  return createRequire(join(HERE, "package.json"))(name);
}

/** One data point: its attributes and value (a number, or a histogram's count and sum). */
export interface Point {
  attributes: Record<string, unknown>;
  value: number;
  count: number;
  sum: number;
}

/** A real MeterProvider and a way to read what it recorded. */
export interface MetricsHarness {
  // deno-lint-ignore no-explicit-any
  meterProvider: any;
  /** Collects now; the points of `name` (empty when never recorded). */
  points(name: string): Promise<Point[]>;
  /** The instruments that have points, with their units. */
  names(): Promise<Map<string, string>>;
  shutdown(): Promise<void>;
}

/** Makes a MeterProvider of the real SDK with an on-demand reader (cumulative). */
export async function metricsHarness(): Promise<MetricsHarness> {
  const sdk = await loadSdk("metrics");
  class Reader extends sdk.MetricReader {
    onForceFlush(): Promise<void> {
      return Promise.resolve();
    }
    onShutdown(): Promise<void> {
      return Promise.resolve();
    }
  }
  const reader = new Reader();
  const meterProvider = new sdk.MeterProvider({ readers: [reader] });
  // deno-lint-ignore no-explicit-any
  const collect = async (): Promise<any[]> => {
    const { resourceMetrics } = await reader.collect();
    // deno-lint-ignore no-explicit-any
    return resourceMetrics.scopeMetrics.flatMap((s: any) => s.metrics);
  };
  return {
    meterProvider,
    async points(name) {
      const metrics = (await collect()).filter((m) => m.descriptor.name === name);
      // deno-lint-ignore no-explicit-any
      return metrics.flatMap((m) => m.dataPoints).map((p: any) => {
        const v = p.value;
        return typeof v === "number"
          ? { attributes: p.attributes, value: v, count: 0, sum: v }
          : { attributes: p.attributes, value: v.count, count: v.count, sum: v.sum };
      });
    },
    async names() {
      const out = new Map<string, string>();
      for (const m of await collect()) {
        if (m.dataPoints.length > 0) out.set(m.descriptor.name, m.descriptor.unit);
      }
      return out;
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** The sum of the values of `points` whose attributes include `match`. */
export function total(points: Point[], match: Record<string, unknown> = {}): number {
  let n = 0;
  for (const p of points) {
    if (Object.entries(match).every(([k, v]) => p.attributes[k] === v)) n += p.value;
  }
  return n;
}

/** A finished span as the tests read it. */
export interface FinishedSpan {
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
}

/** A real TracerProvider (`@opentelemetry/sdk-trace-base`) keeping finished spans in memory. */
export async function tracesHarness(): Promise<{
  // deno-lint-ignore no-explicit-any
  tracerProvider: any;
  spans(): FinishedSpan[];
  shutdown(): Promise<void>;
}> {
  const sdk = await loadSdk("trace");
  const exporter = new sdk.InMemorySpanExporter();
  const tracerProvider = new sdk.BasicTracerProvider({
    spanProcessors: [new sdk.SimpleSpanProcessor(exporter)],
  });
  return {
    tracerProvider,
    spans: () =>
      // deno-lint-ignore no-explicit-any
      exporter.getFinishedSpans().map((s: any) => ({
        name: s.name,
        kind: s.kind,
        attributes: s.attributes,
        status: s.status,
        // deno-lint-ignore no-explicit-any
        events: s.events.map((e: any) => ({ name: e.name, attributes: e.attributes ?? {} })),
      })),
    shutdown: () => tracerProvider.shutdown(),
  };
}

/**
 * Registers, in the calling `describe`, a fresh harness for each test (given to `use`) that is
 * shut down after it, with the leak check around the test.
 */
export function eachHarness<H extends { shutdown(): Promise<void> }>(
  make: () => Promise<H>,
  use: (harness: H) => void,
): void {
  let harness: H | undefined;
  beforeEach(async () => {
    markLeakBaseline();
    harness = await make();
    use(harness);
  });
  afterEach(async () => {
    await harness?.shutdown();
    harness = undefined;
    await assertNoLeaks();
  });
}
