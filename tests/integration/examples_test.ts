// The edge-server examples, started as their users start them (examples/deno_serve.ts on Deno,
// examples/bun_serve.ts on Bun, each whatever runtime runs this test) against a local
// redis-server, and exercised over HTTP; then stopped with SIGTERM, which must close them.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const isDeno = "Deno" in globalThis;
const isBun = "Bun" in globalThis;

/**
 * The other runtime's own binary, found through npx once: a server started through npx would be
 * a grandchild that a signal to npx does not reach (it would outlive the test).
 */
function binaryOf(pkg: string, script: string[]): string {
  return execFileSync("npx", ["-y", pkg, ...script], { encoding: "utf8" }).trim().split("\n")
    .pop()!;
}

/** How each example is started: with this runtime itself when it is the right one. */
const EXAMPLES: { name: string; file: string; cmd: () => [string, string[]] }[] = [
  {
    name: "Deno.serve",
    file: "examples/deno_serve.ts",
    cmd: () =>
      isDeno
        ? [Deno.execPath(), ["run", "--allow-net", "--allow-env", "examples/deno_serve.ts"]]
        : [binaryOf("deno@2.9.6", ["eval", "console.log(Deno.execPath())"]), [
          "run",
          "--allow-net",
          "--allow-env",
          "examples/deno_serve.ts",
        ]],
  },
  {
    name: "Bun.serve",
    file: "examples/bun_serve.ts",
    cmd: () =>
      isBun
        ? [process.execPath, ["examples/bun_serve.ts"]]
        : [binaryOf("bun@1.4.4", ["-e", "console.log(process.execPath)"]), [
          "examples/bun_serve.ts",
        ]],
  },
];

interface Started {
  child: ChildProcess;
  base: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function start(cmd: [string, string[]], env: Record<string, string>): Promise<Started> {
  // HOST only when the test sets it (not inherited from the machine's environment).
  const { HOST: _inherited, ...inherited } = process.env;
  const child = spawn(cmd[0], cmd[1], {
    cwd: root,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c) => out += c);
  child.stderr!.on("data", (c) => out += c);
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const end = Date.now() + 60_000; // the first npx run of the other runtime downloads it
  while (!/listening on http:\/\/\S+:\d+/.test(out)) {
    if (child.exitCode !== null) throw new Error(`the example exited early:\n${out}`);
    if (Date.now() > end) {
      child.kill("SIGKILL");
      throw new Error(`the example did not listen in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, base: `http://127.0.0.1:${env.PORT}`, output: () => out, exited };
}

for (const example of EXAMPLES) {
  describe(`${example.file} (${example.name})`, () => {
    let redis: RedisServer;
    let server: Started | undefined;

    before(async () => {
      redis = await startRedis();
      const port = await freePort();
      server = await start(example.cmd(), {
        REDIS_URL: redis.url,
        PORT: String(port),
        HOST: "127.0.0.1",
      });
    }, { timeout: 90_000 });

    after(async () => {
      if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
      await redis?.stop();
    });

    it("answers health, key/value and counter requests from Redis", async () => {
      const base = server!.base;
      const health = await fetch(`${base}/health`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { redis: "PONG" });

      const missing = await fetch(`${base}/kv/nothing`);
      assert.equal(missing.status, 404);
      await missing.body?.cancel();

      const put = await fetch(`${base}/kv/greeting`, { method: "PUT", body: "hello edge" });
      assert.equal(put.status, 204);
      const got = await fetch(`${base}/kv/greeting`);
      assert.equal(await got.text(), "hello edge");

      // Concurrent requests share the one client.
      const hits = await Promise.all(
        Array.from(
          { length: 20 },
          () => fetch(`${base}/hits`, { method: "POST" }).then((r) => r.json()),
        ),
      );
      assert.deepEqual(
        hits.map((h) => h.hits).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.ok(hits.every((h) => h.expiring === true));
    });

    it("answers 400 with a clear body to a path that is not valid percent-encoding", async () => {
      for (const path of ["/kv/%ZZ", "/kv/%", "/kv/%C3%28"]) {
        const r = await fetch(`${server!.base}${path}`);
        assert.equal(r.status, 400, path);
        assert.equal(
          await r.text(),
          "Cannot read the key: the path is not valid percent-encoding\n",
        );
      }
      const put = await fetch(`${server!.base}/kv/%ZZ`, { method: "PUT", body: "x" });
      assert.equal(put.status, 400);
      await put.body?.cancel();
    });

    it("listens on 127.0.0.1 when HOST is not set", { timeout: 90_000 }, async () => {
      const port = await freePort();
      const local = await start(example.cmd(), { REDIS_URL: redis.url, PORT: String(port) });
      try {
        assert.match(local.output(), new RegExp(`listening on http://127\\.0\\.0\\.1:${port}\\b`));
        const r = await fetch(`${local.base}/health`);
        assert.equal(r.status, 200);
        await r.body?.cancel();
      } finally {
        local.child.kill("SIGTERM");
        await local.exited;
      }
    });

    it("stores what it serves in Redis", async () => {
      // The value written over HTTP, read back with a client of the test's own.
      const { RedisClient } = await import("../../mod.ts");
      await using client = new RedisClient({ url: redis.url });
      assert.equal(await client.get("kv:greeting"), "hello edge");
      assert.equal(await client.get("hits"), "20");
      const ttl = await client.ttl("kv:greeting");
      assert.ok(ttl > 3500 && ttl <= 3600, `ttl ${ttl}`);
    });

    it("exits on SIGTERM after closing its client", async () => {
      const s = server!;
      s.child.kill("SIGTERM");
      const code = await Promise.race([
        s.exited,
        new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 10_000)),
      ]);
      assert.notEqual(code, "timeout", `still running after SIGTERM:\n${s.output()}`);
    });
  });
}
