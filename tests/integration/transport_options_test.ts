// The transports' connect signal and unref(), and unrefTimer, against real loopback servers.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Connector } from "../../src/transport/types.ts";
import { defaultConnector } from "../../src/transport/default.ts";
import { nodeConnector } from "../../src/transport/node.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP server that accepts and never answers: a TLS handshake against it never completes. */
async function silentServer(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.resume(); // read (and drop) what comes, so the peer's FIN is seen
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  return { server, port: typeof addr === "object" && addr ? addr.port : 0, sockets };
}

/** Runs `code` in a child process of the current runtime; resolves with its exit code, or
 * `"running"` when it is still alive after `ms` (it is then killed). */
function runChild(code: string, ms: number): Promise<number | "running"> {
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-unref-"));
  const file = join(dir, "child.ts");
  writeFileSync(file, code);
  const exec = runtime === "deno"
    ? [Deno.execPath(), ["run", "-A", file]] as const
    : [process.execPath, [file]] as const;
  return new Promise((resolve, reject) => {
    const child = spawn(exec[0], [...exec[1]], { stdio: ["ignore", "inherit", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => stderr += c);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve("running");
    }, ms);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) console.error(stderr);
      resolve(code ?? -1);
    });
  });
}

for (const [name, connector] of connectors) {
  describe(`${name} connector (${runtime}): connect signal`, () => {
    let silent: Awaited<ReturnType<typeof silentServer>>;
    before(async () => {
      silent = await silentServer();
    });
    after(async () => {
      for (const s of silent.sockets) s.destroy();
      await new Promise((r) => silent.server.close(r));
    });

    it("rejects with the reason of an already aborted signal, without dialling", async () => {
      const reason = new Error("given up");
      const before = silent.sockets.size;
      await assert.rejects(
        connector({
          host: "127.0.0.1",
          port: silent.port,
          signal: AbortSignal.abort(reason),
        }),
        (e) => e === reason,
      );
      await sleep(100);
      assert.equal(silent.sockets.size, before, "a connection was opened");
    });

    it("rejects with the reason when aborted during the TLS handshake, and closes the socket", async () => {
      const ac = new AbortController();
      const reason = new Error("stop");
      const p = connector({ host: "127.0.0.1", port: silent.port, tls: {}, signal: ac.signal });
      const end = Date.now() + 5_000;
      while (silent.sockets.size === 0) {
        assert.ok(Date.now() < end, "the connector never reached the server");
        await sleep(10);
      }
      ac.abort(reason);
      await assert.rejects(p, (e) => e === reason);
      // Deno's sockets cannot cut a TLS handshake short: that socket closes when the handshake
      // ends (here when the server closes it, in `after`).
      if (runtime === "deno" && name !== "node") return;
      while (silent.sockets.size > 0) {
        assert.ok(Date.now() < end, "the socket of the aborted attempt stayed open");
        await sleep(10);
      }
    });

    it("ignores an abort after the connection opened", async () => {
      const ac = new AbortController();
      const t = await connector({ host: "127.0.0.1", port: silent.port, signal: ac.signal });
      let closed = false;
      t.setHandlers({ onData: () => {}, onDrain: () => {}, onClose: () => closed = true });
      ac.abort();
      await sleep(100);
      assert.equal(closed, false);
      assert.equal(t.write(new Uint8Array([0x2a])), true);
      t.close();
    });
  });
}

describe(`transports' unref() (${runtime})`, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.stop();
  });

  const script = (file: string, exportName: string, unref: boolean) => `
    import { ${exportName} as connect } from ${JSON.stringify(new URL(file, import.meta.url).href)};
    const t = await connect({ host: "127.0.0.1", port: ${0} });
    t.setHandlers({ onData: () => {}, onDrain: () => {}, onClose: () => {} });
    ${unref ? "t.unref?.();" : ""}
  `;
  const files: [string, string][] = [["../../src/transport/node.ts", "nodeConnector"]];
  if (runtime === "deno") files.push(["../../src/transport/deno.ts", "denoConnector"]);
  if (runtime === "bun") files.push(["../../src/transport/bun.ts", "bunConnector"]);

  for (const [file, exportName] of files) {
    it(`${exportName}: an open socket keeps the process alive until unref()`, async () => {
      const code = (unref: boolean) =>
        script(file, exportName, unref).replace("port: 0", `port: ${redis.port}`);
      const [held, released] = await Promise.all([
        runChild(code(false), 2_500),
        runChild(code(true), 15_000),
      ]);
      assert.equal(held, "running", "the process exited with an open, referenced socket");
      assert.equal(released, 0, "the process did not exit after unref()");
    });
  }
});

describe(`unrefTimer (${runtime})`, () => {
  it("a pending timer keeps the process alive until it is unref'd", async () => {
    const url = JSON.stringify(
      new URL("../../src/transport/unref_timer.ts", import.meta.url).href,
    );
    const code = (unref: boolean) => `
      import { unrefTimer } from ${url};
      const t = setTimeout(() => console.log("fired"), 60_000);
      ${unref ? "unrefTimer(t);" : ""}
    `;
    const [held, released] = await Promise.all([
      runChild(code(false), 2_500),
      runChild(code(true), 15_000),
    ]);
    assert.equal(held, "running", "the process exited with a pending, referenced timer");
    assert.equal(released, 0, "the process did not exit after unrefTimer()");
  });
});
