// An in-memory stand-in for a Redis server behind a `Connector`, for unit tests of the client
// layer without a network: a few string commands, pub/sub confirmations, and hooks to push
// frames, hold replies or kill sockets.
import { RespDecoder } from "../../src/resp/decoder.ts";
import { encodeValue } from "../../src/resp/encoder.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { ReplyError } from "../../src/errors.ts";
import type { ConnectOptions, Transport, TransportHandlers } from "../../src/transport/types.ts";

/** One socket of the fake server. */
export class MemorySocket implements Transport {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly secure = false;
  readonly commands: string[][] = [];
  closed = false;
  protocol: 2 | 3 = 2;
  /** While true, replies are queued instead of sent. */
  holding = false;
  readonly #held: Uint8Array[] = [];
  #h: TransportHandlers | undefined;
  readonly #decoder: RespDecoder;
  readonly #server: MemoryRedis;

  constructor(server: MemoryRedis, endpoint: ConnectOptions) {
    this.#server = server;
    this.remoteAddress = endpoint.host;
    this.remotePort = endpoint.port;
    this.#decoder = new RespDecoder({
      onReply: (v) => {
        const cmd = (v as RespValue[]).map((a) => String(a));
        this.commands.push(cmd);
        const reply = server.answer(cmd, this);
        // RESP3 confirms subscriptions with push frames.
        const push = this.protocol === 3 && /SUBSCRIBE$/i.test(cmd[0] ?? "");
        for (const r of reply) this.send(r, push && Array.isArray(r));
      },
      onPush: () => {},
    });
  }

  setHandlers(h: TransportHandlers): void {
    this.#h = h;
  }

  write(bytes: Uint8Array): boolean {
    if (this.closed) return false;
    this.#decoder.feed(bytes);
    return true;
  }

  /** Sends one value (a push frame when `push`). */
  send(value: RespValue, push = false): void {
    if (this.closed) return;
    const bytes = push
      ? encodeValue(value, 3).map((b, i) => (i === 0 ? 0x3e : b))
      : encodeValue(value, this.protocol);
    if (this.holding) {
      this.#held.push(bytes);
      return;
    }
    queueMicrotask(() => {
      if (!this.closed) this.#h?.onData(bytes);
    });
  }

  /** Sends the replies held so far. */
  release(): void {
    this.holding = false;
    for (const b of this.#held.splice(0)) this.#h?.onData(b);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#server.sockets.delete(this);
    queueMicrotask(() => this.#h?.onClose());
  }
}

/** The fake server: a string keyspace shared by its sockets. */
export class MemoryRedis {
  readonly data = new Map<string, string>();
  readonly sockets = new Set<MemorySocket>();
  /** Every socket ever opened, in order. */
  readonly opened: MemorySocket[] = [];
  /** Extra answers, tried first: return undefined to fall through. */
  handler: ((cmd: string[], s: MemorySocket) => RespValue[] | undefined) | undefined;

  /** A connector opening sockets to this server. */
  readonly connector = (o: ConnectOptions): Promise<Transport> => {
    const s = new MemorySocket(this, o);
    this.sockets.add(s);
    this.opened.push(s);
    return Promise.resolve(s);
  };

  answer(cmd: string[], s: MemorySocket): RespValue[] {
    const custom = this.handler?.(cmd, s);
    if (custom !== undefined) return custom;
    const name = cmd[0]!.toUpperCase();
    switch (name) {
      case "HELLO":
        s.protocol = cmd[1] === "3" ? 3 : 2;
        return [new Map<RespValue, RespValue>([["server", "memory"], ["proto", s.protocol]])];
      case "CLIENT":
      case "SELECT":
      case "READONLY":
      case "WATCH":
      case "UNWATCH":
      case "MULTI":
        return ["OK"];
      case "PING":
        return ["PONG"];
      case "SET":
        this.data.set(cmd[1]!, cmd[2]!);
        return ["OK"];
      case "GET":
        return [this.data.get(cmd[1]!) ?? null];
      case "SUBSCRIBE":
      case "PSUBSCRIBE":
      case "SSUBSCRIBE":
        return cmd.slice(1).map((c, i) => [name.toLowerCase(), c, i + 1]);
      case "UNSUBSCRIBE":
      case "PUNSUBSCRIBE":
      case "SUNSUBSCRIBE":
        return [];
      default:
        return [new ReplyError(`ERR unknown command '${cmd[0]}'`)];
    }
  }
}
