// Bundles entries of deno.json with esbuild from npm (a dev tool, fetched by npx): one
// self-contained ESM file per entry, `node:` built-ins left as imports. Used by the bundle test
// (entry isolation) and by scripts/sizes.ts.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** The bundler, pinned. */
export const ESBUILD = "esbuild@0.25.12";

/** The `exports` of the deno.json at `root`. */
export function denoExports(root: string): Record<string, string> {
  return JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).exports;
}

/**
 * Bundles every entry into `outDir` (keeping the source layout) and returns, per export key,
 * the bundle's path.
 */
export async function bundleEntries(
  root: string,
  entries: Record<string, string>,
  outDir: string,
  options: { minify?: boolean } = {},
): Promise<Record<string, string>> {
  await runEsbuild(root, [
    ...Object.values(entries),
    ...COMMON,
    `--outdir=${outDir}`,
    `--outbase=${root}`,
    ...(options.minify ? ["--minify"] : []),
  ]);
  const result: Record<string, string> = {};
  for (const [key, file] of Object.entries(entries)) {
    result[key] = join(outDir, relative(root, join(root, file)).replace(/\.ts$/, ".js"));
  }
  return result;
}

/**
 * Bundles one file (minified) into `outFile` as a user's build for a runtime does: `conditions`
 * are the export conditions it resolves packages with (wrangler's are `workerd`, `worker`,
 * `browser`); `cloudflare:` modules are left to the runtime too.
 */
export async function bundleFile(
  cwd: string,
  file: string,
  outFile: string,
  conditions: readonly string[] = [],
): Promise<void> {
  await runEsbuild(cwd, [
    file,
    ...COMMON,
    "--external:cloudflare:*",
    "--minify",
    ...(conditions.length ? [`--conditions=${conditions.join(",")}`] : []),
    `--outfile=${outFile}`,
  ]);
}

/** What every bundle here shares: one ESM file, built-ins (`node:`) left as imports. */
const COMMON = [
  "--bundle",
  "--format=esm",
  "--platform=neutral",
  "--target=es2022",
  "--external:node:*",
  "--legal-comments=none",
  "--log-level=warning",
];

function runEsbuild(cwd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("npx", ["-y", ESBUILD, ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => out += c);
    child.stderr.on("data", (c) => out += c);
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) {
        return reject(new Error(`Cannot bundle with ${ESBUILD}: exit ${code}\n${out}`));
      }
      resolve();
    });
  });
}
