// Combining the replies of several nodes by a command's response policy (the command tips of
// redis-server), and re-assembling a command split per slot.
import type { ResponsePolicy } from "../commands/command_keys.ts";
import { RedisError } from "../errors.ts";
import type { RespValue } from "../resp/types.ts";

function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  const n = Number(v);
  if (Number.isNaN(n)) {
    throw new RedisError(`Cannot aggregate the replies: expected numbers, got ${String(v)}`);
  }
  return n;
}

function elementwise(
  replies: unknown[],
  combine: (a: number, b: number) => number,
): unknown {
  const first = replies[0];
  if (Array.isArray(first)) {
    const out = first.map(toNumber);
    for (const r of replies.slice(1)) {
      if (!Array.isArray(r) || r.length !== out.length) {
        throw new RedisError(
          "Cannot aggregate the replies: the nodes replied arrays of different lengths",
        );
      }
      r.forEach((v, i) => (out[i] = combine(out[i]!, toNumber(v))));
    }
    return out;
  }
  let acc = toNumber(first);
  for (const r of replies.slice(1)) acc = combine(acc, toNumber(r));
  return acc;
}

/**
 * Combines the successful replies of every node asked (`all_shards` / `all_nodes` commands).
 * Errors are handled by the caller (`one_succeeded` needs one success, the others all).
 *
 * @param replies The raw replies, one per node (at least one).
 * @param policy The response policy tip; without one, arrays are concatenated, maps and sets
 *   merged, and anything else is the first reply.
 * @returns The combined raw reply.
 */
export function aggregateReplies(replies: unknown[], policy: ResponsePolicy | undefined): unknown {
  switch (policy) {
    case "agg_sum":
      return elementwise(replies, (a, b) => a + b);
    case "agg_min":
      return elementwise(replies, Math.min);
    case "agg_max":
      return elementwise(replies, Math.max);
    case "agg_logical_and":
      return elementwise(replies, (a, b) => (a && b ? 1 : 0));
    case "agg_logical_or":
      return elementwise(replies, (a, b) => (a || b ? 1 : 0));
    case "one_succeeded":
    case "all_succeeded":
    case "special":
      return replies[0];
    default: {
      const first = replies[0];
      if (Array.isArray(first)) return replies.flatMap((r) => (Array.isArray(r) ? r : [r]));
      if (first instanceof Map) {
        const out = new Map<RespValue, RespValue>();
        for (const r of replies) if (r instanceof Map) { for (const [k, v] of r) out.set(k, v); }
        return out;
      }
      if (first instanceof Set) {
        const out = new Set<RespValue>();
        for (const r of replies) if (r instanceof Set) { for (const v of r) out.add(v); }
        return out;
      }
      return first;
    }
  }
}
