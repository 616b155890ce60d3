// The proxy's ordering rules with fake sockets: no server, full control over chunking.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProxyConnection, type ProxyHost } from "../../../src/testing/_proxy_connection.ts";
import type { ServerTransport } from "../../../src/transport/listen.ts";
import type { Transport, TransportHandlers } from "../../../src/transport/types.ts";
import { encodeCommand } from "../../../src/resp/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

class FakeSocket implements ServerTransport {
  readonly remoteAddress = "127.0.0.1";
  readonly remotePort = 50000;
  readonly localAddress = "127.0.0.1";
  readonly localPort = 6379;
  readonly secure = false;
  h!: TransportHandlers;
  written: Uint8Array[] = [];
  closed = false;
  setHandlers(h: TransportHandlers): void {
    this.h = h;
  }
  write(bytes: Uint8Array): boolean {
    this.written.push(bytes.slice());
    return true;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.h.onClose();
  }
  destroy(): void {
    this.close();
  }
  text(): string {
    return this.written.map((b) => dec.decode(b)).join("");
  }
}

function setup(options: Partial<ProxyHost> = {}) {
  const client = new FakeSocket();
  const upstream = new FakeSocket();
  const host: ProxyHost = {
    connector: () => Promise.resolve(upstream as Transport),
    rejectMaintNotifications: false,
    latencyMs: () => 0,
    holdUntil: () => 0,
    blackholed: () => false,
    paused: () => false,
    optInReplay: () => [],
    closed: () => {},
    debug: () => {},
    ...options,
  };
  const conn = new ProxyConnection(host, client, { host: "127.0.0.1", port: 6379 }, {
    host: "127.0.0.1",
    port: 7000,
  });
  const send = (...cmds: string[][]) => {
    const parts = cmds.map((c) => encodeCommand(c));
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    client.h.onData(all);
  };
  const reply = (text: string, chunk = text.length) => {
    const b = enc.encode(text);
    for (let i = 0; i < b.length; i += chunk) upstream.h.onData(b.subarray(i, i + chunk));
  };
  return { client, upstream, conn, send, reply };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const HELLO3_REPLY = "%1\r\n$5\r\nproto\r\n:3\r\n";

describe("ProxyConnection", () => {
  it("holds its own answer behind an earlier forwarded reply, whatever the chunking", async () => {
    const { client, upstream, send, reply } = setup();
    await tick();
    send(["HELLO", "3"], ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "none"], [
      "GET",
      "k",
    ]);
    assert.equal(client.text(), "", "nothing answered before HELLO's reply");
    assert.equal(
      upstream.text(),
      dec.decode(encodeCommand(["HELLO", "3"])) + dec.decode(encodeCommand(["GET", "k"])),
    );
    reply(HELLO3_REPLY + "$1\r\nv\r\n", 1);
    assert.equal(client.text(), HELLO3_REPLY + "+OK\r\n$1\r\nv\r\n");
  });

  it("decides the RESP3 check when the opt-in reaches the head (after HELLO's reply)", async () => {
    const { client, send, reply } = setup();
    await tick();
    send(["HELLO", "3"], ["CLIENT", "MAINT_NOTIFICATIONS", "ON"]);
    reply("-NOPROTO sorry\r\n");
    assert.equal(
      client.text(),
      "-NOPROTO sorry\r\n-ERR CLIENT MAINT_NOTIFICATIONS ON requires RESP3: send HELLO 3 first\r\n",
    );
  });

  it("injects pushes only between whole frames", async () => {
    const { client, conn, send, reply } = setup();
    await tick();
    send(["GET", "big"]);
    reply("$10\r\n01234");
    conn.inject(enc.encode(">2\r\n+X\r\n:1\r\n"));
    reply("56789\r\n");
    assert.equal(client.text(), ">2\r\n+X\r\n:1\r\n$10\r\n0123456789\r\n");
  });

  it("passes unsolicited pushes through without taking a reply slot", async () => {
    const { client, send, reply } = setup();
    await tick();
    send(["HELLO", "3"]);
    reply(HELLO3_REPLY);
    send(["GET", "a"], ["GET", "b"]);
    reply(">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n");
    assert.equal(
      client.text(),
      HELLO3_REPLY + ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n",
    );
  });

  it("buffers requests until the upstream connection is open", async () => {
    let open!: (t: Transport) => void;
    const upstream = new FakeSocket();
    const { client, send } = setup({ connector: () => new Promise<Transport>((r) => open = r) });
    send(["PING"]);
    open(upstream);
    await tick();
    assert.equal(upstream.text(), "*1\r\n$4\r\nPING\r\n");
    upstream.h.onData(enc.encode("+PONG\r\n"));
    assert.equal(client.text(), "+PONG\r\n");
  });

  it("switches upstream: drains in-flight replies, replays the session silently, then sends held requests", async () => {
    const first = new FakeSocket();
    const second = new FakeSocket();
    const sockets = [first, second];
    const { client, conn, send } = setup({
      connector: () => Promise.resolve(sockets.shift()! as Transport),
    });
    await tick();
    send(["SELECT", "2"]);
    first.h.onData(enc.encode("+OK\r\n"));
    send(["BLPOP", "q", "1"]);
    const switched = conn.switchUpstream({ host: "127.0.0.1", port: 7001 });
    send(["GET", "k"]);
    await tick();
    assert.ok(!first.text().includes("GET"), "held while the old upstream owes a reply");
    assert.equal(second.written.length, 0);
    first.h.onData(enc.encode("*-1\r\n"));
    await switched;
    assert.equal(conn.upstream.port, 7001);
    assert.equal(
      second.text(),
      dec.decode(encodeCommand(["SELECT", "2"])) + dec.decode(encodeCommand(["GET", "k"])),
    );
    second.h.onData(enc.encode("+OK\r\n$1\r\nv\r\n"));
    assert.equal(
      client.text(),
      "+OK\r\n*-1\r\n$1\r\nv\r\n",
      "the replayed SELECT's reply is not forwarded",
    );
    assert.equal(conn.inFlight, 0);
  });
});
