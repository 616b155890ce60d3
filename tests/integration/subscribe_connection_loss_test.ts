// subscribe() waits for the server's confirmation with no bound. When the connection
// is lost after SUBSCRIBE was written and is not re-established (reconnect: false), the
// promise never settles.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { RespDecoder } from "../../src/resp/decoder.ts";
import { encodeValue } from "../../src/resp/encoder.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { startFakeServer } from "../_helpers/fake_server.ts";

describe("subscribe on a lost connection", () => {
  it("subscribe() rejects when the connection dies before the confirmation (reconnect: false)", async () => {
    const decoders = new Map<number, RespDecoder>();
    const server = await startFakeServer((socket, chunk, index) => {
      let d = decoders.get(index);
      if (!d) {
        d = new RespDecoder({
          onReply: (v) => {
            const cmd = (v as RespValue[]).map(String);
            if (cmd[0] === "HELLO") {
              socket.write(encodeValue(new Map<RespValue, RespValue>([["proto", 3]]), 3));
            } else if (cmd[0] === "SUBSCRIBE") socket.destroy(); // dies before confirming
            else socket.write(encodeValue("OK", 3));
          },
          onPush: () => {},
        });
        decoders.set(index, d);
      }
      d.feed(chunk);
    });
    const client = new RedisClient({
      url: server.url,
      reconnect: false,
      maintenanceNotifications: { mode: "disabled" },
    });
    await client.connect();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([
      client.subscribe("ch").then(() => "resolved", (e: unknown) => e),
      new Promise((res) => timer = setTimeout(() => res("timeout"), 1000)),
    ]);
    clearTimeout(timer);
    await client.close();
    await server.close();
    assert.ok(r instanceof Error, `subscribe() rejects, got ${String(r)}`);
  });
});
