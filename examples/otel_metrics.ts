// OpenTelemetry metrics to the console: the client records through the SDK's MeterProvider
// (the application's dependency, not the client's), and a periodic reader prints what it
// collected.
//
//   deno run -A examples/otel_metrics.ts [redis://127.0.0.1:6379]
//
// Bun and Node: install @opentelemetry/sdk-metrics and change the import below to the bare name.
// deno-lint-ignore no-import-prefix
import * as sdk from "npm:@opentelemetry/sdk-metrics@2.12.1";
const { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } = sdk;
import { RedisClient } from "../mod.ts";
import { otelMetrics } from "../src/observability/mod.ts";

const url = Deno.args[0] ?? "redis://127.0.0.1:6379";
const reader = new PeriodicExportingMetricReader({
  exporter: new ConsoleMetricExporter(),
  exportIntervalMillis: 1_000,
});
const meterProvider = new MeterProvider({ readers: [reader] });

const client = new RedisClient({
  url,
  metrics: otelMetrics({
    meterProvider,
    // The default groups are "connection-basic" and "resiliency"; add per-command durations and
    // closed sockets ("connection-advanced").
    groups: ["command", "connection-basic", "connection-advanced", "resiliency"],
    excludeCommands: ["PING"],
  }),
});

for (let i = 0; i < 100; i++) await client.set(`otel:${i}`, String(i));
await client.pipeline().get("otel:1").get("otel:2").exec();
await client.sendCommand(["HGET", "otel:1", "f"]).catch(() => {}); // WRONGTYPE: an error
await client.close();

// Prints db.client.operation.duration (SET x100, PIPELINE x1, HGET x1 with error.type),
// db.client.connection.create_time, redis.client.connection.closed, redis.client.errors.
await meterProvider.shutdown();
