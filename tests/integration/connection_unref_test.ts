// ConnectionOptions.unref: an idle, open connection does not keep the process alive, but a
// command in flight does (its await completes).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { connect as netConnect, type Socket } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

const runtime = "Bun" in globalThis ? "bun" : "deno";

/** Runs `code` in a child process; its exit code and output, or "running" after `ms`. */
function runChild(
  code: string,
  ms: number,
): Promise<{ exit: number | "running"; out: string; exitedAt: number }> {
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-conn-unref-"));
  const file = join(dir, "child.ts");
  writeFileSync(file, code);
  const exec = runtime === "deno"
    ? [Deno.execPath(), ["run", "-A", file]] as const
    : [process.execPath, [file]] as const;
  return new Promise((resolve, reject) => {
    const child = spawn(exec[0], [...exec[1]], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => out += c);
    child.stderr.on("data", (c) => err += c);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
    }, ms);
    let killed = false;
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      killed = signal === "SIGKILL";
      rmSync(dir, { recursive: true, force: true });
      if (!killed && code !== 0) console.error(err);
      resolve({ exit: killed ? "running" : code ?? -1, out, exitedAt: Date.now() });
    });
  });
}

describe(`Connection unref (${runtime})`, () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  const code = (unref: boolean) => {
    const url = (p: string) => JSON.stringify(new URL(`../../${p}`, import.meta.url).href);
    return `
      import { Connection } from ${url("src/connection/connection.ts")};
      import { defaultConnector } from ${url("src/transport/default.ts")};
      import { silentLogger } from ${url("src/logger.ts")};
      const conn = new Connection({
        endpoint: { host: "127.0.0.1", port: ${server.port} }, connector: defaultConnector,
        protocol: 3, db: 0, connectTimeout: 5000, commandTimeout: 5000,
        reconnect: { baseDelay: 100, maxDelay: 1000 }, maxQueueLength: 100, maxQueueBytes: 1 << 20,
        logger: silentLogger, unref: ${unref},
      });
      await conn.send(["SET", "unref-k", "v"], undefined, 0);
      // In flight for half a second: the process must wait for it.
      await conn.send(["DEBUG", "SLEEP", "0.5"], undefined, 0);
      console.log("done", await conn.send(["GET", "unref-k"], undefined, 0));
      // Not closed: the open, idle connection is all that is left.
    `;
  };

  it("an idle connection lets the process exit; a command in flight completes first", async () => {
    const [held, released] = await Promise.all([
      runChild(code(false), 4_000),
      runChild(code(true), 15_000),
    ]);
    assert.equal(held.exit, "running", "without unref the open socket keeps the process alive");
    assert.equal(released.exit, 0, "with unref the process exits on its own");
    assert.match(released.out, /done v/, "the commands in flight completed before the exit");
  });
});

describe(`close() during a connect to an address that drops SYNs (${runtime})`, () => {
  // A server whose accept queue is full (backlog 0, stopped, one connection waiting): the
  // kernel drops further SYNs, so a dial stays in SYN-SENT as to a blackholed host.
  let server: RedisServer;
  const fillers: Socket[] = [];
  before(async () => {
    server = await startRedis({ args: ["--tcp-backlog", "0"] });
    process.kill(server.pid, "SIGSTOP");
    for (let i = 0; i < 2; i++) {
      const s = netConnect({ host: "127.0.0.1", port: server.port });
      s.on("error", () => {});
      fillers.push(s);
    }
    await new Promise((r) => setTimeout(r, 200));
  });
  after(async () => {
    for (const s of fillers) s.destroy();
    process.kill(server.pid, "SIGCONT");
    await server.stop();
  });

  const url = (p: string) => JSON.stringify(new URL(`../../${p}`, import.meta.url).href);
  const seed = () => `"redis://127.0.0.1:${server.port}"`;
  const kinds: [string, string, () => string][] = [
    ["RedisClient", url("mod.ts"), () => `{ url: ${seed()}, connectTimeout: 60000 }`],
    [
      "RedisClusterClient",
      url("src/cluster/mod.ts"),
      () => `{ nodes: [${seed()}], connectTimeout: 60000 }`,
    ],
    [
      "RedisSentinelClient",
      url("src/sentinel/mod.ts"),
      () => `{ masterName: "m", sentinels: [${seed()}], connectTimeout: 60000 }`,
    ],
  ];
  for (const [kind, from, options] of kinds) {
    it(`${kind}: close() aborts the dial, the process exits within a second`, async () => {
      const code = `
        import { ${kind} } from ${from};
        const client = new ${kind}(${options()});
        let settled = "pending";
        const attempt = client.connect().then(() => settled = "connected", (e) => settled = e.name);
        await new Promise((r) => setTimeout(r, 500));
        const pendingAtClose = settled;
        await client.close();
        await attempt;
        console.log(JSON.stringify({ pendingAtClose, settled, closedAt: Date.now() }));
      `;
      const r = await runChild(code, 15_000);
      assert.equal(r.exit, 0, "the child exited by itself");
      const line = JSON.parse(r.out.trim().split("\n").at(-1)!);
      assert.equal(line.pendingAtClose, "pending", "the dial was still in SYN-SENT at close()");
      assert.notEqual(line.settled, "connected");
      const lingered = r.exitedAt - line.closedAt;
      assert.ok(lingered < 1_000, `the process exited ${lingered} ms after close()`);
    });
  }
});
