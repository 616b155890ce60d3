// The runtime transports against real redis-server processes (plain TCP and TLS).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ConnectOptions, Connector, Transport } from "../../src/transport/types.ts";
import { defaultConnector } from "../../src/transport/default.ts";
import { nodeConnector } from "../../src/transport/node.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { startTlsRedis, type TlsRedis } from "../_helpers/tls.ts";

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const connectors: [string, Connector][] = [
  ["default", defaultConnector],
  ["node", nodeConnector],
];
if (runtime === "deno") {
  connectors.push(["deno", (await import("../../src/transport/deno.ts")).denoConnector]);
} else if (runtime === "bun") {
  connectors.push(["bun", (await import("../../src/transport/bun.ts")).bunConnector]);
}

const enc = new TextEncoder();
const PING = enc.encode("*1\r\n$4\r\nPING\r\n");

function cmd(...args: string[]): Uint8Array {
  return enc.encode(
    `*${args.length}\r\n` + args.map((a) => `$${enc.encode(a).length}\r\n${a}\r\n`).join(""),
  );
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)),
        ms,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A transport with its handlers installed, recording everything it reports. */
class Peer {
  text = "";
  drains = 0;
  closes: (Error | undefined)[] = [];
  #decoder = new TextDecoder();
  #waiters: (() => void)[] = [];
  constructor(readonly t: Transport) {
    t.setHandlers({
      onData: (chunk) => {
        this.text += this.#decoder.decode(chunk, { stream: true });
        this.#wake();
      },
      onDrain: () => {
        this.drains++;
        this.#wake();
      },
      onClose: (error) => {
        this.closes.push(error);
        this.#wake();
      },
    });
  }
  static async open(connector: Connector, options: ConnectOptions): Promise<Peer> {
    return new Peer(await connector(options));
  }
  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
  /** Resolves once `pred()` holds (checked after every event). */
  until(pred: () => boolean, what: string, ms = 5_000): Promise<void> {
    const p = new Promise<void>((resolve) => {
      const check = () => pred() ? resolve() : this.#waiters.push(check);
      check();
    });
    return withTimeout(p, ms, what);
  }
  /** Waits for `n` bytes of text and returns them (consumed). */
  async read(expectedLength: number): Promise<string> {
    await this.until(() => this.text.length >= expectedLength, `${expectedLength} chars`);
    const out = this.text.slice(0, expectedLength);
    this.text = this.text.slice(expectedLength);
    return out;
  }
  async close(): Promise<void> {
    this.t.close();
    await this.until(() => this.closes.length > 0, "onClose");
  }
}

