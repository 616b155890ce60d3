// The type-level tests of this folder, type-checked by `deno check` from the test suite (so
// `deno task test`, and CI with it, holds them, not only `deno task check`): every positive case
// compiles and every `// @ts-expect-error` line is an error.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(dirname(here));
const files = readdirSync(here).filter((f) => f.endsWith(".ts") && !f.endsWith("_test.ts"));

describe("type-level tests", () => {
  it("compile, with every expected error where it is expected", { timeout: 120_000 }, async () => {
    assert.ok(files.length >= 3, `only ${files.length} type-level test files`);
    const [cmd, pre] = "Deno" in globalThis ? [Deno.execPath(), []] : ["npx", ["-y", "deno@2.9.6"]];
    const out = await new Promise<{ code: number; text: string }>((resolve, reject) => {
      const child = spawn(cmd, [...pre, "check", ...files.map((f) => join(here, f))], {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let text = "";
      child.stdout.on("data", (c) => text += c);
      child.stderr.on("data", (c) => text += c);
      child.on("error", reject);
      child.on("exit", (code) => resolve({ code: code ?? -1, text }));
    });
    assert.equal(out.code, 0, out.text);
  });
});
