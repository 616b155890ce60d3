// The redirect policy: the one place that decides what a failed attempt becomes — MOVED (patch
// the table, send again), ASK (one attempt behind ASKING, table unchanged), TRYAGAIN /
// CLUSTERDOWN / LOADING / MASTERDOWN (pause, send again), a command that never left the client
// (send again) — and that holds the retry budget (maxAttempts, maxTotalRetriesDuration) and the
// pause. Single commands (and so each command of a pipeline, of a cross-slot split and of a
// fan-out) go through `send`; transactions, WATCH and subscriptions through `run`.
import type { TimerId } from "../_clock.ts";
import type { NodeExecutor } from "../client/node_executor.ts";
import { FLAG_BLOCKING, type Transform } from "../commands/command_runner.ts";
import { FLAG_ERRORS_AS_VALUES } from "../command_flags.ts";
import { ClosedError, ConnectionError, RedisError, ReplyError, TimeoutError } from "../errors.ts";
import { endpointKeyOf } from "../maintenance/endpoint.ts";
import type { Endpoint as HostPort } from "../endpoint.ts";
import type { RedisArgument } from "../resp/types.ts";
import { type ClusterContext, nameOf } from "./_context.ts";
import type { NodeMap } from "./_node_map.ts";
import { isRetryableRefusal, parseRedirect } from "./_redirect.ts";
import type { Router } from "./_router.ts";
import type { TopologyHolder } from "./_topology_holder.ts";
import { NO_NODE } from "./topology.ts";

/** One command (or transaction, WATCH, subscription) on its way through redirections and retries. */
export interface Job {
  args: RedisArgument[];
  transform: Transform | undefined;
  /** Flags for the connection (never `FLAG_ERRORS_AS_VALUES`). */
  flags: number;
  blockMs: number | undefined;
  timeout: number | undefined;
  /** The key slot, or -1 for a keyless command. */
  slot: number;
  /** A node the command must run on (fan-out, keyless pick), or `undefined`. */
  node: string | undefined;
  /** The `ASK` target of the next attempt. */
  asking: string | undefined;
  attempts: number;
  start: number;
  /** The caller takes errors as values (pipelines). */
  asValue: boolean;
  /** The last node tried. */
  last: string | undefined;
}

/**
 * What the policy decided about a failed attempt: send again now (the job says where), after a
 * pause, after a promise (shard subscriptions of a moved slot moving), or give up.
 */
export type Verdict = "now" | "pause" | "fail" | Promise<void>;

/** What differs between the kinds of work the policy retries. */
export interface RetryRules {
  /**
   * `"follow"`: the next attempt goes to the `ASK` target behind `ASKING` (one command);
   * `"wait"`: a pause, then the slot's owner again (work that cannot be sent behind `ASKING`:
   * a transaction, a subscription); `"fail"`: given up at once (a WATCH: the session's later
   * commands could not follow it, and waiting out a migration would hold the caller for the
   * whole retry budget).
   */
  ask: "follow" | "wait" | "fail";
  /** Whether work that never left the client after a connection error is sent again. */
  unwritten: boolean;
  /**
   * Whether the shard subscriptions of the slot follow the redirect (opened ahead on an `ASK`
   * target, moved on a `MOVED`, the next attempt waiting for that move). Not for work that is
   * itself part of a subscription's move (it would wait for itself).
   */
  shardMoves: boolean;
}

/** Commands: `ASK` followed, unwritten work sent again, shard subscriptions follow. */
export const COMMAND_RULES: RetryRules = { ask: "follow", unwritten: true, shardMoves: true };
/** Transactions: `ASK` waited out, unwritten work sent again, shard subscriptions follow. */
export const TRANSACTION_RULES: RetryRules = { ask: "wait", unwritten: true, shardMoves: true };
/** Subscriptions: `ASK` waited out, unwritten work sent again. */
export const SUBSCRIBE_RULES: RetryRules = { ask: "wait", unwritten: true, shardMoves: false };
/** WATCH: `ASK` fails it at once; a lost connection fails it (the caller's reads were on it). */
export const WATCH_RULES: RetryRules = { ask: "fail", unwritten: false, shardMoves: false };

/** What the policy asks of the shard subscriptions. */
export interface RedirectHooks {
  /** Slots whose shard subscriptions are moving: commands for them wait (no message gap). */
  readonly slotMoves: ReadonlyMap<number, Promise<unknown>>;
  /** An `ASK` for `slot`: its shard subscriptions are opened ahead on `to`. */
  migrating(slot: number, to: string): void;
  /** A `MOVED` for `slot`: its shard subscriptions move; `undefined` when none does. */
  moved(slot: number): Promise<void> | undefined;
}

