// What every part of the cluster client shares: its settings, its one clock, its logger, its
// counters, its events and whether it is closed.
import type { ClientMetrics } from "../observability/metrics.ts";
import type { Clock } from "../_clock.ts";
import type { ResolvedClientOptions } from "../client/options.ts";
import type { Logger } from "../logger.ts";
import type { ClusterStats, RedisClusterClientEventName } from "./cluster_client.ts";
import type { ResolvedClusterOptions } from "./options.ts";
import type { AddressMapper } from "./topology.ts";

/** The state the parts of one cluster client share (made once, by the client). */
export interface ClusterContext {
  /** The cluster options. */
  readonly options: ResolvedClusterOptions;
  /** The settings of every node's connections. */
  readonly settings: ResolvedClientOptions;
  /** The one time source and timer of every part. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** Announced address -> address to connect to (`nodeAddressMap`). */
  readonly map: AddressMapper;
  /** The counters `stats()` copies. */
  readonly stats: ClusterStats;
  /** Set once by `close()`/`destroy()`. */
  closed: boolean;
  /** Dispatches a client event. */
  emit(name: RedisClusterClientEventName, detail: unknown): void;
  /** The client's metrics recorder (`metrics` option). */
  readonly metrics?: ClientMetrics;
}

/** The internal construction options of the cluster client (not part of the public options). */
export interface ClusterInternals {
  /** The clock of every timer and time read (default: the system clock). */
  clock?: Clock;
}

/** A fresh set of counters. */
export function emptyStats(): ClusterStats {
  return {
    moved: 0,
    ask: 0,
    refused: 0,
    unwrittenRetries: 0,
    refreshes: 0,
    subscribedAhead: 0,
    shadowTakeovers: 0,
  };
}

/** The first word of a command, upper-cased (for error messages). */
export function nameOf(args: readonly unknown[]): string {
  const n = args[0];
  return typeof n === "string" ? n.toUpperCase() : String(n);
}

/** Slots as a sorted, comma-separated list (for error messages). */
export function rangesOfSlots(slots: Iterable<number>): string {
  return [...slots].sort((a, b) => a - b).join(", ");
}
