/**
 * Recognition and parsing of maintenance push frames (RESP3 `>`).
 *
 * @module
 */

import type { RespValue } from "../resp/types.ts";
import type { Endpoint } from "../endpoint.ts";
import { parseNotificationEndpoint } from "./endpoint.ts";
import { parseSlotRanges, type SlotRange } from "./slots.ts";

/**
 * `MOVING <seq> <time> <"host:port" | null>`: the endpoint the connection is on moves to
 * `target`; the server closes connections to the old endpoint after about `time` seconds.
 * `target` is `null` when the server gave none (then the client reconnects to its configured
 * endpoint at half the time).
 */
export interface MovingNotification {
  /** Discriminant. */
  type: "MOVING";
  /** Event sequence number (per database, identical on every connection that carries it). */
  seq: number;
  /** Announced window, in seconds, as on the wire. */
  time: number;
  /** Where the endpoint moves, or `null` when the server gave no target. */
  target: Endpoint | null;
}

/**
 * `MIGRATING <seq> <time> <shard-ids>` or `FAILING_OVER <seq> <time> <shard-ids>`: a shard
 * migration / failover starts within `time` seconds.
 */
export interface MaintenanceStartNotification {
  /** Discriminant. */
  type: "MIGRATING" | "FAILING_OVER";
  /** Event sequence number. */
  seq: number;
  /** Lead time before the operation, in seconds, as on the wire (the client ignores it). */
  time: number;
  /** The shard ids, a diagnostic JSON text such as `["1"]`, or `null` if absent. */
  shardIds: string | null;
}

/**
 * `MIGRATED <seq> <shard-ids>` or `FAILED_OVER <seq> <shard-ids>`: the migration / failover
 * completed.
 */
export interface MaintenanceEndNotification {
  /** Discriminant. */
  type: "MIGRATED" | "FAILED_OVER";
  /** Event sequence number (never that of the matching start notification). */
  seq: number;
  /** The shard ids, a diagnostic JSON text such as `["1"]`, or `null` if absent. */
  shardIds: string | null;
}

/** `SMIGRATING <seq> <slots>`: the listed cluster slots start moving. */
export interface SlotsMigratingNotification {
  /** Discriminant. */
  type: "SMIGRATING";
  /** Event sequence number. */
  seq: number;
  /** The slots that start moving, in the order given. */
  slots: SlotRange[];
}

/** One entry of an `SMIGRATED` notification: `slots` moved from `source` to `destination`. */
export interface SlotMigration {
  /** The node that served the slots, or `null` when the entry did not name it. */
  source: Endpoint | null;
  /** The node that serves the slots now. */
  destination: Endpoint;
  /** The slots that moved. */
  slots: SlotRange[];
}

/**
 * `SMIGRATED <seq> [[src, dst, slots], ...]` (older tools: `[[dst, slots], ...]`): the listed
 * slots moved. An empty list is valid.
 */
export interface SlotsMigratedNotification {
  /** Discriminant. */
  type: "SMIGRATED";
  /** Event sequence number (never that of the matching `SMIGRATING`). */
  seq: number;
  /** The slot moves, one entry per source/destination pair. */
  entries: SlotMigration[];
}

/**
 * A parsed maintenance notification, discriminated on `type` (the wire name).
 *
 * @example
 * ```ts
 * import type { MaintenanceNotification } from "@edge/redis/maintenance";
 * function describe(n: MaintenanceNotification): string {
 *   switch (n.type) {
 *     case "MOVING": return n.target ? `moving to ${n.target.host}` : "moving";
 *     case "SMIGRATED": return `${n.entries.length} slot moves`;
 *     default: return n.type;
 *   }
 * }
 * ```
 */
export type MaintenanceNotification =
  | MovingNotification
  | MaintenanceStartNotification
  | MaintenanceEndNotification
  | SlotsMigratingNotification
  | SlotsMigratedNotification;

/** The wire name of a maintenance notification. */
export type MaintenanceNotificationType = MaintenanceNotification["type"];

/**
 * A push frame whose type name is a maintenance notification but whose fields are wrong. It
 * must be logged and dropped, never handed to a command as its reply.
 */
export interface MalformedMaintenanceNotification {
  /** Discriminant (lower case: never a wire name). */
  type: "malformed";
  /** The wire name the frame carried, e.g. `MOVING`. */
  name: MaintenanceNotificationType;
  /** What is wrong, e.g. `expected the sequence number at index 1 to be ...`. */
  reason: string;
}

const NAMES: ReadonlySet<string> = new Set<MaintenanceNotificationType>([
  "MOVING",
  "MIGRATING",
  "MIGRATED",
  "FAILING_OVER",
  "FAILED_OVER",
  "SMIGRATING",
  "SMIGRATED",
]);

const decoder = new TextDecoder();

function text(v: RespValue | undefined): string | undefined {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return decoder.decode(v);
  return undefined;
}

