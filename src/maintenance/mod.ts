/**
 * The maintenance controller of `@edge/redis` (smart client handoffs), importable on its own.
 *
 * Redis Software and Redis Cloud announce planned maintenance (shard migrations, failovers,
 * endpoint rebinds) to clients that opt in with `CLIENT MAINT_NOTIFICATIONS ON`, as RESP3 push
 * frames. This module is the pure part of the client's reaction:
 *
 * - {@linkcode parseMaintenanceNotification}: push frame -> notification (lenient, with a
 *   distinct result for malformed maintenance frames).
 * - {@linkcode MaintenanceController}: a state machine with an injected clock; notifications
 *   and ticks in, {@linkcode MaintenanceDecision}s out (relax / unrelax a connection, hand an
 *   endpoint off to a target, reconnect to the configured endpoint, apply a slot delta).
 * - {@linkcode SlotMigrationCoordinator}: the client-wide SMIGRATING / SMIGRATED windows the
 *   controller delegates to.
 * - {@linkcode StandaloneMaintenanceController}: the controller without the slot-migration part
 *   (what a standalone client uses; SMIGRATING relaxes only the connection that received it),
 *   for a bundle without the cluster code.
 * - {@linkcode resolveMaintenanceOptions}, {@linkcode effectiveTimeout},
 *   {@linkcode computeDrainCap}: options and the timeout rules.
 * - {@linkcode planMaintenanceHandshake}, {@linkcode resolveEndpointType},
 *   {@linkcode maintNotificationsCommand}, {@linkcode maintenanceHandshakeOutcome}: the
 *   handshake step.
 *
 * It opens no sockets and sets no timers: the connection layer carries the decisions out.
 *
 * @example Drive the controller from a connection's push frames
 * ```ts
 * import { MaintenanceController } from "@edge/redis/maintenance";
 *
 * let now = 0;
 * const controller = new MaintenanceController<string>(
 *   { relaxedTimeout: 10_000 },
 *   { now: () => now },
 * );
 * controller.attach("conn-1", "10.0.0.1:12000");
 *
 * const decisions = controller.onPush("conn-1", ["MIGRATING", 2, 10, '["1"]']) ?? [];
 * for (const d of decisions) if (d.type === "relax") console.log("relaxed until", d.until);
 * console.log(controller.timeoutFor("conn-1", 2_000)); // 10000
 *
 * controller.onPush("conn-1", ["MIGRATED", 3, '["1"]']); // window-closed, unrelax
 * console.log(controller.timeoutFor("conn-1", 2_000)); // 2000
 * ```
 *
 * @module
 */

export { MaintenanceController } from "./controller.ts";
export {
  type Clock,
  type ConnectionSnapshot,
  type ConnectionWindowSnapshot,
  type EndpointWindowSnapshot,
  type MaintenanceSnapshot,
  StandaloneMaintenanceController,
  type TimeoutForOptions,
} from "./standalone_controller.ts";
export type {
  HandoffDecision,
  HandoffRetargetDecision,
  MaintenanceDecision,
  MaintenanceWindowKind,
  MalformedDecision,
  ReconnectConfiguredDecision,
  RelaxDecision,
  SlotDeltaDecision,
  SlotDeltaDeferredDecision,
  UnrelaxDecision,
  WindowClosedDecision,
  WindowOpenedDecision,
} from "./decision.ts";
export { type Endpoint, endpointKey, sameEndpoint } from "../endpoint.ts";
export {
  endpointKeyOf,
  formatEndpoint,
  type HostPort,
  type ParsedEndpoint,
  parseEndpoint,
  parseNotificationEndpoint,
} from "./endpoint.ts";
export { isPrivateAddress, resolveEndpointType } from "./endpoint_type.ts";
export {
  type MaintenanceHandshakeContext,
  maintenanceHandshakeOutcome,
  type MaintenanceHandshakePlan,
  maintNotificationsCommand,
  planMaintenanceHandshake,
} from "./handshake.ts";
export {
  isMaintenanceFrame,
  type MaintenanceEndNotification,
  type MaintenanceNotification,
  type MaintenanceNotificationType,
  type MaintenanceStartNotification,
  type MalformedMaintenanceNotification,
  type MovingNotification,
  parseMaintenanceNotification,
  type SlotMigration,
  type SlotsMigratedNotification,
  type SlotsMigratingNotification,
} from "./notification.ts";
export {
  type EndpointType,
  MAINTENANCE_DEFAULTS,
  type MaintenanceMode,
  type MaintenanceOptions,
  type ResolvedMaintenanceOptions,
  resolveMaintenanceOptions,
} from "./options.ts";
export {
  SlotMigrationCoordinator,
  type SlotMigrationDecision,
  type SlotMigrationWindow,
} from "./slot_migration_coordinator.ts";
export { parseSlotRanges, type SlotRange } from "./slots.ts";
export { computeDrainCap, DRAIN_CAP_FLOOR, effectiveTimeout } from "./timeouts.ts";
