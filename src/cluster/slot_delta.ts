/**
 * The slot-delta applier: a cluster slot table plus the entries of an `SMIGRATED` notification
 * in, the new table out, with the nodes to connect to, the nodes to drop and the slots that
 * moved. Pure: it changes nothing it is given, opens no sockets, sets no timers.
 *
 * `SMIGRATED <seq> [[src, dst, slots], ...]` says that `slots` ("123,456,5000-7000") moved from
 * node `src` to node `dst`; older tools send `[dst, slots]` pairs. Both shapes are accepted, as
 * raw entries (as decoded from the push frame) or as parsed {@linkcode SlotMigration}s.
 *
 * @example Apply a move of slots 0-99 to a new node
 * ```ts
 * import { applySlotDelta } from "@edge/redis/slot-delta";
 *
 * const slots = new Uint16Array(16384).fill(0);
 * slots.fill(1, 8192);
 * const table = { nodes: ["127.0.0.1:7000", "127.0.0.1:7001"], slots };
 * const delta = applySlotDelta(table, [["127.0.0.1:7000", "127.0.0.1:7002", "0-99"]]);
 * delta.added; // ["127.0.0.1:7002"]
 * delta.table.nodes[delta.table.slots[50]!]; // "127.0.0.1:7002"
 * delta.moved; // [{ from: "127.0.0.1:7000", to: "127.0.0.1:7002", slots: [{ start: 0, end: 99 }] }]
 * ```
 *
 * @module
 */

import { endpointKeyOf } from "../maintenance/endpoint.ts";
import type { Endpoint as HostPort } from "../endpoint.ts";
import { parseMaintenanceNotification, type SlotMigration } from "../maintenance/notification.ts";
import type { SlotRange } from "../maintenance/slots.ts";

export type { HostPort } from "../maintenance/endpoint.ts";
export type { SlotMigration } from "../maintenance/notification.ts";
export type { SlotRange } from "../maintenance/slots.ts";

/** The number of hash slots. */
const SLOTS = 16384;
/** The slot table value of an unassigned slot. */
const NONE = 0xffff;

/**
 * A slot table: node addresses and, per slot, the index of the primary serving it.
 *
 * @example
 * ```ts
 * import type { SlotTable } from "@edge/redis/slot-delta";
 * const table: SlotTable = {
 *   nodes: ["127.0.0.1:7000"],
 *   slots: new Uint16Array(16384), // every slot on node 0
 * };
 * ```
 */
export interface SlotTable {
  /** Node addresses (`host:port`), indexed by the values of `slots`. */
  readonly nodes: readonly string[];
  /** 16384 entries: the index in `nodes` of the primary serving the slot, `0xffff` for none. */
  readonly slots: Uint16Array;
  /**
   * Addresses of nodes serving reads as replicas: never dropped, even without a primary slot.
   * @default {[]}
   */
  readonly replicaReads?: Iterable<string>;
}

/** One `SMIGRATED` entry: parsed, or raw (`[src, dst, slots]` / `[dst, slots]`). */
export type SlotDeltaEntry = SlotMigration | readonly unknown[];

/** Slots that changed owner, grouped by old and new owner. */
export interface SlotMove {
  /** The previous owner, or `null` for slots that were unassigned. */
  from: string | null;
  /** The new owner. */
  to: string;
  /** The slots, as ascending ranges. */
  slots: SlotRange[];
}

/** An entry that was not applied, and why. */
export interface MalformedSlotDeltaEntry {
  /** Its position in the entries given. */
  index: number;
  /** What is wrong, e.g. `slots are 0-16383`. */
  reason: string;
}

/** Options of {@linkcode applySlotDelta}. */
export interface SlotDeltaOptions {
  /** Rewrites announced addresses (as `nodeAddressMap` does for the topology). */
  mapAddress?: (announced: HostPort) => HostPort;
}

/** The result of {@linkcode applySlotDelta}. */
export interface SlotDelta {
  /**
   * The new table: the old nodes (minus `dropped`) followed by `added`, and the slots
   * re-indexed to them. The input table is left unchanged.
   */
  table: { nodes: string[]; slots: Uint16Array };
  /** Destinations the table did not know: connect to them. */
  added: string[];
  /** Sources left with no primary slot and not serving replica reads: close them. */
  dropped: string[];
  /** The slots that changed owner. */
  moved: SlotMove[];
  /** The number of slots that changed owner. */
  movedCount: number;
  /** Entries that were not applied (each entry is applied whole or not at all). */
  malformed: MalformedSlotDeltaEntry[];
}

function validate(entry: SlotDeltaEntry): SlotMigration | string {
  if (Array.isArray(entry)) {
    const parsed = parseMaintenanceNotification(["SMIGRATED", 0, [entry]]);
    if (parsed === undefined) return "not an SMIGRATED entry";
    if (parsed.type === "malformed") return parsed.reason.replace(/ of entry 0\b/g, "");
    if (parsed.type !== "SMIGRATED" || parsed.entries.length !== 1) {
      return "expected [source, destination, slots] or [destination, slots]";
    }
    return parsed.entries[0]!;
  }
  if (entry === null || typeof entry !== "object") {
    return "expected [source, destination, slots], [destination, slots] or a SlotMigration";
  }
  const m = entry as SlotMigration;
  if (!validHostPort(m.destination)) return "expected the destination to be a host and a port";
  if (m.source !== null && m.source !== undefined && !validHostPort(m.source)) {
    return "expected the source to be a host and a port, or null";
  }
  if (!Array.isArray(m.slots)) return "expected the slots to be a list of ranges";
  for (const r of m.slots) {
    if (
      r === null || typeof r !== "object" || !Number.isInteger(r.start) ||
      !Number.isInteger(r.end)
    ) {
      return "expected each slot range to have integer start and end";
    }
    if (r.start < 0 || r.end >= SLOTS) return `slots are 0-${SLOTS - 1}, got ${r.start}-${r.end}`;
    if (r.start > r.end) return `the start is above the end in ${r.start}-${r.end}`;
  }
  return { source: m.source ?? null, destination: m.destination, slots: m.slots };
}

