/**
 * Pub/sub subscriptions: the object `subscribe()` returns, and the manager that routes push
 * frames to them and restores them on every new connection.
 *
 * @module
 */

import type { HandshakeStep } from "../connection/connection.ts";
import type { RespValue } from "../resp/types.ts";
import { ReplyError } from "../errors.ts";

/**
 * One pub/sub message; `message` is a `Uint8Array` for subscriptions made through a client's
 * `binary()` view.
 */
export interface PubSubMessage<S extends string | Uint8Array = string> {
  /** The channel the message was published to. */
  channel: string;
  /** The message. */
  message: S;
  /** The pattern that matched, for `psubscribe`. */
  pattern?: string;
}

/** Called for every message of a subscription. */
export type PubSubListener<S extends string | Uint8Array = string> = (
  message: S,
  channel: string,
  pattern?: string,
) => void;

const TEXT = new TextDecoder();
const BYTES = new TextEncoder();

/** A channel or pattern name of a push frame, as text. */
function text(v: RespValue | undefined): string {
  return typeof v === "string" ? v : v instanceof Uint8Array ? TEXT.decode(v) : String(v);
}

/** The kind of a subscription. */
export type SubscriptionKind = "channel" | "pattern" | "shard";

const COMMANDS: Record<SubscriptionKind, [string, string]> = {
  channel: ["SUBSCRIBE", "UNSUBSCRIBE"],
  pattern: ["PSUBSCRIBE", "PUNSUBSCRIBE"],
  shard: ["SSUBSCRIBE", "SUNSUBSCRIBE"],
};

/** Messages an iterated subscription buffers for a slow reader, by default. */
export const DEFAULT_SUBSCRIPTION_BUFFER = 10_000;

/**
 * A subscription to channels, patterns or shard channels. Without a listener it is an
 * `AsyncIterable` of {@linkcode PubSubMessage}; iteration ends on `unsubscribe()`.
 *
 * A listener that throws does not stop delivery: the exception goes to the client's `error`
 * event and the next message is delivered as usual. An iterator that nobody reads buffers at
 * most `maxBufferedMessages` (client option, 10 000 by default): past that the oldest message
 * is dropped, `dropped` counts it, and an `error` event reports the first drop of each overflow.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * const client = new RedisClient();
 * const sub = await client.subscribe("news");
 * for await (const { channel, message } of sub) {
 *   console.log(channel, message);
 *   if (message === "stop") await sub.unsubscribe();
 * }
 * ```
 */
