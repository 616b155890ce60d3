/**
 * The maintenance controller: a pure state machine that turns maintenance notifications
 * (slot migrations included) and clock time into decisions.
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type { MaintenanceOptions } from "./options.ts";
import {
  installSlotMigrations,
  StandaloneMaintenanceController,
  wallTime,
} from "./standalone_controller.ts";
import { SlotMigrationDelegation } from "./_slot_delegation.ts";

/**
 * The maintenance controller (smart client handoffs): a pure state machine. Notifications,
 * attach/detach and clock ticks go in; {@linkcode MaintenanceDecision}s come out; queries answer
 * what timeout a command gets and where a new connection should dial. It opens no sockets,
 * sets no timers and reads time only from the injected {@linkcode Clock}.
 *
 * It is the {@linkcode StandaloneMaintenanceController} (see there for the wiring, the
 * methods, and the rules for MOVING, MIGRATING / FAILING_OVER, duplicates and malformed frames)
 * with the slot-migration part: what a cluster client uses.
 *
 * Slot migrations:
 * - `SMIGRATING` / `SMIGRATED` go to the client's one {@linkcode SlotMigrationCoordinator}:
 *   each seq is handled once per client, an SMIGRATING opens a client window that relaxes every
 *   attached connection, each SMIGRATED closes one window (the backstop closes a lost one), and
 *   an SMIGRATING arriving after its SMIGRATED opens none.
 * - `SMIGRATED` entries give one `slot-delta` decision per seq per controller (held back as
 *   `slot-delta-deferred` between `topologyRefreshStarted` and `topologyRefreshFinished`).
 * - A malformed SMIGRATING / SMIGRATED with a readable seq also closes one SMIGRATING window,
 *   once per seq, and its `malformed` decision carries the seq (re-read the topology).
 *
 * @example Drive it with a fake clock
 * ```ts
 * import { MaintenanceController } from "@edge/redis/maintenance";
 *
 * let now = 0;
 * const controller = new MaintenanceController<string>({}, { now: () => now });
 * controller.attach("a", "10.0.0.1:7000");
 * controller.attach("b", "10.0.0.2:7000");
 * controller.onPush("a", ["SMIGRATING", 12, "0-99"]);
 * // [window-opened { kind: "SMIGRATING", slots: [{ start: 0, end: 99 }] },
 * //  relax { connection: "a" }, relax { connection: "b" }]
 * controller.onPush("b", ["SMIGRATING", 12, "0-99"]); // [] (seq already handled)
 * controller.onPush("b", ["SMIGRATED", 13, [["10.0.0.1:7000", "10.0.0.2:7000", "0-99"]]]);
 * // [window-closed, slot-delta { entries: [...] }, unrelax { connection: "a" }, unrelax ...]
 * ```
 */
export class MaintenanceController<C = string> extends StandaloneMaintenanceController<C> {
  /**
   * Creates a controller.
   *
   * @param options The maintenance options (validated with `resolveMaintenanceOptions`).
   * @param clock Where the time comes from: the client's one {@linkcode Clock}, of which the
   *   controller reads only `now` (it never reads the time any other way and sets no timers),
   *   e.g. `{ now: () => t }` in a test.
   * @default {clock} `Date.now`
   * @throws {TypeError | RangeError} When the options are invalid.
   */
  constructor(options?: MaintenanceOptions, clock: Pick<Clock, "now"> = wallTime) {
    super(options, clock);
    installSlotMigrations(
      this,
      new SlotMigrationDelegation<C>(this.options.relaxedWindowMaxDuration, clock),
    );
  }
}