function validHostPort(h: unknown): h is HostPort {
  if (h === null || typeof h !== "object") return false;
  const { host, port } = h as HostPort;
  return typeof host === "string" && host !== "" && Number.isInteger(port) && port > 0 &&
    port <= 65535;
}

/**
 * Applies the entries of an `SMIGRATED` notification to a slot table.
 *
 * Each entry routes its slots to its destination (whoever owned them before). A destination
 * the table does not know is added. A node is dropped when it was a source (named by an entry,
 * or the previous owner of a moved slot), owns no primary slot afterwards and does not serve
 * replica reads. An entry with a fault (an unknown shape, a bad address, a slot outside
 * 0-16383, a range whose start is above its end) is reported in `malformed` and not applied
 * at all; the other entries are. Later entries win over earlier ones for the same slot.
 *
 * @param table The current table (not modified).
 * @param entries The entries of the notification.
 * @param options Address rewriting.
 * @returns The new table, the nodes to add and to drop, the slots moved, the malformed entries.
 *
 * @example
 * ```ts
 * import { applySlotDelta } from "@edge/redis/slot-delta";
 * const table = { nodes: ["10.0.0.1:6379", "10.0.0.2:6379"], slots: new Uint16Array(16384) };
 * const d = applySlotDelta(table, [["10.0.0.1:6379", "10.0.0.2:6379", "0-16383"]]);
 * d.dropped; // ["10.0.0.1:6379"]: it has no slot left
 * d.table.nodes; // ["10.0.0.2:6379"]
 * ```
 */
export function applySlotDelta(
  table: SlotTable,
  entries: readonly SlotDeltaEntry[],
  options: SlotDeltaOptions = {},
): SlotDelta {
  if (!(table.slots instanceof Uint16Array) || table.slots.length !== SLOTS) {
    throw new TypeError(`Cannot apply the slot delta: the table must have ${SLOTS} slots`);
  }
  const map = options.mapAddress ?? ((a: HostPort) => a);
  const nodes = table.nodes.map((a) => endpointKeyOf(a));
  const index = new Map<string, number>();
  nodes.forEach((a, i) => {
    if (!index.has(a)) index.set(a, i);
  });
  const slots = table.slots.slice();
  const sources = new Set<number>();
  const added: string[] = [];
  const malformed: MalformedSlotDeltaEntry[] = [];

  entries.forEach((entry, i) => {
    const m = validate(entry);
    if (typeof m === "string") {
      malformed.push({ index: i, reason: m });
      return;
    }
    const to = endpointKeyOf(map(m.destination));
    let dst = index.get(to);
    if (dst === undefined) {
      dst = nodes.length;
      if (dst >= NONE) {
        malformed.push({ index: i, reason: "too many nodes" });
        return;
      }
      nodes.push(to);
      index.set(to, dst);
      added.push(to);
    }
    if (m.source) {
      const src = index.get(endpointKeyOf(map(m.source)));
      if (src !== undefined && src !== dst) sources.add(src);
    }
    for (const r of m.slots) {
      for (let s = r.start; s <= r.end; s++) {
        const prev = slots[s]!;
        if (prev !== NONE && prev !== dst) sources.add(prev);
        slots[s] = dst;
      }
    }
  });

  // Which nodes still own a slot; a source that owns none and serves no replica reads goes.
  const owns = new Uint8Array(nodes.length);
  for (let s = 0; s < SLOTS; s++) {
    const n = slots[s]!;
    if (n !== NONE) owns[n] = 1;
  }
  const readers = new Set<string>();
  for (const a of table.replicaReads ?? []) readers.add(endpointKeyOf(a));
  const drop = new Set<number>();
  for (const src of sources) {
    if (owns[src] === 0 && !readers.has(nodes[src]!)) drop.add(src);
  }

  // Compact: old nodes minus dropped, then the added ones (already at the end).
  const remap = new Uint16Array(nodes.length).fill(NONE);
  const kept: string[] = [];
  nodes.forEach((a, i) => {
    if (drop.has(i)) return;
    remap[i] = kept.length;
    kept.push(a);
  });
  const out = new Uint16Array(SLOTS);
  for (let s = 0; s < SLOTS; s++) {
    const n = slots[s]!;
    out[s] = n === NONE ? NONE : remap[n]!;
  }

  // The slots that changed owner, grouped by (old owner, new owner).
  const groups = new Map<string, SlotMove>();
  let movedCount = 0;
  const oldName = (s: number): string | null => {
    const n = table.slots[s]!;
    return n === NONE || n >= table.nodes.length ? null : endpointKeyOf(table.nodes[n]!);
  };
  for (let s = 0; s < SLOTS; s++) {
    const n = slots[s]!;
    if (n === NONE) continue;
    const from = oldName(s);
    const to = nodes[n]!;
    if (from === to) continue;
    movedCount++;
    const key = `${from ?? ""}>${to}`;
    let g = groups.get(key);
    if (!g) {
      g = { from, to, slots: [] };
      groups.set(key, g);
    }
    const last = g.slots[g.slots.length - 1];
    if (last && last.end === s - 1) last.end = s;
    else g.slots.push({ start: s, end: s });
  }

  return {
    table: { nodes: kept, slots: out },
    added,
    dropped: [...drop].sort((a, b) => a - b).map((i) => nodes[i]!),
    moved: [...groups.values()],
    movedCount,
    malformed,
  };
}