export class Subscription<S extends string | Uint8Array = string>
  implements AsyncIterable<PubSubMessage<S>> {
  /** The kind: plain channels, patterns or shard channels. */
  readonly kind: SubscriptionKind;
  /** The channels or patterns. */
  readonly names: readonly string[];
  /** Whether messages are delivered as `Uint8Array` (made through `binary()`). */
  readonly binary: boolean;
  readonly #listener: PubSubListener<S> | undefined;
  readonly #manager: SubscriptionManager;
  readonly #buffer: PubSubMessage<S>[] = [];
  readonly #readers: ((r: IteratorResult<PubSubMessage<S>>) => void)[] = [];
  readonly #limit: number;
  #head = 0;
  #active = true;
  #overflowing = false;
  #dropped = 0;

  /**
   * @internal
   *
   * @ignore
   */
  constructor(
    manager: SubscriptionManager,
    kind: SubscriptionKind,
    names: readonly string[],
    listener: PubSubListener<S> | undefined,
    bufferLimit: number = DEFAULT_SUBSCRIPTION_BUFFER,
    binary = false,
  ) {
    this.#manager = manager;
    this.kind = kind;
    this.names = names;
    this.#listener = listener;
    this.#limit = Math.max(1, bufferLimit);
    this.binary = binary;
  }

  /** Messages dropped because the iterator was not read fast enough. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Messages waiting to be read from the iterator. */
  get buffered(): number {
    return this.#buffer.length - this.#head;
  }

  /** Whether the subscription still receives messages. */
  get active(): boolean {
    return this.#active;
  }

  /**
   * @internal Delivers one message (as text or bytes, whichever the subscription wants).
   *
   * @ignore
   */
  _deliver(channel: string, raw: RespValue, pattern: string | undefined): void {
    if (!this.#active) return;
    const message =
      (this.binary ? raw instanceof Uint8Array ? raw : BYTES.encode(text(raw)) : text(raw)) as S;
    if (this.#listener) {
      try {
        this.#listener(message, channel, pattern);
      } catch (e) {
        // One failing listener must not stop delivery to the others.
        this.#manager._listenerError(e, channel);
      }
      return;
    }
    const m: PubSubMessage<S> = pattern === undefined
      ? { channel, message }
      : { channel, message, pattern };
    const r = this.#readers.shift();
    if (r) {
      r({ value: m, done: false });
      return;
    }
    if (this.buffered >= this.#limit) {
      this.#head++;
      this.#dropped++;
      if (!this.#overflowing) {
        this.#overflowing = true;
        this.#manager._listenerError(
          new RangeError(
            `Cannot buffer a message of "${channel}": ${this.#limit} messages wait unread (maxBufferedMessages); dropping the oldest`,
          ),
          channel,
        );
      }
    }
    this.#buffer.push(m);
    if (this.#head > 1024 && this.#head * 2 > this.#buffer.length) {
      this.#buffer.splice(0, this.#head);
      this.#head = 0;
    }
  }

  #take(): PubSubMessage<S> | undefined {
    if (this.#head >= this.#buffer.length) return undefined;
    const m = this.#buffer[this.#head]!;
    this.#buffer[this.#head++] = undefined as unknown as PubSubMessage<S>;
    if (this.#head === this.#buffer.length) {
      this.#buffer.length = 0;
      this.#head = 0;
      this.#overflowing = false;
    }
    return m;
  }

  /**
   * Stops the subscription; the server is unsubscribed from names no other subscription uses.
   *
   * @returns Resolves when the unsubscribe is written.
   */
  async unsubscribe(): Promise<void> {
    if (!this.#active) return;
    this.#active = false;
    for (const r of this.#readers.splice(0)) r({ value: undefined, done: true });
    await this.#manager._remove(this as unknown as AnySubscription);
  }

  /**
   * @internal Ends iteration (client closed).
   *
   * @ignore
   */
  _end(): void {
    this.#active = false;
    for (const r of this.#readers.splice(0)) r({ value: undefined, done: true });
    this.#manager._ended(this as unknown as AnySubscription);
  }

  /**
   * Iterates over the messages.
   *
   * @returns An async iterator of messages.
   */
  [Symbol.asyncIterator](): AsyncIterator<PubSubMessage<S>> {
    return {
      next: (): Promise<IteratorResult<PubSubMessage<S>>> => {
        const m = this.#take();
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

/** A subscription of either view. */
// deno-lint-ignore no-explicit-any
type AnySubscription = Subscription<any>;

/** Internal: Routes pub/sub pushes and keeps the server-side subscription set. */
export class SubscriptionManager {
  readonly #subs: Record<SubscriptionKind, Map<string, Set<AnySubscription>>> = {
    channel: new Map(),
    pattern: new Map(),
    shard: new Map(),
  };
  readonly #send: (args: string[], subscribe: boolean, asking: boolean) => Promise<unknown>;
  /** Subscriptions sent behind `ASKING` (a cluster node importing their slot). */
  readonly #asking = new WeakSet<AnySubscription>();
  /** Subscribe commands not yet confirmed, per name. */
  readonly #pending: Record<SubscriptionKind, Map<string, Promise<unknown>>> = {
    channel: new Map(),
    pattern: new Map(),
    shard: new Map(),
  };

  readonly #onListenerError: ((error: unknown) => void) | undefined;
  /** Reports a shard channel a new connection could not restore (see the constructor). */
  readonly #onRestoreRefused: ((name: string, error: ReplyError) => void) | undefined;

  /**
   * @param send Sends a subscribe-family command (`subscribe`: answered once every channel is
   *   confirmed, or rejected by an error reply) or an unsubscribe-family one; `asking`: preceded
   *   by `ASKING` on the same connection (a cluster node importing the channel's slot).
   * @param onListenerError Reports an exception of a listener, or a dropped message.
   * @param onRestoreRefused A shard channel the server refused to restore on a new connection
   *   (a cluster node whose slot left it answers MOVED): it is forgotten and reported here
   *   instead of failing the connection's handshake. Without it, the refusal fails the handshake.
   */
  constructor(
    send: (args: string[], subscribe: boolean, asking: boolean) => Promise<unknown>,
    onListenerError?: (error: unknown) => void,
    onRestoreRefused?: (name: string, error: ReplyError) => void,
  ) {
    this.#send = send;
    this.#onListenerError = onListenerError;
    this.#onRestoreRefused = onRestoreRefused;
  }

  /**
   * @internal A listener threw, or an iterator overflowed.
   *
   * @ignore
   */
  _listenerError(error: unknown, channel: string): void {
    const report = this.#onListenerError;
    if (report === undefined) return;
    try {
      report(
        error instanceof Error ? error : new Error(`A listener of "${channel}" threw: ${error}`),
      );
    } catch {
      // A throwing error listener must not stop delivery either.
    }
  }

  /** Whether anything is subscribed. */
  get size(): number {
    return this.#subs.channel.size + this.#subs.pattern.size + this.#subs.shard.size;
  }

  /**
   * Called when the first binary subscription starts (`true`) and when the last one ended
   * (`false`): the pub/sub connection then decodes push frames as bytes, or as text again.
   */
  onBinaryChange: ((on: boolean) => void) | undefined;
  /** Sees every message received (the `pubsub` metrics), before its subscriptions. */
  onMessage: ((kind: SubscriptionKind, channel: string) => void) | undefined;
  readonly #binarySubs = new Set<AnySubscription>();

  /** Whether binary subscriptions exist (push frames then carry bytes). */
  get binary(): boolean {
    return this.#binarySubs.size > 0;
  }

  /**
   * @internal A subscription ended (unsubscribed, refused, forgotten, client closed).
   *
   * @ignore
   */
  _ended(sub: AnySubscription): void {
    if (this.#binarySubs.delete(sub) && this.#binarySubs.size === 0) {
      this.onBinaryChange?.(false);
    }
  }

  /**
   * Subscribes `sub`'s names that are not subscribed yet.
   *
   * @param asking Send the command behind `ASKING`, and its unsubscribe later too: a cluster
   *   node accepts a shard channel of a slot it is importing only so.
   */
  async add(sub: AnySubscription, asking = false): Promise<void> {
    if (asking) this.#asking.add(sub);
    if (sub.binary && !this.#binarySubs.has(sub)) {
      this.#binarySubs.add(sub);
      // Before the SUBSCRIBE: its first message already arrives as bytes.
      if (this.#binarySubs.size === 1) this.onBinaryChange?.(true);
    }
    const map = this.#subs[sub.kind];
    const pending = this.#pending[sub.kind];
    const fresh: string[] = [];
    const waits: Promise<unknown>[] = [];
    for (const n of sub.names) {
      let set = map.get(n);
      if (!set) {
        set = new Set();
        map.set(n, set);
        fresh.push(n);
      } else {
        // Subscribed by another subscription: wait until the server confirmed it.
        const w = pending.get(n);
        if (w) waits.push(w);
      }
      set.add(sub);
    }
    if (fresh.length > 0) {
      const sent = this.#send([COMMANDS[sub.kind][0], ...fresh], true, asking);
      for (const n of fresh) pending.set(n, sent);
      waits.push(sent);
      sent.then(() => {
        for (const n of fresh) if (pending.get(n) === sent) pending.delete(n);
      }, () => {
        for (const n of fresh) {
          if (pending.get(n) === sent) pending.delete(n);
          const set = map.get(n);
          if (set) {
            for (const s of set) s._end();
            map.delete(n);
          }
        }
      });
    }
    try {
      await Promise.all(waits);
    } catch (e) {
      for (const n of sub.names) {
        map.get(n)?.delete(sub);
        if (map.get(n)?.size === 0) map.delete(n);
      }
      sub._end();
      throw e;
    }
  }

  async _remove(sub: AnySubscription): Promise<void> {
    this._ended(sub);
    const asking = this.#asking.delete(sub);
    const map = this.#subs[sub.kind];
    const gone: string[] = [];
    for (const n of sub.names) {
      const set = map.get(n);
      if (!set) continue;
      set.delete(sub);
      if (set.size === 0) {
        map.delete(n);
        gone.push(n);
      }
    }
    if (gone.length > 0) {
      await this.#send([COMMANDS[sub.kind][1], ...gone], false, asking).catch(() => {});
    }
  }

  /** Commands that restore every subscription on a new connection. */
  session(): HandshakeStep[] {
    const steps: HandshakeStep[] = [];
    for (const kind of ["channel", "pattern", "shard"] as const) {
      const names = [...this.#subs[kind].keys()];
      if (kind === "shard") {
        // One SSUBSCRIBE per shard channel: a cluster node refuses channels of several slots
        // in one command (CROSSSLOT), which would fail the whole handshake.
        const refused = this.#onRestoreRefused;
        for (const n of names) {
          steps.push({
            args: [COMMANDS[kind][0], n],
            pushes: 1,
            onReply: refused === undefined ? undefined : (v) => {
              if (!(v instanceof ReplyError)) return;
              this.forget("shard", [n]);
              refused(n, v);
            },
          });
        }
      } else if (names.length > 0) {
        steps.push({ args: [COMMANDS[kind][0], ...names], pushes: names.length });
      }
    }
    return steps;
  }

  /** Handles a push frame; returns whether it was a pub/sub frame. */
  onPush(frame: RespValue[]): boolean {
    const k = frame[0];
    if (typeof k !== "string") return false;
    switch (k.toLowerCase()) {
      case "message":
        this.#deliver("channel", text(frame[1]), frame[2]!, undefined);
        return true;
      case "smessage":
        this.#deliver("shard", text(frame[1]), frame[2]!, undefined);
        return true;
      case "pmessage":
        this.#deliverPattern(text(frame[1]), text(frame[2]), frame[3]!);
        return true;
      case "subscribe":
      case "psubscribe":
      case "ssubscribe":
      case "unsubscribe":
      case "punsubscribe":
      case "sunsubscribe":
        return true;
      default:
        return false;
    }
  }

  #deliver(kind: SubscriptionKind, channel: string, message: RespValue, pattern?: string): void {
    this.onMessage?.(kind, channel);
    const set = this.#subs[kind].get(channel);
    if (!set) return;
    for (const s of set) s._deliver(channel, message, pattern);
  }

  #deliverPattern(pattern: string, channel: string, message: RespValue): void {
    this.onMessage?.("pattern", channel);
    const set = this.#subs.pattern.get(pattern);
    if (!set) return;
    for (const s of set) s._deliver(channel, message, pattern);
  }

  /**
   * Forgets names the server already unsubscribed by itself (a cluster node whose slot left it
   * ends its shard subscriptions): their subscriptions end, nothing is sent, and they are not
   * restored on a new connection.
   */
  forget(kind: SubscriptionKind, names: readonly string[]): void {
    const map = this.#subs[kind];
    for (const n of names) {
      const set = map.get(n);
      if (!set) continue;
      map.delete(n);
      this.#pending[kind].delete(n);
      for (const s of set) s._end();
    }
  }

  /** Ends every subscription (client closed). */
  endAll(): void {
    for (const map of Object.values(this.#subs)) {
      for (const set of map.values()) for (const s of set) s._end();
      map.clear();
    }
  }
}
