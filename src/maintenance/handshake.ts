/**
 * The `CLIENT MAINT_NOTIFICATIONS` handshake step: whether to send it, what to send, and what
 * the reply means in each mode.
 *
 * @module
 */

import { resolveEndpointType } from "./endpoint_type.ts";
import type { EndpointType, MaintenanceMode, ResolvedMaintenanceOptions } from "./options.ts";

/**
 * Builds the opt-in command.
 *
 * @param endpointType The `moving-endpoint-type` to ask for; omitted, a bare `ON` is built
 *   (servers then usually send MOVING without a target).
 * @returns The command's arguments.
 *
 * @example
 * ```ts
 * import { maintNotificationsCommand } from "@edge/redis/maintenance";
 * maintNotificationsCommand("internal-ip");
 * // ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "internal-ip"]
 * ```
 */
export function maintNotificationsCommand(endpointType?: EndpointType): string[] {
  const command = ["CLIENT", "MAINT_NOTIFICATIONS", "ON"];
  if (endpointType !== undefined) command.push("moving-endpoint-type", endpointType);
  return command;
}

/** What the connection knows about itself when it reaches the maintenance handshake step. */
export interface MaintenanceHandshakeContext {
  /** The protocol negotiated by `HELLO`. */
  protocol: 2 | 3;
  /** The connected socket's remote IP address (`Transport.remoteAddress`), if known. */
  remoteAddress: string | undefined;
  /** Whether the connection is TLS (`Transport.secure`). */
  secure: boolean;
  /** The endpoint, for error messages, e.g. `127.0.0.1:6379`. */
  endpoint?: string;
}

/**
 * What to do at the maintenance handshake step, from {@linkcode planMaintenanceHandshake}:
 *
 * - `skip`: send nothing; the feature is off on this connection (`disabled`, or `auto` on RESP2).
 * - `send`: send `command`, then pass whether the server accepted it to
 *   {@linkcode maintenanceHandshakeOutcome}.
 * - `fail`: fail the connection setup with `message` (`enabled` on RESP2).
 */
export type MaintenanceHandshakePlan =
  | { action: "skip"; reason: "disabled" | "resp2" }
  | { action: "send"; command: string[]; endpointType: EndpointType }
  | { action: "fail"; message: string };

/**
 * Decides the maintenance handshake step of a new connection (after `HELLO`, AUTH, `CLIENT
 * SETNAME` / `SETINFO`, before `SELECT`).
 *
 * @param options The resolved options.
 * @param context The connection's protocol, remote address and TLS.
 * @returns The step to take.
 *
 * @example
 * ```ts
 * import { planMaintenanceHandshake, resolveMaintenanceOptions } from "@edge/redis/maintenance";
 * const plan = planMaintenanceHandshake(resolveMaintenanceOptions(), {
 *   protocol: 3,
 *   remoteAddress: "127.0.0.1",
 *   secure: false,
 * });
 * // { action: "send", endpointType: "internal-ip",
 * //   command: ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "internal-ip"] }
 * ```
 */
export function planMaintenanceHandshake(
  options: ResolvedMaintenanceOptions,
  context: MaintenanceHandshakeContext,
): MaintenanceHandshakePlan {
  if (options.mode === "disabled") return { action: "skip", reason: "disabled" };
  if (context.protocol !== 3) {
    if (options.mode === "auto") return { action: "skip", reason: "resp2" };
    const where = context.endpoint === undefined ? "" : ` on "${context.endpoint}"`;
    return {
      action: "fail",
      message:
        `Cannot enable maintenance notifications${where}: the connection uses RESP2, they need RESP3 (set protocol: 3 or maintenanceNotifications.mode: "auto")`,
    };
  }
  const endpointType = resolveEndpointType(
    context.remoteAddress,
    context.secure,
    options.endpointType,
  );
  return { action: "send", command: maintNotificationsCommand(endpointType), endpointType };
}

/**
 * Interprets the server's reply to the opt-in command. An I/O error during the handshake fails
 * the connection in every mode; that is the caller's ordinary handling, not decided here.
 *
 * @param mode The mode.
 * @param accepted `true` when the server replied `+OK`, `false` on an error reply (such as
 *   `-ERR unknown subcommand 'MAINT_NOTIFICATIONS'` from open-source Redis).
 * @returns `"active"`: notifications will arrive; `"inactive"`: carry on without the feature
 *   on this connection (`auto`); `"fail"`: fail the connection setup (`enabled`).
 *
 * @example
 * ```ts
 * import { maintenanceHandshakeOutcome } from "@edge/redis/maintenance";
 * maintenanceHandshakeOutcome("auto", false);    // "inactive"
 * maintenanceHandshakeOutcome("enabled", false); // "fail"
 * ```
 */
export function maintenanceHandshakeOutcome(
  mode: MaintenanceMode,
  accepted: boolean,
): "active" | "inactive" | "fail" {
  if (mode === "disabled") return "inactive";
  if (accepted) return "active";
  return mode === "enabled" ? "fail" : "inactive";
}
