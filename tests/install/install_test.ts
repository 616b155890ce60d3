// The npm package as a user gets it: built (scripts/build_npm.ts), packed with `npm pack`, and
// installed into fresh projects, with npm (then run on Node.js 20 and 22) and with `bun add`
// (run on Bun), and a Deno project that links the checkout (`deno link`, until the package is on
// JSR); each runs tests/install/smoke.mjs (every entry loads; SET/GET, a pipeline, a
// transaction, a subscription, the binary view) against a real redis-server. A TypeScript
// consumer is type-checked against the installed declarations. Slow: about half a minute, most
// of it the build and fetching the runtimes with npx the first time.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildNpm, packNpm, TYPESCRIPT } from "../../scripts/build_npm.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { bundleFile } from "../../scripts/_bundle.ts";
import { startWorkerd } from "../workers/_workerd.ts";

const NODE_VERSIONS = ["node@20", "node@22"];
/** The @types/node majors the declarations are checked with. */
const TYPES_NODE = ["20", "22", "26"];
const BUN = "bun@1.4.4";
const DENO = "deno@2.9.6";
const TIMEOUT = { timeout: 150_000 };

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(dirname(here));

/** Runs a command; resolves with its output, rejects with it on a non-zero exit. */
function sh(
  cmd: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => out += c);
    child.stderr.on("data", (c) => out += c);
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(" ")} exited with ${code}:\n${out}`));
    });
  });
}

/** A fresh project directory with a package.json and the smoke script. */
function project(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "install-check", private: true, type: "module" }),
  );
  copyFileSync(join(here, "smoke.mjs"), join(dir, "smoke.mjs"));
  return dir;
}

/** Every file under `dir`. */
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]
  );
}

/** The last line of the smoke script's output, parsed. */
function result(out: string): { ok: boolean; runtime: string; entries: number } {
  const line = out.trim().split("\n").pop() ?? "";
  return JSON.parse(line);
}

const timings: string[] = [];
async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings.push(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}

describe("npm package, packed and installed", () => {
  let redis: RedisServer;
  let work: string;
  let tarball: string;
  let npmProject: string;
  let entries: number;
  const env = () => ({ REDIS_URL: redis.url });

  before(async () => {
    redis = await startRedis();
    work = mkdtempSync(join(tmpdir(), "edge-redis-install-"));
  });

  after(async () => {
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
    console.log(`install test timings: ${timings.join(", ")}`);
  });

  it(
    "builds a package whose exports mirror deno.json's, with no dependencies",
    TIMEOUT,
    async () => {
      const outDir = join(work, "package");
      const pkg = await timed("build", () => buildNpm(root, outDir));
      tarball = await timed("npm pack", () => packNpm(outDir, work));
      const config = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
      const keys = Object.keys(config.exports as Record<string, string>);
      assert.deepEqual(
        Object.keys(pkg.exports as object).filter((k) => k !== "./package.json"),
        keys,
      );
      for (const key of keys) {
        const e = (pkg.exports as Record<string, { types: string; default: string }>)[key]!;
        assert.match(e.default, /\.js$/);
        assert.match(e.types, /\.d\.ts$/);
      }
      assert.equal(pkg.type, "module");
      for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
        assert.equal(pkg[field], undefined, `the package has ${field}`);
      }
      assert.equal(pkg.version, config.version);
      entries = keys.length;
    },
  );

  it(
    "packs only the emitted files, also when packed twice in its own folder",
    TIMEOUT,
    async () => {
      assert.ok(tarball, "no tarball (the build failed)");
      const outDir = join(work, "package");
      // `deno task build:npm --pack` packs into the package folder: a second `npm pack` there
      // must not take the first tarball along.
      await packNpm(outDir);
      const again = await packNpm(outDir);
      const listing = (await sh("tar", ["tzf", again], { cwd: work })).trim().split("\n");
      const stray = listing.filter((f) =>
        !/^package\/(package\.json|README\.md|LICENSE|mod\.(js|d\.ts)|src\/.+\.(js|d\.ts))$/.test(f)
      );
      assert.deepEqual(stray, [], "the tarball holds files that are not the package's");
      const size = statSync(again).size;
      assert.ok(size < 650_000, `the tarball is ${size} bytes`);
      assert.equal(size, statSync(tarball).size, "packing again changed the tarball's size");
    },
  );

  it("ships no @internal member in its declarations", TIMEOUT, () => {
    const outDir = join(work, "package");
    const dts = walk(outDir).filter((f) => f.endsWith(".d.ts"));
    assert.ok(dts.length > 10);
    const marked = dts.filter((f) => readFileSync(f, "utf8").includes("@internal"));
    assert.deepEqual(marked, [], "declarations with @internal members");
    // Two members the sources mark @internal: a pipeline's queue, a subscription's attach.
    const pipeline = readFileSync(join(outDir, "src/client/pipeline.d.ts"), "utf8");
    assert.doesNotMatch(pipeline, /_queue|_withFlags/);
    const sub = readFileSync(join(outDir, "src/multi_db/subscription.d.ts"), "utf8");
    assert.doesNotMatch(sub, /_attach|_end\(/);
  });

  it("installs with npm into a fresh project", TIMEOUT, async () => {
    assert.ok(tarball, "no tarball (the build failed)");
    npmProject = project(join(work, "npm-project"));
    await timed(
      "npm install",
      () =>
        sh("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], {
          cwd: npmProject,
        }),
    );
    const installed = JSON.parse(
      readFileSync(join(npmProject, "node_modules/@edge/redis/package.json"), "utf8"),
    );
    assert.equal(installed.name, "@edge/redis");
  });

  for (const node of NODE_VERSIONS) {
    it(`runs on ${node}: SET/GET, pipeline, transaction, subscription`, TIMEOUT, async () => {
      assert.ok(npmProject, "not installed");
      const out = await timed(
        node,
        () => sh("npx", ["-y", node, "smoke.mjs"], { cwd: npmProject, env: env() }),
      );
      const r = result(out);
      assert.equal(r.ok, true);
      assert.match(r.runtime, new RegExp(`^node ${node.split("@")[1]}\\.`));
      assert.equal(r.entries, entries);
    });
  }

  // Six compiler runs: 30-80 s on a loaded machine.
  it("type-checks a TypeScript consumer against the installed declarations", {
    timeout: 300_000,
  }, async () => {
    assert.ok(npmProject, "not installed");
    writeFileSync(
      join(npmProject, "consumer.ts"),
      `import { RedisClient, ReplyError } from "@edge/redis";
