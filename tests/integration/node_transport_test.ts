// with the node:net transport (onClose arrives after close(), not inside it), a socket
// that hits a protocol fault in the same chunk as its last handshake reply is still installed,
// and commands written to it never settle.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Connection } from "../../src/connection/connection.ts";
import { nodeConnector } from "../../src/transport/node.ts";
import { RespDecoder } from "../../src/resp/decoder.ts";
import { encodeValue } from "../../src/resp/encoder.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { silentLogger } from "../../src/logger.ts";
import { startFakeServer } from "../_helpers/fake_server.ts";

const HELLO: RespValue = new Map<RespValue, RespValue>([["server", "fake"], ["proto", 3]]);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

describe("node transport", () => {
  it("a command sent after a connect whose handshake chunk ended in garbage settles", async () => {
    const decoders = new Map<number, RespDecoder>();
    const server = await startFakeServer((socket, chunk, index) => {
      let d = decoders.get(index);
      if (!d) {
        d = new RespDecoder({
          onReply: (v) => {
            const cmd = (v as RespValue[]).map(String);
            if (cmd[0] === "HELLO") {
              const hello = encodeValue(HELLO, 3);
              // First socket: HELLO's reply and, in the same chunk, bytes that are not RESP.
              socket.write(index === 0 ? concat(hello, new TextEncoder().encode("?x\r\n")) : hello);
            } else if (index > 0) socket.write(encodeValue(cmd[1] ?? "OK", 3));
          },
          onPush: () => {},
        });
        decoders.set(index, d);
      }
      d.feed(chunk);
    });
    const conn = new Connection({
      endpoint: { host: server.host, port: server.port },
      connector: nodeConnector,
      protocol: 3,
      db: 0,
      connectTimeout: 500,
      commandTimeout: 200,
      reconnect: { baseDelay: 5, maxDelay: 20 },
      maxQueueLength: 1000,
      maxQueueBytes: 1 << 20,
      logger: silentLogger,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const race = <T>(p: Promise<T>, ms: number) =>
      Promise.race([
        p.then((v) => ({ v }), (e: unknown) => ({ e })),
        new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms)),
      ]).finally(() => clearTimeout(timer));
    await race(conn.connect(), 1000);
    const r = await race(conn.send(["ECHO", "x"], undefined, 0), 1000);
    conn.destroy();
    await server.close();
    assert.notEqual(r, "timeout", "the command settles (reply, or an error) within its timeout");
  });
});
