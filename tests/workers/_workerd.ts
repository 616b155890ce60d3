// Runs workerd, the open-source Cloudflare Workers runtime, for the Workers tests and bench:
// installs it from npm into tests/workers/node_modules when missing (test-only, never a
// dependency of the library), bundles tests/workers/worker.ts from the project's entries with the
// repo's esbuild (one ESM file, `cloudflare:sockets` left to the runtime, as a user's build does)
// and serves it on a free loopback port.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { bundleEntries } from "../../scripts/_bundle.ts";
import { freePort } from "../_helpers/redis_server.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(dirname(HERE));

/** The platform package that carries workerd's binary, or undefined where none is published. */
function platformPackage(): string | undefined {
  const arch = process.arch === "x64" ? "64" : process.arch === "arm64" ? "arm64" : undefined;
  const os = process.platform === "linux"
    ? "linux"
    : process.platform === "darwin"
    ? "darwin"
    : process.platform === "win32"
    ? "windows"
    : undefined;
  return arch && os ? `@cloudflare/workerd-${os}-${arch}` : undefined;
}

/**
 * The path of the workerd binary, installed with npm (from tests/workers/package.json) when
 * missing. Throws when this platform has no workerd build or npm cannot install it.
 */
export function ensureWorkerd(): string {
  const pkg = platformPackage();
  if (!pkg) {
    throw new Error(
      `Cannot run workerd: no build for ${process.platform}/${process.arch}`,
    );
  }
  const bin = join(
    HERE,
    "node_modules",
    pkg,
    "bin",
    process.platform === "win32" ? "workerd.exe" : "workerd",
  );
  if (!existsSync(bin)) {
    // --ignore-scripts: the binary comes with the platform package; workerd's postinstall only
    // copies it.
    const install = existsSync(join(HERE, "package-lock.json")) ? "ci" : "install";
    execFileSync("npm", [
      install,
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--silent",
    ], {
      cwd: HERE,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  if (!existsSync(bin)) {
    throw new Error(`Cannot run workerd: npm installed no ${bin}`);
  }
  return bin;
}

/** A bundled worker script. */
export interface WorkerBundle {
  /** The ESM file. */
  file: string;
  /** Its size in bytes. */
  bytes: number;
  /** Removes the bundle's directory. */
  remove(): void;
}

/**
 * Bundles a worker (default: tests/workers/worker.ts) into one ESM file and replaces
 * `__SHARED_URL__` with `sharedUrl` (the module-scope client's server).
 */
export async function bundleWorker(
  options: { entry?: string; sharedUrl?: string; minify?: boolean } = {},
): Promise<WorkerBundle> {
  const out = mkdtempSync(join(tmpdir(), "edge-redis-worker-"));
  try {
    const entry = options.entry ?? "tests/workers/worker.ts";
    const files = await bundleEntries(ROOT, { worker: entry }, out, {
      minify: options.minify,
    });
    const file = join(out, "worker.js");
    const code = readFileSync(files.worker!, "utf8").replaceAll(
      "__SHARED_URL__",
      options.sharedUrl ?? "redis://127.0.0.1:1",
    );
    writeFileSync(file, code);
    return {
      file,
      bytes: new TextEncoder().encode(code).length,
      remove: () => rmSync(out, { recursive: true, force: true }),
    };
  } catch (e) {
    rmSync(out, { recursive: true, force: true });
    throw e;
  }
}

/** A running `workerd serve`. */
export interface Workerd {
  /** `http://127.0.0.1:port` */
  url: string;
  readonly pid: number;
  /** What workerd printed (warnings, uncaught errors). */
  readonly log: string;
  /** Kills workerd (SIGTERM, SIGKILL after 2 s), waits for its exit, removes its files. */
  stop(): Promise<void>;
}

/** Options of {@linkcode startWorkerd}. */
export interface WorkerdOptions {
  /** The worker module (an ESM file). */
  script: string;
  /** PEM certificates the worker's outbound TLS trusts besides the system's. */
  trustedCertificates?: string[];
  /** Compatibility flags of the worker, e.g. `["nodejs_compat"]`. */
  compatibilityFlags?: string[];
  /** Text bindings (`env.NAME`). */
  text?: Record<string, string>;
  /** Durable Object classes the module exports, by binding name. @default { HOLDER: "Holder" } */
  durableObjects?: Record<string, string>;
}

function capnpString(s: string): string {
  return JSON.stringify(s);
}

/** Serves `script` with `workerd serve` on a free loopback port; resolves once it answers. */
export async function startWorkerd(options: WorkerdOptions): Promise<Workerd> {
  const bin = ensureWorkerd();
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-workerd-"));
  const port = await freePort();
  writeFileSync(join(dir, "worker.js"), readFileSync(options.script));
  const certs = options.trustedCertificates ?? [];
  certs.forEach((pem, i) => writeFileSync(join(dir, `ca${i}.pem`), pem));
  const tlsOptions = certs.length
    ? `, tlsOptions = (trustedCertificates = [${
      certs.map((_, i) => `embed "ca${i}.pem"`).join(", ")
    }])`
    : "";
  const flags = (options.compatibilityFlags ?? []).map(capnpString).join(", ");
  const objects = Object.entries(options.durableObjects ?? { HOLDER: "Holder" });
  const bindings = [
    ...Object.entries(options.text ?? {}).map(([name, value]) =>
      `(name = ${capnpString(name)}, text = ${capnpString(value)})`
    ),
    ...objects.map(([name, cls]) =>
      `(name = ${capnpString(name)}, durableObjectNamespace = ${capnpString(cls)})`
    ),
  ].join(", ");
  const namespaces = objects.map(([, cls]) =>
    `(className = ${capnpString(cls)}, uniqueKey = ${capnpString(cls.toLowerCase())})`
  ).join(", ");
  writeFileSync(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "local"]${tlsOptions})),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = [${flags}],
  durableObjectNamespaces = [${namespaces}],
  durableObjectStorage = (inMemory = void),
  bindings = [${bindings}],
);
`,
  );
  let log = "";
  const child: ChildProcess = spawn(bin, ["serve", join(dir, "config.capnp")], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (c) => log += c);
  child.stderr!.on("data", (c) => log += c);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      // Any answer means it serves (the example worker has no /ok).
      await (await fetch(`${url}/ok`)).text();
      break;
    } catch { /* not listening yet */ }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(
        `Cannot start workerd: ${
          child.exitCode !== null ? "it exited" : "no answer in 20 s"
        }\n${log}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    pid: child.pid!,
    get log() {
      return log;
    },
    stop,
  };
}
