// Entry isolation, measured on real bundles: every entry of deno.json bundled on its own by
// esbuild (scripts/_bundle.ts). `.` carries none of the other client kinds, test tools or pure
// helpers of other entries, and none of the parts (the client-side cache and the command key
// table it reads: `./cache`; the OpenTelemetry recorder: `./otel`); the pure entries carry no runtime-specific code; and a single-file
// bundle of `.` has no top-level `node:` import (the transports are loaded on first connect);
// and the tests' resource accounting (src/_resources.ts) does nothing in a production process.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleEntries, denoExports } from "../../scripts/_bundle.ts";
import { startRedis } from "../_helpers/redis_server.ts";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const entries = denoExports(root);

/** Code of other entries that `.` must not carry, by the source files esbuild names in its
 * module comments (`// src/cluster/cluster_client.ts`) and by class or function names. */
const NOT_IN_ROOT: { what: string; dir: string; markers: RegExp[] }[] = [
  // Parts: optional capabilities made by a factory of their own entry and passed as an option.
  {
    what: "client-side cache",
    dir: "src/cache",
    markers: [/^\/\/ src\/cache\//m, /\bClientSideCache = class\b/, /\bTrackingSession = class\b/],
  },
  {
    what: "metrics recorder",
    dir: "src/observability/metrics.ts",
    markers: [/^\/\/ src\/observability\/metrics\.ts$/m, /\bClientMetrics = class\b/],
  },
  {
    // The command key table: read by the cache and by cluster routing, by nothing else in `.`.
    what: "command key table",
    dir: "src/commands/key_spec.ts",
    markers: [
      /^\/\/ src\/commands\/(key_spec|command_keys|_key_spec_row|_key_finders)\.ts$/m,
      /\bCOMMAND_TABLE\b/,
    ],
  },
  { what: "cluster", dir: "src/cluster", markers: [/^\/\/ src\/cluster\//m, /RedisClusterClient/] },
  {
    what: "sentinel",
    dir: "src/sentinel",
    markers: [/^\/\/ src\/sentinel\//m, /RedisSentinelClient/],
  },
  { what: "multi-db", dir: "src/multi_db", markers: [/^\/\/ src\/multi_db\//m, /MultiDbClient/] },
  {
    what: "simulator",
    dir: "src/testing",
    markers: [/^\/\/ src\/testing\//m, /MaintenanceSimulator/],
  },
  {
    what: "slot-delta",
    dir: "src/cluster/slot_delta.ts",
    markers: [/^\/\/ src\/cluster\/slot_delta\.ts/m, /applySlotDelta/],
  },
  {
    what: "circuit-breaker",
    dir: "src/resilience/circuit_breaker.ts",
    markers: [/^\/\/ src\/resilience\/circuit_breaker\.ts/m, /\bCircuitBreaker\b/],
  },
  {
    // The slot-migration part of the maintenance controller (SMIGRATING / SMIGRATED handled
    // client-wide, slot lists and deltas parsed): installed by `MaintenanceController`, which
    // only the cluster client (and `./maintenance`) makes; a standalone client has none.
    what: "slot migration",
    dir: "src/maintenance/slot_migration_coordinator.ts",
    markers: [
      /^\/\/ src\/maintenance\/(slot_migration_coordinator|_slot_delegation|slots|controller)\.ts$/m,
      /\bSlotMigrationCoordinator = class\b/,
      /\bSlotMigrationDelegation = class\b/,
      /\bfunction parseSlotRanges\b/,
      /\bfunction migrationOf\b/,
    ],
  },
];

const PURE = ["./resp", "./maintenance", "./slot-delta", "./circuit-breaker"];
/** Folders whose code no pure entry may carry (sockets, connections, clients). */
const NOT_PURE = ["src/connection/", "src/client/", "src/transport/"];

/** The source modules a bundle carries, by esbuild's module comments (`// src/x/y.ts`). */
function bundledModules(text: string): string[] {
  return [...text.matchAll(/^\/\/ (src\/\S+\.ts)$/gm)].map((m) => m[1]!);
}
const RUNTIME_SPECIFIC = [/\bDeno\./, /\bBun\./, /["']node:/, /\brequire\(/];

describe("entry bundles (esbuild)", () => {
  let out: string;
  let bundles: Record<string, string>;
  const code = (key: string) => readFileSync(bundles[key]!, "utf8");

  before(async () => {
    out = mkdtempSync(join(tmpdir(), "edge-redis-bundle-"));
    bundles = await bundleEntries(root, entries, out);
  }, { timeout: 60_000 });

  after(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("bundles every entry of deno.json", () => {
    for (const key of Object.keys(entries)) {
      assert.ok(existsSync(bundles[key]!), `no bundle for ${key}`);
      assert.ok(code(key).length > 0, `empty bundle for ${key}`);
    }
  });

  it("`.` contains no part (cache, key table, metrics recorder) and no cluster, sentinel, multi-db, simulator, slot-delta, circuit-breaker or slot-migration code", () => {
    const main = code(".");
    // The markers are what esbuild writes: the bundle of `.` names its own modules that way.
    assert.match(main, /^\/\/ src\/client\/redis_client\.ts$/m);
    assert.match(main, /RedisClient/);
    let checked = 0;
    for (const { what, dir, markers } of NOT_IN_ROOT) {
      if (!existsSync(join(root, dir))) continue;
      checked++;
      for (const marker of markers) {
        assert.doesNotMatch(main, marker, `the bundle of "." carries ${what} code (${marker})`);
      }
    }
    assert.ok(checked >= 1, "none of the other entries exists yet");
  });

  it("the markers find each entry's code in its own bundle", () => {
    // So the assertion above can fail: every marker matches the bundle of its entry.
    const own: Record<string, string[]> = {
      "client-side cache": ["./cache"],
      "command key table": ["./cache", "./cluster"],
      "metrics recorder": ["./otel"],
      cluster: ["./cluster"],
      sentinel: ["./sentinel"],
      "multi-db": ["./multi-db"],
      simulator: ["./testing"],
      "slot-delta": ["./slot-delta"],
      "circuit-breaker": ["./circuit-breaker"],
      "slot migration": ["./cluster", "./maintenance", "./multi-db"],
    };
    for (const { what, markers } of NOT_IN_ROOT) {
      for (const key of own[what]!) {
        if (!(key in entries)) continue;
        for (const marker of markers) assert.match(code(key), marker, `${key} lacks ${marker}`);
      }
    }
  });

  for (const key of PURE) {
    it(`${key} contains no runtime-specific code`, { skip: !(key in entries) }, () => {
      const text = code(key);
      for (const pattern of RUNTIME_SPECIFIC) {
        const m = pattern.exec(text);
        assert.equal(
          m,
          null,
          `${key} contains ${pattern}: ...${
            text.slice(Math.max(0, (m?.index ?? 0) - 80), (m?.index ?? 0) + 80)
          }...`,
        );
      }
    });
  }

  for (const key of PURE) {
    it(
      `${key} carries no connection, client or transport code`,
      { skip: !(key in entries) },
      () => {
        const modules = bundledModules(code(key));
        assert.ok(modules.length > 0, `no module comments in the bundle of ${key}`);
        const bad = modules.filter((m) => NOT_PURE.some((dir) => m.startsWith(dir)));
        assert.deepEqual(bad, [], `${key} bundles ${bad.join(", ")} (all: ${modules.join(", ")})`);
      },
    );
  }

  it("the module comments name connection, client and transport code where it is", () => {
    // So the assertion above can fail: the bundle of `.` carries all three.
    const modules = bundledModules(code("."));
    for (const dir of NOT_PURE) assert.ok(modules.some((m) => m.startsWith(dir)), dir);
  });

  it("no entry carries the OpenTelemetry SDK or API; the metrics recorder is ours", () => {
    // The tests read metrics through @opentelemetry/sdk-metrics (test-only); the library types
    // the MeterProvider structurally and imports nothing of it.
    for (const key of Object.keys(entries)) {
      const text = code(key);
      assert.doesNotMatch(text, /@opentelemetry|opentelemetry\/api|sdk-metrics/, key);
      const foreign = bundledModules(text).filter((m) => !m.startsWith("src/") && m !== "mod.ts");
      assert.deepEqual(foreign, [], `${key} bundles ${foreign.join(", ")}`);
    }
    // So the assertion above can fail: the bundles name their modules, the recorder among them.
    assert.ok(bundledModules(code("./otel")).includes("src/observability/metrics.ts"));
  });

  it("the resource accounting of the tests costs nothing in production", async () => {
    // A process that never turns the test accounting on: a client connects, runs commands,
    // waits on a timer-backed timeout, and the counters have seen none of it.
    const redis = await startRedis();
    const dir = mkdtempSync(join(tmpdir(), "edge-redis-resources-"));
    try {
      const file = join(dir, "production.ts");
      const url = (p: string) => JSON.stringify(pathToFileURL(join(root, p)).href);
      writeFileSync(
        file,
        `import { RedisClient } from ${url("mod.ts")};
import { openResources } from ${url("src/_resources.ts")};
const client = new RedisClient({ url: ${JSON.stringify(redis.url)} });
await client.set("k", "v");
await client.get("k");
const during = openResources();
await client.close();
console.log(JSON.stringify(during));
`,
      );
      const [cmd, args] = "Deno" in globalThis
        ? [Deno.execPath(), ["run", "-A", file]]
        : [process.execPath, [file]];
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
        let text = "";
        child.stdout.on("data", (c) => text += c);
        child.on("error", reject);
        child.on("exit", (code) => code === 0 ? resolve(text) : reject(new Error(`exit ${code}`)));
      });
      assert.deepEqual(JSON.parse(out.trim().split("\n").pop()!), { timers: 0, sockets: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await redis.stop();
    }
  });

  it("`.` minified stays under 163 KB; the cache part carries the key table in the compact form", async () => {
    // The Workers bundle of a user is `.` (esbuild, minified): its size is the worker's parse
    // time on every cold start. 213.4 KB before the client-side cache and the OpenTelemetry
    // recorder became parts; 174.8 KB with them out and the commands written behind the
    // handshake; -5.9 KB for the slot-migration handling moved to the cluster client, -5.2 KB for
    // the typed commands sharing their checks, -3.3 KB in the layers below, +1.4 KB for the shape
    // errors of key lists, pairs and members: 161.8 KB. The bound catches growth. A build for one
    // runtime from the npm package is smaller still (tests/install checks which transports it
    // carries). The key table (src/commands/key_spec.ts) is in `./cache` and `./cluster` only,
    // and ships as dictionaries and index characters, never as the text rows it decodes to.
    const min = mkdtempSync(join(tmpdir(), "edge-redis-bundle-min-"));
    try {
      const files = await bundleEntries(
        root,
        { ".": entries["."]!, "./cache": entries["./cache"]! },
        min,
        { minify: true },
      );
      const text = readFileSync(files["."]!, "utf8");
      const bytes = new TextEncoder().encode(text).length;
      assert.ok(bytes < 163 * 1024, `\`.\` is ${(bytes / 1024).toFixed(1)} KB minified`);
      assert.doesNotMatch(text, /acl -2 0000;\|cat /, "the key table is in the bundle of `.`");
      const cache = readFileSync(files["./cache"]!, "utf8");
      assert.match(cache, /acl -2 0000;\|cat /, "the compact table is in the bundle of ./cache");
      assert.doesNotMatch(cache, /"acl\|cat -2 /, "the text rows are in the bundle of ./cache");
    } finally {
      rmSync(min, { recursive: true, force: true });
    }
  });

  it("a single-file bundle of `.` has no top-level `node:` import; transports load lazily", () => {
    const main = code(".");
    const staticNode = main.match(/^\s*(import|export)\b[^;]*?from\s*["']node:[^"']+["']/gm) ??
      [];
    const bareNode = main.match(/^\s*import\s*["']node:[^"']+["']/gm) ?? [];
    assert.deepEqual([...staticNode, ...bareNode], []);
    // The node transport is in the bundle, with its built-ins imported on first connect.
    assert.match(main, /import\(\s*["']node:net["']\s*\)/);
    assert.match(main, /import\(\s*["']node:tls["']\s*\)/);
  });
});
