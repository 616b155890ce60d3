/**
 * Rehearse Redis Software maintenance in your own tests.
 *
 * Open-source Redis never sends maintenance notifications. {@linkcode MaintenanceSimulator} is
 * a RESP proxy that behaves like Redis Software's proxy during maintenance, in front of a real
 * redis-server: it answers the `CLIENT MAINT_NOTIFICATIONS` handshake, plays endpoint rebinds
 * (MOVING, with a real new listener and optionally real data movement), shard migrations
 * (MIGRATING / MIGRATED) and failovers (FAILING_OVER / FAILED_OVER, with a real replica
 * promotion), injects network faults, and exposes the Redis Software fault injector's HTTP API
 * and a management REST mock for lag-aware health checks.
 *
 * {@linkcode ClusterMaintenanceSimulator} does the same for Redis Cluster: a real cluster of
 * redis-server nodes on loopback, a proxy in front of each node (the nodes announce the
 * proxies), and slot migrations (SMIGRATING / SMIGRATED around a real `SETSLOT` / `MIGRATE`
 * resharding, a node joining or left empty), with the MOVED / ASK replies counted per connection.
 *
 * The simulator spawns `redis-server` processes for data movement and failover, so it needs
 * `redis-server` on the `PATH` and permission to run subprocesses (`deno run -A`).
 *
 * @example Rehearse a rebind
 * ```ts ignore
 * import { MaintenanceSimulator } from "@edge/redis/testing";
 *
 * await using sim = await MaintenanceSimulator.start({ upstream: "127.0.0.1:6379" });
 * // Point the client under test at sim.endpoint, start a load, then:
 * const { seq, target } = await sim.bind({ time: 2 });
 * console.log(`MOVING ${seq} -> ${target.host}:${target.port}`);
 * ```
 *
 * From the command line (prints one JSON line once it listens):
 *
 * ```sh
 * deno run -A jsr:@edge/redis/testing --upstream 127.0.0.1:6379 --listen 127.0.0.1:16379 --http 127.0.0.1:18080
 * ```
 *
 * @module
 */

export { MaintenanceSimulator } from "./maintenance_simulator.ts";
export { parseEndpoint } from "./parse_endpoint.ts";
export { ClusterMaintenanceSimulator } from "./cluster_simulator.ts";
export type {
  ActionStatus,
  BindOptions,
  BindResult,
  ClusterNodeInfo,
  ClusterSimulatorOptions,
  ConnectionInfo,
  Endpoint,
  FailoverOptions,
  FailoverResult,
  MaintenanceSimulatorOptions,
  MigrateOptions,
  MigrateResult,
  NotificationRecord,
  NotificationStyle,
  NotificationType,
  RedirectInfo,
  SlotMigrateEffect,
  SlotMigrateOptions,
  SlotMigrateResult,
  SlotMigrationEntry,
} from "./types.ts";
export type { BlackholeOptions, FaultState, SimulatorFaults } from "./simulator_faults.ts";
export {
  type RestAnswer,
  type RestEndpoint,
  RestMock,
  type RestMockOptions,
  type RestMockRequest,
  type RestMockResponse,
  type RestRequestRecord,
} from "./rest_mock.ts";
export type {
  Listener,
  ListenFunction,
  ListenOptions,
  ListenTlsOptions,
  ServerTransport,
} from "../transport/listen.ts";
export type {
  ConnectOptions,
  Connector,
  TlsOptions,
  Transport,
  TransportHandlers,
} from "../transport/types.ts";

// Run as a program (`deno run -A jsr:@edge/redis/testing --upstream ...`): start the CLI.
if (import.meta.main) import("./cli.ts").then((m) => m.runCli());
