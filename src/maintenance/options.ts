/**
 * Options of the maintenance notifications feature, with defaults and validation.
 *
 * @module
 */

/**
 * Whether and how strictly the `CLIENT MAINT_NOTIFICATIONS` handshake is attempted.
 *
 * - `"auto"`: sent on RESP3 connections; an error reply or RESP2 quietly leaves the feature off
 *   for that connection (decided per connection).
 * - `"enabled"`: sent on every connection; an error reply or RESP2 fails the connection setup.
 * - `"disabled"`: never sent; the controller makes no decisions.
 */
export type MaintenanceMode = "auto" | "enabled" | "disabled";

/**
 * The address format the server uses for the `MOVING` target, as sent in the handshake.
 * `"none"` asks for no target (the client then reconnects to its configured endpoint).
 */
export type EndpointType =
  | "internal-ip"
  | "internal-fqdn"
  | "external-ip"
  | "external-fqdn"
  | "none";

/**
 * Options of the maintenance notifications feature (smart client handoffs). Every field is
 * optional; times are in milliseconds.
 *
 * @example
 * ```ts
 * import type { MaintenanceOptions } from "@edge/redis/maintenance";
 * const options: MaintenanceOptions = { mode: "enabled", relaxedTimeout: 30_000 };
 * ```
 */
export interface MaintenanceOptions {
  /**
   * Whether and how strictly the handshake is attempted; see {@linkcode MaintenanceMode}.
   *
   * @default {"auto"}
   */
  mode?: MaintenanceMode;
  /**
   * Timeout of non-blocking commands on a connection inside a maintenance window, in ms. The
   * connection uses the looser of this and its configured timeout; 0 means no timeout.
   *
   * @default {10000}
   */
  relaxedTimeout?: number;
  /**
   * Timeout of blocking commands (BLPOP, XREAD BLOCK, WAIT, ...) on a connection inside a
   * maintenance window, in ms. 0 means no timeout.
   *
   * @default {0}
   */
  relaxedBlockingTimeout?: number;
  /**
   * Backstop, in ms: a window opened by a start notification (MIGRATING, FAILING_OVER,
   * SMIGRATING) closes on its own after this long if its end notification is lost. Must be
   * above 0. Does not shorten a MOVING window, which lasts the announced time.
   *
   * @default {60000}
   */
  relaxedWindowMaxDuration?: number;
  /**
   * The `moving-endpoint-type` sent in the handshake. `"auto"` decides per connection from the
   * connected socket's remote address and TLS; see `resolveEndpointType`.
   *
   * @default {"auto"}
   */
  endpointType?: EndpointType | "auto";
}

/**
 * {@linkcode MaintenanceOptions} with every default applied and every value validated, as
 * returned by {@linkcode resolveMaintenanceOptions}.
 */
export interface ResolvedMaintenanceOptions {
  /** Handshake mode. */
  readonly mode: MaintenanceMode;
  /** Relaxed timeout of non-blocking commands, ms; 0 = none. */
  readonly relaxedTimeout: number;
  /** Relaxed timeout of blocking commands, ms; 0 = none. */
  readonly relaxedBlockingTimeout: number;
  /** Backstop of start-notification windows, ms, above 0. */
  readonly relaxedWindowMaxDuration: number;
  /** Requested endpoint type, or `"auto"`. */
  readonly endpointType: EndpointType | "auto";
}

/** The defaults of {@linkcode MaintenanceOptions}. */
export const MAINTENANCE_DEFAULTS: ResolvedMaintenanceOptions = Object.freeze({
  mode: "auto",
  relaxedTimeout: 10_000,
  relaxedBlockingTimeout: 0,
  relaxedWindowMaxDuration: 60_000,
  endpointType: "auto",
});

const MODES: readonly string[] = ["auto", "enabled", "disabled"];
const ENDPOINT_TYPES: readonly string[] = [
  "auto",
  "internal-ip",
  "internal-fqdn",
  "external-ip",
  "external-fqdn",
  "none",
];
const KEYS: readonly string[] = Object.keys(MAINTENANCE_DEFAULTS);

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}n`;
  if (v === null || typeof v !== "object") return String(v);
  return Array.isArray(v) ? "an array" : "an object";
}

function duration(input: Record<string, unknown>, key: string, min: number): number {
  const v = input[key];
  const fallback = MAINTENANCE_DEFAULTS[key as keyof ResolvedMaintenanceOptions] as number;
  if (v === undefined) return fallback;
  const name = `maintenanceNotifications.${key}`;
  if (typeof v !== "number") {
    throw new TypeError(
      `Cannot use ${name}: expected a number of milliseconds, got ${typeof v} ${show(v)}`,
    );
  }
  if (!Number.isFinite(v) || v < min) {
    const hint = min === 0 ? "a finite number >= 0 (0 means no timeout)" : `a finite number > 0`;
    throw new RangeError(`Cannot use ${name} = ${v}: expected ${hint}`);
  }
  return v;
}

function choice(input: Record<string, unknown>, key: string, allowed: readonly string[]): string {
  const v = input[key];
  if (v === undefined) {
    return MAINTENANCE_DEFAULTS[key as keyof ResolvedMaintenanceOptions] as string;
  }
  const name = `maintenanceNotifications.${key}`;
  if (typeof v !== "string") {
    throw new TypeError(`Cannot use ${name}: expected a string, got ${typeof v} ${show(v)}`);
  }
  if (!allowed.includes(v)) {
    throw new RangeError(
      `Cannot use ${name} = ${show(v)}: expected one of ${allowed.map(show).join(", ")}`,
    );
  }
  return v;
}

/**
 * Applies the defaults to maintenance options and validates them.
 *
 * @param options The options as given by the user; `undefined` gives the defaults. A resolved
 *   object may be passed again (the result is equal).
 * @returns A new frozen object with every field set.
 * @throws {TypeError} When `options` is not an object, has an unknown key (a typo such as
 *   `relaxedTimout`), or a field has the wrong type.
 * @throws {RangeError} When a mode or endpoint type is not one of the allowed values, a time is
 *   negative, not finite, or (for `relaxedWindowMaxDuration`) 0.
 *
 * @example
 * ```ts
 * import { resolveMaintenanceOptions } from "@edge/redis/maintenance";
 * const o = resolveMaintenanceOptions({ relaxedTimeout: 30_000 });
 * console.log(o.mode, o.relaxedTimeout, o.relaxedWindowMaxDuration); // "auto" 30000 60000
 * ```
 */
export function resolveMaintenanceOptions(
  options?: MaintenanceOptions,
): ResolvedMaintenanceOptions {
  if (options === undefined) return MAINTENANCE_DEFAULTS;
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(
      `Cannot use maintenanceNotifications: expected an object, got ${
        options === null ? "null" : typeof options
      } ${show(options)}`,
    );
  }
  const input = options as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!KEYS.includes(key)) {
      throw new TypeError(
        `Cannot use maintenanceNotifications.${key}: unknown option, expected one of ${
          KEYS.join(", ")
        }`,
      );
    }
  }
  return Object.freeze({
    mode: choice(input, "mode", MODES) as MaintenanceMode,
    relaxedTimeout: duration(input, "relaxedTimeout", 0),
    relaxedBlockingTimeout: duration(input, "relaxedBlockingTimeout", 0),
    relaxedWindowMaxDuration: duration(input, "relaxedWindowMaxDuration", Number.MIN_VALUE),
    endpointType: choice(input, "endpointType", ENDPOINT_TYPES) as EndpointType | "auto",
  });
}
