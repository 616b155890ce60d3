/**
 * Command line for the {@linkcode MaintenanceSimulator}:
 *
 * ```sh
 * deno run -A src/testing/cli.ts --upstream 127.0.0.1:6379 --listen 127.0.0.1:16379 --http 127.0.0.1:18080
 * bun src/testing/cli.ts --upstream 127.0.0.1:6379 --listen 127.0.0.1:16379 --http 127.0.0.1:18080
 * deno run -A jsr:@edge/redis/testing --upstream 127.0.0.1:6379   # the published entry runs it too
 * ```
 *
 * Prints one JSON line once it listens, e.g.
 * `{"endpoint":"127.0.0.1:16379","http":"127.0.0.1:18080","upstream":"127.0.0.1:6379","pid":1234}`,
 * then runs until SIGINT or SIGTERM (or until its standard input closes, with `--stdin`).
 *
 * Options: `--upstream host:port` (required), `--listen host:port` (default 127.0.0.1:0),
 * `--http host:port` (fault-injector API and REST mock; off by default),
 * `--reject-maint-notifications`, `--style reference|bulk|simple`, `--verbose`.
 *
 * With `--cluster N` (instead of `--upstream` and `--listen`) it runs the
 * {@linkcode ClusterMaintenanceSimulator}: a real cluster of N primaries behind one proxy each,
 * and prints `{"seeds":["127.0.0.1:40001",...],"http":...,"pid":...}`.
 *
 * @module
 */

import process from "node:process";
import { MaintenanceSimulator } from "./maintenance_simulator.ts";
import { ClusterMaintenanceSimulator } from "./cluster_simulator.ts";
import type { MaintenanceSimulatorOptions, NotificationStyle } from "./types.ts";
import { hostPort } from "./_notifications.ts";

function usage(message: string): never {
  process.stderr.write(
    `${message}\nUsage: cli.ts (--upstream host:port [--listen host:port] | --cluster N) ` +
      `[--http host:port] [--reject-maint-notifications] [--style reference|bulk|simple] ` +
      `[--verbose] [--stdin]\n`,
  );
  process.exit(2);
}

/**
 * Parses the command line into simulator options.
 *
 * @param argv The arguments (without the runtime and script).
 * @returns The options, whether to stop when stdin closes, and the number of primaries with
 * `--cluster` (`undefined` otherwise: a standalone simulator).
 *
 * @example
 * ```ts ignore
 * parseCliArgs(["--upstream", "127.0.0.1:6379"]);
 * ```
 */
export function parseCliArgs(
  argv: string[],
): { options: MaintenanceSimulatorOptions; stdin: boolean; cluster?: number } {
  const options: Partial<MaintenanceSimulatorOptions> = {};
  let stdin = false;
  let cluster: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) usage(`Missing a value for ${flag}`);
      return v;
    };
    switch (flag) {
      case "--upstream":
        options.upstream = value();
        break;
      case "--listen":
        options.listen = value();
        break;
      case "--http":
        options.http = value();
        break;
      case "--reject-maint-notifications":
        options.rejectMaintNotifications = true;
        break;
      case "--style":
        options.notificationStyle = value() as NotificationStyle;
        break;
      case "--verbose":
        options.logger = { debug: (...args: unknown[]) => console.error(...args) };
        break;
      case "--stdin":
        stdin = true;
        break;
      case "--cluster": {
        const v = value();
        cluster = Number(v);
        if (!Number.isInteger(cluster) || cluster < 1) {
          usage(`--cluster needs a number of primaries, got "${v}"`);
        }
        break;
      }
      case "--help":
      case "-h":
        usage("Runs the maintenance simulator.");
        break;
      default:
        usage(`Unknown option ${a}`);
    }
  }
  if (cluster !== undefined) {
    if (options.upstream !== undefined || options.listen !== undefined) {
      usage("--cluster runs its own nodes: leave out --upstream and --listen");
    }
    return { options: { ...options, upstream: "" } as MaintenanceSimulatorOptions, stdin, cluster };
  }
  if (options.upstream === undefined) usage("Missing --upstream");
  return { options: options as MaintenanceSimulatorOptions, stdin };
}

/**
 * Runs the simulator as a process: parses `argv`, starts, prints the JSON line, and stops on
 * SIGINT / SIGTERM (or when stdin closes, with `--stdin`).
 *
 * @param argv The arguments. @default process.argv.slice(2)
 * @returns Once the simulator is listening.
 *
 * @example
 * ```ts ignore
 * import { runCli } from "./cli.ts";
 * await runCli(["--upstream", "127.0.0.1:6379", "--listen", "127.0.0.1:16379"]);
 * ```
 */
export async function runCli(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { options, stdin, cluster } = parseCliArgs(argv);
  let sim: { close(): Promise<void> };
  if (cluster !== undefined) {
    const c = await ClusterMaintenanceSimulator.start({
      primaries: cluster,
      http: options.http,
      rejectMaintNotifications: options.rejectMaintNotifications,
      notificationStyle: options.notificationStyle,
      logger: options.logger,
    });
    const http = c.http;
    console.log(JSON.stringify({
      seeds: c.endpoints().map((e) => hostPort(e.host, e.port)),
      http: http === undefined ? null : hostPort(http.host, http.port),
      pid: process.pid,
    }));
    sim = c;
  } else {
    const s = await MaintenanceSimulator.start(options);
    const http = s.http;
    console.log(JSON.stringify({
      endpoint: hostPort(s.endpoint.host, s.endpoint.port),
      http: http === undefined ? null : hostPort(http.host, http.port),
      upstream: hostPort(s.upstream.host, s.upstream.port),
      pid: process.pid,
    }));
    sim = s;
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await sim.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  if (stdin) {
    process.stdin.on("end", stop);
    process.stdin.on("close", stop);
    process.stdin.resume();
  }
}

if (import.meta.main) await runCli();
