// Internal: the plan of a simulated slot migration: which slots move, from which primary to
// which, for each effect (`slot-shuffle`, `remove`, `add`, `remove-add`), and the
// source/destination pairs SMIGRATED announces.
import { parseSlots } from "./_notifications.ts";
import type { RedisCluster, RedisClusterNode } from "./_redis_cluster.ts";
import type { SlotMigrateEffect, SlotMigrateOptions } from "./types.ts";

/** The effects a slot migration can play. */
export const EFFECTS: readonly SlotMigrateEffect[] = [
  "remove-add",
  "remove",
  "add",
  "slot-shuffle",
];

/** What a slot migration moves. */
export interface SlotMigrationPlan {
  /** Destination node id -> the slots it receives. */
  plan: Map<string, number[]>;
  /** Every slot that moves. */
  moving: number[];
  /** Slot -> the id of the node it leaves. */
  sourceOf: Map<number, string>;
  /** The ids of every source and destination. */
  involved: Set<string>;
  /** The node started for `add` and `remove-add`. */
  added: RedisClusterNode | undefined;
}

/**
 * Checks the options and plans the migration on the cluster's current view; `add` and
 * `remove-add` start (and MEET) the new node here. `nodeBy` resolves `options.target`.
 * Throws a RangeError for an unknown effect, bad slots, a bad target or nothing to move.
 */
export async function planSlotMigration(
  c: RedisCluster,
  options: SlotMigrateOptions,
  nodeBy: (target: number | string) => RedisClusterNode,
): Promise<SlotMigrationPlan> {
  const effect = options.effect ?? "slot-shuffle";
  if (!EFFECTS.includes(effect)) {
    throw new RangeError(
      `Cannot migrate slots: unknown effect "${effect}", expected ${EFFECTS.join(", ")}`,
    );
  }
  const requested = typeof options.slots === "string"
    ? parseSlots(options.slots)
    : options.slots === undefined
    ? undefined
    : [...options.slots];
  if (requested !== undefined) {
    for (const s of requested) {
      if (!Number.isInteger(s) || s < 0 || s > 16383) {
        throw new RangeError(`Cannot migrate slots: ${s} is not a slot of 0-16383`);
      }
    }
    if (requested.length === 0) throw new RangeError(`Cannot migrate slots: no slot given`);
  }
  await c.refresh();
  const owned = () => c.primaries().filter((p) => c.slotsOf(p).length > 0);
  const byIndex = (a: RedisClusterNode, b: RedisClusterNode) => a.index - b.index;
  const primaries = owned().sort(byIndex);
  if (primaries.length === 0) throw new Error(`Cannot migrate slots: no primary owns a slot`);
  const explicit = options.target === undefined ? undefined : nodeBy(options.target);

  // plan: destination id -> slots
  const plan = new Map<string, number[]>();
  const put = (dst: string, slot: number) => {
    let l = plan.get(dst);
    if (!l) plan.set(dst, l = []);
    l.push(slot);
  };
  const last = primaries[primaries.length - 1]!;
  const next = (n: RedisClusterNode, pool: RedisClusterNode[]) => {
    const after = pool.filter((p) => p !== n);
    if (after.length === 0) throw new RangeError(`Cannot migrate slots: no other primary`);
    return after.find((p) => p.index > n.index) ?? after[0]!;
  };
  let added: RedisClusterNode | undefined;
  if (effect === "add" || effect === "remove-add") {
    if (explicit !== undefined) {
      throw new RangeError(`Cannot migrate slots: "${effect}" moves them to a new node`);
    }
    const slots = requested ??
      (effect === "remove-add" ? c.slotsOf(last) : primaries.flatMap((p) => {
        const mine = c.slotsOf(p);
        return mine.slice(0, Math.floor(mine.length / 4));
      }));
    added = await c.addNode();
    for (const s of slots) put(added.id, s);
  } else if (effect === "remove") {
    const slots = requested ?? c.slotsOf(last);
    const sources = new Set(slots.map((s) => c.nodeForSlot(s).id));
    const pool = explicit ? [explicit] : primaries.filter((p) => !sources.has(p.id));
    if (pool.length === 0) {
      throw new RangeError(`Cannot migrate slots: "remove" needs a primary that keeps its slots`);
    }
    const share = Math.ceil(slots.length / pool.length);
    slots.forEach((s, i) => put(pool[Math.floor(i / share)]!.id, s));
  } else {
    const slots = requested ?? primaries.flatMap((p) => c.slotsOf(p).slice(0, 100));
    for (const s of slots) {
      const owner = c.nodeForSlot(s);
      const dst = explicit ?? next(owner, primaries);
      if (dst !== owner) put(dst.id, s);
    }
  }
  const moving = [...plan.values()].flat();
  if (moving.length === 0) throw new RangeError(`Cannot migrate slots: nothing would move`);
  const sourceOf = new Map<number, string>(moving.map((s) => [s, c.nodeForSlot(s).id]));
  const involved = new Set<string>([...plan.keys(), ...sourceOf.values()]);
  return { plan, moving, sourceOf, involved, added };
}

/** The source/destination pairs of a plan, each with its slots (one SMIGRATED entry each). */
export function migrationPairs(
  plan: Map<string, number[]>,
  sourceOf: Map<number, string>,
): { src: string; dst: string; slots: number[] }[] {
  const pairs = new Map<string, { src: string; dst: string; slots: number[] }>();
  for (const [dst, slots] of plan) {
    for (const s of slots) {
      const src = sourceOf.get(s)!;
      const k = `${src} ${dst}`;
      let e = pairs.get(k);
      if (!e) pairs.set(k, e = { src, dst, slots: [] });
      e.slots.push(s);
    }
  }
  return [...pairs.values()];
}
