// The server-side listeners (src/transport/listen*.ts): the runtime's own and node:net.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { readFileSync, rmSync } from "node:fs";
import { makeCerts } from "../_helpers/tls.ts";
import {
  defaultListen,
  type ListenFunction,
  type ServerTransport,
} from "../../src/transport/listen.ts";
import { nodeListen } from "../../src/transport/listen_node.ts";

const isBun = (globalThis as { Bun?: unknown }).Bun !== undefined;
const native: ListenFunction = isBun
  ? (o, a) => import("../../src/transport/listen_bun.ts").then((m) => m.bunListen(o, a))
  : (o, a) => import("../../src/transport/listen_deno.ts").then((m) => m.denoListen(o, a));

function connect(
  port: number,
): Promise<{ s: Socket; data: () => number; ended: Promise<void>; text: () => string }> {
  return new Promise((resolve, reject) => {
    const s = new Socket();
    const chunks: Uint8Array[] = [];
    let n = 0;
    const ended = new Promise<void>((r) => s.on("end", () => r()));
    s.on("data", (d: Uint8Array) => {
      chunks.push(new Uint8Array(d));
      n += d.length;
    });
    s.once("error", reject);
    s.connect(port, "127.0.0.1", () =>
      resolve({
        s,
        data: () => n,
        ended,
        text: () => chunks.map((c) => new TextDecoder().decode(c)).join(""),
      }));
  });
}

for (
  const [name, listen] of [["default", defaultListen], [isBun ? "bun" : "deno", native], [
    "node",
    nodeListen,
  ]] as const
) {
  describe(`listener (${name})`, () => {
    it("accepts, reports addresses, echoes, and closes gracefully after a large write (FIN)", async () => {
      const accepted: ServerTransport[] = [];
      let closedCalls = 0;
      const l = await listen({ host: "127.0.0.1", port: 0 }, (t) => {
        accepted.push(t);
        t.setHandlers({
          onData: (chunk) => {
            if (new TextDecoder().decode(chunk).includes("big")) {
              t.write(new Uint8Array(4_000_000).fill(97));
              t.close();
            } else t.write(chunk.slice());
          },
          onDrain: () => {},
          onClose: () => closedCalls++,
        });
      });
      assert.ok(l.port > 0);
      const c = await connect(l.port);
      c.s.write("hello");
      while (c.data() < 5) await new Promise((r) => setTimeout(r, 5));
      assert.equal(c.text(), "hello");
      const t = accepted[0]!;
      assert.equal(t.localPort, l.port);
      assert.equal(t.remotePort, c.s.localPort);
      assert.match(String(t.remoteAddress), /127\.0\.0\.1/);
      c.s.write("big");
      await c.ended;
      assert.equal(c.data(), 5 + 4_000_000, "every byte arrived before the FIN");
      c.s.destroy();
      while (closedCalls === 0) await new Promise((r) => setTimeout(r, 5));
      assert.equal(closedCalls, 1);
      await l.close();
      await l.close();
    });

    it("serves TLS", async () => {
      const certs = makeCerts();
      try {
        let secure: boolean | undefined;
        const l = await listen({
          host: "127.0.0.1",
          port: 0,
          tls: {
            cert: readFileSync(certs.certFile, "utf8"),
            key: readFileSync(certs.keyFile, "utf8"),
          },
        }, (t) => {
          secure = t.secure;
          t.setHandlers({
            onData: (b) => t.write(b.slice()),
            onDrain: () => {},
            onClose: () => {},
          });
        });
        const echoed = await new Promise<string>((resolve, reject) => {
          const s = tlsConnect({
            port: l.port,
            host: "127.0.0.1",
            ca: [certs.caPem],
            servername: "localhost",
          }, () => {
            s.write("over tls");
          });
          s.on("data", (d: Uint8Array) => {
            resolve(new TextDecoder().decode(d));
            s.destroy();
          });
          s.on("error", reject);
        });
        assert.equal(echoed, "over tls");
        assert.equal(secure, true);
        await l.close();
      } finally {
        rmSync(certs.dir, { recursive: true, force: true });
      }
    });

    it("destroys at once and refuses a port in use", async () => {
      let accepted: ServerTransport | undefined;
      let closed = false;
      const l = await listen({ host: "127.0.0.1", port: 0 }, (t) => {
        accepted = t;
        t.setHandlers({ onData: () => {}, onDrain: () => {}, onClose: () => closed = true });
      });
      await assert.rejects(listen({ host: "127.0.0.1", port: l.port }, () => {}));
      const c = await connect(l.port);
      const gone = new Promise<void>((r) => c.s.on("close", () => r()));
      while (accepted === undefined) await new Promise((r) => setTimeout(r, 5));
      accepted.destroy();
      await gone;
      while (!closed) await new Promise((r) => setTimeout(r, 5));
      await l.close();
    });
  });
}
