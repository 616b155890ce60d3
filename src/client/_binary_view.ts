// The binary view of a client: the same typed methods, bulk strings replied as Uint8Array.
import { RedisCommands } from "../commands/commands.ts";
import { FLAG_BINARY, type Transform } from "../commands/command_runner.ts";
import type { RedisArgument } from "../resp/types.ts";
import type { ScanOptions, ScoredMember } from "../commands/types.ts";
import type { Pipeline, Transaction } from "./pipeline.ts";
import type { PubSubListener, Subscription, SubscriptionKind } from "./subscription.ts";

/** What the view needs of its client: the client shell's entry points. */
export interface BinaryViewHost {
  /** Runs one command. */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown>;
  /** A new pipeline of the client. */
  pipeline(): Pipeline;
  /** A new transaction of the client. */
  multi(): Transaction;
  /** Subscribes, messages as bytes when `binary`. */
  _subscribe(
    kind: SubscriptionKind,
    names: string | string[],
    listener: PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown>;
  /** A cursor walk (HSCAN, ...), pinned as the client pins its own. */
  _cursor<T>(page: (cursor: string) => Promise<[string, T[]]>): AsyncIterableIterator<T>;
}

/**
 * The typed methods of a client with `FLAG_BINARY` on every command: its pipelines,
 * transactions, scan iterators and subscriptions too, all replying bytes.
 */
export class BinaryView extends RedisCommands<Uint8Array> {
  readonly #host: BinaryViewHost;
  /**
   * Creates the view of a client.
   *
   * @param host The client.
   */
  constructor(host: BinaryViewHost) {
    super();
    this.#host = host;
  }

  /**
   * Starts a pipeline whose replies carry bulk strings as `Uint8Array`.
   *
   * @returns A new pipeline.
   */
  pipeline(): Pipeline<[], Uint8Array> {
    return this.#host.pipeline()._withFlags(FLAG_BINARY) as unknown as Pipeline<[], Uint8Array>;
  }

  /**
   * Starts a transaction whose results carry bulk strings as `Uint8Array`.
   *
   * @returns A new transaction.
   */
  multi(): Transaction<[], Uint8Array> {
    return this.#host.multi()._withFlags(FLAG_BINARY) as unknown as Transaction<[], Uint8Array>;
  }

  /**
   * Iterates over every key (SCAN), as bytes.
   *
   * @param options Pattern, count hint, type.
   * @returns An async iterator of key names.
   */
  scan(options: ScanOptions = {}): AsyncIterableIterator<Uint8Array> {
    return this.#host._cursor((cursor) => this.scanPage(cursor, options));
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
    return this.#host._cursor((cursor) => this.hscanPage(key, cursor, options));
  }

  /**
   * Iterates over the members of a set (SSCAN), as bytes.
   *
   * @param key The set.
   * @param options Pattern, count hint.
   * @returns An async iterator of members.
   */
  sscan(key: RedisArgument, options: ScanOptions = {}): AsyncIterableIterator<Uint8Array> {
    return this.#host._cursor((cursor) => this.sscanPage(key, cursor, options));
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
    return this.#host._cursor((cursor) => this.zscanPage(key, cursor, options));
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
    return this.#host._subscribe("channel", channels, listener, true) as Promise<
      Subscription<Uint8Array>
    >;
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
    return this.#host._subscribe("pattern", patterns, listener, true) as Promise<
      Subscription<Uint8Array>
    >;
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
    return this.#host._subscribe("shard", channels, listener, true) as Promise<
      Subscription<Uint8Array>
    >;
  }

  /** Runs one command with `FLAG_BINARY`. */
  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    return this.#host._run(args, transform, flags | FLAG_BINARY, blockMs);
  }
}
