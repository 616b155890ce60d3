/**
 * The one endpoint type of the client (host and port) and its one set of helpers: parse
 * `host:port` / `[v6]:port`, format for display, key for maps, compare. One rule for case: host
 * names are case-insensitive, so {@linkcode endpointKey} and {@linkcode sameEndpoint} ignore case;
 * {@linkcode formatEndpoint} (messages, logs, events) keeps the host as given.
 *
 * Pure and at the bottom layer: it imports nothing, so every part of the client (the pure
 * entries included) can use it.
 *
 * @module
 */

/**
 * An endpoint: host and port.
 *
 * @example
 * ```ts ignore
 * const e: Endpoint = { host: "::1", port: 6379 };
 * ```
 */
export interface Endpoint {
  /** Host name or IP literal (IPv6 without brackets). */
  host: string;
  /** TCP port. */
  port: number;
}

const DIGITS = /^[0-9]+$/;

/**
 * Splits `host:port` or `[v6]:port` (surrounding spaces ignored); the only endpoint parser.
 *
 * Strict by default: an unbracketed IPv6 literal (`::1:6379`) is ambiguous and refused, and the
 * host must not be empty. `lenient` reads endpoints as servers write them (MOVED/ASK replies,
 * maintenance notifications): an unbracketed IPv6 literal is split at its last colon and an
 * empty host is returned as `""` (the caller says what it stands for).
 *
 * @param text The text.
 * @param lenient Read it as a server writes it (see above).
 * @returns The endpoint (port 0 allowed), or why the text is not one.
 *
 * @example
 * ```ts ignore
 * splitEndpoint("[::1]:6379");        // { host: "::1", port: 6379 }
 * splitEndpoint("::1:6379");          // "an IPv6 address needs brackets, e.g. [::1]:6379"
 * splitEndpoint("::1:6379", true);    // { host: "::1", port: 6379 }
 * ```
 */
export function splitEndpoint(text: string, lenient = false): Endpoint | string {
  const s = text.trim();
  let host: string;
  let portText: string;
  if (s.startsWith("[")) {
    const close = s.indexOf("]");
    if (close === -1) return `missing "]"`;
    host = s.slice(1, close);
    const rest = s.slice(close + 1);
    if (!rest.startsWith(":")) return `missing the port after "]"`;
    portText = rest.slice(1);
  } else {
    const colon = s.lastIndexOf(":");
    if (colon === -1) return "missing the port";
    host = s.slice(0, colon);
    if (!lenient && host.includes(":")) {
      return "an IPv6 address needs brackets, e.g. [::1]:6379";
    }
    portText = s.slice(colon + 1);
  }
  host = host.trim();
  portText = portText.trim();
  if (host === "" && !lenient) return "missing the host";
  if (!DIGITS.test(portText)) return "the port is not a number";
  const port = Number(portText);
  if (port > 65535) return "the port is above 65535";
  return { host, port };
}

/**
 * Parses `host:port` or `[v6]:port`, strictly (as configuration gives it).
 *
 * @param text The text.
 * @returns The endpoint (IPv6 host without brackets).
 * @throws {TypeError} When the text is not an endpoint or the port is not 1-65535.
 *
 * @example
 * ```ts ignore
 * parseEndpoint("[::1]:6380"); // { host: "::1", port: 6380 }
 * ```
 */
export function parseEndpoint(text: string): Endpoint {
  const e = splitEndpoint(text);
  if (typeof e === "string") throw new TypeError(`Cannot parse the endpoint "${text}": ${e}`);
  if (e.port === 0) throw new TypeError(`Cannot parse the endpoint "${text}": the port is 0`);
  return e;
}

/**
 * Formats an endpoint for display as `host:port` (`[v6]:port` for IPv6 literals), the host as
 * given. Not a map key: use {@linkcode endpointKey} for that.
 *
 * @param e The endpoint.
 * @returns The text, for messages, logs and events.
 *
 * @example
 * ```ts ignore
 * formatEndpoint({ host: "::1", port: 6379 });        // "[::1]:6379"
 * formatEndpoint({ host: "Cache.Example", port: 1 }); // "Cache.Example:1"
 * ```
 */
export function formatEndpoint(e: Endpoint): string {
  return e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}

/**
 * A key that is the same for the same endpoint however it was spelled: the host lower-cased,
 * IPv6 in brackets (`cache.example:6379`, `[::1]:6379`).
 *
 * @param e The endpoint.
 * @returns The map key.
 *
 * @example
 * ```ts ignore
 * endpointKey({ host: "Cache.Example", port: 6379 }); // "cache.example:6379"
 * ```
 */
export function endpointKey(e: Endpoint): string {
  const host = e.host.toLowerCase();
  return host.includes(":") ? `[${host}]:${e.port}` : `${host}:${e.port}`;
}

/**
 * Whether two endpoints are the same (host compared case-insensitively, as
 * {@linkcode endpointKey} keys it). An `undefined` side is the same as nothing.
 *
 * @param a One endpoint.
 * @param b The other.
 * @returns `true` when both are given and name the same host and port.
 *
 * @example
 * ```ts ignore
 * sameEndpoint({ host: "A.example", port: 1 }, { host: "a.EXAMPLE", port: 1 }); // true
 * ```
 */
export function sameEndpoint(a: Endpoint | undefined, b: Endpoint | undefined): boolean {
  return a !== undefined && b !== undefined && a.port === b.port &&
    (a.host === b.host || a.host.toLowerCase() === b.host.toLowerCase());
}
