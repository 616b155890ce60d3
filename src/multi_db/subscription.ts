/**
 * Subscriptions of the multi-database client: the object the user holds keeps working across
 * failovers, as it is re-made on each new active database.
 *
 * @module
 */

import type { PubSubListener, PubSubMessage, SubscriptionKind } from "../client/subscription.ts";
import type { DatabaseClient, DatabaseSubscription } from "./database_client.ts";

/** @internal Subscribes on one database's client. */
function subscribeOn(
  client: DatabaseClient,
  kind: SubscriptionKind,
  names: readonly string[],
  listener: PubSubListener,
): Promise<DatabaseSubscription> {
  const list = [...names];
  switch (kind) {
    case "channel":
      return client.subscribe(list, listener);
    case "pattern":
      return client.psubscribe(list, listener);
    case "shard":
      return client.ssubscribe(list, listener);
  }
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
export class MultiDbSubscription implements AsyncIterable<PubSubMessage>, AsyncDisposable {
  /** The kind: plain channels, patterns or shard channels. */
  readonly kind: SubscriptionKind;
  /** The channels or patterns. */
  readonly names: readonly string[];
  readonly #listener: PubSubListener | undefined;
  readonly #onRemove: (s: MultiDbSubscription) => void;
  readonly #buffer: PubSubMessage[] = [];
  readonly #readers: ((r: IteratorResult<PubSubMessage>) => void)[] = [];
  #active = true;
  #current: { database: string; client: DatabaseClient; inner: DatabaseSubscription } | undefined;
  #pending: DatabaseClient | undefined;
  #generation = 0;

  /** @internal */
  constructor(
    kind: SubscriptionKind,
    names: readonly string[],
    listener: PubSubListener | undefined,
    onRemove: (s: MultiDbSubscription) => void,
  ) {
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
   */
  async _attach(database: string, client: DatabaseClient): Promise<void> {
    if (!this.#active || this.#current?.client === client) return;
    const generation = ++this.#generation;
    this.#pending = client;
    const deliver: PubSubListener = (message, channel, pattern) => {
      if (client === this.#current?.client || client === this.#pending) {
        this.#deliver(channel, message, pattern);
      }
    };
    let inner: DatabaseSubscription;
    try {
      inner = await subscribeOn(client, this.kind, this.names, deliver);
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

  #deliver(channel: string, message: string, pattern: string | undefined): void {
    if (!this.#active) return;
    if (this.#listener) {
      this.#listener(message, channel, pattern);
      return;
    }
    const m: PubSubMessage = pattern === undefined
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

  /** @internal Ends iteration (client closed). */
  _end(): void {
    this.#active = false;
    for (const r of this.#readers.splice(0)) r({ value: undefined, done: true });
  }

  /**
   * Iterates over the messages.
   *
   * @returns An async iterator of messages.
   */
  [Symbol.asyncIterator](): AsyncIterator<PubSubMessage> {
    return {
      next: (): Promise<IteratorResult<PubSubMessage>> => {
        const m = this.#buffer.shift();
        if (m) return Promise.resolve({ value: m, done: false });
        if (!this.#active) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.#readers.push(resolve));
      },
      return: async (): Promise<IteratorResult<PubSubMessage>> => {
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
