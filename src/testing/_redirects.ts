// Internal: the MOVED and ASK replies the simulator's proxies forward, as records.

/** A MOVED or ASK reply the proxy forwarded to its client. */
export interface RedirectRecord {
  kind: "MOVED" | "ASK";
  /** The slot named in the reply. */
  slot: number;
  /** The address named in the reply, `host:port`. */
  target: string;
  /** When it was forwarded, ms since the epoch. */
  at: number;
}

/** Redirect records kept per connection (the oldest are dropped beyond it). */
export const REDIRECT_LOG_LIMIT = 10_000;

/** The record of a `-MOVED <slot> <host:port>` or `-ASK <slot> <host:port>` reply frame. */
export function parseRedirect(frame: Uint8Array, at: number): RedirectRecord | undefined {
  // "-MOVED " / "-ASK ": check the first bytes before decoding anything.
  const b1 = frame[1];
  if (b1 !== 0x4d && b1 !== 0x41) return undefined;
  const text = new TextDecoder().decode(frame.subarray(1, Math.min(frame.length, 300)));
  const m = /^(MOVED|ASK) (\d+) (\S+)\r?\n?/.exec(text);
  if (m === null) return undefined;
  return { kind: m[1] as "MOVED" | "ASK", slot: Number(m[2]), target: m[3]!.trim(), at };
}
