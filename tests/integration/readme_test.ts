// The docs hold when followed literally: README's quick start runs on a stock redis-server (no
// debug command), its options block names every option of RedisClient, and every JSDoc example
// imports only entries of deno.json, and only names those entries export (type-checked).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const readme = readFileSync(join(root, "README.md"), "utf8");
const exportsMap: Record<string, string> = JSON.parse(
  readFileSync(join(root, "deno.json"), "utf8"),
).exports;

function run(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs = 60_000,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => out += c);
    child.stderr.on("data", (c) => out += c);
    // A block that never exits (a client left open) is a failure, not a hang.
    const timer = setTimeout(() => {
      out += `\n[still running after ${timeoutMs} ms: killed]`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

/** `from "@edge/redis..."` pointed at the checkout's entry files. */
function localImports(code: string): string {
  return code.replace(/from "@edge\/redis(\/[\w/-]+)?"/g, (_, sub: string | undefined) => {
    const file = exportsMap[sub ? `.${sub}` : "."];
    assert.ok(file, `no entry @edge/redis${sub ?? ""}`);
    return `from ${JSON.stringify(pathToFileURL(join(root, file)).href)}`;
  });
}

/** Writes `code` to `file` in `dir` and runs it with this runtime; its exit code and output. */
function runBlock(dir: string, name: string, code: string, timeoutMs = 30_000) {
  const file = join(dir, name);
  writeFileSync(file, code);
  return "Deno" in globalThis
    ? run(Deno.execPath(), ["run", "-A", file], dir, timeoutMs)
    : run(process.execPath, [file], dir, timeoutMs);
}

/** The first ```ts block after `heading`. */
function codeBlockAfter(heading: string): string {
  const at = readme.indexOf(heading);
  assert.ok(at >= 0, `README has no "${heading}"`);
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(m, `no code block after "${heading}"`);
  return m[1]!;
}

/** Field names of an exported interface in a source file. */
function interfaceFields(file: string, name: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const start = text.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `${name} not found in ${file}`);
  const body = text.slice(start, text.indexOf("\n}\n", start));
  return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]!);
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

