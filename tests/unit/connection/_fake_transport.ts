// An in-memory socket for Connection tests. The peer decodes each command and answers it in
// order (one macrotask later), like a server: a canned handshake, then what the test decides.
import { Connection, type ConnectionOptions } from "../../../src/connection/connection.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import type { ConnectOptions, Transport, TransportHandlers } from "../../../src/transport/types.ts";
import { silentLogger } from "../../../src/logger.ts";

/** The peer never answers this command (and, like a blocked server, nothing after it). */
export const HANG: unique symbol = Symbol("hang");
/** The peer answers nothing to this command but goes on with the next ones. */
export const SKIP: unique symbol = Symbol("skip");

/** What the peer answers: a value, raw bytes, HANG, SKIP, or `undefined` for the default. */
export type Answer = (
  cmd: string[],
  t: FakeTransport,
) => RespValue | Uint8Array | typeof HANG | typeof SKIP | undefined;

const HELLO: RespValue = new Map<RespValue, RespValue>([["server", "fake"], ["proto", 3]]);

function defaultAnswer(cmd: string[]): RespValue {
  switch (cmd[0]?.toUpperCase()) {
    case "HELLO":
      return HELLO;
    case "PING":
      return "PONG";
    case "ECHO":
      return cmd[1] ?? "";
  }
  return "OK";
}

export class FakeTransport implements Transport {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly secure = false;
  readonly commands: string[][] = [];
  closed = false;
  /** What write() returns while open (false: above the high-water mark). */
  writable = true;
  /** Set when a HANG command arrived: the peer answers nothing more. */
  hung = false;
  #h?: TransportHandlers;
  readonly #decoder: RespDecoder;
  constructor(readonly options: ConnectOptions, answer: Answer) {
    this.remoteAddress = options.host;
    this.remotePort = options.port;
    this.#decoder = new RespDecoder({
      onReply: (v) => {
        const cmd = (v as RespValue[]).map((a) =>
          a instanceof Uint8Array ? new TextDecoder().decode(a) : String(a)
        );
        this.commands.push(cmd);
        this.batches[this.batches.length - 1]?.push(cmd);
        if (this.hung) return;
        const r = answer(cmd, this) ?? defaultAnswer(cmd);
        if (r === HANG) {
          this.hung = true;
          return;
        }
        if (r === SKIP) return;
        this.send(r instanceof Uint8Array ? r : encodeValue(r, 3));
      },
      onPush: () => {},
    });
  }
  setHandlers(h: TransportHandlers): void {
    this.#h = h;
  }
  /** Writes so far (each a batch of commands). */
  writes = 0;
  /** The commands of each write, in order (`writes` of them). */
  readonly batches: string[][][] = [];
  write(bytes: Uint8Array): boolean {
    if (this.closed) return false;
    this.writes++;
    this.batches.push([]);
    this.#decoder.feed(bytes);
    return this.writable;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    setTimeout(() => this.#h?.onClose(), 0);
  }
  /** Bytes from the peer, one macrotask later (in order with the replies). */
  send(bytes: Uint8Array): void {
    setTimeout(() => {
      if (!this.closed) this.#h?.onData(bytes);
    }, 0);
  }
  /** A RESP3 push frame from the peer. */
  push(frame: RespValue[]): void {
    const body = encodeValue(frame, 3);
    body[0] = 0x3e; // ">" instead of "*"
    this.send(body);
  }
  /** The peer closes the socket. */
  drop(): void {
    this.close();
  }
  /** The peer reads again (after `writable = false`). */
  drain(): void {
    this.writable = true;
    this.#h?.onDrain();
  }
}

/** A connection to 127.0.0.1:7000 whose sockets are FakeTransports answering with `answer`. */
export function fakeConnection(
  answer: Answer,
  options: Partial<ConnectionOptions> = {},
): { conn: Connection; transports: FakeTransport[] } {
  const transports: FakeTransport[] = [];
  const conn = new Connection({
    endpoint: { host: "127.0.0.1", port: 7000 },
    connector: (o) => {
      const t = new FakeTransport(o, answer);
      transports.push(t);
      return Promise.resolve(t);
    },
    protocol: 3,
    db: 0,
    connectTimeout: 1000,
    commandTimeout: 1000,
    reconnect: { baseDelay: 1, maxDelay: 5 },
    maxQueueLength: 1000,
    maxQueueBytes: 1 << 20,
    logger: silentLogger,
    ...options,
  });
  return { conn, transports };
}

/** Resolves after `ms` real milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves with "pending" if `p` has not settled within `ms` real milliseconds. */
export function within<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  let id: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<"pending">((r) => {
    id = setTimeout(() => r("pending"), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(id));
}
