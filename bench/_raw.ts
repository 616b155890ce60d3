// Minimal RESP2 helper for the harness itself: seeding keys and reading INFO stats.
// Deliberately independent of every contender (ours included), node:net only, so it runs
// unchanged on Deno and Bun and never influences what is measured.
import { Socket } from "node:net";

/** Server counters used for the commands-per-read column. */
export interface ServerStats {
  /** `total_commands_processed` from INFO stats. */
  commands: number;
  /** `total_reads_processed` from INFO stats (Redis >= 7.0), NaN when absent. */
  reads: number;
}

const enc = new TextEncoder();

function encodeCommand(args: string[]): Uint8Array {
  const parts: Uint8Array[] = [enc.encode(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = enc.encode(a);
    parts.push(enc.encode(`$${b.length}\r\n`), b, enc.encode("\r\n"));
  }
  let len = 0;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Returns the end offset of one complete RESP2 reply starting at `i`, or -1 if incomplete. */
function replyEnd(buf: Uint8Array, i: number): number {
  if (i >= buf.length) return -1;
  const lf = buf.indexOf(10, i);
  if (lf < 0) return -1;
  const type = buf[i];
  const head = new TextDecoder().decode(buf.subarray(i + 1, lf - 1));
  if (type === 43 || type === 45 || type === 58) return lf + 1; // + - :
  if (type === 36) { // $
    const n = Number(head);
    if (n < 0) return lf + 1;
    const end = lf + 1 + n + 2;
    return end <= buf.length ? end : -1;
  }
  if (type === 42) { // *
    const n = Number(head);
    let p = lf + 1;
    for (let k = 0; k < n; k++) {
      p = replyEnd(buf, p);
      if (p < 0) return -1;
    }
    return p;
  }
  throw new Error(`Cannot parse reply: unexpected type byte ${type}`);
}

/**
 * Sends `commands` on a fresh connection and resolves with the raw reply bytes once one reply
 * per command arrived. RESP2 only (the connection never sends HELLO).
 */
export function rawCommands(
  port: number,
  commands: string[][],
  host = "127.0.0.1",
): Promise<Uint8Array[]> {
  return new Promise((resolve, reject) => {
    const sock = new Socket();
    let buf = new Uint8Array(0);
    const replies: Uint8Array[] = [];
    let pos = 0;
    sock.once("error", reject);
    sock.on("data", (chunk: Uint8Array) => {
      const next = new Uint8Array(buf.length + chunk.length);
      next.set(buf);
      next.set(chunk, buf.length);
      buf = next;
      for (;;) {
        const end = replyEnd(buf, pos);
        if (end < 0) break;
        replies.push(buf.slice(pos, end));
        pos = end;
        if (replies.length === commands.length) {
          sock.destroy();
          for (const r of replies) {
            if (r[0] === 45) {
              reject(
                new Error(
                  `Redis replied ${new TextDecoder().decode(r).trim()}`,
                ),
              );
              return;
            }
          }
          resolve(replies);
          return;
        }
      }
    });
    sock.connect(port, host, () => {
      const parts = commands.map(encodeCommand);
      for (const p of parts) sock.write(p);
    });
  });
}

/** Reads `total_commands_processed` and `total_reads_processed` from INFO stats. */
export async function serverStats(
  port: number,
  host = "127.0.0.1",
): Promise<ServerStats> {
  const [reply] = await rawCommands(port, [["INFO", "stats"]], host);
  const text = new TextDecoder().decode(reply);
  const field = (name: string): number => {
    const m = text.match(new RegExp(`^${name}:(\\d+)`, "m"));
    return m ? Number(m[1]) : NaN;
  };
  return {
    commands: field("total_commands_processed"),
    reads: field("total_reads_processed"),
  };
}

/** Key names and values shared by the workers, the seeding step and redis-benchmark. */
export const KEYS = {
  small: "bench:k16",
  large: "bench:k100k",
  mget: Array.from({ length: 100 }, (_, i) => `bench:m:${i}`),
  pipeline: Array.from({ length: 100 }, (_, i) => `bench:p:${i}`),
} as const;

/** A 16-byte value. */
export const VALUE_16 = "0123456789abcdef";
/** A 100 KB (102 400 bytes) value. */
export const VALUE_100K = "v".repeat(100 * 1024);

/** Writes every key the workloads read. */
export async function seed(port: number, host = "127.0.0.1"): Promise<void> {
  const cmds: string[][] = [
    ["SET", KEYS.small, VALUE_16],
    ["SET", KEYS.large, VALUE_100K],
    ...KEYS.mget.map((k) => ["SET", k, VALUE_16]),
  ];
  await rawCommands(port, cmds, host);
}
