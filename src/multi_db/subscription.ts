/**
 * Subscriptions of the multi-database client: the object the user holds keeps working across
 * failovers, as it is re-made on each new active database.
 *
 * @module
 */

import type { PubSubListener, PubSubMessage, SubscriptionKind } from "../client/subscription.ts";
import type { DatabaseClient, DatabaseSubscription } from "./database_client.ts";

/** Internal: Subscribes on one database's client (its binary view for byte messages). */
function subscribeOn<S extends string | Uint8Array>(
  client: DatabaseClient,
  kind: SubscriptionKind,
  names: readonly string[],
  listener: PubSubListener<S>,
  binary: boolean,
): Promise<DatabaseSubscription> {
  const list = [...names];
  if (binary) {
    const b = client.binary?.();
    if (b === undefined) {
      return Promise.reject(
        new TypeError("Cannot subscribe with binary messages: the database client has no binary()"),
      );
    }
    const l = listener as PubSubListener<Uint8Array>;
    return kind === "channel"
      ? b.subscribe(list, l)
      : kind === "pattern"
      ? b.psubscribe(list, l)
      : b.ssubscribe(list, l);
  }
  const l = listener as PubSubListener;
  return kind === "channel"
    ? client.subscribe(list, l)
    : kind === "pattern"
    ? client.psubscribe(list, l)
    : client.ssubscribe(list, l);
}

/**
 * A subscription of a {@linkcode MultiDbClient}. It lives on the active database and is
 * re-made on the next one after a failover (before that database serves commands), so the
 * same object keeps delivering. Without a listener it is an `AsyncIterable` of messages;
 * iteration ends on `unsubscribe()` or when the client closes.
 *
 * @example
 * ```ts ignore
 * import { MultiDbClient } from "@edge/redis/multi-db";
 * const client = new MultiDbClient({ databases: [{ url: "redis://127.0.0.1:6379" }] });
 * const sub = await client.subscribe("news");
 * for await (const { channel, message } of sub) {
 *   console.log(channel, message);
 *   if (message === "stop") await sub.unsubscribe();
 * }
 * ```
 */
export class MultiDbSubscription<S extends string | Uint8Array = string>
  implements AsyncIterable<PubSubMessage<S>>, AsyncDisposable {
  /** The kind: plain channels, patterns or shard channels. */
  readonly kind: SubscriptionKind;
  /** The channels or patterns. */
  readonly names: readonly string[];
  readonly #listener: PubSubListener<S> | undefined;
  readonly #onRemove: (s: MultiDbSubscription<S>) => void;
  readonly #binary: boolean;
  readonly #buffer: PubSubMessage<S>[] = [];
  readonly #readers: ((r: IteratorResult<PubSubMessage<S>>) => void)[] = [];
  #active = true;
  #current: { database: string; client: DatabaseClient; inner: DatabaseSubscription } | undefined;
  #pending: DatabaseClient | undefined;
  #generation = 0;

  /**
   * @internal
   *
   * @ignore
   */
  constructor(
    kind: SubscriptionKind,
    names: readonly string[],
    listener: PubSubListener<S> | undefined,
    onRemove: (s: MultiDbSubscription<S>) => void,
    binary = false,
  ) {
    this.#binary = binary;
    this.kind = kind;
    this.names = names;
    this.#listener = listener;
    this.#onRemove = onRemove;
  }

  /** Whether the subscription still receives messages. */
  get active(): boolean {
    return this.#active;
  }

  /** The database it is subscribed on now, if any. */
  get database(): string | undefined {
    return this.#current?.database;
  }

  /**
   * @internal Subscribes on `client` (of database `database`) and drops the previous
   * database's subscription. Resolves once the new one is confirmed.
   * @ignore
   */
  async _attach(database: string, client: DatabaseClient): Promise<void> {
    if (!this.#active || this.#current?.client === client) return;
    const generation = ++this.#generation;
    this.#pending = client;
    const deliver: PubSubListener<S> = (message, channel, pattern) => {
      if (client === this.#current?.client || client === this.#pending) {
        this.#deliver(channel, message, pattern);
      }
    };
    let inner: DatabaseSubscription;
    try {
      inner = await subscribeOn(client, this.kind, this.names, deliver, this.#binary);
    } finally {
      if (this.#pending === client) this.#pending = undefined;
    }
    if (generation !== this.#generation) {
      // A later attach (another failover) superseded this one.
      await inner.unsubscribe().catch(() => {});
      return;
    }
    const prev = this.#current;
    this.#current = { database, client, inner };
    if (!this.#active) {
      this.#current = undefined;
      await inner.unsubscribe().catch(() => {});
      return;
    }
    prev?.inner.unsubscribe().catch(() => {});
  }

  #deliver(channel: string, message: S, pattern: string | undefined): void {
    if (!this.#active) return;
    if (this.#listener) {
      this.#listener(message, channel, pattern);
      return;
    }
    const m: PubSubMessage<S> = pattern === undefined
      ? { channel, message }
      : { channel, message, pattern };
    const r = this.#readers.shift();
    if (r) r({ value: m, done: false });
    else this.#buffer.push(m);
  }

  /**
   * Stops the subscription.
   *
   * @returns Resolves when the database's subscription ended.
   */
  async unsubscribe(): Promise<void> {
    if (!this.#active) return;
    this._end();
    this.#onRemove(this);
    const cur = this.#current;
    this.#current = undefined;
    await cur?.inner.unsubscribe().catch(() => {});
  }

  /**
   * @internal Ends iteration (client closed).
   *
   * @ignore
   */
  _end(): void {
    this.#active = false;
    for (const r of this.#readers.splice(0)) r({ value: undefined, done: true });
  }

  /**
   * Iterates over the messages.
   *
   * @returns An async iterator of messages.
   */
  [Symbol.asyncIterator](): AsyncIterator<PubSubMessage<S>> {
    return {
      next: (): Promise<IteratorResult<PubSubMessage<S>>> => {
        const m = this.#buffer.shift();
        if (m) return Promise.resolve({ value: m, done: false });
        if (!this.#active) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.#readers.push(resolve));
      },
      return: async (): Promise<IteratorResult<PubSubMessage<S>>> => {
        await this.unsubscribe();
        return { value: undefined, done: true };
      },
    };
  }

  /** Unsubscribes: `await using sub = await client.subscribe("ch")`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.unsubscribe();
  }
}
