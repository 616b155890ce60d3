// Lag-aware health checks against the simulator's mock of the Redis Software REST API.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import {
  lagAwareHealthCheck,
  type LagAwareHealthCheckOptions,
  MultiDbClient,
  type SwitchEventDetail,
} from "../../src/multi_db/mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";
import { waitFor } from "../_helpers/load.ts";

const PASSWORD = "s3cr3t-pw";

describe("MultiDbClient lag-aware health check", () => {
  let east: RedisServer;
  let west: RedisServer;
  let sim: MaintenanceSimulator;
  const logs: string[] = [];
  const logger = {
    debug: (m: string) => logs.push(m),
    info: (m: string) => logs.push(m),
    warn: (m: string) => logs.push(m),
    error: (m: string) => logs.push(m),
  };
  before(async () => {
    [east, west] = await Promise.all([startRedis(), startRedis()]);
    sim = await MaintenanceSimulator.start({
      upstream: `127.0.0.1:${east.port}`,
      http: "127.0.0.1:0",
      rest: { username: "ops@example.com", password: PASSWORD, uid: 7 },
    });
  });
  after(async () => {
    await sim.close();
    await Promise.all([east.stop(), west.stop()]);
  });
  beforeEach(() => {
    sim.rest.script({ status: 200 });
    logs.length = 0;
    markLeakBaseline();
  });
  afterEach(assertNoLeaks);

  const restUrl = () => `http://${sim.http!.host}:${sim.http!.port}`;
  const check = (o: Partial<LagAwareHealthCheckOptions> = {}) =>
    lagAwareHealthCheck({
      restUrl: restUrl(),
      username: "ops@example.com",
      password: PASSWORD,
      lagTolerance: 250,
      logger,
      ...o,
    });
  const client = (healthCheck: ReturnType<typeof check>, extra = {}) =>
    new MultiDbClient({
      databases: [
        { ...sim.endpoint, weight: 2, name: "east", healthCheck },
        { url: west.url, name: "west" },
      ],
      commandTimeout: 500,
      connectTimeout: 300,
      healthCheck: { interval: 100, timeout: 400, probes: 1, probeDelay: 0 },
      gracePeriod: 300,
      failbackCheckInterval: 100,
      logger,
      ...extra,
    });
  const switches = (c: MultiDbClient) => {
    const seen: SwitchEventDetail[] = [];
    c.addEventListener("switch", (e) => seen.push(e.detail));
    return seen;
  };

  it("200: healthy; the uid is looked up once by endpoint, then availability with the tolerance", async () => {
    const before = sim.rest.requests().length;
    const c = client(check());
    await c.connect();
    assert.equal(c.activeDatabase, "east");
    await sleep(350);
    const reqs = sim.rest.requests().slice(before);
    assert.ok(reqs.length >= 3, `${reqs.length} requests`);
    assert.equal(reqs[0]!.url, "/v1/bdbs?fields=uid%2Cendpoints");
    assert.ok(reqs.every((r) => r.authorized && r.method === "GET"));
    const avail = reqs.slice(1);
    assert.ok(
      avail.every((r) =>
        r.url === "/v1/bdbs/7/availability?extend_check=lag&availability_lag_tolerance_ms=250"
      ),
      JSON.stringify(avail.map((r) => r.url)),
    );
    assert.equal(reqs.filter((r) => r.url.startsWith("/v1/bdbs?")).length, 1, "uid cached");
    await c.close();
  });

  it("503 (lagging): fails over, fails back once the lag is within tolerance", async () => {
    const c = client(check());
    const seen = switches(c);
    await c.connect();
    sim.rest.script({ status: 503 });
    await waitFor(() => seen.length === 1, 3000, "the failover");
    assert.deepEqual(seen[0], { from: "east", to: "west", reason: "HEALTH_CHECK" });
    const info = c.databases()[0]!;
    assert.equal(info.health, "unhealthy");
    assert.match(info.healthError ?? "", /availability answered HTTP 503/);
    sim.rest.script({ status: 200 });
    await waitFor(() => seen.length === 2, 3000, "the failback");
    assert.deepEqual(seen[1], { from: "west", to: "east", reason: "FAILBACK" });
    await c.close();
  });

  it("401: refused credentials are unhealthy, and the password appears nowhere", async () => {
    const c = client(check({ password: "wrong-" + PASSWORD }), {
      initializationPolicy: "one-available",
    });
    await c.connect();
    assert.equal(c.activeDatabase, "west");
    await waitFor(() => c.databases()[0]!.health === "unhealthy", 2000, "the check");
    const info = c.databases()[0]!;
    assert.match(
      info.healthError ?? "",
      /^Cannot check "east" via the REST API at http:\/\/127\.0\.0\.1:\d+: listing the databases answered HTTP 401$/,
    );
    const unauth = sim.rest.requests().filter((r) => !r.authorized);
    assert.ok(unauth.length > 0);
    await c.close();
    assert.ok(logs.some((l) => l.includes("401")));
    for (const text of [...logs, info.healthError ?? ""]) {
      assert.ok(!text.includes(PASSWORD), `a password leaked: ${text}`);
    }
  });

  it("401 on the availability check once the uid is known", async () => {
    const c = client(check({ uid: 7 }));
    await c.connect();
    sim.rest.script({ status: 401 });
    await waitFor(() => c.databases()[0]!.health === "unhealthy", 2000, "the check");
    assert.match(c.databases()[0]!.healthError ?? "", /the credentials were refused \(HTTP 401\)/);
    await c.close();
  });

  it("slow: an answer later than the probe timeout is unhealthy", async () => {
    const c = client(check());
    const seen = switches(c);
    await c.connect();
    sim.rest.script({ status: 200, delayMs: 1500 });
    await waitFor(() => seen.length === 1, 3000, "the failover");
    assert.match(c.databases()[0]!.healthError ?? "", /no answer within 400 ms/);
    assert.equal(c.activeDatabase, "west");
    sim.rest.script({ status: 200 });
    await c.close();
  });

  it("an unreachable REST API: a clear health error, the other database undisturbed", async () => {
    const port = await freePort();
    const c = client(check({ restUrl: `http://127.0.0.1:${port}` }), {
      initializationPolicy: "one-available",
    });
    await c.connect();
    assert.equal(c.activeDatabase, "west");
    await waitFor(() => c.databases()[0]!.health === "unhealthy", 2000, "the check");
    assert.match(
      c.databases()[0]!.healthError ?? "",
      new RegExp(`^Cannot check "east" via the REST API at http://127\\.0\\.0\\.1:${port}: `),
    );
    assert.equal(await c.set("k", "v"), "OK");
    assert.equal(c.databases()[1]!.health, "healthy");
    await c.close();
  });

  it("a database list larger than maxBodyBytes fails the check without being read whole", async () => {
    // 50 MB of a JSON array, streamed (no content-length), and once with a content-length.
    let written = 0;
    const server = createServer((req, res) => {
      const declared = req.url?.includes("declared") ?? false;
      const size = 50 * 1024 * 1024;
      res.writeHead(200, {
        "content-type": "application/json",
        ...(declared ? { "content-length": String(size) } : {}),
      });
      const chunk = new TextEncoder().encode(`[${" ".repeat(64 * 1024 - 1)}`);
      const pump = () => {
        while (written < size && !res.destroyed) {
          written += chunk.byteLength;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("error", () => {});
      pump();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    try {
      for (const path of ["", "/declared"]) {
        written = 0;
        const strategy = lagAwareHealthCheck({
          restUrl: `http://127.0.0.1:${port}${path}`,
          username: "u",
          password: PASSWORD,
          maxBodyBytes: 256 * 1024,
        });
        const target = {
          database: "east",
          endpoint: { host: "127.0.0.1", port: 1 },
          client: undefined as never,
          timeout: 10_000,
          signal: new AbortController().signal,
        };
        await assert.rejects(strategy(target), /more than maxBodyBytes \(262144\)|262144\)/);
        strategy.close();
        assert.ok(written < 50 * 1024 * 1024, `the server wrote only part (${written} bytes)`);
      }
    } finally {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    }
  });

  it("refuses bad options", () => {
    const base = { restUrl: "https://h:9443", username: "u", password: PASSWORD };
    assert.throws(() => lagAwareHealthCheck({ ...base, restUrl: "not a url" }), TypeError);
    assert.throws(() => lagAwareHealthCheck({ ...base, restUrl: "ftp://h" }), /scheme "ftp:"/);
    assert.throws(() => lagAwareHealthCheck({ ...base, lagTolerance: -1 }), RangeError);
    assert.throws(
      () => lagAwareHealthCheck({ ...base, password: undefined as unknown as string }),
      (e: unknown) => e instanceof TypeError && !(e as Error).message.includes(PASSWORD),
    );
  });
});
