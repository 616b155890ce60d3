/**
 * Pipelines (a batch of commands, results as values) and transactions (`MULTI`/`EXEC`).
 *
 * @module
 */

import { RedisCommands } from "../commands/commands.ts";
import { FLAG_RAW, type Transform } from "../commands/command_runner.ts";
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

/**
 * One command a pipeline or transaction recorded, as a `ClientCore` that runs whole
 * batches (`runPipeline`, `runTransaction`) receives it.
 */
export interface QueuedCommand {
  /** The command name and its arguments. */
  args: RedisArgument[];
  /** Converts the raw reply into the method's result; not called for errors. */
  transform: Transform | undefined;
  /** `FLAG_*` bits: blocking, read-only, binary. */
  flags: number;
  /** For blocking commands: how long the server may block, 0 = forever. */
  blockMs: number | undefined;
}

/** The two kinds of batch, for {@linkcode ChainedCommands}. */
export type BatchKind = "pipeline" | "transaction";

/**
 * The batch a chained command returns: the same kind, with the command's result appended to
 * the tuple `R` that `exec()` resolves with. A command that fails yields its error (a
 * `ReplyError`, or the `TypeError` of an argument refused before sending) as a value, hence
 * `T | Error`.
 */
export type NextBatch<
  K extends BatchKind,
  R extends unknown[],
  T,
  S extends string | Uint8Array,
> = K extends "pipeline" ? Pipeline<[...R, T | Error], S>
  : Transaction<[...R, T | Error], S>;

/**
 * What `exec()` resolves with: the tuple of the chained commands' results; `unknown[]` for a
 * batch whose commands were not chained onto it (`const p = client.pipeline(); p.get("a");`
 * in a loop), whose length and types the compiler cannot know.
 */
export type BatchResults<R extends unknown[]> = [] extends R ? unknown[] : R;

/**
 * One command method of the client as a method of a batch, keeping up to three overloads
 * (`set`, `hset`, ...).
 */
export type ChainedCommand<
  F,
  K extends BatchKind,
  R extends unknown[],
  S extends string | Uint8Array,
> = F extends {
  (...args: infer A1): Promise<infer T1>;
  (...args: infer A2): Promise<infer T2>;
  (...args: infer A3): Promise<infer T3>;
} ? {
    (...args: A1): NextBatch<K, R, T1, S>;
    (...args: A2): NextBatch<K, R, T2, S>;
    (...args: A3): NextBatch<K, R, T3, S>;
  }
  : never;

/**
 * The typed command methods of a batch: same names and parameters as the client's, each
 * returning the batch with the command's result type appended to its tuple, so `exec()`
 * resolves with one typed element per queued command.
 *
 * @typeParam K Pipeline or transaction.
 * @typeParam R The result types of the commands queued so far.
 * @typeParam S How bulk strings are replied: `string`, or `Uint8Array` for the binary view.
 */
export type ChainedCommands<
  K extends BatchKind,
  R extends unknown[] = [],
  S extends string | Uint8Array = string,
> = {
  [
    M in keyof RedisCommands<S> as RedisCommands<S>[M] extends
      (...args: never[]) => Promise<unknown> ? (M extends PipelineExcluded ? never : M) : never
  ]: ChainedCommand<RedisCommands<S>[M], K, R, S>;
};

/** Methods that are not one command with one reply, hence not available in a batch. */
export type PipelineExcluded = "evalScript";

/**
 * Gives the batches every typed method through their prototype chain (`Pipeline` and
 * `Transaction` -> `Batch` -> `RedisCommands`), each method recording through `Batch._run`.
 * Linking the prototype once costs nothing at load; copying the ~250 methods onto each batch
 * class was the largest part of evaluating `.` (about 2 ms of a cold start). The methods that
 * are not one command with one reply (`PipelineExcluded`) are shadowed by `undefined`.
 */
