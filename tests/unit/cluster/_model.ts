// A small model of a cluster for the topology and slot-delta tests: shards owning slot ranges,
// rendered as the CLUSTER SHARDS / CLUSTER SLOTS replies a server would give.
import type { RespValue } from "../../../src/resp/types.ts";

export interface ModelNode {
  host: string;
  port: number;
  health?: "online" | "loading" | "fail";
  tlsPort?: number;
}

export interface ModelShard {
  primary: ModelNode;
  replicas: ModelNode[];
  /** Owner per slot is derived from these: [start, end] inclusive. */
  ranges: [number, number][];
}

function node(n: ModelNode, role: string, resp3: boolean, id: string): RespValue {
  const fields: RespValue[] = [
    "id",
    id,
    "port",
    n.port,
    ...(n.tlsPort ? ["tls-port", n.tlsPort] : []),
    "ip",
    n.host,
    "endpoint",
    n.host,
    "role",
    role,
    "replication-offset",
    1234,
    "health",
    n.health ?? "online",
  ];
  if (!resp3) return fields;
  const m = new Map<RespValue, RespValue>();
  for (let i = 0; i < fields.length; i += 2) m.set(fields[i]!, fields[i + 1]!);
  return m;
}

/** The CLUSTER SHARDS reply of the model, RESP2 (flat lists) or RESP3 (maps). */
export function shardsReply(shards: ModelShard[], resp3 = false): RespValue {
  return shards.map((s, i) => {
    const slots = s.ranges.flat();
    const nodes = [
      node(s.primary, "master", resp3, `p${i}`),
      ...s.replicas.map((r, j) => node(r, "replica", resp3, `r${i}.${j}`)),
    ];
    if (!resp3) return ["slots", slots, "nodes", nodes];
    return new Map<RespValue, RespValue>([["slots", slots], ["nodes", nodes]]);
  });
}

/** The CLUSTER SLOTS reply of the model. */
export function slotsReply(shards: ModelShard[]): RespValue {
  const out: RespValue[] = [];
  shards.forEach((s, i) => {
    for (const [a, b] of s.ranges) {
      out.push([
        a,
        b,
        [s.primary.host, s.primary.port, `p${i}`, []],
        ...s.replicas.map((r, j) => [r.host, r.port, `r${i}.${j}`, []] as RespValue),
      ]);
    }
  });
  return out;
}

/** Contiguous ranges of the slots given (ascending). */
export function rangesOf(slots: number[]): [number, number][] {
  const sorted = [...slots].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && last[1] === s - 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}

/** A seeded PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