/**
 * The pause before the next attempt: the time left spread over the attempts left (longer as
 * they run out), at least 10 ms, never past the time left.
 *
 * @param left Milliseconds left of `maxTotalRetriesDuration`.
 * @param attemptsLeft Attempts left of `maxAttempts` (at least 1).
 * @returns Milliseconds to wait.
 *
 * @example
 * ```ts ignore
 * retryPause(10_000, 4); // 500
 * retryPause(4, 5); // 4: never past the time left
 * ```
 */
export function retryPause(left: number, attemptsLeft: number): number {
  const n = Math.max(1, attemptsLeft);
  return Math.max(0, Math.min(left, Math.max(10, Math.floor(left / (n * (n + 1))))));
}

/** A failed attempt whose caller keeps more than the error (a transaction's replies). */
export class Refusal<T> {
  /** The error the policy decides on. */
  readonly error: unknown;
  /** What the caller finishes with when the policy gives up. */
  readonly value: T;
  /**
   * @param error The error the policy decides on.
   * @param value What the caller finishes with when the policy gives up.
   */
  constructor(error: unknown, value: T) {
    this.error = error;
    this.value = value;
  }
}

interface RetryTimer {
  id: TimerId;
  fail: () => void;
}

/**
 * Whether work failed without leaving the client (a connection error before it was written).
 *
 * @param e The error.
 * @returns `true` when sending it again cannot run it twice.
 */
export function isUnwritten(e: unknown): boolean {
  return (e instanceof ConnectionError || e instanceof TimeoutError || e instanceof ClosedError) &&
    e.written === false;
}

/**
 * Whether a node refused work without running it: a redirect (`MOVED`, `ASK`) or a retryable
 * refusal (`TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `MASTERDOWN`).
 *
 * @param e The error.
 * @param from The node that replied.
 * @returns `true` when the policy may send the work again.
 */
export function isRefusal(e: unknown, from: HostPort): boolean {
  return e instanceof ReplyError && (parseRedirect(e, from) !== undefined || isRetryableRefusal(e));
}

const closedError = () =>
  new ClosedError("Cannot send the command: the client is closed", { written: false });

/**
 * Redirections, retries, their budget and their pause.
 *
 * @example A command, and work run by its caller
 * ```ts ignore
 * await policy.send(policy.job(["GET", "k"], undefined, 0, undefined, undefined, keySlot("k"), undefined));
 * await policy.run(job, WATCH_RULES, () => router.target(job), noNode, (node) => node.watch(keys));
 * ```
 */
export class RedirectPolicy {
  readonly #ctx: ClusterContext;
  readonly #holder: TopologyHolder;
  readonly #nodes: NodeMap;
  readonly #router: Router;
  readonly #hooks: RedirectHooks;
  /** Attempts waiting for their pause to end (failed by `close`). */
  readonly #retries = new Set<RetryTimer>();

  /**
   * @param ctx The client's shared state.
   * @param holder The topology (patched on `MOVED`, refreshed on refusals).
   * @param nodes The node map.
   * @param router Where a job's next attempt goes.
   * @param hooks The shard subscriptions' part in redirections.
   */
  constructor(
    ctx: ClusterContext,
    holder: TopologyHolder,
    nodes: NodeMap,
    router: Router,
    hooks: RedirectHooks,
  ) {
    this.#ctx = ctx;
    this.#holder = holder;
    this.#nodes = nodes;
    this.#router = router;
    this.#hooks = hooks;
  }

  /** A new job; its retry budget counts from now. */
  job(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
    slot: number,
    node: string | undefined,
  ): Job {
    return {
      args,
      transform,
      flags: flags & ~FLAG_ERRORS_AS_VALUES,
      blockMs,
      timeout,
      slot,
      node,
      asking: undefined,
      attempts: 0,
      start: this.#ctx.clock.now(),
      asValue: (flags & FLAG_ERRORS_AS_VALUES) !== 0,
      last: undefined,
    };
  }

  /** Whether the budget allows another attempt. */
  canRetry(job: Job): boolean {
    const ctx = this.#ctx;
    return !ctx.closed && job.attempts < ctx.options.maxAttempts &&
      ctx.clock.now() - job.start < ctx.options.maxTotalRetriesDuration;
  }