function inheritCommands(): void {
  Object.setPrototypeOf(Batch.prototype, RedisCommands.prototype);
  const excluded: PipelineExcluded[] = ["evalScript"];
  for (const name of excluded) {
    Object.defineProperty(Batch.prototype, name, { value: undefined, writable: false });
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
  /**
   * @internal
   *
   * @ignore
   */
  readonly _queue: QueuedCommand[] = [];
  /**
   * @internal
   *
   * @ignore
   */
  readonly _send: BatchSender;
  /**
   * @internal Flags added to every recorded command (`FLAG_BINARY` for the binary view).
   *
   * @ignore
   */
  _flags = 0;

  /**
   * @internal
   *
   * @ignore
   */
  constructor(send: BatchSender) {
    this._send = send;
  }

  /**
   * @internal Records a command.
   *
   * @ignore
   */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): this {
    this._queue.push({ args, transform, flags: flags | this._flags, blockMs });
    return this;
  }

  /**
   * @internal Adds `flags` to every command recorded from now on; returns the batch.
   *
   * @ignore
   */
  _withFlags(flags: number): this {
    this._flags |= flags;
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
  sendCommand(args: RedisArgument[]): Batch {
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
export interface Pipeline<R extends unknown[] = [], S extends string | Uint8Array = string>
  extends ChainedCommands<"pipeline", R, S> {
  /**
   * Adds any command, e.g. one without a typed method; its raw reply is appended to the results.
   *
   * @param args The command and its arguments.
   * @returns The pipeline, for chaining.
   */
  sendCommand(args: RedisArgument[]): Pipeline<[...R, RespValue | Error], S>;
}
/**
 * A pipeline: see the interface of the same name.
 *
 * @typeParam R The result types of the queued commands, in order (`[]` for a new pipeline).
 * @typeParam S How bulk strings are replied: `string`, or `Uint8Array` for the binary view.
 */
export class Pipeline<R extends unknown[] = [], S extends string | Uint8Array = string>
  extends Batch {
  /**
   * @internal Runs the whole batch at `exec()` instead of one command at a time.
   *
   * @ignore
   */
  _runner: ((commands: QueuedCommand[]) => Promise<unknown[]>) | undefined;
  /**
   * Sends every recorded command.
   *
   * @returns One result per command, in order: the transformed reply or a `ReplyError`.
   */
  exec(): Promise<BatchResults<R>> {
    const q = this._queue.splice(0);
    if (this._runner !== undefined) return this._runner(q) as Promise<BatchResults<R>>;
    return this._sendAllOf(q) as Promise<BatchResults<R>>;
  }

  /**
   * @internal Sends `q` one command at a time, results in order.
   *
   * @ignore
   */
  _sendAllOf(q: QueuedCommand[]): Promise<unknown[]> {
    // Errors arrive as values (no second promise per command to catch them).
    return Promise.all(
      q.map((c) => this._send(c.args, c.transform, c.flags | FLAG_ERRORS_AS_VALUES, c.blockMs)),
    );
  }
}

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
export interface Transaction<
  R extends unknown[] = [],
  S extends string | Uint8Array = string,
> extends ChainedCommands<"transaction", R, S> {
  /**
   * Adds any command, e.g. one without a typed method; its raw reply is appended to the results.
   *
   * @param args The command and its arguments.
   * @returns The transaction, for chaining.
   */
  sendCommand(args: RedisArgument[]): Transaction<[...R, RespValue | Error], S>;
}
/**
 * A transaction: see the interface of the same name.
 *
 * @typeParam R The result types of the queued commands, in order (`[]` for a new transaction).
 * @typeParam S How bulk strings are replied: `string`, or `Uint8Array` for the binary view.
 */
export class Transaction<R extends unknown[] = [], S extends string | Uint8Array = string>
  extends Batch {
  readonly #onDone: (() => void) | undefined;
  readonly #sendAll: TransactionSender;
  /**
   * @internal Runs the whole transaction at `exec()` (a client that replays it elsewhere);
   * `flags` are the transaction's own.
   * @ignore
   */
  _runner: ((commands: QueuedCommand[], flags: number) => Promise<unknown[] | null>) | undefined;

  /**
   * @internal
   *
   * @ignore
   */
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
  async exec(): Promise<BatchResults<R> | null> {
    const q = this._queue.splice(0);
    if (this._runner !== undefined) {
      return await this._runner(q, this._flags) as BatchResults<R> | null;
    }
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
      { args: ["EXEC"], transform: exec, flags: this._flags },
    ]);
    // Observe every promise so none is left unhandled, then report the first queueing error.
    const settled = await Promise.allSettled(all);
    this.#onDone?.();
    const last = settled[settled.length - 1]!;
    if (last.status === "fulfilled") return last.value as BatchResults<R> | null;
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
inheritCommands();
