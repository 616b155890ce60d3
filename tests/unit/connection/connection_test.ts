// Connection against in-memory transports: batching, ordering, timeouts, protocol faults and
// the handoff, with no server.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Connection,
  type ConnectionOptions,
  type Endpoint,
} from "../../../src/connection/connection.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import type { ConnectOptions, Transport, TransportHandlers } from "../../../src/transport/types.ts";
import { ProtocolError, ReplyError, TimeoutError } from "../../../src/errors.ts";
import { silentLogger } from "../../../src/logger.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../../_helpers/leaks.ts";

type Answer = (cmd: string[], t: FakeTransport) => RespValue | undefined | "garbage" | "hang";

/** A socket whose peer answers each command with `answer` (after `delay` ms). */
class FakeTransport implements Transport {
  readonly remoteAddress = "127.0.0.1";
  readonly remotePort: number;
  readonly secure = false;
  readonly writes: Uint8Array[] = [];
  readonly commands: string[][] = [];
  closed = false;
  #h?: TransportHandlers;
  #lastAt = 0;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #decoder: RespDecoder;
  constructor(readonly endpoint: ConnectOptions, answer: Answer, delay: () => number) {
    this.remotePort = endpoint.port;
    this.#decoder = new RespDecoder({
      onReply: (v) => {
        const cmd = (v as RespValue[]).map(String);
        this.commands.push(cmd);
        const reply = answer(cmd, this);
        if (reply === undefined || reply === "hang") return;
        const bytes = reply === "garbage"
          ? new TextEncoder().encode("?garbage\r\n")
          : encodeValue(reply, 3);
        // Replies leave in order, like a server's: never before an earlier one.
        const at = Math.max(Date.now() + delay(), this.#lastAt);
        this.#lastAt = at;
        this.#chain = this.#chain
          .then(() => (at > Date.now() ? new Promise((r) => setTimeout(r, at - Date.now())) : 0))
          .then(() => {
            if (!this.closed) this.#h?.onData(bytes);
          });
      },
      onPush: () => {},
    });
  }
  setHandlers(h: TransportHandlers): void {
    this.#h = h;
  }
  write(bytes: Uint8Array): boolean {
    if (this.closed) return false;
    this.writes.push(bytes);
    this.#decoder.feed(bytes);
    return true;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    setTimeout(() => this.#h?.onClose(), 0);
  }
  /** The peer closes the socket. */
  drop(): void {
    this.close();
  }
}

function handshakeAnswer(cmd: string[]): RespValue | undefined {
  switch (cmd[0]) {
    case "HELLO":
      return new Map<RespValue, RespValue>([["server", "fake"], ["proto", 3]]);
    case "CLIENT":
    case "SELECT":
      return "OK";
    case "PING":
      return "PONG";
  }
  return undefined;
}

