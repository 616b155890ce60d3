// Internal: RESP bytes the simulator's proxy writes itself (replies it answers, batches it joins).

const enc = new TextEncoder();

/** The parts joined into one buffer (the part itself when there is one). */
export function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A `-<message>` error reply. */
export function errorReply(message: string): Uint8Array {
  return enc.encode(`-${message}\r\n`);
}

/** A `+OK` reply. */
export const OK: Uint8Array = enc.encode("+OK\r\n");

/** `s` as the text of a RESP bulk string. */
export function bulk(s: string): string {
  return `$${enc.encode(s).length}\r\n${s}\r\n`;
}

/** `s` as UTF-8 bytes. */
export function utf8(s: string): Uint8Array {
  return enc.encode(s);
}
