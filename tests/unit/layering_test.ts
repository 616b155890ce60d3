// The layering of src/, as ARCHITECTURE.md draws it, checked on the source text: every relative
// import of every file under src/ (static `import`/`export ... from`, bare `import "..."`, dynamic
// and type `import("...")`) is resolved to its folder, and
//
// - a folder imports only from its own layer's row or a row below (a row's folders import one
//   another only where SIDEWAYS allows it);
// - a `_`-prefixed file is private to its folder: no other folder imports it (the `_` files at
//   the src/ root, the clock and the resource accounting, are private to the package: every
//   folder of src/ may use them);
// - the connection layer imports no command builders (STYLE.md);
// - a part (src/cache: the client-side cache; the OpenTelemetry recorder) is reached only through
//   its entry: every other file imports only its types, so `.` carries none of its code (the
//   bundle test measures it).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** The layers, bottom first. "src" stands for the files at the src/ root. */
const LAYERS: readonly (readonly string[])[] = [
  ["src"], // errors, logger, clock, endpoint, command flags, resource accounting
  ["transport", "resp"], // sockets; the RESP codec (pure)
  ["resilience", "maintenance", "commands", "cache", "observability"], // pure: decisions, builders, key table, cache, metrics
  ["connection"], // one multiplexed connection
  ["client"], // the executor and the standalone client
  ["cluster", "sentinel", "multi_db"], // the other client kinds
  ["testing"], // the simulators (a test tool)
];

/** Imports within one row that are allowed: [importer, imported]. */
const SIDEWAYS: readonly (readonly [string, string])[] = [
  ["cache", "commands"], // the cache reads the command key table
  ["multi_db", "cluster"], // a database given as `nodes` is a cluster client
];

/**
 * Imports that break a rule, in files another change owns (the client shell and the cluster
 * split): [importer, imported]. Each one is to be removed when its file is converted; an entry
 * that no longer occurs fails the test, so the list only shrinks.
 */
const KNOWN: readonly (readonly [string, string])[] = [];

/**
 * The code of the parts (`./cache`, `./otel`), by path prefix, and the folders besides the part's
 * own allowed to import values from it: everything else, `mod.ts` included, imports only types,
 * so `.` carries none of it. The other client kinds define their own instruments in the
 * recorder's table (`defineInstruments`: tree-shaken away when unused).
 */
const PARTS: readonly { code: string; own: string; also: readonly string[] }[] = [
  { code: "src/cache/", own: "src/cache/", also: [] },
  {
    code: "src/observability/metrics.ts",
    own: "src/observability/",
    also: ["src/cluster/", "src/sentinel/", "src/multi_db/"],
  },
  { code: "src/observability/part.ts", own: "src/observability/", also: [] },
  { code: "src/observability/mod.ts", own: "src/observability/", also: [] },
];

/** The relative specifiers a source text imports values from (not `import type`/`export type`). */
export function valueImports(text: string): string[] {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  const found: string[] = [];
  for (
    const m of code.matchAll(/^\s*(import|export)\s+(?!type\b)([^;]*?)\sfrom\s*["']([^"']+)["']/gm)
  ) {
    const names = m[2]!;
    // `import { type A, type B } from` brings in no value either.
    const braces = /^\{([^}]*)\}$/.exec(names.trim());
    if (braces && braces[1]!.split(",").every((n) => n.trim() === "" || /^type\s/.test(n.trim()))) {
      continue;
    }
    if (m[3]!.startsWith(".")) found.push(m[3]!);
  }
  for (const m of code.matchAll(/^\s*import\s*["']([^"']+)["']/gm)) {
    if (m[1]!.startsWith(".")) found.push(m[1]!);
  }
  for (const m of code.matchAll(/(?<!typeof\s)\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    if (m[1]!.startsWith(".")) found.push(m[1]!);
  }
  return found;
}

/** Every `.ts` file under `dir`, as paths relative to the repository root with `/`. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(path));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

/** The relative import specifiers of a source text, comments left out. */
export function relativeImports(text: string): string[] {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm, // import/export ... from "x"
    /^\s*import\s*["']([^"']+)["']/gm, // import "x"
    /\bimport\(\s*["']([^"']+)["']\s*\)/g, // import("x"), typeof import("x")
  ];
  for (const p of patterns) {
    for (const m of code.matchAll(p)) if (m[1]!.startsWith(".")) found.push(m[1]!);
  }
  return found;
}

/** The folder of a src/ file: "src" for the root files, else its first folder under src/. */
function folderOf(path: string): string {
  const parts = path.split("/");
  return parts.length === 2 ? "src" : parts[1]!;
}

function layerOf(folder: string): number {
  const i = LAYERS.findIndex((row) => row.includes(folder));
  assert.notEqual(i, -1, `src/${folder} is in no layer of the table: add it`);
  return i;
}

