/**
 * Endpoints as maintenance notifications carry them: the lenient reading of `host:port` and the
 * "no endpoint" forms. The endpoint type and its helpers are the client's one set
 * (`src/endpoint.ts`); this file only adds what notifications need.
 *
 * @module
 */

import { type Endpoint, endpointKey, splitEndpoint } from "../endpoint.ts";

/**
 * A network endpoint: the client's one endpoint type.
 *
 * @deprecated Use {@linkcode Endpoint}, the same type.
 *
 * @example
 * ```ts
 * import type { Endpoint } from "@edge/redis/maintenance";
 * const target: Endpoint = { host: "10.0.0.2", port: 12000 };
 * ```
 */
export type HostPort = Endpoint;

/**
 * The result of {@linkcode parseNotificationEndpoint}: an endpoint, `null` when the text stands
 * for "no endpoint", or an `Error` saying what is wrong with the text.
 */
export type ParsedEndpoint = Endpoint | null | Error;

function isNone(host: string): boolean {
  return host === "" || host === "?" || host.toLowerCase() === "null";
}

/**
 * Parses a `host:port` text, leniently, as maintenance notifications write it.
 *
 * - IPv6: `[::1]:6379`, or bare `::1:6379` (split at the last colon).
 * - "No endpoint" (returns `null`): an empty text, `null` (any case), `?`, an empty host, the
 *   host `?` or `null`, or port 0.
 * - Anything else that is not `host:port` with a port in 1-65535 returns an `Error`.
 *
 * @param text The text to parse.
 * @returns The endpoint, `null` for "no endpoint", or an `Error` describing the fault.
 *
 * @example
 * ```ts
 * import { parseNotificationEndpoint } from "@edge/redis/maintenance";
 * parseNotificationEndpoint("10.0.0.2:12000"); // { host: "10.0.0.2", port: 12000 }
 * parseNotificationEndpoint("::1:6379");       // { host: "::1", port: 6379 }
 * parseNotificationEndpoint("null");           // null
 * ```
 */
export function parseNotificationEndpoint(text: string): ParsedEndpoint {
  const s = text.trim();
  if (isNone(s)) return null;
  const e = splitEndpoint(s, true);
  if (typeof e === "string") return new Error(`Cannot parse the endpoint "${s}": ${e}`);
  return isNone(e.host) || e.port === 0 ? null : e;
}

/**
 * Parses a `host:port` text as maintenance notifications write it.
 *
 * @deprecated Use {@linkcode parseNotificationEndpoint}, the same function.
 *
 * @param text The text to parse.
 * @returns The endpoint, `null` for "no endpoint", or an `Error` describing the fault.
 *
 * @example
 * ```ts
 * import { parseEndpoint } from "@edge/redis/maintenance";
 * parseEndpoint("[::1]:6379"); // { host: "::1", port: 6379 }
 * ```
 */
export const parseEndpoint: (text: string) => ParsedEndpoint = parseNotificationEndpoint;

/**
 * The map key of an endpoint or of a `host:port` text ({@linkcode endpointKey}: host
 * lower-cased, IPv6 in brackets), so two spellings of one endpoint (`"::1:6379"`,
 * `"[::1]:6379"`, `"Redis.Example:6379"`) give one key.
 *
 * @param endpoint The endpoint, or a `host:port` text (read as
 *   {@linkcode parseNotificationEndpoint} reads it; a text that is no endpoint is returned
 *   trimmed and unchanged otherwise).
 * @returns The key.
 *
 * @example
 * ```ts
 * import { endpointKeyOf } from "@edge/redis/maintenance";
 * endpointKeyOf("::1:6379");                    // "[::1]:6379"
 * endpointKeyOf({ host: "Cache.Example", port: 1 }); // "cache.example:1"
 * ```
 */
export function endpointKeyOf(endpoint: Endpoint | string): string {
  if (typeof endpoint !== "string") return endpointKey(endpoint);
  const parsed = parseNotificationEndpoint(endpoint);
  return parsed === null || parsed instanceof Error ? endpoint.trim() : endpointKey(parsed);
}

/**
 * The map key of an endpoint or a `host:port` text.
 *
 * @deprecated Use {@linkcode endpointKeyOf} (a key: the host lower-cased), or `formatEndpoint`
 *   of the endpoint module for display (the host as given).
 *
 * @param endpoint The endpoint, or a `host:port` text.
 * @returns The key.
 *
 * @example
 * ```ts
 * import { formatEndpoint } from "@edge/redis/maintenance";
 * formatEndpoint({ host: "::1", port: 6379 }); // "[::1]:6379"
 * ```
 */
export const formatEndpoint: (endpoint: Endpoint | string) => string = endpointKeyOf;
