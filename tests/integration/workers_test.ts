// The client under workerd, the open-source Cloudflare Workers runtime (tests/workers/): a worker
// bundled from the project's entries, served by `workerd serve` on a free loopback port, driven
// over HTTP against real redis-servers. Runs under Deno only (the worker runs under workerd
// either way; under Bun the same test would only repeat it).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  bundleWorker,
  startWorkerd,
  type WorkerBundle,
  type Workerd,
} from "../workers/_workerd.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { startCluster } from "../_helpers/cluster.ts";
import { startTlsRedis } from "../_helpers/tls.ts";
import { workersConnector } from "../../src/transport/workers.ts";

const onBun = "Bun" in globalThis;
const noWorkerd = process.platform !== "linux" && process.platform !== "darwin";
const skip = onBun
  ? "workerd test runs once, under Deno (the worker runs under workerd either way)"
  : noWorkerd
  ? `no workerd build for ${process.platform}`
  : false;

// deno-lint-ignore no-explicit-any
type Body = any;

async function call(w: Workerd, path: string): Promise<{ status: number; body: Body }> {
  const r = await fetch(w.url + path);
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch { /* plain text */ }
  return { status: r.status, body };
}

describe("Cloudflare Workers (workerd)", { skip }, () => {
  let redis: RedisServer;
  let bundle: WorkerBundle;
  let worker: Workerd;
  let q: string;

  before(async () => {
    redis = await startRedis();
    q = `url=${encodeURIComponent(redis.url)}`;
    bundle = await bundleWorker({ sharedUrl: redis.url });
    worker = await startWorkerd({ script: bundle.file });
  }, { timeout: 300_000 });

  after(async () => {
    await worker?.stop();
    bundle?.remove();
    await redis?.stop();
  });

  it("the default connector picks cloudflare:sockets: SET/GET/INCR, a pipeline, a transaction", async () => {
    assert.deepEqual((await call(worker, "/runtime")).body, { userAgent: "Cloudflare-Workers" });
    const { status, body } = await call(worker, `/basic?${q}`);
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body, { got: "v1", n1: 1, piped: [2, "v1"], multi: [3, "3"] });
  });

  it("delivers a subscription within the request", async () => {
    const { status, body } = await call(worker, `/sub?${q}`);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.message, "hello from the worker");
  });

  it("a blocking command times out, then gets a pushed element", async () => {
    const { status, body } = await call(worker, `/blocking?${q}`);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.none, null);
    assert.ok(body.waited >= 150, `BLPOP returned after ${body.waited} ms`);
    assert.equal(body.job.element, "job");
  });

  it("50 concurrent requests, each with its own client", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => call(worker, `/basic?${q}`)),
    );
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  it("200 sequential requests, each with its own client", async () => {
    for (let i = 0; i < 200; i++) {
      const r = await call(worker, `/get?${q}&key=w:seq`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  });

  // A module-scope client. What workerd allows (measured here): a socket serves only the request
  // that opened it, even while that request still runs; another request's read or write is
  // refused with "Cannot perform I/O on behalf of a different request". The transport turns that
  // into an error that says what to do, and keeps the failing request alive (waitUntil) until the
  // client's reconnect from it is through: without that, workerd cancels the reconnect with the
  // request, and every later request on the client hangs (workerd ends it as hung, a bare 500).
  // The requests here are paced (PACE_MS) so each one finds the previous one ended: requests in
  // quick succession can still meet a reconnect in flight (see the README).
  const PACE_MS = 80;
  const pace = () => new Promise((r) => setTimeout(r, PACE_MS));

  it("a module-scope client: a later request gets an error that says what to do", async () => {
    const key = `w:shared:${Date.now()}`;
    const first = await call(worker, `/shared/incr?key=${key}&retry=1`);
    assert.deepEqual(first.body, { n: 1 }, worker.log.slice(-3000));
    for (let i = 0; i < 5; i++) {
      await pace();
      const later = await call(worker, `/shared/incr?key=${key}`);
      assert.equal(later.status, 500);
      assert.equal(
        typeof later.body,
        "object",
        `not the client's error: ${later.body}\n${worker.log.slice(-3000)}`,
      );
      assert.match(later.body.error, /opened by another request/);
      assert.match(later.body.error, /await using client = new RedisClient/);
    }
  });

  it("200 sequential requests on one module-scope client, each retrying once", async () => {
    // The cost of the pattern: a reconnect per request (its first attempt fails).
    const key = `w:shared:seq:${Date.now()}`;
    for (let i = 1; i <= 200; i++) {
      await pace();
      const r = await call(worker, `/shared/incr?key=${key}&retry=1`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, { n: i });
    }
  });

  it("a cluster client against a real 3-primary cluster", { timeout: 120_000 }, async () => {
    const cluster = await startCluster({ primaries: 3, replicasPerPrimary: 0 });
    try {
      const nodes = cluster.seeds.map((s) => `node=${encodeURIComponent(s)}`).join("&");
      const { status, body } = await call(worker, `/cluster?${nodes}`);
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body.values, Array.from({ length: 20 }, (_, i) => String(i)));
    } finally {
      await cluster.stop();
    }
  });

  it("TLS: rediss:// with secureTransport on, and starttls for another server name", async () => {
    const tls = await startTlsRedis();
    let w: Workerd | undefined;
    try {
      w = await startWorkerd({ script: bundle.file, trustedCertificates: [tls.caPem] });
      const url = encodeURIComponent(`rediss://127.0.0.1:${tls.tlsPort}`);
      const on = await call(w, `/tls?url=${url}`);
      assert.equal(on.status, 200, JSON.stringify(on.body));
      assert.deepEqual(on.body, { got: "secure" });
      const named = await call(w, `/tls?url=${url}&servername=localhost`);
      assert.equal(named.status, 200, JSON.stringify(named.body));
      // Not trusted by the worker: the handshake fails with an error, not a hang.
      const untrusted = await call(worker, `/tls?url=${url}`);
      assert.equal(untrusted.status, 500);
    } finally {
      await w?.stop();
      await tls.stop();
    }
  });

  // Last: a server restart while the module-scope client's last request is still alive can leave
  // that client waiting on a reconnect workerd cancelled (reproduced here; see the README).
  it("a Durable Object keeps one client across requests and reconnects after a server restart", async () => {
    const key = `w:do:${Date.now()}`;
    for (let i = 1; i <= 20; i++) {
      const r = await call(worker, `/do/incr?${q}&key=${key}`);
      assert.deepEqual(r.body, { n: i });
    }
    await redis.kill();
    await redis.restart();
    // The data set is gone with the process; the object's client reconnects by itself.
    let last: { status: number; body: Body } | undefined;
    for (let i = 0; i < 50; i++) {
      last = await call(worker, `/do/incr?${q}&key=${key}`);
      if (last.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(last?.status, 200, JSON.stringify(last?.body));
    assert.equal(typeof last?.body.n, "number");
  });
});

describe("examples/workers (workerd)", { skip }, () => {
  it("serves /kv with a client per request and /hits from its Durable Object", async () => {
    const redis = await startRedis();
    const bundle = await bundleWorker({ entry: "examples/workers/worker.ts" });
    let w: Workerd | undefined;
    try {
      w = await startWorkerd({
        script: bundle.file,
        text: { REDIS_URL: redis.url },
        durableObjects: { COUNTER: "Counter" },
      });
      const put = await fetch(`${w.url}/kv/greeting`, { method: "PUT", body: "hello" });
      assert.equal(put.status, 204, await put.text());
      const get = await fetch(`${w.url}/kv/greeting`);
      assert.equal(await get.text(), "hello");
      for (let i = 1; i <= 3; i++) {
        const r: Response = await fetch(`${w.url}/hits`, { method: "POST" });
        assert.deepEqual(await r.json(), { hits: i });
      }
    } finally {
      await w?.stop();
      bundle.remove();
      await redis.stop();
    }
  });
});

describe("the Workers transport off Workers", () => {
  it("names the runtime and says where cloudflare:sockets exists", async () => {
    const runtime = onBun ? "Bun" : "Deno";
    await assert.rejects(
      workersConnector({ host: "127.0.0.1", port: 1 }),
      new RegExp(
        `^Error: Cannot connect with the Cloudflare Workers transport on ${runtime}: "cloudflare:sockets" is not available; it exists only on Cloudflare Workers`,
      ),
    );
  });

  it("refuses TLS options cloudflare:sockets cannot take", async () => {
    await assert.rejects(
      workersConnector({ host: "127.0.0.1", port: 1, tls: { caCerts: ["x"] } }),
      /^Error: Cannot use tls.caCerts, tls.cert or tls.key on Cloudflare Workers/,
    );
  });
});
