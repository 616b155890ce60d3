// Internal: the fault injector actions of the cluster simulator (`slot_migrate`, `dmc_restart`,
// `sleep`, `sequence_of_actions`), read from their parameters into runs.
import { type ActionParameters, type ActionRun, commonAction, numberParam } from "./_actions.ts";
import { EFFECTS } from "./_slot_migration_plan.ts";
import type { SlotMigrateEffect, SlotMigrateOptions, SlotMigrateResult } from "./types.ts";

/** What the actions drive. */
export interface ClusterActionHost {
  /** Plays a slot migration. */
  slotMigrate(options: SlotMigrateOptions): Promise<SlotMigrateResult>;
  /** Closes every client connection of every node; returns how many. */
  closeAll(): number;
  /** The simulator's timers (cut short on close). */
  readonly timers: Set<() => void>;
}

/** The run of action `type`; throws a TypeError for an unknown type or a bad parameter. */
export function clusterAction(
  host: ClusterActionHost,
  type: string,
  p: ActionParameters,
): ActionRun {
  const num = (...names: string[]) => numberParam(type, p, ...names);
  switch (type) {
    case "slot_migrate": {
      const effect = String(p.effect ?? "slot-shuffle") as SlotMigrateEffect;
      if (!EFFECTS.includes(effect)) {
        throw new TypeError(
          `Cannot run "slot_migrate": unknown effect "${effect}", expected ${EFFECTS.join(", ")}`,
        );
      }
      const slots = p.slots;
      const target = p.target;
      const options: SlotMigrateOptions = {
        effect,
        slots: Array.isArray(slots)
          ? slots.map(Number)
          : slots === undefined || slots === null
          ? undefined
          : String(slots),
        target: typeof target === "number" || typeof target === "string" ? target : undefined,
        delayMs: num("delay_ms", "delayMs"),
        keysPerBatch: num("keys_per_batch", "keysPerBatch"),
        pauseBetweenKeysMs: num("pause_between_keys_ms", "pauseBetweenKeysMs"),
        finalizeDelayMs: num("finalize_delay_ms", "finalizeDelayMs"),
        notify: p.notify === "involved" ? "involved" : undefined,
        entryShape: (p.entry_shape ?? p.entryShape) === "pairs" ? "pairs" : undefined,
        smigratedCopies: num("smigrated_copies", "smigratedCopies"),
      };
      return () => host.slotMigrate(options);
    }
    case "dmc_restart":
    case "proxy_restart":
      return () => Promise.resolve({ closed: host.closeAll() });
  }
  const common = commonAction(type, p, host.timers, (t, q) => clusterAction(host, t, q));
  if (common !== undefined) return common;
  throw new TypeError(
    `Cannot run action "${type}": expected slot_migrate, dmc_restart, sleep or sequence_of_actions`,
  );
}
