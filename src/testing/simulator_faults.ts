/**
 * The fault controls of the {@linkcode MaintenanceSimulator}.
 *
 * @module
 */

/**
 * Options of {@linkcode SimulatorFaults.blackhole}.
 *
 * @example
 * ```ts
 * import type { BlackholeOptions } from "@edge/redis/testing";
 * const outage: BlackholeOptions = { durationMs: 2_000 };
 * ```
 */
export interface BlackholeOptions {
  /** End the blackhole after this long. @default until {@linkcode SimulatorFaults.clear} */
  durationMs?: number;
}

/**
 * A snapshot of the active faults.
 *
 * @example
 * ```ts
 * import type { FaultState } from "@edge/redis/testing";
 * const healthy = (f: FaultState) => f.latencyMs === 0 && !f.blackhole && !f.paused;
 * ```
 */
export interface FaultState {
  /** Added delay per reply, in ms. */
  latencyMs: number;
  /** Requests are dropped and nothing is answered. */
  blackhole: boolean;
  /** The proxy is paused. */
  paused: boolean;
}

/**
 * Network faults of the simulated proxy. Each applies to every connection of every endpoint.
 *
 * - `latency(ms)`: every reply (and server push) is delayed by `ms`, order kept; `0` ends it.
 * - `blackhole()`: connections are accepted, requests read and dropped, nothing answered (replies
 *   already on their way are dropped too). When it ends, every connection that lost something is
 *   closed, since its reply stream is no longer in step.
 * - `closeAll()`: closes every client connection (FIN), as a proxy restart does; new connections
 *   are accepted at once.
 * - `pause()` / `resume()`: the proxy stops reading requests and delivering replies; both are held
 *   and delivered, in order, on resume.
 *
 * @example Add latency, then clear it
 * ```ts ignore
 * import { MaintenanceSimulator } from "@edge/redis/testing";
 * const sim = await MaintenanceSimulator.start({ upstream: "127.0.0.1:6379" });
 * sim.faults.latency(200);
 * // ... every reply now takes 200 ms longer
 * sim.faults.clear();
 * await sim.close();
 * ```
 */
export interface SimulatorFaults {
  /**
   * Delays every reply by `ms` (0 ends it).
   *
   * @param ms Added delay, in ms.
   */
  latency(ms: number): void;
  /**
   * Accepts connections and never answers.
   *
   * @param options How long; until {@linkcode SimulatorFaults.clear} by default.
   */
  blackhole(options?: BlackholeOptions): void;
  /**
   * Closes every client connection.
   *
   * @returns How many connections were closed.
   */
  closeAll(): number;
  /** Stops reading requests and delivering replies. */
  pause(): void;
  /** Delivers what a pause held and carries on. */
  resume(): void;
  /** Ends every fault: latency 0, blackhole ended, paused resumed. */
  clear(): void;
  /**
   * The active faults.
   *
   * @returns A snapshot.
   */
  state(): FaultState;
}
