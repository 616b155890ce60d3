// Internal: the fault injector actions of the maintenance simulator (`bind`, `migrate`,
// `failover`, `network_failure`, `dmc_restart`, `sleep`, `sequence_of_actions`), read from their
// parameters into runs.
import { closedError, sleepOrClosed } from "./_action_queue.ts";
import {
  type ActionParameters,
  type ActionRun,
  commonAction,
  durationParam,
  numberParam,
} from "./_actions.ts";
import type { SimulatorFaults } from "./simulator_faults.ts";
import type {
  BindOptions,
  BindResult,
  Endpoint,
  FailoverOptions,
  FailoverResult,
  MigrateOptions,
  MigrateResult,
} from "./types.ts";

/** What the actions drive. */
export interface MaintenanceActionHost {
  /** Plays an endpoint rebind (MOVING). */
  bind(options: BindOptions): Promise<BindResult>;
  /** Plays MIGRATING / MIGRATED. */
  migrate(options: MigrateOptions): Promise<MigrateResult>;
  /** Plays FAILING_OVER / FAILED_OVER. */
  failover(options: FailoverOptions): Promise<FailoverResult>;
  /** The network faults. */
  readonly faults: SimulatorFaults;
  /** Ends a blackhole, closing the connections that lost something in it. */
  endBlackhole(): void;
  /** The simulator's timers (cut short on close). */
  readonly timers: Set<() => void>;
}

const KINDS = ["blackhole", "latency", "pause", "close"];

/** The run of action `type`; throws a TypeError for an unknown type or a bad parameter. */
export function maintenanceAction(
  host: MaintenanceActionHost,
  type: string,
  p: ActionParameters,
): ActionRun {
  const num = (...names: string[]) => numberParam(type, p, ...names);
  const shards = (): string[] | undefined => {
    const v = p.shard_ids ?? p.shardIds ?? p.shard_id;
    if (v === undefined) return undefined;
    return (Array.isArray(v) ? v : [v]).map(String);
  };
  switch (type) {
    case "bind":
      return () =>
        host.bind({
          time: num("time"),
          target: (p.target as string | Endpoint | undefined) ?? undefined,
          dataMovement: Boolean(p.data_movement ?? p.dataMovement ?? false),
          dnsDelay: num("dns_delay", "dnsDelay"),
        });
    case "migrate":
      return () =>
        host.migrate({
          time: num("time"),
          shardIds: shards(),
          stallMs: num("stall_ms", "stallMs"),
          slowMs: num("slow_ms", "slowMs"),
        });
    case "failover":
      return () =>
        host.failover({
          time: num("time"),
          shardIds: shards(),
          replica: p.replica as string | Endpoint | undefined,
        });
    case "dmc_restart":
    case "proxy_restart":
      return () => Promise.resolve({ closed: host.faults.closeAll() });
    case "network_failure": {
      const kind = String(p.kind ?? p.type ?? "blackhole");
      const ms = durationParam(type, p);
      const latency = num("latency_ms", "latencyMs", "delay_ms") ?? 100;
      if (!KINDS.includes(kind)) {
        throw new TypeError(
          `Cannot run "network_failure": unknown kind "${kind}", expected blackhole, latency, pause or close`,
        );
      }
      const faults = host.faults;
      return async () => {
        if (kind === "close") return { closed: faults.closeAll() };
        if (kind === "blackhole") faults.blackhole();
        else if (kind === "latency") faults.latency(latency);
        else faults.pause();
        const ok = await sleepOrClosed(ms, host.timers);
        if (kind === "blackhole") host.endBlackhole();
        else if (kind === "latency") faults.latency(0);
        else faults.resume();
        if (!ok) throw closedError();
        return { kind, durationMs: ms };
      };
    }
  }
  const common = commonAction(type, p, host.timers, (t, q) => maintenanceAction(host, t, q));
  if (common !== undefined) return common;
  throw new TypeError(
    `Cannot run action "${type}": expected bind, migrate, failover, network_failure, dmc_restart, sleep or sequence_of_actions`,
  );
}
