// deno task build:npm [--pack]: the npm package in npm/, ESM JavaScript plus .d.ts for every
// entry of deno.json `exports`, and a package.json whose `exports` mirror them. No runtime
// dependencies; the compiler comes from npm at build time (`npx typescript`). With --pack, also
// runs `npm pack` there and prints the tarball's path on the last line.
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The compiler used for the build (a dev tool only: nothing of it ends up in the package). */
export const TYPESCRIPT = "typescript@5.9.3";

const here = dirname(dirname(fileURLToPath(import.meta.url)));

function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => out += c);
    child.stderr.on("data", (c) => out += c);
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`Cannot run ${cmd} ${args.join(" ")}: exit ${code}\n${out}`));
    });
  });
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...await walk(p));
    else out.push(p);
  }
  return out;
}

/** The declarations of `Symbol.asyncDispose` for programs whose `lib` lacks them. */
const DISPOSABLE = "src/_disposable.d.ts";
const DISPOSABLE_DTS =
  `// Symbol.asyncDispose and AsyncDisposable, as lib.esnext.disposable declares them, for a
// TypeScript program whose lib lacks them (e.g. target es2022 with the default lib).
interface SymbolConstructor {
  readonly asyncDispose: unique symbol;
}
interface AsyncDisposable {
  [Symbol.asyncDispose](): PromiseLike<void>;
}
`;

/**
 * The runtime connector's loader, per export condition. `src/transport/default.ts` imports
 * `./_runtime.ts` (which finds the runtime when first used, and so carries every transport into
 * a bundle); in the package that import becomes `#runtime-connector`, which a build for one
 * runtime resolves to that runtime's loader alone: wrangler sets `workerd`, Deno `deno`, Bun
 * `bun` (listed before `node`, which Bun also matches), Node.js and bundlers for it `node`.
 */
export const RUNTIME_CONNECTOR: Record<string, string> = {
  workerd: "./src/transport/_runtime_workers.ts",
  deno: "./src/transport/_runtime_deno.ts",
  bun: "./src/transport/_runtime_bun.ts",
  node: "./src/transport/_runtime_node.ts",
  default: "./src/transport/_runtime.ts",
};

/** `./src/resp/mod.ts` -> `./src/resp/mod` (the path of the emitted .js / .d.ts, no extension). */
function emitted(source: string): string {
  return source.replace(/\.ts$/, "");
}

