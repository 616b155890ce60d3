/**
 * Pipelines (a batch of commands, results as values) and transactions (`MULTI`/`EXEC`).
 *
 * @module
 */

import { RedisCommands } from "../commands/commands.ts";
import { FLAG_RAW, type Transform } from "../commands/_command.ts";
import { FLAG_ERRORS_AS_VALUES } from "../connection/connection.ts";
import { RedisError, ReplyError } from "../errors.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";

/** Sends one command; supplied by the client that created the batch. */
export type BatchSender = (
  args: RedisArgument[],
  transform: Transform | undefined,
  flags: number,
  blockMs?: number,
) => Promise<unknown>;

/** Sends the commands of a transaction together: all queued, or all rejected. */
export type TransactionSender = (
  commands: { args: RedisArgument[]; transform: Transform | undefined; flags: number }[],
) => Promise<unknown>[];

/** @internal One recorded command. */
export interface QueuedCommand {
  args: RedisArgument[];
  transform: Transform | undefined;
  flags: number;
  blockMs: number | undefined;
}

/**
 * The typed command methods of a batch: same names and parameters as the client's, each
 * returning the batch itself for chaining.
 */
export type ChainedCommands<Self> = {
  [
    K in keyof RedisCommands<string> as RedisCommands<string>[K] extends
      (...args: never[]) => Promise<unknown> ? (K extends PipelineExcluded ? never : K) : never
  ]: RedisCommands<string>[K] extends (...args: infer A) => Promise<unknown> ? (...args: A) => Self
    : never;
};

/** Methods that are not one command with one reply, hence not available in a batch. */
export type PipelineExcluded = "evalScript";

const EXCLUDED = new Set<string>(["constructor", "_run", "evalScript"]);

function installCommands(target: { prototype: object }): void {
  const src = RedisCommands.prototype as unknown as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(src)) {
    if (EXCLUDED.has(name)) continue;
    const d = Object.getOwnPropertyDescriptor(src, name);
    if (d && typeof d.value === "function") {
      Object.defineProperty(target.prototype, name, { ...d, enumerable: false });
    }
  }
}

/**
 * What pipelines and transactions share: the recorded commands and `sendCommand`.
 *
 * @example
 * ```ts ignore
 * import { type Batch, RedisClient } from "@edge/redis";
 * const client = new RedisClient();
 * const batch: Batch = client.pipeline().set("k", "v");
 * console.log(batch.length); // 1
 * ```
 */
export abstract class Batch {
  /** @internal */
  readonly _queue: QueuedCommand[] = [];
  /** @internal */
  readonly _send: BatchSender;

  /** @internal */
  constructor(send: BatchSender) {
    this._send = send;
  }

  /** @internal Records a command. */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): this {
    this._queue.push({ args, transform, flags, blockMs });
    return this;
  }

  /** The number of commands recorded. */
  get length(): number {
    return this._queue.length;
  }

  /**
   * Adds any command, e.g. one without a typed method.
   *
   * @param args The command and its arguments.
   * @returns The batch, for chaining.
   */
  sendCommand(args: RedisArgument[]): this {
    // FLAG_RAW: the connection refuses commands that would change its state for every caller.
    return this._run(args, undefined, FLAG_RAW);
  }
}

/**
 * A pipeline: commands recorded with the typed methods, sent together in one write by
 * `exec()`. Not atomic. Results come back in order, one per command; a command that failed
 * yields its `ReplyError` as a value instead of rejecting the whole batch.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * const client = new RedisClient();
 * const [ok, value] = await client.pipeline().set("x", "1").get("x").exec();
 * ```
 */
export interface Pipeline extends ChainedCommands<Pipeline> {}
/** A pipeline: see the interface of the same name. */
export class Pipeline extends Batch {
  /**
   * Sends every recorded command.
   *
   * @returns One result per command, in order: the transformed reply or a `ReplyError`.
   */
  exec(): Promise<unknown[]> {
    const q = this._queue.splice(0);
    // Errors arrive as values (no second promise per command to catch them).
    return Promise.all(
      q.map((c) => this._send(c.args, c.transform, c.flags | FLAG_ERRORS_AS_VALUES, c.blockMs)),
    );
  }
}
installCommands(Pipeline);

/**
 * A transaction: `MULTI`, the recorded commands, `EXEC`, written together so nothing
 * interleaves. Atomic on the server. `exec()` resolves with one result per command (a
 * `ReplyError` value for a command that failed at run time), or `null` when a `WATCH`ed key
 * changed; it rejects when the server refused to queue a command (`EXECABORT`).
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * const client = new RedisClient();
 * const [n, m] = await client.multi().incr("a").incr("a").exec() ?? [];
 * ```
 */
export interface Transaction extends ChainedCommands<Transaction> {}
/** A transaction: see the interface of the same name. */
export class Transaction extends Batch {
  readonly #onDone: (() => void) | undefined;
  readonly #sendAll: TransactionSender;

  /** @internal */
  constructor(sendAll: TransactionSender, onDone?: () => void) {
    super((args, transform, flags) => sendAll([{ args, transform, flags }])[0]!);
    this.#sendAll = sendAll;
    this.#onDone = onDone;
  }

  /**
   * Runs the transaction.
   *
   * @returns The results, or `null` when the transaction was aborted by `WATCH`.
   */
  async exec(): Promise<unknown[] | null> {
    const q = this._queue.splice(0);
    const transforms = q.map((c) => c.transform);
    const exec = (reply: RespValue) => {
      if (reply === null) return null;
      if (!Array.isArray(reply)) {
        throw new RedisError(`Cannot read the EXEC reply: expected an array`);
      }
      return reply.map((v, i) => {
        if (v instanceof ReplyError) return v;
        const t = transforms[i];
        if (t === undefined) return v;
        try {
          return t(v);
        } catch (e) {
          return e;
        }
      });
    };
    // MULTI, the commands and EXEC are queued together or not at all, so a queue bound can never
    // leave the connection inside a transaction.
    const all = this.#sendAll([
      { args: ["MULTI"], transform: undefined, flags: 0 },
      ...q.map((c) => ({ args: c.args, transform: undefined, flags: c.flags & FLAG_RAW })),
      { args: ["EXEC"], transform: exec, flags: 0 },
    ]);
    // Observe every promise so none is left unhandled, then report the first queueing error.
    const settled = await Promise.allSettled(all);
    this.#onDone?.();
    const last = settled[settled.length - 1]!;
    if (last.status === "fulfilled") return last.value as unknown[] | null;
    const queueError = settled.slice(1, -1).find((s) => s.status === "rejected");
    if (queueError && queueError.status === "rejected" && last.reason instanceof ReplyError) {
      const e = last.reason as ReplyError;
      throw new ReplyError(e.message, { cause: queueError.reason });
    }
    throw last.reason;
  }

  /**
   * Drops the recorded commands without sending them (releases a `WATCH` session).
   */
  discard(): void {
    this._queue.length = 0;
    this.#onDone?.();
  }
}
installCommands(Transaction);
