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
 * @module
 */

import process from "node:process";
import { MaintenanceSimulator } from "./maintenance_simulator.ts";
import type { MaintenanceSimulatorOptions, NotificationStyle } from "./types.ts";
import { hostPort } from "./_notifications.ts";

function usage(message: string): never {
  process.stderr.write(
    `${message}\nUsage: cli.ts --upstream host:port [--listen host:port] [--http host:port] ` +
      `[--reject-maint-notifications] [--style reference|bulk|simple] [--verbose] [--stdin]\n`,
  );
  process.exit(2);
}

/**
 * Parses the command line into simulator options.
 *
 * @param argv The arguments (without the runtime and script).
 * @returns The options, and whether to stop when stdin closes.
 *
 * @example
 * ```ts ignore
 * parseCliArgs(["--upstream", "127.0.0.1:6379"]);
 * ```
 */
export function parseCliArgs(
  argv: string[],
): { options: MaintenanceSimulatorOptions; stdin: boolean } {
  const options: Partial<MaintenanceSimulatorOptions> = {};
  let stdin = false;
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
      case "--help":
      case "-h":
        usage("Runs the maintenance simulator.");
        break;
      default:
        usage(`Unknown option ${a}`);
    }
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
  const { options, stdin } = parseCliArgs(argv);
  const sim = await MaintenanceSimulator.start(options);
  const http = sim.http;
  console.log(JSON.stringify({
    endpoint: hostPort(sim.endpoint.host, sim.endpoint.port),
    http: http === undefined ? null : hostPort(http.host, http.port),
    upstream: hostPort(sim.upstream.host, sim.upstream.port),
    pid: process.pid,
  }));
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
