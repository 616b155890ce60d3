// Transactions and WATCH on a cluster: every key in one slot, run on that slot's primary, and
// run again there whole when the slot moved before EXEC (retries decided by the redirect
// policy).
import type { GroupCommand } from "../client/node_executor.ts";
import type { WatchSession } from "../client/watch_session.ts";
import { commandKeyIndexes } from "../commands/command_keys.ts";
import { RedisError, ReplyError } from "../errors.ts";
import type { RedisArgument } from "../resp/types.ts";
import { rangesOfSlots } from "./_context.ts";
import {
  isRefusal,
  isUnwritten,
  type RedirectPolicy,
  Refusal,
  TRANSACTION_RULES,
  WATCH_RULES,
} from "./_redirect_policy.ts";
import type { Router } from "./_router.ts";
import type { TopologyHolder } from "./_topology_holder.ts";
import { keySlot } from "./slot.ts";

/** The slot of a transaction's commands, -1 for none, a `TypeError` for several. */
function slotOfCommands(commands: readonly { args: RedisArgument[] }[]): number | TypeError {
  const slots = new Set<number>();
  for (const c of commands) {
    const idx = commandKeyIndexes(c.args, true);
    if (idx === undefined) continue;
    for (const i of idx) slots.add(keySlot(c.args[i]!));
  }
  if (slots.size > 1) {
    return new TypeError(
      `Cannot run the transaction: its keys hash to different slots (${
        rangesOfSlots(slots)
      }); put them in one slot with a hash tag such as "{user1}"`,
    );
  }
  return slots.size === 0 ? -1 : [...slots][0]!;
}

function isUnwrittenResult(r: PromiseSettledResult<unknown>): boolean {
  return r.status === "rejected" && isUnwritten(r.reason);
}

/**
 * Runs `MULTI ... EXEC` groups and borrows connections for `WATCH`.
 *
 * @example
 * ```ts ignore
 * const [multi, set, exec] = transactions.send([
 *   { args: ["MULTI"], transform: undefined, flags: 0 },
 *   { args: ["SET", "{u}.a", "1"], transform: undefined, flags: 0 },
 *   { args: ["EXEC"], transform: undefined, flags: 0 },
 * ]);
 * ```
 */
export class Transactions {
  readonly #holder: TopologyHolder;
  readonly #router: Router;
  readonly #policy: RedirectPolicy;

  /**
   * @param holder The topology (discovered first).
   * @param router The slot's node.
   * @param policy Decides every retry.
   */
  constructor(holder: TopologyHolder, router: Router, policy: RedirectPolicy) {
    this.#holder = holder;
    this.#router = router;
    this.#policy = policy;
  }

  /**
   * Sends a transaction (`MULTI`, the commands, `EXEC`) to its slot's node.
   *
   * @param commands The group, `MULTI` first and `EXEC` last.
   * @returns One promise per command.
   */
  send(commands: GroupCommand[]): Promise<unknown>[] {
    const settle: { resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
    const promises = commands.map(() =>
      new Promise<unknown>((resolve, reject) => settle.push({ resolve, reject }))
    );
    const slot = slotOfCommands(commands.slice(1, -1));
    const finish = (results: PromiseSettledResult<unknown>[]) => {
      results.forEach((r, i) => {
        if (r.status === "fulfilled") settle[i]!.resolve(r.value);
        else settle[i]!.reject(r.reason);
      });
    };
    const failAll = (e: unknown) => finish(commands.map(() => ({ status: "rejected", reason: e })));
    if (slot instanceof TypeError) {
      failAll(slot);
      return promises;
    }
    const p = this.#policy;
    const job = p.job(["MULTI"], undefined, 0, undefined, undefined, slot, undefined);
    // With the topology known, the group is queued on its node now, in this tick: a command
    // issued after exec() is sent after the transaction, as on one connection.
    const run = () =>
      p.run(
        job,
        TRANSACTION_RULES,
        () => this.#router.target(job),
        () => new RedisError(`Cannot run the transaction: ${this.#holder.noNodeServes(slot)}`),
        async (node) => {
          const results = await Promise.allSettled(node.sendAll(commands));
          // A refusal before EXEC (the queued commands were answered with a redirect): run the
          // whole transaction again where the slot is now.
          const refusal = results.slice(0, -1).map((r) =>
            r.status === "rejected" ? r.reason : undefined
          ).find((e) => isRefusal(e, node.endpoint));
          if (refusal !== undefined && results[results.length - 1]!.status === "rejected") {
            throw new Refusal(refusal, results);
          }
          if (results.every(isUnwrittenResult)) {
            throw new Refusal((results[0] as PromiseRejectedResult).reason, results);
          }
          return results;
        },
      );
    (this.#holder.ready ? run() : this.#holder.discover().then(run)).then(finish, (e) => {
      if (e instanceof Refusal) finish(e.value as PromiseSettledResult<unknown>[]);
      else failAll(e);
    });
    return promises;
  }

  /**
   * Borrows an exclusive connection of the node serving the keys and `WATCH`es them on it.
   *
   * @param keys The keys to watch (one slot).
   * @returns The session.
   */
  async watch(keys: RedisArgument[]): Promise<WatchSession> {
    if (keys.length === 0) throw new TypeError("Cannot watch: no key given");
    const slots = new Set(keys.map((k) => keySlot(k)));
    if (slots.size > 1) {
      throw new TypeError(
        `Cannot watch: the keys hash to different slots (${
          rangesOfSlots(slots)
        }); put them in one slot with a hash tag such as "{user1}"`,
      );
    }
    await this.#holder.discover();
    const slot = [...slots][0]!;
    const p = this.#policy;
    const job = p.job(["WATCH"], undefined, 0, undefined, undefined, slot, undefined);
    return p.run(
      job,
      WATCH_RULES,
      () => this.#router.target(job),
      () => new RedisError(`Cannot watch: ${this.#holder.noNodeServes(slot)}`),
      (node) => node.watch(keys),
    ).catch((e) => {
      if (!(e instanceof ReplyError) || e.prefix !== "ASK") throw e;
      // WATCH cannot follow ASK: the session's later commands would meet the same redirect.
      throw new RedisError(
        `Cannot watch: slot ${slot} is migrating (${e.message}); retry once the migration has ended`,
        { cause: e },
      );
    });
  }
}
