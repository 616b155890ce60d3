// Spawns redis-server processes for the simulator (replicas for bind with data movement and for
// failover). The one place in src/ that starts processes: the simulator is a test tool.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultListen } from "../transport/listen.ts";

/** A redis-server process started by the simulator. */
export interface SpawnedRedis {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  /** Whether the process is still running. */
  readonly running: boolean;
  /** Stops the process (SIGTERM, SIGKILL after 2 s) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** Finds a port that was free on `host` a moment ago. */
export async function freePort(host: string): Promise<number> {
  const l = await defaultListen({ host, port: 0 }, (t) => t.destroy());
  const port = l.port;
  await l.close();
  return port;
}

/**
 * Starts `redis-server` on a free port of `host` (no persistence) and resolves once it accepts
 * connections (`ready` probes it).
 */
export async function spawnRedis(
  options: { host: string; command?: string; args?: string[] },
  ready: (host: string, port: number) => Promise<boolean>,
): Promise<SpawnedRedis> {
  const host = options.host;
  const port = await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-sim-"));
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
    "--protected-mode",
    "no",
    ...(options.args ?? []),
  ];
  const child: ChildProcess = spawn(options.command ?? "redis-server", argv, {
    stdio: ["ignore", "ignore", "ignore"],
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
    child.once("error", () => {
      exited = true;
      resolve();
    });
  });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (!exited) {
        child.kill("SIGTERM");
        const t = setTimeout(() => child.kill("SIGKILL"), 2_000);
        await exit;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };
  const end = Date.now() + 10_000;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`Cannot start redis-server on ${host}:${port}: the process exited`);
    }
    if (await ready(host, port)) break;
    if (Date.now() > end) {
      await stop();
      throw new Error(`Cannot start redis-server on ${host}:${port}: not ready within 10 s`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    host,
    port,
    pid: child.pid ?? -1,
    get running() {
      return !exited;
    },
    stop,
  };
}