describe("README and JSDoc examples", () => {
  let server: RedisServer;
  let work: string;
  before(async () => {
    server = await startRedis({ debugCommand: false });
    work = mkdtempSync(join(tmpdir(), "edge-redis-docs-"));
  });
  after(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the quick start runs as written on a stock redis-server", { timeout: 60_000 }, async () => {
    const code = codeBlockAfter("## Quick start")
      .replaceAll(
        'from "@edge/redis"',
        `from ${JSON.stringify(pathToFileURL(join(root, "mod.ts")).href)}`,
      )
      .replaceAll("redis://127.0.0.1:6379", server.url);
    assert.doesNotMatch(code, /"DEBUG"/, "the quick start needs the debug command");
    const file = join(work, "quick_start.ts");
    writeFileSync(file, code);
    const r = "Deno" in globalThis
      ? await run(Deno.execPath(), ["run", "--allow-net", file], work)
      : await run(process.execPath, [file], work);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^hello$/m);
    assert.match(r.out, /news|^$/m);
  });

  it("the client-side cache block runs as written and exits", { timeout: 60_000 }, async () => {
    const code = localImports(codeBlockAfter("## Client-side caching"))
      .replace("new RedisClient({", `new RedisClient({ url: ${JSON.stringify(server.url)},`) +
      `console.log(JSON.stringify(client.cacheStats()));\n`;
    const r = await runBlock(work, "cache.ts", code);
    assert.equal(r.code, 0, r.out);
    const stats = JSON.parse(r.out.trim().split("\n").pop()!);
    assert.equal(stats.hits, 1, r.out);
    assert.equal(stats.misses, 1, r.out);
  });

  it("the watch() block runs as written", { timeout: 60_000 }, async () => {
    const code = localImports(codeBlockAfter("`watch()` is Redis's check-and-set"))
      .replaceAll("redis://127.0.0.1:6379", server.url);
    const r = await runBlock(work, "watch.ts", code);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^90$/m);
  });

  it("the simulator blocks run as written: waitForEvent waits for the second bind's MOVING", {
    timeout: 60_000,
  }, async () => {
    const first = codeBlockAfter("## Rehearse maintenance in your own tests");
    const inspect = codeBlockAfter("Inspect and wait:");
    const code = localImports(first + inspect)
      .replaceAll("127.0.0.1:6379", `${server.host}:${server.port}`) +
      `console.log("waited for MOVING", event.seq);\n`;
    const r = await runBlock(work, "simulator.ts", code);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^MOVING 0 -> /m);
    assert.match(r.out, /^v$/m);
    assert.match(r.out, /^waited for MOVING 1$/m, "the first bind's MOVING after a second bind");
  });

  it("the lag-aware health check block runs as written and fails over", {
    timeout: 60_000,
  }, async () => {
    const fallback = await startRedis({ debugCommand: false });
    try {
      const code = localImports(codeBlockAfter("Wired to a `MultiDbClient`"))
        .replaceAll("redis://127.0.0.1:6380", fallback.url)
        .replaceAll("127.0.0.1:6379", `${server.host}:${server.port}`);
      const r = await runBlock(work, "lag_aware.ts", code);
      assert.equal(r.code, 0, r.out);
      assert.equal(r.out.trim().split("\n").pop(), `${fallback.host}:${fallback.port}`, r.out);
    } finally {
      await fallback.stop();
    }
  });

  it("the options block names every option of RedisClient", () => {
    const block = codeBlockAfter("## Options");
    const listed = new Set([...block.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]!));
    const nested = new Set([...block.matchAll(/^ {4}(\w+):/gm)].map((m) => m[1]!));
    const missing = interfaceFields("src/client/options.ts", "RedisClientOptions")
      .filter((f) => !listed.has(f));
    assert.deepEqual(missing, [], `README's options block lacks ${missing.join(", ")}`);
    const missingMaint = interfaceFields("src/client/options.ts", "ClientMaintenanceOptions")
      .filter((f) => !nested.has(f));
    assert.deepEqual(missingMaint, [], `maintenanceNotifications lacks ${missingMaint.join(", ")}`);
  });

  it("JSDoc examples import only entries of deno.json, and names they export", {
    timeout: 120_000,
  }, async () => {
    const imports = new Map<string, Set<string>>(); // entry -> names
    const unknown: string[] = [];
    for (const file of [join(root, "mod.ts"), ...sourceFiles(join(root, "src"))]) {
      const text = readFileSync(file, "utf8");
      for (
        const m of text.matchAll(
          /^\s*\* import (type )?\{([^}]*)\} from "@edge\/redis(\/[\w/-]+)?";/gm,
        )
      ) {
        const key = m[3] ? `.${m[3]}` : ".";
        if (!(key in exportsMap)) {
          unknown.push(`${file.slice(root.length + 1)}: @edge/redis${m[3] ?? ""}`);
          continue;
        }
        const names = imports.get(key) ?? new Set<string>();
        for (const part of m[2]!.split(",")) {
          const name = part.replace(/\*/g, " ").trim().replace(/^type\s+/, "")
            .split(/\s+as\s+/)[0]!;
          if (name) names.add(name);
        }
        imports.set(key, names);
      }
    }
    assert.deepEqual(unknown, [], "examples import entries that do not exist");
    // One file importing every name the examples use, from the entry files: type-checked.
    const lines = [...imports].map(([key, names], i) => {
      const aliases = [...names].map((n) => `${n} as e${i}_${n}`);
      const url = JSON.stringify(pathToFileURL(join(root, exportsMap[key]!)).href);
      return `import { ${aliases.join(", ")} } from ${url};\n` +
        `export type { ${[...names].map((n) => `e${i}_${n}`).join(", ")} };`;
    });
    const file = join(work, "example_imports.ts");
    writeFileSync(file, lines.join("\n") + "\n");
    const deno = "Deno" in globalThis ? Deno.execPath() : "npx";
    const args = "Deno" in globalThis ? ["check", file] : ["-y", "deno@2.9.6", "check", file];
    const r = await run(deno, args, root);
    assert.equal(r.code, 0, r.out);
  });
});
