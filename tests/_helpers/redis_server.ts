// Starts and stops real redis-server processes on free loopback ports for the tests. The process
// handling is the simulator's (src/testing/_redis_process.ts): one implementation for both.
import {
  freePort as freePortOn,
  type SpawnOptions,
  spawnRedis,
} from "../../src/testing/_redis_process.ts";

/** Returns a TCP port that was free on `host` a moment ago. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return freePortOn(host);
}

/** A redis-server process started by a test. */
export interface RedisServer {
  host: string;
  port: number;
  /** `redis://host:port` */
  url: string;
  /** The pid of the current process (changes on restart). */
  readonly pid: number;
  /** Working directory (removed on stop). */
  dir: string;
  /** Whether the process is running. */
  readonly running: boolean;
  /** Kills with SIGKILL, without waiting for a clean shutdown; keeps the directory. */
  kill(): Promise<void>;
  /** SIGTERM, waits for the exit, removes the directory. Idempotent. */
  stop(): Promise<void>;
  /** Starts the same server again on the same port and directory (after kill()). */
  restart(): Promise<void>;
}

export interface StartOptions {
  host?: string;
  port?: number;
  /** Extra redis-server arguments, e.g. ["--requirepass", "secret"]. They override the defaults. */
  args?: string[];
  /** Wait for this TCP port instead of `port` (e.g. a TLS-only server). */
  readyPort?: number;
  /** Config file contents, written to `<dir>/redis.conf` and passed first (e.g. a sentinel). */
  config?: string;
  /** Working directory to use (created by the caller, removed on stop). */
  dir?: string;
  /** Add `--enable-debug-command yes`. @default true */
  debugCommand?: boolean;
  /** Custom readiness check (a TCP probe by default). */
  ready?: (host: string, port: number) => Promise<boolean>;
}

/** Formats `redis://host:port` (IPv6 in brackets). */
export function redisUrl(host: string, port: number): string {
  return `redis://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Starts `redis-server` on a free loopback port, no persistence, debug command enabled. */
export async function startRedis(options: StartOptions = {}): Promise<RedisServer> {
  const host = options.host ?? "127.0.0.1";
  const spawnOptions: SpawnOptions = {
    host,
    port: options.port,
    readyPort: options.readyPort,
    config: options.config,
    dir: options.dir,
    args: [
      ...(options.debugCommand ?? true ? ["--enable-debug-command", "yes"] : []),
      ...(options.args ?? []),
    ],
  };
  const p = await spawnRedis(spawnOptions, options.ready);
  return {
    host,
    port: p.port,
    url: redisUrl(host, p.port),
    get pid() {
      return p.pid;
    },
    dir: p.dir,
    get running() {
      return p.running;
    },
    kill: () => p.kill(),
    stop: () => p.stop(),
    restart: () => p.restart(),
  };
}
