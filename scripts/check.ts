// deno task check: formatting, lint, type check and doc lint of every entry in deno.json.
const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
const entries = Object.values(config.exports as Record<string, string>);
const steps: [string, string[]][] = [
  ["fmt", ["fmt", "--check"]],
  ["lint", ["lint"]],
  ["check", ["check", ...entries, "tests/", "bench/", "examples/", "scripts/"]],
  ["doc --lint", ["doc", "--lint", ...entries]],
];
let failed = 0;
for (const [name, args] of steps) {
  const r = await new Deno.Command(Deno.execPath(), { args, stdout: "inherit", stderr: "inherit" })
    .output();
  console.log(`${r.success ? "ok  " : "FAIL"} deno ${name}`);
  if (!r.success) failed++;
}
Deno.exit(failed > 0 ? 1 : 0);
