/**
 * Parsing of cluster slot lists as carried by `SMIGRATING` / `SMIGRATED`.
 *
 * @module
 */

/**
 * An inclusive range of cluster hash slots, `start <= end`, both in 0-16383. A single slot is a
 * range with `start === end`.
 *
 * @example
 * ```ts
 * import type { SlotRange } from "@edge/redis/maintenance";
 * const r: SlotRange = { start: 5000, end: 7000 };
 * ```
 */
export interface SlotRange {
  /** First slot of the range. */
  start: number;
  /** Last slot of the range (inclusive). */
  end: number;
}

/** The highest cluster hash slot. */
const MAX_SLOT = 16383;
const SLOT = /^[0-9]{1,5}$/;

/**
 * Parses a slot list such as `"123,456,5000-7000"` into ranges, in the order given. Spaces
 * around items are ignored, and so are empty items (`"1,,2"`). An empty text gives `[]`.
 *
 * @param text The slot list.
 * @returns The ranges, or an `Error` saying which item is wrong (not a number, above 16383,
 *   or a range whose start is above its end).
 *
 * @example
 * ```ts
 * import { parseSlotRanges } from "@edge/redis/maintenance";
 * parseSlotRanges("123,5000-7000");
 * // [{ start: 123, end: 123 }, { start: 5000, end: 7000 }]
 * ```
 */
export function parseSlotRanges(text: string): SlotRange[] | Error {
  const ranges: SlotRange[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const dash = item.indexOf("-");
    const a = (dash === -1 ? item : item.slice(0, dash)).trim();
    const b = (dash === -1 ? item : item.slice(dash + 1)).trim();
    if (!SLOT.test(a) || !SLOT.test(b)) {
      return new Error(`Cannot parse the slot list item "${item}": expected "slot" or "start-end"`);
    }
    const start = Number(a);
    const end = Number(b);
    if (start > MAX_SLOT || end > MAX_SLOT) {
      return new Error(`Cannot parse the slot list item "${item}": slots are 0-${MAX_SLOT}`);
    }
    if (start > end) {
      return new Error(`Cannot parse the slot list item "${item}": the start is above the end`);
    }
    ranges.push({ start, end });
  }
  return ranges;
}
