// deno task sizes: each entry of deno.json bundled on its own (esbuild, minified, ESM,
// `node:` built-ins external) and gzipped; prints a table, and with --write puts it into
// README.md between the `entry-sizes` markers.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { bundleEntries, denoExports, ESBUILD } from "./_bundle.ts";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const START = "<!-- entry-sizes:start -->";
const END = "<!-- entry-sizes:end -->";

function kb(n: number): string {
  return `${(n / 1024).toFixed(1)} KB`;
}

const entries = denoExports(root);
const out = mkdtempSync(join(tmpdir(), "edge-redis-sizes-"));
let table: string;
try {
  const bundles = await bundleEntries(root, entries, out, { minify: true });
  const rows = Object.keys(entries).map((key) => {
    const bytes = readFileSync(bundles[key]!);
    return `| \`${key === "." ? "@edge/redis" : `@edge/redis/${key.slice(2)}`}\` | ${
      kb(bytes.length)
    } | ${kb(gzipSync(bytes, { level: 9 }).length)} |`;
  });
  table = [
    `| entry | minified | gzipped |`,
    `| --- | --: | --: |`,
    ...rows,
  ].join("\n");
} finally {
  rmSync(out, { recursive: true, force: true });
}
const note =
  `Each entry bundled alone (${ESBUILD}, \`--minify\`, ESM, \`node:\` built-ins external), ` +
  `then gzip -9; \`deno task sizes\` regenerates this table.`;
console.log(table);
if (Deno.args.includes("--write")) {
  const readmePath = join(root, "README.md");
  const readme = readFileSync(readmePath, "utf8");
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`Cannot update README.md: the ${START} markers are missing`);
  writeFileSync(
    readmePath,
    `${readme.slice(0, a + START.length)}\n\n${note}\n\n${table}\n\n${readme.slice(b)}`,
  );
  console.log("README.md updated");
}
