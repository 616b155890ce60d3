// Fan-out: a keyless command sent to every primary (or node) by its request policy and the
// replies combined by its response policy (`_aggregate.ts`), and a cross-slot command split
// into one command per slot and merged back in key order.
import type { Transform } from "../commands/command_runner.ts";
import type { CommandPolicy } from "../commands/command_keys.ts";
import { commandPolicy } from "../commands/command_keys.ts";
import { FLAG_ERRORS_AS_VALUES } from "../command_flags.ts";
import { RedisError } from "../errors.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { aggregateReplies } from "./_aggregate.ts";
import { type ClusterContext, nameOf, rangesOfSlots } from "./_context.ts";
import type { RedirectPolicy } from "./_redirect_policy.ts";
import type { TopologyHolder } from "./_topology_holder.ts";
import { keySlot } from "./slot.ts";

/**
 * Commands spread over several nodes; each part is redirected and retried on its own.
 *
 * @example
 * ```ts ignore
 * await fanOut.all(["DBSIZE"], undefined, 0, undefined, commandPolicy(["DBSIZE"])!); // summed
 * ```
 */
export class FanOut {
  readonly #ctx: ClusterContext;
  readonly #holder: TopologyHolder;
  readonly #policy: RedirectPolicy;

  /**
   * @param ctx The client's shared state.
   * @param holder The topology (the primaries and replicas asked).
   * @param policy Sends each part.
   */
  constructor(ctx: ClusterContext, holder: TopologyHolder, policy: RedirectPolicy) {
    this.#ctx = ctx;
    this.#holder = holder;
    this.#policy = policy;
  }

  /** A command whose keys hash to several slots: split per slot (`multi_shard`), or refused. */
  crossSlot(
    args: RedisArgument[],
    idx: number[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
  ): Promise<unknown> {
    const policy = commandPolicy(args);
    const asValue = (flags & FLAG_ERRORS_AS_VALUES) !== 0;
    const slots = new Map<number, number[]>();
    idx.forEach((pos, k) => {
      const s = keySlot(args[pos]!);
      const list = slots.get(s);
      if (list) list.push(k);
      else slots.set(s, [k]);
    });
    if (policy?.request !== "multi_shard" || this.#ctx.options.crossSlot === "refuse") {
      const e = new TypeError(
        `Cannot send "${nameOf(args)}": its keys hash to different slots (${
          rangesOfSlots(slots.keys())
        }); put them in one slot with a hash tag such as "{user1}"`,
      );
      return asValue ? Promise.resolve(e) : Promise.reject(e);
    }
    // One command per slot: the arguments before the first key, then each key with the
    // arguments that follow it up to the next key (MSET's values).
    const step = idx.length > 1 ? idx[1]! - idx[0]! : 1;
    const head = args.slice(0, idx[0]!);
    const parts: { keys: number[]; promise: Promise<unknown> }[] = [];
    const p = this.#policy;
    for (const [slot, keys] of slots) {
      const sub: RedisArgument[] = [...head];
      for (const k of keys) {
        const at = idx[k]!;
        for (let j = 0; j < step; j++) sub.push(args[at + j]!);
      }
      const job = p.job(
        sub,
        undefined,
        flags & ~FLAG_ERRORS_AS_VALUES,
        undefined,
        timeout,
        slot,
        undefined,
      );
      parts.push({ keys, promise: p.send(job) });
    }
    const merged = Promise.all(parts.map((p) => p.promise)).then((replies) => {
      let value: unknown;
      if (policy.response === "agg_sum") value = aggregateReplies(replies, "agg_sum");
      else if (policy.response === "all_succeeded" || policy.response === "one_succeeded") {
        value = replies[0];
      } else {
        const out: unknown[] = new Array(idx.length);
        parts.forEach((p, i) => {
          const r = replies[i];
          if (!Array.isArray(r)) {
            throw new RedisError(`Cannot merge the replies of "${nameOf(args)}": expected arrays`);
          }
          p.keys.forEach((k, j) => (out[k] = r[j]));
        });
        value = out;
      }
      return transform ? transform(value as RespValue) : value;
    });
    return asValue ? merged.catch((e) => e) : merged;
  }

  /**
   * A keyless command for every primary (`all_shards`) or every node (`all_nodes`). RANDOMKEY
   * answers a key of a random primary among those that have one (`null` only when none has).
   */
  all(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
    policy: CommandPolicy,
  ): Promise<unknown> {
    const asValue = (flags & FLAG_ERRORS_AS_VALUES) !== 0;
    const h = this.#holder;
    const t = h.topology;
    const targets = h.primaryAddresses();
    if (policy.request === "all_nodes") {
      for (const i of h.primaries) {
        for (const r of t.replicas[i] ?? []) targets.push(t.nodes[r]!.address);
      }
    }
    const p = this.#policy;
    const run = Promise.allSettled(
      targets.map((a) =>
        p.send(p.job(args, undefined, flags & ~FLAG_ERRORS_AS_VALUES, undefined, timeout, -1, a))
      ),
    ).then((settled) => {
      const ok = settled.filter((s) => s.status === "fulfilled").map((s) =>
        (s as PromiseFulfilledResult<unknown>).value
      );
      const failed = settled.find((s) => s.status === "rejected") as
        | PromiseRejectedResult
        | undefined;
      if (targets.length === 0) {
        throw new RedisError(`Cannot send "${nameOf(args)}": no primary serves any slot`);
      }
      if (policy.name === "randomkey") {
        // A key of any primary that has one (each primary picks its own at random).
        const keys = ok.filter((v) => v !== null);
        if (keys.length > 0) {
          const value = keys[Math.floor(Math.random() * keys.length)];
          return transform ? transform(value as RespValue) : value;
        }
      }
      if (policy.response === "one_succeeded") {
        if (ok.length === 0) throw failed!.reason;
      } else if (failed) throw failed.reason;
      const value = aggregateReplies(ok, policy.response);
      return transform ? transform(value as RespValue) : value;
    });
    return asValue ? run.catch((e) => e) : run;
  }
}
