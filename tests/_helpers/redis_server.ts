// Starts and stops real redis-server processes on free loopback ports for the tests.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Returns a TCP port that was free on `host` a moment ago. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A redis-server process started by a test. */
export interface RedisServer {
  host: string;
  port: number;
  /** `redis://host:port` */
  url: string;
  pid: number;
  /** Working directory (removed on stop). */
  dir: string;
  /** Kills with SIGKILL, without waiting for a clean shutdown. */
  kill(): Promise<void>;
  /** SIGTERM, waits for the exit, removes the directory. Idempotent. */
  stop(): Promise<void>;
  /** Starts the same server again on the same port (after kill()). */
  restart(): Promise<void>;
}

export interface StartOptions {
  host?: string;
  port?: number;
  /** Extra redis-server arguments, e.g. ["--requirepass", "secret"]. */
  args?: string[];
  /** Wait for this TCP port instead of `port` (e.g. a TLS-only server). */
  readyPort?: number;
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

function probe(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
    s.connect(port, host);
  });
}

async function waitPort(host: string, port: number, child: ChildProcess, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if (await probe(host, port)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`redis-server on ${host}:${port} did not start within ${ms} ms`);
}

/** Starts `redis-server` on a free loopback port, no persistence, debug command enabled. */
export async function startRedis(options: StartOptions = {}): Promise<RedisServer> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-"));
  const argv = [
    "--port",
    String(port),
    "--bind",
    host,
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--enable-debug-command",
    "yes",
    "--protected-mode",
    "no",
    ...(options.args ?? []),
  ];
  let child: ChildProcess;
  let stopped = false;
  const launch = async () => {
    child = spawn("redis-server", argv, { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.resume();
    await waitPort(host, options.readyPort ?? port, child);
  };
  await launch();
  const server: RedisServer = {
    host,
    port,
    url: `redis://${host.includes(":") ? `[${host}]` : host}:${port}`,
    get pid() {
      return child.pid ?? -1;
    },
    dir,
    async kill() {
      child.kill("SIGKILL");
      await waitExit(child);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const t = setTimeout(() => child.kill("SIGKILL"), 3_000);
        await waitExit(child);
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await waitExit(child);
      }
      await launch();
    },
  };
  return server;
}
