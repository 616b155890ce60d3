// Internal: keys that hash to a chosen slot of a Redis Cluster (CRC16/XMODEM of the hash tag).

/** Number of hash slots of a Redis Cluster. */
export const SLOT_COUNT = 16384;

const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

function crc16(s: string): number {
  let crc = 0;
  for (const b of new TextEncoder().encode(s)) {
    crc = ((crc << 8) & 0xffff) ^ CRC_TABLE[((crc >> 8) ^ b) & 0xff]!;
  }
  return crc;
}

let tagTable: string[] | undefined;

/** A hash tag for every slot (the shortest decimal string hashing to it). */
function slotTags(): string[] {
  if (tagTable) return tagTable;
  const t: string[] = new Array(SLOT_COUNT);
  let left = SLOT_COUNT;
  for (let i = 0; left > 0; i++) {
    const s = String(i);
    const slot = crc16(s) & (SLOT_COUNT - 1);
    if (t[slot] === undefined) {
      t[slot] = s;
      left--;
    }
  }
  tagTable = t;
  return t;
}

/** A key hashing to `slot`: `<prefix>{<tag>}` (the shortest decimal tag of that slot). */
export function slotKey(slot: number, prefix = "k"): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOT_COUNT) {
    throw new RangeError(`Cannot make a key for slot ${slot}: out of 0-16383`);
  }
  return `${prefix}{${slotTags()[slot]}}`;
}
