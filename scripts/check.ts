// deno task check: formatting, lint, type check (the type-level tests in tests/types/ included),
// doc lint of every entry in deno.json, `deno publish --dry-run`, and Node.js 22's type
// stripping over the published sources (no parameter properties, enums or namespaces).
const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
const entries = Object.values(config.exports as Record<string, string>);
const NODE = "node@22";

/** The published TypeScript sources: mod.ts and everything under src/. */
async function sources(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) await sources(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

const steps: [string, string, string[]][] = [
  ["deno fmt", Deno.execPath(), ["fmt", "--check"]],
  ["deno lint", Deno.execPath(), ["lint"]],
  [
    "deno check",
    Deno.execPath(),
    ["check", ...entries, "tests/", "bench/", "examples/", "scripts/"],
  ],
  ["deno doc --lint", Deno.execPath(), ["doc", "--lint", ...entries]],
  ["deno publish --dry-run", Deno.execPath(), ["publish", "--dry-run", "--allow-dirty"]],
  [
    `strip-types (${NODE})`,
    "npx",
    ["-y", NODE, "--no-warnings", "scripts/_strip_types.mjs", "mod.ts", ...await sources("src")],
  ],
];
let failed = 0;
for (const [name, cmd, args] of steps) {
  const r = await new Deno.Command(cmd, { args, stdout: "inherit", stderr: "inherit" }).output();
  console.log(`${r.success ? "ok  " : "FAIL"} ${name}`);
  if (!r.success) failed++;
}
Deno.exit(failed > 0 ? 1 : 0);