async function connectedClients(observer: Peer): Promise<number> {
  observer.t.write(cmd("INFO", "clients"));
  await observer.until(
    () => /\r\n$/.test(observer.text) && observer.text.includes("blocked"),
    "INFO",
  );
  const n = Number(/connected_clients:(\d+)/.exec(observer.text)?.[1]);
  observer.text = "";
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [name, connector] of connectors) {
  describe(`${name} connector (${runtime}), TCP`, () => {
    let server: RedisServer;
    let opts: ConnectOptions;
    before(async () => {
      server = await startRedis();
      opts = { host: server.host, port: server.port };
    });
    after(async () => {
      await server.stop();
    });

    it("connects, answers PING, reports the peer and closes once", async () => {
      const p = await Peer.open(connector, opts);
      assert.equal(p.t.remoteAddress, "127.0.0.1");
      assert.equal(p.t.remotePort, server.port);
      assert.equal(p.t.secure, false);
      assert.equal(p.t.write(PING), true);
      assert.equal(await p.read(7), "+PONG\r\n");
      p.t.close();
      p.t.close();
      await p.until(() => p.closes.length > 0, "onClose");
      await sleep(50);
      assert.deepEqual(p.closes, [undefined]);
      assert.equal(p.t.write(PING), false);
    });

    it("writes a 10 MB value with backpressure and drain", async () => {
      const p = await Peer.open(connector, opts);
      const size = 10_000_000;
      const head = enc.encode(`*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$${size}\r\n`);
      const all = new Uint8Array(head.length + size + 2);
      all.set(head);
      all.fill(120, head.length, head.length + size);
      all.set(enc.encode("\r\n"), head.length + size);
      assert.equal(p.t.write(all), false, "a 10 MB write is above the high-water mark");
      await p.until(() => p.drains > 0, "onDrain", 10_000);
      assert.equal(p.t.write(cmd("STRLEN", "big")), true);
      assert.equal(await p.read(5 + 11), "+OK\r\n:10000000\r\n");
      assert.equal(p.drains, 1);
      await p.close();
    });

    it("keeps 2000 small writes of one tick in order", async () => {
      const p = await Peer.open(connector, opts);
      let expected = "";
      for (let i = 0; i < 1000; i++) {
        const c = cmd("ECHO", `m${i}`);
        // Split every command across two writes.
        p.t.write(c.subarray(0, 7));
        p.t.write(c.subarray(7));
        expected += `$${String(i).length + 1}\r\nm${i}\r\n`;
      }
      assert.equal(await p.read(expected.length), expected);
      await p.close();
    });

    it("closes a transport whose handlers were never set", async () => {
      const observer = await Peer.open(connector, opts);
      const before = await connectedClients(observer);
      const t = await connector(opts);
      // The server accepts asynchronously: poll for its view.
      const expectClients = async (n: number, what: string) => {
        const end = Date.now() + 3_000;
        while ((await connectedClients(observer)) !== n) {
          assert.ok(Date.now() < end, what);
          await sleep(10);
        }
      };
      await expectClients(before + 1, "the server never saw the second connection");
      t.close();
      t.close();
      await expectClients(before, "the server still sees the abandoned connection");
      await observer.close();
    });

    it("rejects with 'connection refused' on a closed port", async () => {
      const port = await freePort();
      await assert.rejects(connector({ host: "127.0.0.1", port }), (e: Error) => {
        assert.ok(e instanceof Error);
        assert.match(e.message, /^connection refused$/);
        return true;
      });
    });

    it("reports onClose once when the server dies", async () => {
      const own = await startRedis();
      try {
        const p = await Peer.open(connector, { host: own.host, port: own.port });
        p.t.write(PING);
        assert.equal(await p.read(7), "+PONG\r\n");
        await own.kill();
        await p.until(() => p.closes.length > 0, "onClose after kill");
        await sleep(50);
        assert.equal(p.closes.length, 1);
        assert.equal(p.t.write(PING), false);
        p.t.close();
        await sleep(10);
        assert.equal(p.closes.length, 1);
      } finally {
        await own.stop();
      }
    });
  });

  describe(`${name} connector (${runtime}), TLS`, () => {
    let srv: TlsRedis;
    let mtls: TlsRedis;
    before(async () => {
      srv = await startTlsRedis();
      mtls = await startTlsRedis({ authClients: true });
    });
    after(async () => {
      await srv.stop();
      await mtls.stop();
    });

    async function pingOver(options: ConnectOptions): Promise<Peer> {
      const p = await Peer.open(connector, options);
      p.t.write(PING);
      assert.equal(await p.read(7), "+PONG\r\n");
      return p;
    }

    it("answers PING with the test CA trusted", async () => {
      const p = await pingOver({
        host: "127.0.0.1",
        port: srv.tlsPort,
        tls: { caCerts: [srv.caPem] },
      });
      assert.equal(p.t.secure, true);
      assert.equal(p.t.remoteAddress, "127.0.0.1");
      assert.equal(p.t.remotePort, srv.tlsPort);
      await p.close();
      assert.deepEqual(p.closes, [undefined]);
    });

    it("verifies against tls.serverName", async () => {
      const p = await pingOver({
        host: "127.0.0.1",
        port: srv.tlsPort,
        tls: { caCerts: [srv.caPem], serverName: "localhost" },
      });
      await p.close();
      await assert.rejects(
        connector({
          host: "127.0.0.1",
          port: srv.tlsPort,
          tls: { caCerts: [srv.caPem], serverName: "wrong.example" },
        }),
        /^Error: certificate verify failed: .+/,
      );
    });

    it("rejects an untrusted certificate with a clear message", async () => {
      await assert.rejects(
        connector({ host: "127.0.0.1", port: srv.tlsPort, tls: {} }),
        (e: Error) => {
          assert.match(e.message, /^certificate verify failed: .*(issuer|self[- ]signed)/i);
          return true;
        },
      );
    });

    it("presents a client certificate (mutual TLS)", async () => {
      const tls = {
        caCerts: [mtls.caPem],
        cert: mtls.certs.clientCertPem,
        key: mtls.certs.clientKeyPem,
      };
      const a = await pingOver({ host: "127.0.0.1", port: mtls.tlsPort, tls });
      await a.close();
      const b = await pingOver({
        host: "127.0.0.1",
        port: mtls.tlsPort,
        tls: { ...tls, serverName: "localhost" },
      });
      await b.close();
    });

    it("reports onClose once when a TLS server dies", async () => {
      const own = await startTlsRedis();
      try {
        const p = await pingOver({
          host: "127.0.0.1",
          port: own.tlsPort,
          tls: { caCerts: [own.caPem] },
        });
        await own.server.kill();
        await p.until(() => p.closes.length > 0, "onClose after kill");
        await sleep(50);
        assert.equal(p.closes.length, 1);
        p.t.close();
        assert.equal(p.t.write(PING), false);
      } finally {
        await own.stop();
      }
    });

    it("writes a 10 MB value over TLS", async () => {
      const p = await Peer.open(connector, {
        host: "127.0.0.1",
        port: srv.tlsPort,
        tls: { caCerts: [srv.caPem] },
      });
      const size = 10_000_000;
      const head = enc.encode(`*3\r\n$3\r\nSET\r\n$4\r\nbigt\r\n$${size}\r\n`);
      const all = new Uint8Array(head.length + size + 2);
      all.set(head);
      all.fill(121, head.length, head.length + size);
      all.set(enc.encode("\r\n"), head.length + size);
      assert.equal(p.t.write(all), false);
      p.t.write(cmd("STRLEN", "bigt"));
      assert.equal(await p.read(5 + 11), "+OK\r\n:10000000\r\n");
      assert.ok(p.drains >= 1);
      await p.close();
    });
  });
}