  /**
   * Decides what a failed attempt becomes. The only place redirect replies, refusals and
   * connection errors are read; it counts them, patches the table on `MOVED`, and updates the
   * job for its next attempt.
   *
   * @param job The job.
   * @param e What the attempt failed with.
   * @param node The node it ran on.
   * @param address That node's address.
   * @param rules What this kind of work may do.
   * @returns The verdict.
   */
  decide(job: Job, e: unknown, node: NodeExecutor, address: string, rules: RetryRules): Verdict {
    const ctx = this.#ctx;
    if (e instanceof ReplyError) {
      const r = parseRedirect(e, node.endpoint);
      if (r !== undefined) {
        if (!this.canRetry(job)) return "fail";
        const to = ctx.map(r.to);
        const target = endpointKeyOf(to);
        if (ctx.metrics?.resiliency) {
          ctx.metrics.internalError(e, {
            "redis.client.redirection.kind": r.ask ? "ask" : "moved",
            "redis.client.operation.retry_attempts": job.attempts,
          });
        }
        if (r.ask) {
          ctx.stats.ask++;
          if (rules.ask === "fail") return "fail";
          this.#nodes.executor(target, to.host, to.port);
          if (rules.shardMoves) this.#hooks.migrating(r.slot, target);
          if (rules.ask === "wait") return "pause";
          job.asking = target;
          return "now";
        }
        ctx.stats.moved++;
        job.node = undefined;
        // The server's slot wins (a command whose keys the table does not know).
        job.slot = r.slot;
        this.#holder.patch(r.slot, to);
        return (rules.shardMoves ? this.#hooks.moved(r.slot) : undefined) ?? "now";
      }
      if (isRetryableRefusal(e)) {
        ctx.stats.refused++;
        if (e.prefix === "CLUSTERDOWN" || e.prefix === "MASTERDOWN") this.#holder.scheduleRefresh();
        return "pause";
      }
      return "fail";
    }
    const letGo = node.closed && !this.#nodes.has(address);
    if ((e instanceof ConnectionError || e instanceof ClosedError) && !letGo) {
      // Only the shared connection's health says a node is down: an exclusive connection
      // refused (maxclients for a BLPOP, a WATCH) while the shared one serves does not.
      if (e instanceof ConnectionError && node.shared?.ready !== true) {
        this.#nodes.down.set(address, e);
      }
      this.#holder.scheduleRefresh();
    }
    if (rules.unwritten && isUnwritten(e) && !ctx.closed) {
      ctx.stats.unwrittenRetries++;
      if (
        letGo && job.node === undefined && job.slot >= 0 &&
        job.asking === undefined && this.canRetry(job)
      ) {
        // Not written by a node this client let go (its slots moved): to the new owner now.
        return "now";
      }
      return "pause";
    }
    return "fail";
  }

  // ------------------------------------------------------------------ single commands

  /** The first attempt of a command failed: the job is made now, with one attempt spent. */
  retryFirst(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
    slot: number,
    e: unknown,
    node: NodeExecutor,
    address: string,
  ): unknown {
    const job = this.job(args, transform, flags, blockMs, timeout, slot, undefined);
    job.attempts = 1;
    job.last = address;
    return this.#onError(job, e, node, address);
  }

  /** Sends a command's next attempt, and the ones after it until it succeeds or gives up. */
  send(job: Job): Promise<unknown> {
    let node: NodeExecutor;
    let address: string;
    const slotMoves = this.#hooks.slotMoves;
    if (slotMoves.size !== 0 && job.slot >= 0) {
      // A shard subscription of this slot is moving: SPUBLISH and friends wait until the new
      // owner confirmed it, so no message of this client falls between the two.
      const moving = slotMoves.get(job.slot);
      if (moving) return moving.then(() => this.send(job));
    }
    if (job.asking === undefined && job.node === undefined && job.slot >= 0) {
      // The common case: a keyed command to the slot's node (cached executor).
      const t = this.#holder.topology;
      const i = t.slots[job.slot]!;
      if (i === NO_NODE) {
        job.attempts++;
        this.#holder.scheduleRefresh();
        return this.#later(
          job,
          new RedisError(
            `Cannot send "${nameOf(job.args)}": ${this.#holder.noNodeServes(job.slot)}`,
          ),
        );
      }
      const k = this.#router.readIndex(i, job.flags);
      address = t.nodes[k]!.address;
      node = this.#nodes.at(k);
    } else {
      const a = this.#router.target(job);
      if (a === undefined) {
        job.attempts++;
        this.#holder.scheduleRefresh();
        return this.#later(
          job,
          new RedisError(`Cannot send "${nameOf(job.args)}": no primary serves any slot`),
        );
      }
      address = a;
      node = this.#nodes.executor(a);
    }
    const down = this.#nodes.down;
    if (job.asking === undefined && down.size > 0 && down.has(address)) {
      // Do not queue behind a connection that is down: wait for the topology to change.
      job.attempts++;
      job.last = address;
      this.#holder.scheduleRefresh();
      return this.#later(job, down.get(address)!);
    }
    job.attempts++;
    job.last = address;
    let p: Promise<unknown>;
    if (job.asking !== undefined) {
      job.asking = undefined;
      const [asking, command] = node.sendAll([
        { args: ["ASKING"], transform: undefined, flags: 0 },
        { args: job.args, transform: job.transform, flags: job.flags & ~FLAG_BLOCKING },
      ]);
      // Its outcome is the command's (a node that is down fails both): never left unhandled.
      asking!.catch(() => {});
      p = command!;
    } else {
      p = node.run(job.args, job.transform, job.flags, job.blockMs, job.timeout);
    }
    return p.then(undefined, (e) => this.#onError(job, e, node, address));
  }

