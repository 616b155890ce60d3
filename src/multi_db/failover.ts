/**
 * Which database to switch to: pure selection rules over a snapshot of the candidates.
 *
 * - Failover (the active database failed): the usable database of highest weight, preferring
 *   one outside a maintenance window; ties go to the one configured first.
 * - Failback (checked every `failbackCheckInterval`): a usable database of strictly higher
 *   weight than the active one, outside any maintenance window.
 *
 * "Usable": its last health check passed, its breaker is not open, its grace period is over.
 *
 * @module
 */

/**
 * A database as the selection rules see it.
 *
 * @example
 * ```ts
 * import type { FailoverCandidate } from "@edge/redis/multi-db";
 * const c: FailoverCandidate = { name: "east", weight: 1, usable: true, inMaintenance: false, order: 0 };
 * ```
 */
export interface FailoverCandidate {
  /** Its name. */
  name: string;
  /** Its weight. */
  weight: number;
  /** Healthy, breaker not open, out of its grace period. */
  usable: boolean;
  /** Inside an announced maintenance window. */
  inMaintenance: boolean;
  /** Configuration order (ties). */
  order: number;
}

function better(a: FailoverCandidate, b: FailoverCandidate): boolean {
  return a.weight > b.weight || (a.weight === b.weight && a.order < b.order);
}

/**
 * Picks the database to fail over to.
 *
 * @param candidates Every database.
 * @param exclude The name of the database failed away from.
 * @returns The target, or `undefined` when none is usable.
 *
 * @example
 * ```ts
 * import { selectFailoverTarget } from "@edge/redis/multi-db";
 * const t = selectFailoverTarget([
 *   { name: "east", weight: 1, usable: false, inMaintenance: false, order: 0 },
 *   { name: "west", weight: 0.5, usable: true, inMaintenance: false, order: 1 },
 * ], "east");
 * console.log(t?.name); // "west"
 * ```
 */
export function selectFailoverTarget<C extends FailoverCandidate>(
  candidates: readonly C[],
  exclude?: string,
): C | undefined {
  let best: C | undefined;
  let bestPlanned: C | undefined;
  for (const c of candidates) {
    if (!c.usable || c.name === exclude) continue;
    if (c.inMaintenance) {
      if (bestPlanned === undefined || better(c, bestPlanned)) bestPlanned = c;
    } else if (best === undefined || better(c, best)) best = c;
  }
  return best ?? bestPlanned;
}

/**
 * Picks the database to fail back to, if any.
 *
 * @param candidates Every database.
 * @param active The active database, `undefined` when there is none.
 * @returns A usable database of strictly higher weight outside maintenance, or `undefined`.
 *
 * @example
 * ```ts
 * import { selectFailbackTarget } from "@edge/redis/multi-db";
 * const east = { name: "east", weight: 1, usable: true, inMaintenance: false, order: 0 };
 * const west = { name: "west", weight: 0.5, usable: true, inMaintenance: false, order: 1 };
 * console.log(selectFailbackTarget([east, west], west)?.name); // "east"
 * ```
 */
export function selectFailbackTarget<C extends FailoverCandidate>(
  candidates: readonly C[],
  active: FailoverCandidate | undefined,
): C | undefined {
  let best: C | undefined;
  for (const c of candidates) {
    if (!c.usable || c.inMaintenance || c.name === active?.name) continue;
    if (active !== undefined && c.weight <= active.weight) continue;
    if (best === undefined || better(c, best)) best = c;
  }
  return best;
}