function describe(v: RespValue | undefined): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  const t = text(v);
  if (t !== undefined) return JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}...` : t);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (v instanceof Map) return "a map";
  if (v instanceof Set) return "a set";
  return "an error";
}

const INTEGER = /^[0-9]+$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

function nonNegativeInteger(v: RespValue | undefined): number | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v === "bigint") {
    return v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
  }
  const t = text(v)?.trim();
  if (t === undefined || !INTEGER.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

function nonNegativeNumber(v: RespValue | undefined): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) && v >= 0 ? v : undefined;
  if (typeof v === "bigint") return nonNegativeInteger(v);
  const t = text(v)?.trim();
  if (t === undefined || !DECIMAL.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

function shardIds(v: RespValue | undefined): string | null {
  if (v === undefined || v === null) return null;
  const t = text(v);
  if (t !== undefined) return t;
  if (Array.isArray(v)) return JSON.stringify(v.map((x) => text(x) ?? String(x)));
  return String(v);
}

/** Thrown inside the parser, turned into a malformed result. */
class Malformed {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

function seqAt(frame: readonly RespValue[]): number {
  const seq = nonNegativeInteger(frame[1]);
  if (seq === undefined) {
    throw new Malformed(
      `expected the sequence number at index 1 to be a non-negative integer, got ${
        describe(frame[1])
      }`,
    );
  }
  return seq;
}

function timeAt(frame: readonly RespValue[]): number {
  const time = nonNegativeNumber(frame[2]);
  if (time === undefined) {
    throw new Malformed(
      `expected the time at index 2 to be a non-negative number of seconds, got ${
        describe(frame[2])
      }`,
    );
  }
  return time;
}

function slotsOf(v: RespValue | undefined, where: string): SlotRange[] {
  if (typeof v === "number") v = String(v);
  if (Array.isArray(v)) {
    const all: SlotRange[] = [];
    for (const item of v) all.push(...slotsOf(item, where));
    return all;
  }
  const t = text(v);
  if (t === undefined) {
    throw new Malformed(`expected the slots ${where} to be a slot list, got ${describe(v)}`);
  }
  const ranges = parseSlotRanges(t);
  if (ranges instanceof Error) throw new Malformed(`${ranges.message} (${where})`);
  return ranges;
}

function endpointOf(v: RespValue | undefined, where: string): Endpoint | null {
  if (v === null || v === undefined) return null;
  const t = text(v);
  if (t === undefined) {
    throw new Malformed(`expected the endpoint ${where} to be "host:port", got ${describe(v)}`);
  }
  const parsed = parseNotificationEndpoint(t);
  if (parsed instanceof Error) throw new Malformed(`${parsed.message} (${where})`);
  return parsed;
}

function migrationOf(v: RespValue, index: number): SlotMigration {
  const where = `of entry ${index}`;
  if (!Array.isArray(v) || (v.length !== 2 && v.length !== 3)) {
    throw new Malformed(
      `expected entry ${index} to be [source, destination, slots] or [destination, slots], got ${
        describe(v)
      }`,
    );
  }
  const source = v.length === 3 ? endpointOf(v[0], where) : null;
  const destination = endpointOf(v[v.length - 2], where);
  if (destination === null) {
    throw new Malformed(`expected the destination ${where} to be "host:port", got no endpoint`);
  }
  return { source, destination, slots: slotsOf(v[v.length - 1], where) };
}

/**
 * Parses the fields of a standalone notification; an `SMIGRATING` / `SMIGRATED` only as far as
 * its seq (its slots are for the slot-migration part to read).
 */
function parseStandalone(
  name: MaintenanceNotificationType,
  frame: readonly RespValue[],
): MaintenanceNotification | SlotNotificationHead {
  switch (name) {
    case "MOVING": {
      const seq = seqAt(frame);
      const time = timeAt(frame);
      return { type: name, seq, time, target: endpointOf(frame[3], "at index 3") };
    }
    case "MIGRATING":
    case "FAILING_OVER": {
      const seq = seqAt(frame);
      const time = timeAt(frame);
      return { type: name, seq, time, shardIds: shardIds(frame[3]) };
    }
    case "MIGRATED":
    case "FAILED_OVER":
      return { type: name, seq: seqAt(frame), shardIds: shardIds(frame[2]) };
    default:
      return { type: name, seq: seqAt(frame), head: true };
  }
}

/** Parses the fields of an `SMIGRATING` / `SMIGRATED` whose seq `parseStandalone` read. */
function parseSlots(
  head: SlotNotificationHead,
  frame: readonly RespValue[],
): SlotsMigratingNotification | SlotsMigratedNotification {
  const seq = head.seq;
  if (head.type === "SMIGRATING") {
    if (frame.length < 3) throw new Malformed("expected the slots at index 2, got nothing");
    const slots: SlotRange[] = [];
    for (let i = 2; i < frame.length; i++) slots.push(...slotsOf(frame[i], `at index ${i}`));
    return { type: "SMIGRATING", seq, slots };
  }
  const list = frame[2];
  if (!Array.isArray(list)) {
    throw new Malformed(`expected the entries at index 2 to be an array, got ${describe(list)}`);
  }
  // A single entry sent unwrapped: [src, dst, slots] instead of [[src, dst, slots]].
  const entries = list.length > 0 && !Array.isArray(list[0]) ? [list] : list;
  return { type: "SMIGRATED", seq, entries: entries.map(migrationOf) };
}

/**
 * Tells whether a push frame's type name is a maintenance notification, without parsing the
 * rest. Accepts the name as a string or `Uint8Array`, in any case.
 *
 * @param frame The push frame's elements as decoded (`RespValue[]`).
 * @returns `true` for `MOVING`, `MIGRATING`, `MIGRATED`, `FAILING_OVER`, `FAILED_OVER`,
 *   `SMIGRATING` and `SMIGRATED`.
 *
 * @example
 * ```ts
 * import { isMaintenanceFrame } from "@edge/redis/maintenance";
 * isMaintenanceFrame(["MOVING", 1, 15, null]); // true
 * isMaintenanceFrame(["message", "news", "hi"]); // false
 * ```
 */
export function isMaintenanceFrame(frame: readonly unknown[]): boolean {
  return NAMES.has(text(frame[0] as RespValue)?.toUpperCase() ?? "");
}

/**
 * Parses a RESP3 push frame into a maintenance notification.
 *
 * Leniency: the type name may be a simple or bulk string (`string` or `Uint8Array`, any case);
 * numbers may be integers, safe `bigint`s or decimal strings; the `MOVING` target may be `null`,
 * missing, `"null"`, `"?"`, an empty host or port 0 (all meaning "no target"); IPv6 targets as
 * `[::1]:6379` or `::1:6379`; shard ids are kept as text and never make a frame malformed;
 * `SMIGRATED` entries as `[src, dst, slots]` triples or `[dst, slots]` pairs; slot lists as
 * `"1,2,5-9"` (or arrays of such). Elements after the last expected one are ignored.
 *
 * @param input The push frame's elements as decoded (`RespValue[]`; the first is the type name).
 * @returns The notification; `undefined` when the frame is not a maintenance frame (pub/sub
 *   messages, invalidations, anything else: route it elsewhere); a
 *   {@linkcode MalformedMaintenanceNotification} when the name is a maintenance name but a
 *   field is wrong (log it and drop it).
 *
 * @example
 * ```ts
 * import { parseMaintenanceNotification } from "@edge/redis/maintenance";
 * const n = parseMaintenanceNotification(["MOVING", 1, 15, "10.0.0.2:12000"]);
 * // { type: "MOVING", seq: 1, time: 15, target: { host: "10.0.0.2", port: 12000 } }
 * parseMaintenanceNotification(["message", "news", "hi"]); // undefined
 * parseMaintenanceNotification(["MOVING", "x"]); // { type: "malformed", name: "MOVING", reason: "..." }
 * ```
 */
export function parseMaintenanceNotification(
  input: readonly unknown[],
): MaintenanceNotification | MalformedMaintenanceNotification | undefined {
  return parseWith(input, parseSlots) as
    | MaintenanceNotification
    | MalformedMaintenanceNotification
    | undefined;
}

/**
 * An `SMIGRATING` / `SMIGRATED` read only as far as its seq: what
 * {@linkcode parseStandaloneNotification} gives for them (a standalone client does not read
 * slots). Internal.
 */
export interface SlotNotificationHead {
  /** The wire name. */
  type: "SMIGRATING" | "SMIGRATED";
  /** Event sequence number. */
  seq: number;
  /** Marks a head (the slots were not read). */
  head: true;
}

/**
 * {@linkcode parseMaintenanceNotification} without reading the slots of `SMIGRATING` /
 * `SMIGRATED` (their seq only): what the standalone controller reads. Internal: it keeps the
 * slot-list and slot-delta parsers out of a standalone client's bundle.
 *
 * @param input The push frame's elements as decoded.
 * @returns As {@linkcode parseMaintenanceNotification}, with a {@linkcode SlotNotificationHead}
 *   for `SMIGRATING` / `SMIGRATED`.
 */
export function parseStandaloneNotification(
  input: readonly unknown[],
):
  | MaintenanceNotification
  | SlotNotificationHead
  | MalformedMaintenanceNotification
  | undefined {
  return parseWith(input, undefined);
}

/** Parses a frame; `slots` reads the slots of an `SMIGRATING` / `SMIGRATED` (else a head). */
function parseWith(
  input: readonly unknown[],
  slots: typeof parseSlots | undefined,
):
  | MaintenanceNotification
  | SlotNotificationHead
  | MalformedMaintenanceNotification
  | undefined {
  if (!Array.isArray(input)) return undefined;
  const frame = input as readonly RespValue[];
  const name = text(frame[0])?.toUpperCase();
  if (name === undefined || !NAMES.has(name)) return undefined;
  const type = name as MaintenanceNotificationType;
  try {
    const n = parseStandalone(type, frame);
    return slots !== undefined && "head" in n ? slots(n, frame) : n;
  } catch (e) {
    if (e instanceof Malformed) return { type: "malformed", name: type, reason: e.reason };
    throw e;
  }
}