/** Every rule an import from `from` (a src/ file) to `to` (a resolved path) breaks. */
function violations(from: string, to: string): string[] {
  if (!to.startsWith("src/")) return [];
  const a = folderOf(from);
  const b = folderOf(to);
  if (a === b) return [];
  const out: string[] = [];
  const la = layerOf(a);
  const lb = layerOf(b);
  if (lb > la) out.push(`src/${a} (layer ${la}) imports src/${b} (layer ${lb}), a layer above`);
  if (lb === la && !SIDEWAYS.some(([x, y]) => x === a && y === b)) {
    out.push(`src/${a} imports src/${b} from its own layer, which SIDEWAYS does not allow`);
  }
  if (b !== "src" && posix.basename(to).startsWith("_")) {
    out.push(`src/${a} imports the file ${to}, private to src/${b}`);
  }
  if (a === "connection" && b === "commands") out.push("the connection imports command builders");
  return out;
}

function scan(): { from: string; to: string; why: string }[] {
  const found: { from: string; to: string; why: string }[] = [];
  for (const from of tsFiles("src")) {
    const text = readFileSync(join(root, from), "utf8");
    for (const spec of relativeImports(text)) {
      const to = relative(root, join(root, dirname(from), spec)).split(sep).join("/");
      for (const why of violations(from, to)) found.push({ from, to, why });
    }
  }
  return found;
}

describe("layering of src/", () => {
  it("finds the imports of a source text, comments and non-relative imports left out", () => {
    const text = [
      `import { a } from "./a.ts";`,
      `import type {`,
      `  B,`,
      `} from "../b/b.ts";`,
      `export { c } from "./c.ts";`,
      `export * from "./d.ts";`,
      `import "./e.ts";`,
      `const f = await import("../f/f.ts");`,
      `let g: typeof import("./g.ts");`,
      `import { h } from "node:fs";`,
      `/**`,
      ` * import { x } from "./x.ts";`,
      ` */`,
      `// import { y } from "./y.ts";`,
    ].join("\n");
    assert.deepEqual(relativeImports(text).sort(), [
      "../b/b.ts",
      "../f/f.ts",
      "./a.ts",
      "./c.ts",
      "./d.ts",
      "./e.ts",
      "./g.ts",
    ]);
  });

  it("every folder of src/ is in the layer table", () => {
    const folders = new Set(tsFiles("src").map(folderOf));
    for (const f of folders) layerOf(f);
  });

  it("names what it would refuse", () => {
    assert.match(violations("src/cache/x.ts", "src/client/y.ts")[0]!, /a layer above/);
    assert.match(violations("src/transport/bun.ts", "src/resp/z.ts")[0]!, /own layer/);
    assert.match(violations("src/cluster/x.ts", "src/client/_y.ts")[0]!, /private to src\/client/);
    assert.deepEqual(violations("src/cluster/x.ts", "src/_clock.ts"), []);
    assert.deepEqual(violations("src/cache/x.ts", "src/commands/command_keys.ts"), []);
    assert.deepEqual(violations("src/client/x.ts", "src/client/_y.ts"), []);
  });

  it("no import goes up a layer, sideways unasked, or into another folder's `_` file", () => {
    const found = scan();
    const known = (v: { from: string; to: string }) =>
      KNOWN.some(([from, to]) => from === v.from && to === v.to);
    const report = [
      ...new Set(found.filter((v) => !known(v)).map((v) => `${v.from} -> ${v.to}: ${v.why}`)),
    ];
    assert.deepEqual(report, [], `layering violations:\n${report.join("\n")}`);
    const stale = KNOWN.filter(([from, to]) => !found.some((v) => v.from === from && v.to === to));
    assert.deepEqual(stale, [], "KNOWN lists imports that are gone: remove them from the list");
  });

  it("tells value imports from type imports", () => {
    const text = [
      `import type { A } from "./a.ts";`,
      `import { type B, type C } from "./b.ts";`,
      `import { type D, e } from "./d.ts";`,
      `import { f } from "./f.ts";`,
      `export type { G } from "./g.ts";`,
      `export { h } from "./h.ts";`,
      `let i: typeof import("./i.ts");`,
      `const j = await import("./j.ts");`,
    ].join("\n");
    assert.deepEqual(valueImports(text).sort(), ["./d.ts", "./f.ts", "./h.ts", "./j.ts"]);
  });

  it("a part's code is imported only inside its folder: everything else takes its types", () => {
    const found: string[] = [];
    for (const from of ["mod.ts", ...tsFiles("src")]) {
      const text = readFileSync(join(root, from), "utf8");
      for (const spec of valueImports(text)) {
        const to = relative(root, join(root, dirname(from), spec)).split(sep).join("/");
        const part = PARTS.find((p) => to.startsWith(p.code));
        if (part === undefined || from.startsWith(part.own)) continue;
        if (!part.also.some((dir) => from.startsWith(dir))) found.push(`${from} -> ${to}`);
      }
    }
    assert.deepEqual(found, [], `value imports of a part's code:\n${found.join("\n")}`);
  });
});
