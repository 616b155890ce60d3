// Runs the whole test suite under Deno and under Bun, installing what is missing first.
// Usage: deno task test [--deno-only | --bun-only] [paths...]
import { existsSync } from "node:fs";

const BUN = "bun@1.4.4";
const args = Deno.args.filter((a) => !a.startsWith("--"));
const denoOnly = Deno.args.includes("--deno-only");
const bunOnly = Deno.args.includes("--bun-only");
const paths = args.length > 0 ? args : ["tests/"];

async function run(cmd: string[], opts: { quiet?: boolean; env?: Record<string, string> } = {}) {
  const p = new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    stdout: opts.quiet ? "null" : "piped",
    stderr: opts.quiet ? "null" : "piped",
    env: opts.env,
  }).spawn();
  let out = "";
  const dec = new TextDecoder();
  const pump = async (s: ReadableStream<Uint8Array> | null, w: typeof Deno.stdout) => {
    if (!s) return;
    for await (const c of s) {
      out += dec.decode(c, { stream: true });
      await w.write(c);
    }
  };
  if (!opts.quiet) await Promise.all([pump(p.stdout, Deno.stdout), pump(p.stderr, Deno.stderr)]);
  const st = await p.status;
  return { code: st.code, out };
}

async function has(bin: string): Promise<boolean> {
  try {
    const args = bin === "openssl" ? ["version"] : ["--version"];
    const r = await new Deno.Command(bin, { args, stdout: "null", stderr: "null" })
      .output();
    return r.success;
  } catch {
    return false;
  }
}

async function ensureApt(bin: string, pkg: string) {
  if (await has(bin)) return;
  const isRoot = Deno.uid?.() === 0;
  if (!isRoot || !(await has("apt-get"))) {
    console.error(
      `${bin} is missing. Install it (Debian/Ubuntu: sudo apt-get install -y ${pkg}; macOS: brew install ${pkg}) and run the tests again.`,
    );
    Deno.exit(1);
  }
  console.log(`Installing ${pkg} with apt-get ...`);
  await run(["apt-get", "update", "-qq"], { quiet: true });
  const r = await run(["apt-get", "install", "-y", "-qq", pkg], { quiet: true });
  if (r.code !== 0 || !(await has(bin))) {
    console.error(
      `Cannot install ${pkg} with apt-get. Install it by hand and run the tests again.`,
    );
    Deno.exit(1);
  }
}

await ensureApt("redis-server", "redis-server");
await ensureApt("openssl", "openssl");

let passed = 0;
let failed = 0;
const summary: string[] = [];
// The names of the failed tests, printed again at the very end so that a log's tail says which.
const failures: string[] = [];
// deno-lint-ignore no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

if (!bunOnly) {
  console.log(`\n=== Deno ${Deno.version.deno} ===`);
  const r = await run([Deno.execPath(), "test", "-A", ...paths]);
  // "ok | 60 passed (928 steps) | 4 failed (4 steps)": count the steps when there are any.
  const lines = r.out.split("\n").filter((l) => /\d+ passed.*\|\s*\d+ failed/.test(l));
  // deno-lint-ignore no-control-regex
  const last = (lines[lines.length - 1] ?? "").replace(/\x1b\[[0-9;]*m/g, "");
  const pm = last.match(/(\d+) passed(?: \((\d+) steps?\))?/);
  const fm = last.match(/(\d+) failed(?: \((\d+) steps?\))?/);
  const p = pm ? Number(pm[2] ?? pm[1]) : 0;
  const f = fm ? Number(fm[2] ?? fm[1]) : (r.code === 0 ? 0 : 1);
  passed += p;
  failed += r.code !== 0 && f === 0 ? 1 : f;
  summary.push(`deno: ${p} passed, ${f} failed (exit ${r.code})`);
  // Deno lists them after a " FAILURES " line, one "name => file:line:col" each.
  const text = plain(r.out);
  const at = text.lastIndexOf(" FAILURES ");
  if (at >= 0) {
    for (const l of text.slice(at).split("\n").slice(1)) {
      if (l.includes(" => ")) failures.push(`deno: ${l.trim()}`);
      else if (/^(ok|FAILED) \|/.test(l.trim())) break;
    }
  }
}

if (!denoOnly) {
  // The OpenTelemetry SDK the metrics tests read with (test-only): Bun loads it from
  // tests/otel/node_modules, which must exist before its test process starts (Bun remembers a
  // package it found missing, so installing it from inside a test is too late).
  if (!existsSync("tests/otel/node_modules/@opentelemetry/sdk-trace-base")) {
    const r = await run([
      "npm",
      "ci",
      "--prefix",
      "tests/otel",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
    ], {
      quiet: true,
    });
    if (r.code !== 0) {
      console.error("Cannot install tests/otel with npm ci: the metrics tests will fail under Bun");
    }
  }
  console.log(`\n=== Bun (${BUN}) ===`);
  const r = await run(["npx", "-y", BUN, "test", "--timeout", "120000", ...paths]);
  const p = Number(r.out.match(/^\s*(\d+) pass$/m)?.[1] ?? 0);
  const f = Number(r.out.match(/^\s*(\d+) fail$/m)?.[1] ?? (r.code === 0 ? 0 : 1));
  passed += p;
  failed += r.code !== 0 && f === 0 ? 1 : f;
  summary.push(`bun: ${p} passed, ${f} failed (exit ${r.code})`);
  for (const l of plain(r.out).split("\n")) {
    if (l.startsWith("(fail) ")) failures.push(`bun: ${l.slice(7).trim()}`);
  }
}

if (failures.length > 0) console.log(`\nFailed:\n${failures.map((l) => `  ${l}`).join("\n")}`);
console.log(`\n${summary.join("\n")}`);
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed > 0 ? 1 : 0);
