/**
 * The simulators' endpoint parser: `"host:port"`, `"[v6]:port"` or `"redis://host:port"`, with
 * defaults for a missing host or port.
 *
 * @module
 */

import { splitEndpoint } from "../endpoint.ts";
import type { Endpoint } from "./types.ts";

/**
 * Parses `"host:port"`, `"[v6]:port"` or `"redis://host:port"` (or passes an endpoint through).
 *
 * @param value The endpoint.
 * @param defaults Used for a missing host or port.
 * @returns The endpoint.
 * @throws {TypeError} When the value cannot be parsed.
 *
 * @example
 * ```ts
 * import { parseEndpoint } from "@edge/redis/testing";
 * console.log(parseEndpoint("127.0.0.1:6379")); // { host: "127.0.0.1", port: 6379 }
 * ```
 */
export function parseEndpoint(
  value: Partial<Endpoint> | string,
  defaults: Endpoint = { host: "127.0.0.1", port: 0 },
): Endpoint {
  if (typeof value !== "string") {
    return { host: value.host ?? defaults.host, port: value.port ?? defaults.port };
  }
  const s = value.trim().replace(/^rediss?:\/\//, "").replace(/\/.*$/, "").replace(/^.*@/, "");
  // A missing port (`host`, `[v6]`) or host (`:port`) takes the default; the one endpoint parser
  // reads the rest (lenient only to let the host be empty: bare IPv6 is refused below).
  const hasPort = s.startsWith("[") ? s.includes("]:") : s.includes(":");
  const e = splitEndpoint(hasPort ? s : `${s}:${defaults.port}`, true);
  const why = typeof e === "string"
    ? e
    : !s.startsWith("[") && e.host.includes(":")
    ? "an IPv6 address needs brackets, e.g. [::1]:6379"
    : undefined;
  if (why !== undefined || typeof e === "string") {
    throw new TypeError(`Cannot parse the endpoint "${value}": ${why}`);
  }
  return { host: e.host === "" ? defaults.host : e.host, port: e.port };
}
