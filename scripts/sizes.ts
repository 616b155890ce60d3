// deno task sizes: each entry of deno.json bundled on its own (esbuild, minified, ESM,
// `node:` built-ins external) and gzipped; prints a table, and with --write puts it into
// README.md between the `entry-sizes` markers.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { bundleEntries, bundleFile, denoExports, ESBUILD } from "./_bundle.ts";
import { buildNpm } from "./build_npm.ts";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const START = "<!-- entry-sizes:start -->";
const END = "<!-- entry-sizes:end -->";

/** A table laid out as `deno fmt` lays it out (the first column left, the others right). */
function markdownTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${
      cells.map((c, i) => i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join(" | ")
    } |`;
  const rule = `| ${
    widths.map((w, i) => i === 0 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`).join(" | ")
  } |`;
  return [line(head), rule, ...rows.map(line)].join("\n");
}

/** Wraps at spaces, never inside a `code span`. */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = "";
  const words = text.replace(/`[^`]*`/g, (span) => span.replaceAll(" ", "\u0000")).split(" ");
  for (const word of words.map((w) => w.replaceAll("\u0000", " "))) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join("\n");
}

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
    return [
      `\`${key === "." ? "@edge/redis" : `@edge/redis/${key.slice(2)}`}\``,
      kb(bytes.length),
      kb(gzipSync(bytes, { level: 9 }).length),
    ];
  });
  // `.` as a bundler for one runtime takes it from the npm package: the export condition picks
  // that runtime's transport alone (scripts/build_npm.ts, RUNTIME_CONNECTOR).
  const pkg = join(out, "npm");
  await buildNpm(root, pkg);
  for (
    const [runtime, conditions] of [
      ["Cloudflare Workers", "workerd,worker,browser"],
      ["Deno", "deno"],
      ["Bun", "bun"],
      ["Node.js", "node"],
    ] as const
  ) {
    const file = join(out, `runtime-${conditions.split(",")[0]}.js`);
    await bundleFile(root, join(pkg, "mod.js"), file, conditions.split(","));
    const bytes = readFileSync(file);
    rows.push([
      `\`@edge/redis\` for ${runtime} (npm)`,
      kb(bytes.length),
      kb(gzipSync(bytes, { level: 9 }).length),
    ]);
  }
  table = markdownTable(["entry", "minified", "gzipped"], rows);
} finally {
  rmSync(out, { recursive: true, force: true });
}
// Wrapped at 100 columns, as `deno fmt` wraps the README.
const note = wrap(
  `Each entry bundled alone with ${ESBUILD} (\`--minify\`, ESM, \`node:\` built-ins external) and ` +
    `gzipped (level 9); the last rows are \`.\` of the npm package as a bundler for one runtime ` +
    `takes it (its export condition, e.g. wrangler's \`workerd\`, picks that runtime's ` +
    `transport alone). \`deno task sizes\` regenerates this table.`,
  100,
);
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
