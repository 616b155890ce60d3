// Connection under faults, against in-memory transports: close during a handoff hold, sockets
// lost while full, late handoffs, mixed timeouts, transactions across a reconnect. Every wait
// is bounded.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Connection, type ConnectionOptions } from "../../../src/connection/connection.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import type { ConnectOptions, Transport, TransportHandlers } from "../../../src/transport/types.ts";
import { silentLogger } from "../../../src/logger.ts";
import { RedisClient } from "../../../mod.ts";

/** What the peer does with one command: a value, raw bytes, or nothing (hang). */
type Answer = (cmd: string[], t: MemTransport) => RespValue | Uint8Array | undefined;

const HELLO: RespValue = new Map<RespValue, RespValue>([["server", "fake"], ["proto", 3]]);

/** An in-memory socket; the peer answers synchronously-later (setTimeout 0). */
class MemTransport implements Transport {
  readonly remoteAddress = "127.0.0.1";
  readonly remotePort: number;
  readonly secure = false;
  readonly commands: string[][] = [];
  closed = false;
  /** What write() returns while open (false: above the high-water mark). */
  writable = true;
  #h?: TransportHandlers;
  readonly #decoder: RespDecoder;
  constructor(readonly options: ConnectOptions, answer: Answer) {
    this.remotePort = options.port;
    this.#decoder = new RespDecoder({
      onReply: (v) => {
        const cmd = (v as RespValue[]).map(String);
        this.commands.push(cmd);
        const reply = cmd[0] === "HELLO" ? HELLO : answer(cmd, this);
        if (reply === undefined) return;
        const bytes = reply instanceof Uint8Array ? reply : encodeValue(reply, 3);
        setTimeout(() => {
          if (!this.closed) this.#h?.onData(bytes);
        }, 0);
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
    return this.writable;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    setTimeout(() => this.#h?.onClose(), 0);
  }
}

function options(connector: ConnectionOptions["connector"]): ConnectionOptions {
  return {
    endpoint: { host: "127.0.0.1", port: 7000 },
    connector,
    protocol: 3,
    db: 0,
    connectTimeout: 100,
    commandTimeout: 100,
    reconnect: { baseDelay: 5, maxDelay: 20 },
    maxQueueLength: 1000,
    maxQueueBytes: 1 << 20,
    logger: silentLogger,
  };
}

/** Settles `p` or gives up after `ms`: "timeout" when it did not settle in time. */
async function within<T>(
  p: Promise<T>,
  ms: number,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown } | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
  try {
    return await Promise.race([
      p.then((value) => ({ ok: true as const, value }), (error) => ({ ok: false as const, error })),
      t,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const echo: Answer = (cmd) => cmd[0] === "ECHO" ? cmd[1] : "OK";

describe("Connection under faults", () => {
  it("close() during a handoff hold settles the held commands and resolves", async () => {
    const transports: MemTransport[] = [];
    const conn = new Connection(options((o) => {
      const t = new MemTransport(o, echo);
      transports.push(t);
      return Promise.resolve(t);
    }));
    await conn.connect();
    const handoff = conn.handoff(1000, { host: "127.0.0.1", port: 7001 });
    const held = conn.send(["ECHO", "held"], undefined, 0); // held in the backlog
    const closing = conn.close();
    const c = await within(closing, 1000);
    const h = await within(held, 100);
    await within(handoff, 100);
    conn.destroy();
    for (const t of transports) t.close();
    assert.notEqual(c, "timeout", "close() resolves");
    assert.notEqual(h, "timeout", "the held command settles");
  });

  it("a command queued behind a full socket times out when the socket is lost and the server stays down", async () => {
    let down = false;
    const transports: MemTransport[] = [];
    const conn = new Connection(options((o) => {
      if (down) return Promise.reject(new Error("connection refused"));
      const t = new MemTransport(o, () => undefined); // never answers commands
      transports.push(t);
      return Promise.resolve(t);
    }));
    await conn.connect();
    const t0 = transports[0]!;
    t0.writable = false; // the next write reaches the high-water mark
    const first = conn.send(["SET", "a", "1"], undefined, 0);
    first.catch(() => {});
    await Promise.resolve();
    const queued = conn.send(["SET", "b", "2"], undefined, 0); // waits for onDrain
    down = true;
    t0.close(); // the peer goes away, and so does the server
    // commandTimeout 100 / connectTimeout 100: the queued command must fail well within 1 s.
    const r = await within(queued, 1000);
    conn.destroy();
    assert.notEqual(r, "timeout", "the queued command settles within its bound");
  });

  it("a handoff that finishes after a reconnect does not orphan the reconnected socket", async () => {
    const transports: MemTransport[] = [];
    let releaseTarget: (() => void) | undefined;
    const conn = new Connection(options((o) => {
      const t = new MemTransport(o, echo);
      transports.push(t);
      if (o.port === 7001) {
        // The replacement's socket opens late.
        return new Promise((r) => releaseTarget = () => r(t));
      }
      return Promise.resolve(t);
    }));
    await conn.connect();
    const t0 = transports[0]!;
    const handoff = conn.handoff(0, { host: "127.0.0.1", port: 7001 });
    for (let i = 0; i < 50 && releaseTarget === undefined; i++) await sleep(1);
    t0.close(); // the old socket is lost while the replacement is being opened
    // Wait until the connection reconnected (a third socket, to 7000) and is ready.
    for (let i = 0; i < 100 && !(transports.length === 3 && conn.ready); i++) await sleep(2);
    assert.ok(transports.length === 3 && conn.ready, "reconnected");
    releaseTarget!();
    await within(handoff, 500);
    await within(conn.close(), 500);
    await sleep(5);
    const open = transports.filter((t) => !t.closed).map((t) => t.options.port);
    for (const t of transports) t.close();
    assert.deepEqual(open, [], "every socket is closed after close()");
  });

  it("a short per-command timeout fires on time behind a command with a long one", async () => {
    const conn = new Connection(
      options((o) => Promise.resolve(new MemTransport(o, () => undefined))),
    );
    await conn.connect();
    const long = conn.send(["GET", "slow"], undefined, 0, 5000);
    long.catch(() => {});
    const start = Date.now();
    const short = conn.send(["GET", "fast"], undefined, 0, 50);
    const r = await within(short, 1000);
    const ms = Date.now() - start;
    conn.destroy();
    assert.ok(r !== "timeout" && !r.ok, "the 50 ms command times out");
    assert.ok(ms < 500, `timed out after ${ms} ms`);
  });

  it("a socket whose handshake reply is followed by a protocol fault is not installed", async () => {
    const transports: MemTransport[] = [];
    const garbage = new TextEncoder().encode("?garbage\r\n");
    const conn = new Connection(options((o) => {
      const first = transports.length === 0;
      const t = new MemTransport(o, echo);
      transports.push(t);
      if (first) {
        // The first socket answers HELLO, then (same chunk) bytes that are not RESP.
        const hello = encodeValue(HELLO, 3);
        const chunk = new Uint8Array(hello.length + garbage.length);
        chunk.set(hello);
        chunk.set(garbage, hello.length);
        const orig = t.setHandlers.bind(t);
        t.setHandlers = (handlers) => {
          orig(handlers);
          setTimeout(() => handlers.onData(chunk), 0);
        };
        t.write = (_bytes) => !t.closed; // the peer ignores what is written
      }
      return Promise.resolve(t);
    }));
    await within(conn.connect(), 500);
    // Whatever connect() did, a command sent now settles within its timeout (100 ms).
    const r = await within(conn.send(["ECHO", "x"], undefined, 0), 1000);
    conn.destroy();
    for (const t of transports) t.close();
    assert.notEqual(r, "timeout", "the command settles");
  });
  it("the unwritten rest of a transaction is not run outside MULTI after a reconnect", async () => {
    const transports: MemTransport[] = [];
    const client = new RedisClient({
      host: "127.0.0.1",
      port: 7000,
      connector: (o) => {
        const t = new MemTransport(o, () => "OK");
        transports.push(t);
        return Promise.resolve(t);
      },
      maintenanceNotifications: { mode: "disabled" },
      reconnect: { baseDelay: 5, maxDelay: 20 },
    });
    await client.connect();
    const t0 = transports[0]!;
    t0.writable = false; // the first batch reaches the high-water mark
    // A value past the 4 MiB batch limit may split the transaction over two writes.
    const done = client.multi().set("big", "x".repeat(4 * 1024 * 1024)).set("after", "1").exec()
      .then(() => "resolved", () => "rejected");
    await Promise.resolve();
    await Promise.resolve();
    t0.close(); // the socket is lost before the rest of the transaction was written
    await within(done, 1000);
    for (let i = 0; i < 50 && transports.length < 2; i++) await sleep(2);
    await sleep(20);
    const later = transports.slice(1).flatMap((t) =>
      t.commands.map((c) => c[0] + " " + (c[1] ?? ""))
    );
    await within(client.close(), 500);
    for (const t of transports) t.close();
    assert.ok(
      !later.includes("SET after"),
      `a command of the transaction ran on the new socket without MULTI: ${later.join(", ")}`,
    );
  });

  it("close() while the socket is full, then the socket is lost: the queued command settles", async () => {
    const transports: MemTransport[] = [];
    const conn = new Connection(options((o) => {
      const t = new MemTransport(o, () => undefined);
      transports.push(t);
      return Promise.resolve(t);
    }));
    await conn.connect();
    const t0 = transports[0]!;
    t0.writable = false;
    const written = conn.send(["SET", "a", "1"], undefined, 0);
    written.catch(() => {});
    await Promise.resolve();
    const queued = conn.send(["SET", "b", "2"], undefined, 0); // waits for onDrain
    const closing = conn.close();
    t0.close(); // lost before it drained
    const c = await within(closing, 500);
    const q = await within(queued, 500);
    conn.destroy();
    assert.notEqual(c, "timeout", "close() resolves");
    assert.notEqual(q, "timeout", "the queued command settles");
  });
});