/** Builds the package of the checkout at `root` into `outDir`; returns its package.json. */
export async function buildNpm(
  root: string = here,
  outDir: string = join(root, "npm"),
): Promise<Record<string, unknown>> {
  const config = JSON.parse(await readFile(join(root, "deno.json"), "utf8"));
  const exportsMap = config.exports as Record<string, string>;
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });

  // The compiler follows the imports of every entry. Types are checked by `deno check`; here
  // they are only emitted (noCheck), so Deno's own types are not needed.
  const tsconfig = {
    compilerOptions: {
      target: "es2022",
      module: "esnext",
      moduleResolution: "bundler",
      allowImportingTsExtensions: true,
      rewriteRelativeImportExtensions: true,
      declaration: true,
      noCheck: true,
      skipLibCheck: true,
      strict: true,
      lib: ["esnext", "dom"],
      types: [],
      rootDir: root,
      outDir,
      newLine: "lf",
      removeComments: false,
      // Members marked `@internal` are not part of the package's types.
      stripInternal: true,
    },
    files: [...Object.values(exportsMap), ...Object.values(RUNTIME_CONNECTOR)].map((p) =>
      join(root, p)
    ),
  };
  const tsconfigPath = join(outDir, "tsconfig.build.json");
  await writeFile(tsconfigPath, JSON.stringify(tsconfig, null, 2));
  await run("npx", ["-y", "-p", TYPESCRIPT, "tsc", "-p", tsconfigPath], root);
  await rm(tsconfigPath);

  // Declarations keep the sources' `.ts` specifiers; point them at the emitted files.
  for (const file of await walk(outDir)) {
    if (!file.endsWith(".d.ts")) continue;
    const text = await readFile(file, "utf8");
    const fixed = text.replace(
      /((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g,
      "$1$2.js$3",
    );
    if (fixed !== text) await writeFile(file, fixed);
  }

  // The default connector loads its runtime's transport through the conditional import.
  const defaultJs = join(outDir, "src/transport/default.js");
  const defaultText = await readFile(defaultJs, "utf8");
  const rewired = defaultText.replace(/from "\.\/_runtime\.js"/, 'from "#runtime-connector"');
  if (rewired === defaultText) {
    throw new Error("Cannot build the npm package: default.js does not import ./_runtime.js");
  }
  await writeFile(defaultJs, rewired);
  const pkgImports: Record<string, Record<string, string>> = { "#runtime-connector": {} };
  for (const [condition, source] of Object.entries(RUNTIME_CONNECTOR)) {
    const js = `${emitted(source)}.js`;
    await readFile(join(outDir, js)).catch(() => {
      throw new Error(`Cannot build the npm package: ${js} was not emitted`);
    });
    pkgImports["#runtime-connector"]![condition] = js;
  }

  // `Symbol.asyncDispose` and `AsyncDisposable` come with lib esnext (or esnext.disposable) or
  // @types/node; a program with neither (target es2022 and its default lib, say) gets them from
  // here. The declarations are the lib's own, so they merge with it where it is there.
  await writeFile(join(outDir, DISPOSABLE), DISPOSABLE_DTS);
  for (const file of await walk(outDir)) {
    if (!file.endsWith(".d.ts") || file.endsWith(DISPOSABLE)) continue;
    const text = await readFile(file, "utf8");
    if (!/Symbol\.asyncDispose|\bAsyncDisposable\b/.test(text)) continue;
    let ref = relative(dirname(file), join(outDir, DISPOSABLE)).replaceAll("\\", "/");
    if (!ref.startsWith(".")) ref = `./${ref}`;
    await writeFile(file, `/// <reference path="${ref}" />\n${text}`);
  }

  // The compiler emits without checking: make sure every relative import has its file.
  for (const file of await walk(outDir)) {
    if (!file.endsWith(".js") && !file.endsWith(".d.ts")) continue;
    // Code lines only: JSDoc examples (` * import ...`) are text.
    const code = (await readFile(file, "utf8")).split("\n")
      .filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l)).join("\n");
    for (const m of code.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = join(dirname(file), m[1]!);
      const candidates = file.endsWith(".d.ts") ? [target.replace(/\.js$/, ".d.ts")] : [target];
      const found = await Promise.any(candidates.map((c) => readFile(c))).catch(() => undefined);
      if (found === undefined) {
        throw new Error(
          `Cannot build the npm package: ${relative(outDir, file)} imports ${
            m[1]
          }, which is missing`,
        );
      }
    }
  }

  const pkgExports: Record<string, { types: string; default: string } | string> = {};
  for (const [key, source] of Object.entries(exportsMap)) {
    const base = emitted(source);
    pkgExports[key] = { types: `${base}.d.ts`, default: `${base}.js` };
    for (const ext of [".js", ".d.ts"]) {
      await readFile(join(outDir, base + ext)).catch(() => {
        throw new Error(`Cannot build the npm package: ${base}${ext} was not emitted`);
      });
    }
  }
  pkgExports["./package.json"] = "./package.json";
  const pkg: Record<string, unknown> = {
    name: config.name,
    version: config.version,
    description:
      "A Redis client for Deno, Bun and Node.js on the runtime's own sockets, with no dependencies",
    license: config.license,
    type: "module",
    exports: pkgExports,
    imports: pkgImports,
    main: `${emitted(exportsMap["."]!)}.js`,
    types: `${emitted(exportsMap["."]!)}.d.ts`,
    engines: { node: ">=20" },
    // Only the emitted code and declarations (and README, LICENSE, package.json, which npm
    // always adds): never a tarball an earlier `npm pack` left here.
    files: ["mod.js", "mod.d.ts", "src/**/*.js", "src/**/*.d.ts"],
    keywords: ["redis", "resp3", "deno", "bun", "client"],
  };
  await writeFile(join(outDir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  for (const f of ["README.md", "LICENSE"]) {
    await copyFile(join(root, f), join(outDir, f)).catch(() => {});
  }
  return pkg;
}

/** Packs the built package and returns the tarball's absolute path. */
export async function packNpm(outDir: string, into: string = outDir): Promise<string> {
  const out = await run("npm", ["pack", "--silent", "--pack-destination", into], outDir);
  const name = out.trim().split("\n").pop()!.trim();
  return join(into, name);
}

if (import.meta.main) {
  const started = Date.now();
  const outDir = join(here, "npm");
  const pkg = await buildNpm(here, outDir);
  const files = (await walk(outDir)).length;
  console.log(
    `built ${pkg.name}@${pkg.version} in ${relative(here, outDir)}/: ${
      Object.keys(pkg.exports as object).length
    } entries, ${files} files, ${Date.now() - started} ms`,
  );
  if (Deno.args.includes("--pack")) console.log(await packNpm(outDir));
}
