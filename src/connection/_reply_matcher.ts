// Reply matching of a Connection: the bytes of a socket go to its decoder; every reply answers
// the head of the socket's in-flight queue (through the command's transform), a subscribe-family
// command is answered by its confirmation pushes, a RESP2 subscriber's pub/sub arrays and every
// push frame go to the owner's push hook, a reply refused with LOADING goes to the retry, and a
// reply no command waits for (or bytes that do not decode) resets the socket. This is the reply
// half of the per-command path: it reads its own fields only, the Connection keeps `current`
// and `closing` up to date.
import type { Clock } from "../_clock.ts";
import { ProtocolError, RedisError, ReplyError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { RespValue } from "../resp/types.ts";
import type { Link } from "./_link.ts";
import type { LoadingRetry } from "./_loading_retry.ts";
import { type Pending, rejectPending, releasePending } from "./_pending.ts";
import { isMessageKind, isPubSubArray, pushKind, takeConfirmation } from "./_pubsub_replies.ts";
import { formatEndpoint } from "../endpoint.ts";
import { FLAG_BINARY, FLAG_EARLY, FLAG_PING } from "../command_flags.ts";
import type { ConnectionHooks } from "./connection_options.ts";

/** What reply matching needs of its Connection, fixed at creation. */
export interface ReplySettings {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly label: string;
  readonly hooks: ConnectionHooks | undefined;
  /** A RESP2 connection dedicated to pub/sub: pub/sub arrays go to `onPush`. */
  readonly subscriber: boolean;
  /** Sockets do not keep the process alive while nothing is in flight. */
  readonly unref: boolean;
  /** `pingInterval > 0`: reading counts as I/O for the keep-alive. */
  readonly keepAlive: boolean;
  readonly loading: LoadingRetry;
  /** A reply arrived on a socket that is not the current one, or while closing. */
  afterReply(link: Link): void;
  /** Closes a socket because of a fault; its in-flight commands fail with `error`. */
  fail(link: Link, error: Error): void;
}

/**
 * A hint for a first reply that is not RESP: an HTTP server answers `HTTP/1.1 400 ...` or an
 * HTML page, whose first byte (`H`, `<`) is no RESP type.
 */
function notRedisHint(e: Error, replies: number): string {
  if (replies !== 0) return "";
  const m = /unexpected type byte "(.)"/.exec(e.message);
  return m !== null && (m[1] === "H" || m[1] === "<")
    ? " (this is not a Redis server: it answers like an HTTP server; check the host and port)"
    : "";
}

/**
 * Whether an error reply to a command written behind a handshake says the server did not run
 * it: LOADING (not applied while the data set loads), or NOAUTH once a step of the handshake
 * failed (the AUTH it needed was refused). Any other reply is the command's own.
 */
function notRun(e: ReplyError, link: Link): boolean {
  return e.prefix === "LOADING" || (e.prefix === "NOAUTH" && link.setupFailed);
}

/** Matches the replies and pushes of a Connection's sockets to their commands. */
export class ReplyMatcher {
  /** The current socket (kept by the Connection): pub/sub messages count from it only. */
  current: Link | undefined;
  /** The Connection is closing (kept by the Connection). */
  closing = false;
  /** Push frames decode strings as bytes (binary subscriptions exist). */
  #pushBinary = false;
  /** A RESP2 subscriber with binary subscriptions: every frame decodes strings as bytes. */
  #subBinary = false;
  readonly #s: ReplySettings;
  readonly #subscriber: boolean;
  readonly #unref: boolean;
  readonly #keepAlive: boolean;
  readonly #clock: Clock;
  readonly #loading: LoadingRetry;

  constructor(settings: ReplySettings) {
    this.#s = settings;
    this.#subscriber = settings.subscriber;
    this.#unref = settings.unref;
    this.#keepAlive = settings.keepAlive;
    this.#clock = settings.clock;
    this.#loading = settings.loading;
  }

  /** Decodes the next reply as bytes when the command awaiting it is binary. */
  updateBinary(link: Link): void {
    const head = link.inflight.peek();
    link.decoder.binary = this.#subBinary ||
      head !== undefined && (head.flags & FLAG_BINARY) !== 0;
  }

  /** Whether push frames decode their strings as bytes, on `links` and every later socket. */
  setPushBinary(on: boolean, links: Iterable<Link>): void {
    this.#pushBinary = on;
    this.#subBinary = on && this.#subscriber;
    for (const l of links) {
      l.decoder.pushBinary = on;
      this.updateBinary(l);
    }
  }

  /** A reply on `link`. */
  onReply(link: Link, value: RespValue): void {
    if (this.#subscriber && Array.isArray(value) && isPubSubArray(value)) {
      this.onPush(link, value);
      return;
    }
    const p = link.inflight.shift();
    if (p === undefined) {
      this.#unsolicited(link);
      return;
    }
    const next = link.inflight.peek();
    if (next !== undefined) {
      link.decoder.binary = this.#subBinary || (next.flags & FLAG_BINARY) !== 0;
    } else {
      if (link.decoder.binary !== this.#subBinary) {
        link.decoder.binary = this.#subBinary;
      }
      if (link.drained !== undefined) link.wakeDrained();
      if (this.#unref && link.ready) link.transport.unref?.();
    }
    if (link !== this.current || this.closing) this.#s.afterReply(link);
    if (p.done) return; // timed out earlier: its late reply is discarded (and proves no liveness)
    link.replies++;
    if (value instanceof ReplyError) {
      // Refused while the server loads its data set: not applied, so sent again later.
      if (this.#notRun(link, p, value)) return;
      p.done = true;
      rejectPending(p, value);
      releasePending(p);
      return;
    }
    p.done = true;
    const { resolve, transform } = p;
    if (transform === undefined) {
      releasePending(p);
      resolve(value);
      return;
    }
    let out: unknown;
    try {
      out = transform(value);
    } catch (e) {
      rejectPending(p, e instanceof Error ? e : new RedisError(String(e)));
      releasePending(p);
      return;
    }
    releasePending(p);
    resolve(out);
  }

  /**
   * Whether an error reply says the command was not run and it is kept to be sent again:
   * LOADING (the retry), or, written behind a handshake, refused before the socket is ready
   * (queued again when the attempt ends). Kept out of `onReply`, whose size is the hot path's.
   */
  #notRun(link: Link, p: Pending, value: ReplyError): boolean {
    if (value.prefix === "LOADING" && this.#loading.keep(link, p)) return true;
    if ((p.flags & FLAG_EARLY) !== 0 && !link.ready && notRun(value, link)) {
      (link.notRun ??= []).push(p);
      return true;
    }
    return false;
  }

  /** A reply no command waits for: the stream is out of step; the socket is reset. */
  #unsolicited(link: Link): void {
    if (link.closed) return;
    const s = this.#s;
    const err = new ProtocolError(
      `Cannot match a reply from "${formatEndpoint(link.endpoint)}": no command is waiting for it`,
    );
    s.logger.error(
      `${s.label}: unsolicited reply from "${
        formatEndpoint(link.endpoint)
      }", resetting the connection: ${err.message}`,
    );
    s.hooks?.onError?.(err);
    s.fail(link, err);
  }

  /** A push frame on `link` (or a pub/sub array on a RESP2 subscriber). */
  onPush(link: Link, frame: RespValue[]): void {
    const k = pushKind(frame);
    if (k !== undefined) {
      // Pub/sub messages are taken from the current socket only: during a handoff both the old
      // and the new socket are subscribed for a moment, and each message must arrive once.
      if (
        link !== this.current && this.current !== undefined && isMessageKind(k)
      ) return;
      const head = link.inflight.peek();
      // A PING on a RESP2 subscribed socket is answered by ["pong", ""].
      if (
        head !== undefined && (head.flags & FLAG_PING) !== 0 &&
        k.toLowerCase() === "pong"
      ) {
        this.onReply(link, "PONG");
        return;
      }
      // A subscribe-family command is answered by one confirmation per channel.
      if (head !== undefined && takeConfirmation(head, k)) {
        link.inflight.shift();
        // A confirmation answers a command: it counts as a reply.
        link.replies++;
        this.updateBinary(link);
        if (link.inflight.length === 0) {
          link.wakeDrained();
          if (this.#unref && link.ready) link.transport.unref?.();
        }
        if (!head.done) {
          head.done = true;
          head.resolve(undefined);
        }
      }
    }
    try {
      this.#s.hooks?.onPush?.(frame, link.transport);
    } catch (e) {
      this.#s.logger.warn(`Push handler failed: ${(e as Error).message}`);
    }
  }

  /** Bytes read from `link`. */
  onData(link: Link, chunk: Uint8Array): void {
    const replies = link.replies;
    if (link.decoder.pushBinary !== this.#pushBinary) {
      link.decoder.pushBinary = this.#pushBinary;
      this.updateBinary(link);
    }
    if (this.#keepAlive) link.lastIoAt = this.#clock.now();
    try {
      link.decoder.feed(chunk);
    } catch (e) {
      const s = this.#s;
      const err = new ProtocolError(
        `Cannot decode a reply from "${formatEndpoint(link.endpoint)}": ${
          (e as Error).message.replace(/^Cannot decode the reply: /, "")
        }${notRedisHint(e as Error, link.replies)}`,
        e instanceof ProtocolError ? e.offset : -1,
        { cause: e },
      );
      s.logger.error(
        `Protocol error from "${
          formatEndpoint(link.endpoint)
        }", resetting the connection: ${err.message}`,
      );
      s.hooks?.onError?.(err);
      s.fail(link, err);
      return;
    }
    // Liveness is judged by replies to commands: pushes (pub/sub messages) do not count.
    if (link.replies !== replies) link.lastReplyAt = this.#clock.now();
  }
}