import { RespDecoder } from "@edge/redis/resp";
import { type Connector, defaultConnector } from "@edge/redis/transport";
const connector: Connector = (o) => defaultConnector(o);
const client = new RedisClient({ url: "redis://127.0.0.1:6379", connector });
const text: string | null = await client.get("k");
const bytes: Uint8Array | null = await client.binary().get("k");
// @ts-expect-error get() answers a string or null, not a number
const wrong: number = await client.get("k");
client.addEventListener("ready", (e) => console.log(e.detail.host), { once: true });
// @ts-expect-error no such event
client.addEventListener("readyy", () => {});
console.log(text, bytes, wrong, ReplyError, RespDecoder);
await client.close();
`,
    );
    // Every entry's declarations, checked without skipLibCheck.
    const config = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
    writeFileSync(
      join(npmProject, "entries.ts"),
      Object.keys(config.exports).map((key, i) =>
        `import * as e${i} from "@edge/redis${
          key === "." ? "" : key.slice(1)
        }";\nconsole.log(e${i});`
      ).join("\n") + "\n",
    );
    // The TypeScript setups a Node.js or bundler project has, none with skipLibCheck; the
    // Node.js ones without the DOM lib: the declarations must not need `lib: ["dom"]`.
    // TypeScript in the project, each @types/node major in a folder of its own (typeRoots).
    const install = (dir: string, spec: string) =>
      sh("npm", ["install", "--save-dev", "--no-audit", "--no-fund", "--loglevel=error", spec], {
        cwd: dir,
      });
    await timed("npm install typescript @types/node", () =>
      Promise.all([
        install(npmProject, TYPESCRIPT),
        ...TYPES_NODE.map((v) =>
          install(project(join(npmProject, `types-node-${v}`)), `@types/node@${v}`)
        ),
      ]));
    const nodeTypes = (v: string) => ({
      typeRoots: [`./types-node-${v}/node_modules/@types`],
      types: ["node"],
    });
    const files = ["consumer.ts", "entries.ts"];
    const strict = { strict: true, noEmit: true, skipLibCheck: false };
    const setups: Record<string, Record<string, unknown>> = {
      // Default lib of target es2022: no esnext.disposable (no Symbol.asyncDispose).
      "bundler, target es2022, default lib": {
        ...strict,
        target: "es2022",
        module: "esnext",
        moduleResolution: "bundler",
        types: [],
      },
      "nodenext, lib es2022, dom": {
        ...strict,
        target: "es2022",
        module: "nodenext",
        lib: ["es2022", "dom"],
        types: [],
      },
    };
    for (const v of TYPES_NODE) {
      setups[`nodenext, lib esnext, @types/node ${v}`] = {
        ...strict,
        target: "es2022",
        module: "nodenext",
        lib: ["esnext"],
        ...nodeTypes(v),
      };
    }
    setups[`nodenext, lib es2022, @types/node ${TYPES_NODE[0]}`] = {
      ...strict,
      target: "es2022",
      module: "nodenext",
      lib: ["es2022"],
      ...nodeTypes(TYPES_NODE[0]!),
    };
    const failed: string[] = [];
    for (const [name, compilerOptions] of Object.entries(setups)) {
      const config = join(npmProject, "tsconfig.check.json");
      writeFileSync(config, JSON.stringify({ compilerOptions, files }));
      await timed(`tsc (${name})`, () => sh("npx", ["tsc", "-p", config], { cwd: npmProject }))
        .catch((e: Error) => failed.push(`${name}:\n${e.message}`));
    }
    assert.deepEqual(failed, [], failed.join("\n"));
  });

  it("links the checkout with deno link and runs on Deno", TIMEOUT, async () => {
    const dir = project(join(work, "deno-project"));
    writeFileSync(join(dir, "deno.json"), "{}\n");
    const deno = "Deno" in globalThis ? Deno.execPath() : "npx";
    const pre = "Deno" in globalThis ? [] : ["-y", DENO];
    await timed("deno link", () => sh(deno, [...pre, "link", root], { cwd: dir }));
    const linked = JSON.parse(readFileSync(join(dir, "deno.json"), "utf8"));
    assert.equal(linked.links?.length, 1);
    const keys = Object.keys(JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).exports);
    const out = await timed("deno", () =>
      sh(deno, [...pre, "run", "-A", "smoke.mjs"], {
        cwd: dir,
        env: { ...env(), SMOKE_ENTRIES: JSON.stringify(keys) },
      }));
    const r = result(out);
    assert.equal(r.ok, true);
    assert.match(r.runtime, /^deno 2\./);
    assert.equal(r.entries, keys.length);
  });

  it(`installs with bun add and runs on ${BUN}`, TIMEOUT, async () => {
    assert.ok(tarball, "no tarball (the build failed)");
    const dir = project(join(work, "bun-project"));
    await timed("bun add", () => sh("npx", ["-y", BUN, "add", tarball], { cwd: dir }));
    const out = await timed(
      "bun",
      () => sh("npx", ["-y", BUN, "smoke.mjs"], { cwd: dir, env: env() }),
    );
    const r = result(out);
    assert.equal(r.ok, true);
    assert.match(r.runtime, /^bun 1\.4\.4$/);
    assert.equal(r.entries, entries);
  });

  it("runs on Deno from node_modules (the `deno` export condition)", TIMEOUT, async () => {
    assert.ok(npmProject, "not installed");
    const deno = "Deno" in globalThis ? Deno.execPath() : "npx";
    const pre = "Deno" in globalThis ? [] : ["-y", DENO];
    const out = await timed(
      "deno (npm)",
      () => sh(deno, [...pre, "run", "-A", "smoke.mjs"], { cwd: npmProject, env: env() }),
    );
    const r = result(out);
    assert.equal(r.ok, true);
    assert.match(r.runtime, /^deno 2\./);
    assert.equal(r.entries, entries);
  });

  // What each transport leaves in a minified bundle that no other leaves (the Deno transport
  // upgrades a socket with node:tls, hence its `secureConnect`).
  const MARKERS: Record<string, string> = {
    deno: "Deno.connectTls",
    bun: "globalThis.Bun",
    node: "secureConnect",
    workers: "cloudflare:sockets",
  };
  /** Bundles `file` of the npm project as a user's build does, with these export conditions. */
  async function bundleFor(file: string, conditions: string[]): Promise<string> {
    const out = join(npmProject, `bundle-${conditions.join("-") || "none"}.js`);
    await bundleFile(npmProject, file, out, conditions);
    return readFileSync(out, "utf8");
  }

  it("a build for one runtime carries that runtime's transport alone", TIMEOUT, async () => {
    assert.ok(npmProject, "not installed");
    writeFileSync(
      join(npmProject, "client.mjs"),
      `import { RedisClient } from "@edge/redis";\nconsole.log(new RedisClient());\n`,
    );
    const cases: [string[], string[]][] = [
      // wrangler's conditions for Cloudflare Workers
      [["workerd", "worker", "browser"], ["workers"]],
      [["deno"], ["deno", "node"]],
      [["bun"], ["bun"]],
      [["node"], ["node"]],
      // no runtime named: the runtime is found when first used, every transport is there
      [[], ["deno", "bun", "node", "workers"]],
    ];
    const sizes: string[] = [];
    for (const [conditions, expected] of cases) {
      const code = await bundleFor("client.mjs", conditions);
      const found = Object.keys(MARKERS).filter((k) => code.includes(MARKERS[k]!));
      assert.deepEqual(found.sort(), [...expected].sort(), `conditions ${conditions.join(",")}`);
      sizes.push(`${conditions[0] ?? "none"} ${(code.length / 1024).toFixed(1)} KB`);
    }
    console.log(`\`.\` bundled from the package per runtime: ${sizes.join(", ")}`);
  });

  it("a Workers build of the package (wrangler's conditions) runs under workerd", {
    timeout: 150_000,
  }, async () => {
    assert.ok(npmProject, "not installed");
    writeFileSync(
      join(npmProject, "worker.mjs"),
      `import { RedisClient } from "@edge/redis";
export default {
  async fetch(request, env) {
    const client = new RedisClient({ url: env.REDIS_URL });
    try {
      const key = new URL(request.url).pathname.slice(1);
      await client.set(key, "from workerd");
      return Response.json({ value: await client.get(key), incr: await client.incr(key + ":n") });
    } finally {
      await client.close();
    }
  },
};
`,
    );
    const code = await bundleFor("worker.mjs", ["workerd", "worker", "browser"]);
    assert.ok(!code.includes(MARKERS.deno!) && !code.includes(MARKERS.node!));
    const script = join(npmProject, "worker-bundle.js");
    writeFileSync(script, code);
    const workerd = await timed(
      "workerd",
      () => startWorkerd({ script, text: { REDIS_URL: redis.url }, durableObjects: {} }),
    );
    try {
      const res = await fetch(`${workerd.url}/install-check`);
      const body = await res.text();
      assert.equal(res.status, 200, `${body}\n${workerd.log}`);
      assert.deepEqual(JSON.parse(body), { value: "from workerd", incr: 1 });
    } finally {
      await workerd.stop();
    }
  });
});
