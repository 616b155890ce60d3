// Internal: a node's view of a Redis Cluster, as CLUSTER NODES and CLUSTER SHARDS report it.
import type { RespValue } from "../resp/types.ts";

/** One line of CLUSTER NODES. */
export interface ViewEntry {
  id: string;
  flags: string[];
  primaryId: string | undefined;
  link: string;
  slots: [number, number][];
}

/** The lines of a CLUSTER NODES reply (the `myself` flag left out). */
export function parseNodes(text: string): ViewEntry[] {
  const out: ViewEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const f = line.trim().split(" ");
    const slots: [number, number][] = [];
    for (const s of f.slice(8)) {
      if (s.startsWith("[")) continue;
      const [a, b] = s.split("-");
      slots.push([Number(a), Number(b ?? a)]);
    }
    out.push({
      id: f[0]!,
      flags: f[2]!.split(",").filter((x) => x !== "myself"),
      primaryId: f[3] === "-" ? undefined : f[3],
      link: f[7]!,
      slots,
    });
  }
  return out;
}

/** Node id -> `health` from a `CLUSTER SHARDS` reply (RESP2 or RESP3). */
export function shardHealth(reply: RespValue): Map<string, string> {
  const out = new Map<string, string>();
  const field = (v: RespValue, name: string): RespValue | undefined => {
    if (v instanceof Map) return v.get(name);
    if (Array.isArray(v)) {
      for (let i = 0; i + 1 < v.length; i += 2) if (text(v[i]!) === name) return v[i + 1];
    }
    return undefined;
  };
  for (const shard of Array.isArray(reply) ? reply : []) {
    const nodes = field(shard, "nodes");
    for (const n of Array.isArray(nodes) ? nodes : []) {
      const id = field(n, "id");
      const health = field(n, "health");
      if (id !== undefined && health !== undefined) out.set(text(id), text(health));
    }
  }
  return out;
}

/** A reply value as text. */
export function text(v: RespValue): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return String(v);
}