function setup(
  answer: Answer,
  options: Partial<ConnectionOptions> = {},
  delay: () => number = () => 0,
) {
  const transports: FakeTransport[] = [];
  const conn = new Connection({
    endpoint: { host: "127.0.0.1", port: 7000 },
    connector: (o) => {
      const t = new FakeTransport(o, (cmd, tr) => handshakeAnswer(cmd) ?? answer(cmd, tr), delay);
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

const echo: Answer = (cmd) =>
  cmd[0] === "ECHO" ? cmd[1] : cmd[0] === "ERR" ? new ReplyError("ERR boom") : "OK";

describe("Connection", () => {
  beforeEach(markLeakBaseline);
  it("writes every command of one tick in one write and resolves them in order", async () => {
    const { conn, transports } = setup(echo);
    await conn.connect();
    const t = transports[0]!;
    const before = t.writes.length;
    const replies = await Promise.all(
      Array.from({ length: 500 }, (_, i) => conn.send(["ECHO", String(i)], undefined, 0)),
    );
    assert.deepEqual(replies, Array.from({ length: 500 }, (_, i) => String(i)));
    assert.equal(t.writes.length - before, 1, "one write for the whole tick");
    await conn.close();
    await assertNoLeaks();
  });

  it("rejects error replies with ReplyError and keeps going", async () => {
    const { conn } = setup(echo);
    const [a, b, c] = await Promise.allSettled([
      conn.send(["ECHO", "a"], undefined, 0),
      conn.send(["ERR"], undefined, 0),
      conn.send(["ECHO", "c"], undefined, 0),
    ]);
    assert.deepEqual(a, { status: "fulfilled", value: "a" });
    assert.ok(b.status === "rejected" && b.reason instanceof ReplyError);
    assert.deepEqual(c, { status: "fulfilled", value: "c" });
    await conn.close();
  });

  it("times out a command, discards its late reply and answers the next one correctly", async () => {
    let slow = true;
    const { conn } = setup(echo, { commandTimeout: 50 }, () => (slow ? 120 : 0));
    await conn.connect().catch(() => {});
    // The handshake itself was slow but within connectTimeout.
    const late = conn.send(["ECHO", "late"], undefined, 0);
    await assert.rejects(late, TimeoutError);
    slow = false;
    await sleep(100); // the late reply arrives and is discarded
    assert.equal(await conn.send(["ECHO", "next"], undefined, 0), "next");
    await conn.close();
    await assertNoLeaks();
  });

  it("resets the socket on garbage with ProtocolError, then reconnects", async () => {
    let bad = true;
    const { conn, transports } = setup((cmd) =>
      cmd[0] === "ECHO" && bad ? "garbage" : echo(cmd, undefined as never)
    );
    await conn.connect();
    await assert.rejects(conn.send(["ECHO", "x"], undefined, 0), ProtocolError);
    bad = false;
    assert.equal(await conn.send(["ECHO", "y"], undefined, 0), "y");
    assert.equal(transports.length, 2);
    assert.ok(transports[0]!.closed);
    await conn.close();
    await assertNoLeaks();
  });

  it("hands off: holds new work, drains the old socket, flushes in order to the new one", async () => {
    let target: Endpoint = { host: "127.0.0.2", port: 7001 };
    const { conn, transports } = setup(echo, {
      hooks: { resolveEndpoint: () => target },
    }, () => 20);
    await conn.connect();
    const old = transports[0]!;
    const inflight = Array.from(
      { length: 10 },
      (_, i) => conn.send(["ECHO", `old${i}`], undefined, 0),
    );
    await sleep(1); // written, not yet answered
    const handoff = conn.handoff(1000);
    const held = Array.from({ length: 10 }, (_, i) => conn.send(["ECHO", `new${i}`], undefined, 0));
    target = { host: "127.0.0.3", port: 7002 }; // a second MOVING during the drain
    const r = await handoff;
    assert.equal(r.replaced, true);
    assert.deepEqual(r.to, { host: "127.0.0.3", port: 7002 });
    assert.ok(r.held >= 10);
    assert.deepEqual(await Promise.all(inflight), Array.from({ length: 10 }, (_, i) => `old${i}`));
    assert.deepEqual(await Promise.all(held), Array.from({ length: 10 }, (_, i) => `new${i}`));
    const fresh = transports[1]!;
    assert.equal(fresh.endpoint.host, "127.0.0.3");
    // Nothing held was written to the old socket; everything held went to the new one, in order.
    assert.ok(!old.commands.some((c) => c[1]?.startsWith("new")));
    const echoed = fresh.commands.filter((c) => c[0] === "ECHO").map((c) => c[1]);
    assert.deepEqual(echoed, Array.from({ length: 10 }, (_, i) => `new${i}`));
    await sleep(5);
    assert.ok(old.closed, "the old socket closes once drained");
    await conn.close();
    await assertNoLeaks();
  });

  it("caps the drain: a command that never answers does not block the handoff", async () => {
    const { conn, transports } = setup(
      (cmd) => cmd[1] === "never" ? "hang" : echo(cmd, undefined as never),
      {
        hooks: { resolveEndpoint: () => ({ host: "127.0.0.2", port: 7001 }) },
        commandTimeout: 0,
      },
    );
    await conn.connect();
    const stuck = conn.send(["ECHO", "never"], undefined, 0);
    stuck.catch(() => {});
    await sleep(1); // written before the handoff starts
    const t0 = Date.now();
    const r = await conn.handoff(100);
    assert.ok(Date.now() - t0 < 500);
    assert.ok(r.drainMs >= 90);
    assert.equal(await conn.send(["ECHO", "after"], undefined, 0), "after");
    assert.equal(transports.length, 2);
    conn.destroy();
    await assert.rejects(stuck);
    await assertNoLeaks();
  });

  it("bounds the queue behind a full socket too", async () => {
    const { conn, transports } = setup(() => undefined, { maxQueueLength: 5 });
    await conn.connect();
    const t = transports[0]!;
    const full = t.write.bind(t);
    t.write = (b) => (full(b), false); // every write leaves the socket above its high-water mark
    const first = conn.send(["ECHO", "0"], undefined, 0);
    first.catch(() => {});
    await sleep(1); // written: the socket is now full
    const queued = [1, 2, 3, 4, 5].map((i) => conn.send(["ECHO", String(i)], undefined, 0));
    for (const q of queued) q.catch(() => {});
    await assert.rejects(conn.send(["ECHO", "6"], undefined, 0), /maxQueueLength/);
    conn.destroy();
    for (const q of queued) await assert.rejects(q, { name: "ClosedError" });
    await assertNoLeaks();
  });

  it("rejects new commands when the offline queue is full, never an old one", async () => {
    const { conn } = setup(echo, { maxQueueLength: 3, connector: () => new Promise(() => {}) });
    const queued = [1, 2, 3].map((i) => conn.send(["ECHO", String(i)], undefined, 0));
    await assert.rejects(conn.send(["ECHO", "4"], undefined, 0), /maxQueueLength/);
    conn.destroy();
    for (const q of queued) await assert.rejects(q, { name: "ClosedError" });
    await assertNoLeaks();
  });
});
