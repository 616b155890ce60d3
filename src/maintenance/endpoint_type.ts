/**
 * Resolution of the `moving-endpoint-type` a connection asks for in the handshake.
 *
 * @module
 */

import type { EndpointType } from "./options.ts";

function ipv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

/** Parses an IPv6 literal into its eight 16-bit groups. */
function ipv6(text: string): number[] | undefined {
  if (!text.includes(":")) return undefined;
  let groupsText = text;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  const last = text.slice(lastColon + 1);
  if (last.includes(".")) {
    const v4 = ipv4(last);
    if (v4 === undefined) return undefined;
    tail.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    const prefix = text.slice(0, lastColon + 1);
    groupsText = prefix.endsWith("::") ? prefix : prefix.slice(0, -1);
  }
  const halves = groupsText.split("::");
  if (halves.length > 2) return undefined;
  const parse = (s: string): number[] | undefined => {
    if (s === "") return [];
    const out: number[] = [];
    for (const g of s.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if (head === undefined || rest === undefined) return undefined;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1) return known === 8 ? [...head, ...tail] : undefined;
  if (known > 7) return undefined;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

function privateV4(b: number[]): boolean {
  const [a, b2] = [b[0]!, b[1]!];
  return a === 10 || // RFC 1918
    (a === 172 && b2 >= 16 && b2 <= 31) || // RFC 1918
    (a === 192 && b2 === 168) || // RFC 1918
    a === 127 || // loopback
    (a === 169 && b2 === 254); // link-local
}

/**
 * Classifies an IP address as private: RFC 1918 (10/8, 172.16/12, 192.168/16), loopback
 * (127/8, `::1`), link-local (169.254/16, fe80::/10), unique local (fc00::/7), and
 * IPv4-mapped IPv6 forms of those (`::ffff:10.0.0.1`). Brackets and an IPv6 zone (`%eth0`)
 * are ignored.
 *
 * @param address An IP literal.
 * @returns `true` for a private address, `false` for a public one, `undefined` when the text is
 *   not an IP literal.
 *
 * @example
 * ```ts
 * import { isPrivateAddress } from "@edge/redis/maintenance";
 * isPrivateAddress("10.1.2.3");  // true
 * isPrivateAddress("fd00::1");   // true
 * isPrivateAddress("8.8.8.8");   // false
 * isPrivateAddress("redis.example.com"); // undefined
 * ```
 */
export function isPrivateAddress(address: string): boolean | undefined {
  let s = address.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone !== -1) s = s.slice(0, zone);
  const v4 = ipv4(s);
  if (v4 !== undefined) return privateV4(v4);
  const g = ipv6(s);
  if (g === undefined) return undefined;
  const zeros = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) {
    return privateV4([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]);
  }
  if (zeros(7) && g[7] === 1) return true; // ::1
  const first = g[0]!;
  return (first & 0xffc0) === 0xfe80 || (first & 0xfe00) === 0xfc00;
}

/**
 * Decides the `moving-endpoint-type` a connection asks for.
 *
 * With `option` `"auto"` (the default): no remote address, or one that is not an IP literal
 * (a tunnel, a unix socket), gives `"none"`; otherwise a private address (see
 * {@linkcode isPrivateAddress}) gives `internal-*` and a public one `external-*`, with `*-fqdn`
 * over TLS and `*-ip` in plaintext. Any other `option` is returned as it is.
 *
 * @param remoteAddress The connected socket's remote IP address (`Transport.remoteAddress`).
 * @param secure Whether the connection is TLS (`Transport.secure`).
 * @param option The `endpointType` option.
 * @returns The endpoint type to send.
 *
 * @example
 * ```ts
 * import { resolveEndpointType } from "@edge/redis/maintenance";
 * resolveEndpointType("10.0.0.5", false, "auto");      // "internal-ip"
 * resolveEndpointType("203.0.113.9", true, "auto");    // "external-fqdn"
 * resolveEndpointType(undefined, false, "auto");       // "none"
 * resolveEndpointType("10.0.0.5", false, "external-ip"); // "external-ip"
 * ```
 */
export function resolveEndpointType(
  remoteAddress: string | undefined,
  secure: boolean,
  option: EndpointType | "auto" = "auto",
): EndpointType {
  if (option !== "auto") return option;
  if (remoteAddress === undefined || remoteAddress.trim() === "") return "none";
  const isPrivate = isPrivateAddress(remoteAddress);
  if (isPrivate === undefined) return "none";
  return `${isPrivate ? "internal" : "external"}-${secure ? "fqdn" : "ip"}`;
}
