// Spawns redis-server processes: the simulator's replicas and cluster nodes, and the servers,
// clusters and sentinel groups of the tests. The one place in src/ that starts processes: the
// simulator is a test tool.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { defaultListen } from "../transport/listen.ts";
import { defaultConnector } from "../transport/default.ts";

/** A redis-server process. */
export interface SpawnedRedis {
  readonly host: string;
  readonly port: number;
  /** The pid of the current process (changes on restart). */
  readonly pid: number;
  /** Working directory (`--dir`), removed on stop. */
  readonly dir: string;
  /** Whether the process is still running. */
  readonly running: boolean;
  /** Kills the process with SIGKILL and waits for its exit; keeps the directory. */
  kill(): Promise<void>;
  /** Starts the same command line again (same port, same directory) after kill. */
  restart(): Promise<void>;
  /** Stops the process (SIGTERM, SIGKILL after 2 s) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** How to start a redis-server. */
export interface SpawnOptions {
  /** Address to bind. */
  host: string;
  /** Port; a free one when absent. */
  port?: number;
  /** The executable. @default "redis-server" */
  command?: string;
  /** Extra arguments, after the defaults (so they override them). */
  args?: string[];
  /** Contents of a config file written to `<dir>/redis.conf` and passed first (sentinels). */
  config?: string;
  /** Working directory to use (removed on stop); a fresh temporary one when absent. */
  dir?: string;
  /** Add `--save '' --appendonly no`. @default true */
  noPersistence?: boolean;
  /** Wait for this port instead of `port` (a TLS-only server). */
  readyPort?: number;
  /** How long to wait for readiness. @default 10000 */
  readyTimeoutMs?: number;
}

/**
 * Sends `sig` to the process by pid (`process.kill`), not through the `ChildProcess` object: on
 * Deno, `ChildProcess.kill` of a process spawned again right after another one was killed has
 * been seen to return true without delivering the signal.
 */
function signal(child: ChildProcess, sig: "SIGTERM" | "SIGKILL"): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Finds a port that was free on `host` a moment ago. */
export async function freePort(host: string): Promise<number> {
  const l = await defaultListen({ host, port: 0 }, (t) => t.destroy());
  const port = l.port;
  await l.close();
  return port;
}

/** Whether something accepts TCP connections on `host:port`. */
export async function tcpProbe(host: string, port: number): Promise<boolean> {
  try {
    const t = await defaultConnector({ host, port });
    t.setHandlers({ onData: () => {}, onDrain: () => {}, onClose: () => {} });
    t.close();
    return true;
  } catch {
    return false;
  }
}

/** Creates a fresh temporary directory for a server. */
export function makeServerDir(prefix = "edge-redis-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Starts `redis-server` on `host` (no persistence unless the arguments turn it on) and resolves
 * once it is ready: `ready` answers true (a TCP probe when absent).
 */
export async function spawnRedis(
  options: SpawnOptions,
  ready: (host: string, port: number) => Promise<boolean> = tcpProbe,
): Promise<SpawnedRedis> {
  const host = options.host;
  const port = options.port ?? await freePort(host);
  const dir = options.dir ?? makeServerDir("edge-redis-sim-");
  const argv: string[] = [];
  if (options.config !== undefined) {
    const file = join(dir, "redis.conf");
    writeFileSync(file, options.config);
    argv.push(file);
  }
  argv.push("--port", String(port), "--bind", host, "--dir", dir, "--protected-mode", "no");
  if (options.noPersistence ?? true) argv.push("--save", "", "--appendonly", "no");
  argv.push(...(options.args ?? []));
  const readyPort = options.readyPort ?? port;
  const readyMs = options.readyTimeoutMs ?? 10_000;

  let child!: ChildProcess;
  let exited = true;
  let exit: Promise<void> = Promise.resolve();
  let stopped: Promise<void> | undefined;
  const launch = async (): Promise<void> => {
    child = spawn(options.command ?? "redis-server", argv, {
      stdio: ["ignore", "ignore", "ignore"],
    });
    exited = false;
    const c = child;
    exit = new Promise<void>((resolve) => {
      const done = () => {
        if (c === child) exited = true;
        resolve();
      };
      c.once("exit", done);
      c.once("error", done);
    });
    const end = Date.now() + readyMs;
    for (;;) {
      if (exited) {
        throw new Error(`Cannot start redis-server on ${host}:${port}: the process exited`);
      }
      if (await ready(host, readyPort)) return;
      if (Date.now() > end) {
        throw new Error(
          `Cannot start redis-server on ${host}:${port}: not ready within ${readyMs} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const kill = async (): Promise<void> => {
    if (!exited) {
      signal(child, "SIGKILL");
      await exit;
    }
  };
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (!exited) {
        signal(child, "SIGTERM");
        const c = child;
        const t = setTimeout(() => signal(c, "SIGKILL"), 2_000);
        await exit;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };
  try {
    await launch();
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    host,
    port,
    get pid() {
      return child.pid ?? -1;
    },
    dir,
    get running() {
      return !exited;
    },
    kill,
    async restart() {
      if (stopped) {
        throw new Error(`Cannot restart redis-server on ${host}:${port}: it was stopped`);
      }
      await kill();
      try {
        await launch();
      } catch (e) {
        await kill();
        throw e;
      }
    },
    stop,
  };
}
