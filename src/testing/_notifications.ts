// Encoders for the maintenance push frames (RESP3 `>`), byte-exact with
// shared/reference/maintenance-protocol.md.
import { formatEndpoint } from "../endpoint.ts";

const enc = new TextEncoder();

/**
 * How the string fields of a notification are written: `reference` follows the reference
 * examples (MOVING with bulk strings, the other types with simple strings), `bulk` writes every
 * string as a bulk string, `simple` as a simple string (a null MOVING target is `_` in every style).
 */
export type NotificationStyle = "reference" | "bulk" | "simple";

function str(s: string, bulk: boolean): string {
  return bulk ? `$${enc.encode(s).length}\r\n${s}\r\n` : `+${s}\r\n`;
}

function int(n: number): string {
  return `:${Math.max(0, Math.ceil(n))}\r\n`;
}

/** `>4 MOVING <seq> <time> <target|null>` */
export function movingFrame(
  seq: number,
  time: number,
  target: string | null,
  style: NotificationStyle,
): Uint8Array {
  const bulk = style !== "simple";
  const t = target === null ? "_\r\n" : str(target, bulk);
  return enc.encode(`>4\r\n${str("MOVING", bulk)}${int(seq)}${int(time)}${t}`);
}

/** `>4 MIGRATING|FAILING_OVER <seq> <time> <shards>` */
export function startFrame(
  type: "MIGRATING" | "FAILING_OVER",
  seq: number,
  time: number,
  shards: string,
  style: NotificationStyle,
): Uint8Array {
  const bulk = style === "bulk";
  return enc.encode(`>4\r\n${str(type, bulk)}${int(seq)}${int(time)}${str(shards, bulk)}`);
}

/** `>3 MIGRATED|FAILED_OVER <seq> <shards>` */
export function endFrame(
  type: "MIGRATED" | "FAILED_OVER",
  seq: number,
  shards: string,
  style: NotificationStyle,
): Uint8Array {
  const bulk = style === "bulk";
  return enc.encode(`>3\r\n${str(type, bulk)}${int(seq)}${str(shards, bulk)}`);
}

/** The five endpoint types a client may ask for. */
export const ENDPOINT_TYPES: readonly string[] = [
  "internal-ip",
  "internal-fqdn",
  "external-ip",
  "external-fqdn",
  "none",
];

/** Writes `host:port` (IPv6 literals in brackets), as the client's one endpoint format does. */
export function hostPort(host: string, port: number): string {
  return formatEndpoint({ host, port });
}

/** `>3 SMIGRATING <seq> <slots>` */
export function smigratingFrame(seq: number, slots: string, style: NotificationStyle): Uint8Array {
  const bulk = style === "bulk";
  return enc.encode(`>3\r\n${str("SMIGRATING", bulk)}${int(seq)}${str(slots, bulk)}`);
}

/**
 * `>3 SMIGRATED <seq> [[src, dst, slots], ...]`, or with `pairs` the older `[[dst, slots], ...]`.
 */
export function smigratedFrame(
  seq: number,
  entries: readonly { source: string; destination: string; slots: string }[],
  style: NotificationStyle,
  shape: "triplets" | "pairs" = "triplets",
): Uint8Array {
  const bulk = style === "bulk";
  let body = `*${entries.length}\r\n`;
  for (const e of entries) {
    body += shape === "pairs"
      ? `*2\r\n${str(e.destination, bulk)}${str(e.slots, bulk)}`
      : `*3\r\n${str(e.source, bulk)}${str(e.destination, bulk)}${str(e.slots, bulk)}`;
  }
  return enc.encode(`>3\r\n${str("SMIGRATED", bulk)}${int(seq)}${body}`);
}

/** Writes slots as ranges: `[1, 2, 3, 7]` -> `"1-3,7"` (sorted, duplicates dropped). */
export function formatSlots(slots: Iterable<number>): string {
  const sorted = [...new Set(slots)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(",");
}

/**
 * Reads `"1-3,7"` into `[1, 2, 3, 7]`.
 *
 * @throws {RangeError} For a malformed range or a slot outside 0-16383.
 */
export function parseSlots(text: string): number[] {
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const p = part.trim();
    if (p === "") continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(p);
    const a = m ? Number(m[1]) : NaN;
    const b = m ? Number(m[2] ?? m[1]) : NaN;
    if (!m || a > b || b > 16383) {
      throw new RangeError(`Cannot read slots "${text}": "${p}" is not a range of 0-16383`);
    }
    for (let i = a; i <= b; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}