  #onError(job: Job, e: unknown, node: NodeExecutor, address: string): unknown {
    const v = this.decide(job, e, node, address, COMMAND_RULES);
    if (v === "now") return this.send(job);
    if (v === "pause") return this.#later(job, e);
    if (v === "fail") return this.#fail(job, e);
    return v.then(() => this.send(job));
  }

  /** Gives up: the error, said better when the node was unreachable throughout. */
  #fail(job: Job, e: unknown): unknown {
    let error = e;
    const down = this.#nodes.down;
    if (
      job.last !== undefined && down.has(job.last) &&
      (e instanceof TimeoutError || e instanceof ClosedError || e instanceof ConnectionError) &&
      e.written === false
    ) {
      // Retries ran out while the node was unreachable: say so.
      const cause = down.get(job.last)!;
      error = new ConnectionError(
        `Cannot send "${
          nameOf(job.args)
        }" to "${job.last}": the node is unreachable (${cause.message})${
          this.#nodes.reached(job.last)
            ? ""
            : "; if the cluster announces addresses this client cannot reach, set nodeAddressMap"
        }`,
        { cause, written: false },
      );
    }
    if (job.asValue) return error;
    throw error;
  }

  /** Sends again after a pause, or gives up when the budget is spent. */
  #later(job: Job, e: unknown): Promise<unknown> {
    if (!this.canRetry(job)) {
      try {
        return Promise.resolve(this.#fail(job, e));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise((resolve, reject) => {
      this.#wait(job, () => this.send(job).then(resolve, reject), () => {
        try {
          resolve(this.#fail(job, closedError()));
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  // ------------------------------------------------------------------ work run by its caller

  /**
   * Runs work that is not a single command (a transaction, a WATCH, a subscription) until it
   * succeeds or the policy gives up: each attempt on the node `target` names, each failure
   * decided by {@linkcode RedirectPolicy.decide}.
   *
   * @param job The job (its budget).
   * @param rules What this kind of work may do.
   * @param target The node of the next attempt, or `undefined` when none serves it.
   * @param noNode The error when no node serves it.
   * @param attempt One attempt; it throws the error (or a {@linkcode Refusal}) to decide on.
   * @returns What the attempt returned; rejects with what the last attempt threw.
   */
  async run<T>(
    job: Job,
    rules: RetryRules,
    target: () => string | undefined,
    noNode: () => Error,
    attempt: (node: NodeExecutor, address: string) => Promise<T>,
  ): Promise<T> {
    for (;;) {
      const address = target();
      if (address === undefined) {
        job.attempts++;
        this.#holder.scheduleRefresh();
        await this.pause(job, noNode());
        continue;
      }
      job.attempts++;
      job.last = address;
      const node = this.#nodes.executor(address);
      try {
        return await attempt(node, address);
      } catch (thrown) {
        const e = thrown instanceof Refusal ? thrown.error : thrown;
        const v = this.decide(job, e, node, address, rules);
        if (v === "fail") throw thrown;
        if (v === "pause") await this.pause(job, thrown);
        else if (v !== "now") await v;
      }
    }
  }

  /**
   * Waits before the next attempt of a job run by its caller.
   *
   * @returns Resolves after the pause; rejects with `e` when the budget is spent, with
   *   `ClosedError` when the client closes meanwhile.
   */
  pause(job: Job, e: unknown): Promise<void> {
    if (!this.canRetry(job)) return Promise.reject(e);
    return new Promise((resolve, reject) => this.#wait(job, resolve, () => reject(closedError())));
  }

  #wait(job: Job, then: () => void, fail: () => void): void {
    const ctx = this.#ctx;
    const left = ctx.options.maxTotalRetriesDuration - (ctx.clock.now() - job.start);
    const ms = retryPause(left, ctx.options.maxAttempts - job.attempts);
    const entry: RetryTimer = { id: undefined, fail };
    entry.id = ctx.clock.setTimer(() => {
      this.#retries.delete(entry);
      then();
    }, ms);
    this.#retries.add(entry);
  }

  /** Fails every attempt waiting for its pause (the client closes). */
  close(): void {
    for (const r of [...this.#retries]) {
      this.#ctx.clock.clearTimer(r.id);
      this.#retries.delete(r);
      r.fail();
    }
  }
}
