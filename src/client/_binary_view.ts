// The binary view of a client: the same typed methods, bulk strings replied as Uint8Array.
import { RedisCommands } from "../commands/commands.ts";
import { FLAG_BINARY, type Transform } from "../commands/_command.ts";
import type { RedisArgument } from "../resp/types.ts";
import type { ScanOptions, ScoredMember } from "../commands/types.ts";
import { Pipeline, type Transaction } from "./pipeline.ts";
import { cursorIterator } from "./_cursor.ts";
import type { PubSubListener, Subscription, SubscriptionKind } from "./subscription.ts";

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
  /** Subscribes with messages as `Uint8Array` (clients with pub/sub). */
  subscribeBinary?(
    kind: SubscriptionKind,
    names: string | string[],
    listener: PubSubListener<Uint8Array> | undefined,
  ): Promise<Subscription<Uint8Array>>;
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

  #subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener: PubSubListener<Uint8Array> | undefined,
  ): Promise<Subscription<Uint8Array>> {
    const sub = this.#host?.subscribeBinary;
    if (sub === undefined) {
      return Promise.reject(new TypeError("Cannot subscribe: this client has no binary pub/sub"));
    }
    return sub.call(this.#host, kind, names, listener);
  }

  /**
   * Subscribes to channels; messages arrive as `Uint8Array`, exactly the bytes published.
   *
   * @param channels One channel or several.
   * @param listener Called per message; without it, iterate the subscription.
   * @returns The subscription, once the server confirmed it.
   *
   * @example
   * ```ts ignore
   * const sub = await client.binary().subscribe("frames", (bytes) => console.log(bytes.length));
   * ```
   */
  subscribe(
    channels: string | string[],
    listener?: PubSubListener<Uint8Array>,
  ): Promise<Subscription<Uint8Array>> {
    return this.#subscribe("channel", channels, listener);
  }

  /**
   * Subscribes to glob-style patterns; messages arrive as `Uint8Array`.
   *
   * @param patterns One pattern or several.
   * @param listener Called per message with the matching pattern.
   * @returns The subscription.
   */
  psubscribe(
    patterns: string | string[],
    listener?: PubSubListener<Uint8Array>,
  ): Promise<Subscription<Uint8Array>> {
    return this.#subscribe("pattern", patterns, listener);
  }

  /**
   * Subscribes to shard channels (`SSUBSCRIBE`); messages arrive as `Uint8Array`.
   *
   * @param channels One shard channel or several.
   * @param listener Called per message.
   * @returns The subscription.
   */
  ssubscribe(
    channels: string | string[],
    listener?: PubSubListener<Uint8Array>,
  ): Promise<Subscription<Uint8Array>> {
    return this.#subscribe("shard", channels, listener);
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
