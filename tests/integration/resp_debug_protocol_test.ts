// The RESP codec against a real redis-server: every RESP3 type `DEBUG PROTOCOL` can produce,
// over a raw socket, encoded by RespEncoder and decoded by RespDecoder.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Socket } from "node:net";
import { RespDecoder } from "../../src/resp/decoder.ts";
import { RespEncoder } from "../../src/resp/encoder.ts";
import type { RedisArgument, RespValue } from "../../src/resp/types.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

interface Reply {
  value: RespValue;
  attributes?: Map<RespValue, RespValue>;
}

/** A raw RESP connection: send commands, await replies in order, collect pushes. */
class RawConnection {
  readonly socket: Socket;
  readonly pushes: RespValue[][] = [];
  readonly #waiting: { resolve: (r: Reply) => void; binary: boolean }[] = [];
  readonly #encoder = new RespEncoder();
  readonly #decoder: RespDecoder;
  closed: Promise<void>;

  constructor(socket: Socket) {
    this.socket = socket;
    this.#decoder = new RespDecoder({
      onReply: (value, attributes) => {
        const waiter = this.#waiting.shift();
        assert.ok(waiter, "a reply nobody waited for");
        // the flag is read at the start of the next frame: set it for the next waiter
        this.#decoder.binary = this.#waiting[0]?.binary ?? false;
        waiter.resolve(attributes === undefined ? { value } : { value, attributes });
      },
      onPush: (frame) => this.pushes.push(frame),
    });
    socket.on("data", (chunk: Uint8Array) => this.#decoder.feed(chunk));
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
  }

  static connect(host: string, port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = new Socket();
      socket.once("error", reject);
      socket.connect(port, host, () => {
        socket.off("error", reject);
        resolve(new RawConnection(socket));
      });
    });
  }

  send(args: RedisArgument[], binary = false): Promise<Reply> {
    this.#encoder.writeCommand(args);
    this.socket.write(this.#encoder.take());
    if (this.#waiting.length === 0) this.#decoder.binary = binary;
    return new Promise((resolve) => this.#waiting.push({ resolve, binary }));
  }

  async close(): Promise<void> {
    this.socket.end();
    await this.closed;
  }
}

describe("RESP codec against redis-server: DEBUG PROTOCOL", () => {
  let server: RedisServer;
  let conn: RawConnection;

  before(async () => {
    server = await startRedis();
    conn = await RawConnection.connect(server.host, server.port);
    const hello = await conn.send(["HELLO", "3"]);
    assert.ok(hello.value instanceof Map);
    assert.equal(hello.value.get("proto"), 3);
    assert.equal(hello.value.get("server"), "redis");
  });

  after(async () => {
    await conn?.close();
    await server?.stop();
    assert.equal(conn?.socket.destroyed ?? true, true);
  });

  const expected: [string, RespValue][] = [
    ["string", "Hello World"],
    ["integer", 12345],
    ["double", 3.141],
    ["bignum", 1234567999999999999999999999999999999n],
    ["null", null],
    ["array", [0, 1, 2]],
    ["set", new Set([0, 1, 2])],
    ["map", new Map<RespValue, RespValue>([[0, false], [1, true], [2, false]])],
    ["verbatim", "This is a verbatim\nstring"],
    ["true", true],
    ["false", false],
  ];
  for (const [type, value] of expected) {
    it(`decodes "${type}"`, async () => {
      const reply = await conn.send(["DEBUG", "PROTOCOL", type]);
      assert.deepEqual(reply, { value });
    });
  }

  it('decodes "attrib": the attribute map arrives beside the reply', async () => {
    const reply = await conn.send(["DEBUG", "PROTOCOL", "attrib"]);
    assert.deepEqual(reply, {
      value: "Some real reply following the attribute",
      attributes: new Map<RespValue, RespValue>([["key-popularity", ["key:123", 90]]]),
    });
  });

  it('decodes "push": the push goes to onPush, the reply after it to onReply', async () => {
    const before = conn.pushes.length;
    const reply = await conn.send(["DEBUG", "PROTOCOL", "push"]);
    assert.deepEqual(reply, { value: "Some real reply following the push reply" });
    assert.deepEqual(conn.pushes.slice(before), [["server-cpu-usage", 42]]);
  });

  it("round trips a 1 MB binary value through SET/GET (binary decoding per reply)", async () => {
    const blob = new Uint8Array(1024 * 1024);
    for (let i = 0; i < blob.length; i++) blob[i] = (i * 31 + 7) & 0xff;
    const [set, get, len, text] = await Promise.all([
      conn.send(["SET", "resp:blob", blob]),
      conn.send(["GET", "resp:blob"], true),
      conn.send(["STRLEN", "resp:blob"]),
      conn.send(["ECHO", "é\r\n"]),
    ]);
    assert.deepEqual(set, { value: "OK" });
    assert.ok(get.value instanceof Uint8Array);
    assert.equal(get.value.length, blob.length);
    assert.deepEqual(get.value, blob);
    assert.deepEqual(len, { value: blob.length });
    assert.deepEqual(text, { value: "é\r\n" });
  });
});
