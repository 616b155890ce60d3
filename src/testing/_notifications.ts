// Encoders for the maintenance push frames (RESP3 `>`), byte-exact with
// shared/reference/maintenance-protocol.md.

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

/** Writes `host:port` (IPv6 literals in brackets). */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
