// The binary view of a client: the same typed methods, bulk strings replied as Uint8Array.
import { RedisCommands } from "../commands/commands.ts";
import { FLAG_BINARY, type Transform } from "../commands/_command.ts";
import type { RedisArgument } from "../resp/types.ts";
import type { ScanOptions, ScoredMember } from "../commands/types.ts";
import { Pipeline, type Transaction } from "./pipeline.ts";
import { cursorIterator } from "./_cursor.ts";

/** Runs one command for a client (its `_run`). */
export type CommandRun = (
  args: RedisArgument[],
  transform: Transform | undefined,
  flags: number,
  blockMs?: number,
) => unknown;

/** What a client offers its binary view beyond `_run`: its batches, made binary by the view. */
export interface BinaryViewHost {
  /** A new pipeline of the client. */
  pipeline(): Pipeline;
  /** A new transaction of the client. */
  multi(): Transaction;
}

/**
 * Typed methods over another client's `_run`, with `FLAG_BINARY` on every command; with a
 * host, also its pipelines and transactions, and the scan iterators, all replying bytes.
 */
export class BinaryView extends RedisCommands<Uint8Array> {
  readonly #run: CommandRun;
  readonly #host: BinaryViewHost | undefined;
  /**
   * Creates the view of a client.
   *
   * @param run The client's `_run`.
   * @param host The client, for its pipelines and transactions.
   */
  constructor(run: CommandRun, host?: BinaryViewHost) {
    super();
    this.#run = run;
    this.#host = host;
  }

  /**
   * Starts a pipeline whose replies carry bulk strings as `Uint8Array`.
   *
   * @returns A new pipeline.
   */
  pipeline(): Pipeline<[], Uint8Array> {
    if (this.#host === undefined) {
      // The client's own `_run`, as its pipelines do.
      return new Pipeline((args, transform, flags, blockMs) =>
        this.#run(args, transform, flags, blockMs) as Promise<unknown>
      )._withFlags(FLAG_BINARY) as unknown as Pipeline<[], Uint8Array>;
    }
    return this.#host.pipeline()._withFlags(FLAG_BINARY) as unknown as Pipeline<[], Uint8Array>;
  }

  /**
   * Starts a transaction whose results carry bulk strings as `Uint8Array`.
   *
   * @returns A new transaction.
   */
  multi(): Transaction<[], Uint8Array> {
    if (this.#host === undefined) {
      throw new TypeError("Cannot start a binary transaction: this client has no binary multi()");
    }
    return this.#host.multi()._withFlags(FLAG_BINARY) as unknown as Transaction<[], Uint8Array>;
  }

  /**
   * Iterates over every key (SCAN), as bytes.
   *
   * @param options Pattern, count hint, type.
   * @returns An async iterator of key names.
   */
  scan(options: ScanOptions = {}): AsyncIterableIterator<Uint8Array> {
    return cursorIterator((cursor) => this.scanPage(cursor, options));
  }

  /**
   * Iterates over the fields of a hash (HSCAN), as bytes.
   *
   * @param key The hash.
   * @param options Pattern, count hint.
   * @returns An async iterator of `[field, value]`.
   */
  hscan(
    key: RedisArgument,
    options: ScanOptions = {},
  ): AsyncIterableIterator<[Uint8Array, Uint8Array]> {
    return cursorIterator((cursor) => this.hscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a set (SSCAN), as bytes.
   *
   * @param key The set.
   * @param options Pattern, count hint.
   * @returns An async iterator of members.
   */
  sscan(key: RedisArgument, options: ScanOptions = {}): AsyncIterableIterator<Uint8Array> {
    return cursorIterator((cursor) => this.sscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a sorted set with their scores (ZSCAN), members as bytes.
   *
   * @param key The sorted set.
   * @param options Pattern, count hint.
   * @returns An async iterator of `{ member, score }`.
   */
  zscan(
    key: RedisArgument,
    options: ScanOptions = {},
  ): AsyncIterableIterator<ScoredMember<Uint8Array>> {
    return cursorIterator((cursor) => this.zscanPage(key, cursor, options));
  }

  /** @internal Runs one command with `FLAG_BINARY`. */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): unknown {
    return this.#run(args, transform, flags | FLAG_BINARY, blockMs);
  }
}
