/**
 * The relaxation rule for timeouts and the MOVING drain cap.
 *
 * @module
 */

/**
 * Combines a configured timeout with a relaxed one: the looser of the two, where 0 means "no
 * timeout" and is the loosest. Relaxation never tightens a timeout.
 *
 * @param configured The connection's own timeout, ms; 0 = none.
 * @param relaxed The relaxed timeout, ms; 0 = none.
 * @returns The effective timeout, ms; 0 = none.
 *
 * @example
 * ```ts
 * import { effectiveTimeout } from "@edge/redis/maintenance";
 * effectiveTimeout(2_000, 10_000);  // 10000
 * effectiveTimeout(30_000, 10_000); // 30000 (never tightens)
 * effectiveTimeout(2_000, 0);       // 0 (no timeout)
 * effectiveTimeout(0, 10_000);      // 0 (already none)
 * ```
 */
export function effectiveTimeout(configured: number, relaxed: number): number {
  if (configured === 0 || relaxed === 0) return 0;
  return Math.max(configured, relaxed);
}

/** The drain cap never goes below this many ms. */
export const DRAIN_CAP_FLOOR = 1_000;

/**
 * How long a MOVING handoff may wait for the commands already written to the old connection
 * before the connection is replaced regardless: half the relaxed timeout, bounded by half of
 * what is left of the window, and never below 1000 ms.
 *
 * @param relaxedTimeout The relaxed timeout, ms; 0 (no timeout) does not bound the cap.
 * @param remainingWindow What is left of the MOVING window, ms; `Infinity` when unknown.
 * @returns The cap, ms, at least {@linkcode DRAIN_CAP_FLOOR} (exactly the floor when neither
 *   bound is finite).
 *
 * @example
 * ```ts
 * import { computeDrainCap } from "@edge/redis/maintenance";
 * computeDrainCap(10_000, 15_000); // 5000
 * computeDrainCap(10_000, 6_000);  // 3000
 * computeDrainCap(10_000, 500);    // 1000 (floor)
 * computeDrainCap(0, 15_000);      // 7500
 * ```
 */
export function computeDrainCap(relaxedTimeout: number, remainingWindow: number): number {
  const byTimeout = relaxedTimeout === 0 ? Infinity : relaxedTimeout / 2;
  const byWindow = Math.max(0, remainingWindow) / 2;
  const cap = Math.min(byTimeout, byWindow);
  return Number.isFinite(cap) ? Math.max(DRAIN_CAP_FLOOR, cap) : DRAIN_CAP_FLOOR;
}
