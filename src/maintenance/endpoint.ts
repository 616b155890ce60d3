/**
 * Parsing and formatting of `host:port` endpoints as carried by maintenance notifications.
 *
 * @module
 */

import { type Endpoint, endpointKey } from "../connection/endpoint.ts";

/**
 * A network endpoint: the client's one endpoint type. `host` is a host name or an IP literal;
 * IPv6 literals have no brackets.
 *
 * @example
 * ```ts
 * import type { HostPort } from "@edge/redis/maintenance";
 * const target: HostPort = { host: "10.0.0.2", port: 12000 };
 * ```
 */
export type HostPort = Endpoint;

/**
 * The result of {@linkcode parseEndpoint}: an endpoint, `null` when the text stands for "no
 * endpoint", or an `Error` saying what is wrong with the text.
 */
export type ParsedEndpoint = HostPort | null | Error;

const DIGITS = /^[0-9]+$/;

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
 * import { parseEndpoint } from "@edge/redis/maintenance";
 * parseEndpoint("10.0.0.2:12000"); // { host: "10.0.0.2", port: 12000 }
 * parseEndpoint("[::1]:6379");     // { host: "::1", port: 6379 }
 * parseEndpoint("null");           // null
 * ```
 */
export function parseEndpoint(text: string): ParsedEndpoint {
  const s = text.trim();
  if (s === "" || s === "?" || s.toLowerCase() === "null") return null;
  let host: string;
  let portText: string;
  if (s.startsWith("[")) {
    const close = s.indexOf("]");
    if (close === -1) return new Error(`Cannot parse the endpoint "${s}": missing "]"`);
    host = s.slice(1, close);
    const rest = s.slice(close + 1);
    if (!rest.startsWith(":")) {
      return new Error(`Cannot parse the endpoint "${s}": missing the port after "]"`);
    }
    portText = rest.slice(1);
  } else {
    const colon = s.lastIndexOf(":");
    if (colon === -1) return new Error(`Cannot parse the endpoint "${s}": missing the port`);
    host = s.slice(0, colon);
    portText = s.slice(colon + 1);
  }
  host = host.trim();
  portText = portText.trim();
  if (!DIGITS.test(portText)) {
    return new Error(`Cannot parse the endpoint "${s}": the port is not a number`);
  }
  const port = Number(portText);
  if (host === "" || host === "?" || host.toLowerCase() === "null" || port === 0) return null;
  if (port > 65535) return new Error(`Cannot parse the endpoint "${s}": the port is above 65535`);
  return { host, port };
}

/**
 * Formats an endpoint as `host:port`, bracketing IPv6 literals (`[::1]:6379`). Host names are
 * lower-cased, so the result can be used as a map key: two spellings of the same endpoint
 * (`"::1:6379"`, `"[::1]:6379"`, `"Redis.Example:6379"`) give the same text.
 *
 * @param endpoint The endpoint, or a `host:port` text (parsed with {@linkcode parseEndpoint};
 *   a text that does not parse to an endpoint is returned trimmed and unchanged otherwise).
 * @returns The canonical `host:port` text.
 *
 * @example
 * ```ts
 * import { formatEndpoint } from "@edge/redis/maintenance";
 * formatEndpoint({ host: "::1", port: 6379 }); // "[::1]:6379"
 * formatEndpoint("::1:6379");                  // "[::1]:6379"
 * ```
 */
export function formatEndpoint(endpoint: HostPort | string): string {
  let hp: HostPort;
  if (typeof endpoint === "string") {
    const parsed = parseEndpoint(endpoint);
    if (parsed === null || parsed instanceof Error) return endpoint.trim();
    hp = parsed;
  } else {
    hp = endpoint;
  }
  return endpointKey(hp);
}
