// MOVING handoffs through RedisClient: a second MOVING that arrives while the replacement to the
// first target is still in its handshake moves the shared connection on to the new target; with
// relaxedTimeout 0, a target that never answers does not hang commands.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../../mod.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import type { ConnectOptions, Transport, TransportHandlers } from "../../../src/transport/types.ts";

const enc = new TextEncoder();

/** An in-memory Redis: answers the handshake and GET; can push frames; can hold HELLO. */
class MemRedis implements Transport {
  readonly remoteAddress = "127.0.0.1";
  readonly remotePort: number;
  readonly secure = false;
  readonly commands: string[][] = [];
  closed = false;
  #h?: TransportHandlers;
  #held: Uint8Array[] | undefined;
  readonly #decoder: RespDecoder;
  constructor(readonly options: ConnectOptions, holdHello: boolean) {
    this.remotePort = options.port;
    if (holdHello) this.#held = [];
    this.#decoder = new RespDecoder({
      onReply: (v) => {
        const cmd = (v as RespValue[]).map(String);
        this.commands.push(cmd);
        const reply: RespValue = cmd[0] === "HELLO"
          ? new Map<RespValue, RespValue>([["proto", 3]])
          : cmd[0] === "GET"
          ? `from ${options.port}`
          : cmd[0] === "PING"
          ? "PONG"
          : "OK";
        this.#send(encodeValue(reply, 3));
      },
      onPush: () => {},
    });
  }
  #send(bytes: Uint8Array): void {
    if (this.#held) {
      this.#held.push(bytes);
      return;
    }
    setTimeout(() => {
      if (!this.closed) this.#h?.onData(bytes);
    }, 0);
  }
  /** Lets the held replies go. */
  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const b of held) this.#send(b);
  }
  /** Sends `MOVING seq time host:port` as a RESP3 push. */
  moving(seq: number, time: number, target: string): void {
    const bytes = enc.encode(
      `>4\r\n$6\r\nMOVING\r\n:${seq}\r\n:${time}\r\n$${target.length}\r\n${target}\r\n`,
    );
    setTimeout(() => {
      if (!this.closed) this.#h?.onData(bytes);
    }, 0);
  }
  setHandlers(h: TransportHandlers): void {
    this.#h = h;
  }
  write(bytes: Uint8Array): boolean {
    if (!this.closed) this.#decoder.feed(bytes);
    return !this.closed;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    setTimeout(() => this.#h?.onClose(), 0);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("MOVING handoff through RedisClient", () => {
  it("a retarget during the replacement's handshake ends on the new target", async () => {
    const transports: MemRedis[] = [];
    const client = new RedisClient({
      host: "127.0.0.1",
      port: 7000,
      connector: (o) => {
        const t = new MemRedis(o, o.port === 7001);
        transports.push(t);
        return Promise.resolve(t);
      },
      maintenanceNotifications: { mode: "enabled", relaxedTimeout: 1000 },
    });
    const events: unknown[] = [];
    client.addEventListener("maintenance", (e) => events.push((e as CustomEvent).detail));
    try {
      await client.connect();
      const t0 = transports[0]!;
      t0.moving(1, 30, "127.0.0.1:7001");
      // Wait until the replacement to 7001 was dialled (its HELLO is held).
      for (let i = 0; i < 200 && !transports.some((t) => t.remotePort === 7001); i++) {
        await sleep(2);
      }
      const t1 = transports.find((t) => t.remotePort === 7001);
      assert.ok(t1, "dialled the first target");
      for (let i = 0; i < 200 && t1.commands.length === 0; i++) await sleep(2);
      // The endpoint moves again, to 7002, before the 7001 handshake completes.
      t0.moving(2, 30, "127.0.0.1:7002");
      await sleep(20);
      t1.release();
      // Let the handoff(s) settle, then see where commands go.
      let where = "";
      for (let i = 0; i < 100; i++) {
        await sleep(10);
        where = String(await client.get("k"));
        if (where === "from 7002") break;
      }
      // Premise: the controller asked for the shared connection to be replaced again.
      assert.ok(
        events.some((e) =>
          (e as { type: string }).type === "handoff-retarget" &&
          (e as { retire: string[] }).retire.includes("shared")
        ),
        "a handoff-retarget retiring the shared connection was decided",
      );
      assert.equal(where, "from 7002", "commands are served by the latest MOVING target");
    } finally {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([client.close(), new Promise((r) => timer = setTimeout(r, 1000))]);
      clearTimeout(timer);
      for (const t of transports) t.close();
    }
  });
  it("with relaxedTimeout 0, a MOVING to a target that never answers does not hang commands", async () => {
    const transports: MemRedis[] = [];
    const client = new RedisClient({
      host: "127.0.0.1",
      port: 7000,
      connectTimeout: 300,
      commandTimeout: 2000,
      connector: (o) => {
        if (o.port === 7001) return new Promise(() => {}); // the target never answers
        const t = new MemRedis(o, false);
        transports.push(t);
        return Promise.resolve(t);
      },
      maintenanceNotifications: { mode: "enabled", relaxedTimeout: 0 },
    });
    try {
      await client.connect();
      transports[0]!.moving(1, 30, "127.0.0.1:7001");
      await sleep(20);
      const t0 = Date.now();
      const where = await client.get("k");
      assert.equal(where, "from 7000", "served by the old endpoint");
      assert.ok(
        Date.now() - t0 < 1500,
        `answered after the bounded connect (${Date.now() - t0} ms)`,
      );
    } finally {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([client.close(), new Promise((r) => timer = setTimeout(r, 1000))]);
      clearTimeout(timer);
      for (const t of transports) t.close();
    }
  });
});
