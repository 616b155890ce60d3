// MIGRATING, FAILING_OVER, MOVING without a target, pub/sub and blocking commands across
// MOVING, and the handshake modes, through the MaintenanceSimulator in front of real servers.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, RedisClient, TimeoutError } from "../../mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertCounters, startLoad, waitFor } from "../_helpers/load.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

function events(
  client: RedisClient,
): { type: string; at: number; detail: Record<string, unknown> }[] {
  const seen: { type: string; at: number; detail: Record<string, unknown> }[] = [];
  client.addEventListener("maintenance", (e) => {
    const detail = (e as CustomEvent).detail as Record<string, unknown>;
    seen.push({ type: `m:${String(detail.type)}`, at: Date.now(), detail });
  });
  client.addEventListener("handoff", (e) => {
    seen.push({ type: "handoff", at: Date.now(), detail: (e as CustomEvent).detail });
  });
  return seen;
}

function relaxedCount(client: RedisClient): number {
  return client.maintenanceState()?.connections.filter((c) => c.relaxedUntil !== undefined)
    .length ?? 0;
}

describe("scenario: maintenance windows under load", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const workers of [16, 64]) {
    it(`MIGRATING with a stall longer than commandTimeout, ${workers} workers: no timeouts when relaxed`, async () => {
      const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
      const client = new RedisClient({ ...sim.endpoint, commandTimeout: 300 });
      await client.ping();
      const prefix = `mig${workers}`;
      const load = startLoad(client, workers, prefix);
      await sleep(200);
      const relaxedDuring: boolean[] = [];
      const probe = setInterval(() => {
        relaxedDuring.push(relaxedCount(client) > 0);
      }, 50);
      await sim.migrate({ time: 1, stallMs: 900 });
      clearInterval(probe);
      await sleep(200);
      const stats = await load.stop();
      assert.deepEqual(stats.errors, []);
      await assertCounters(client, stats, prefix);
      assert.ok(relaxedDuring.some((r) => r), "the connection was relaxed during the window");
      // MIGRATED closed the window: timeouts are back to the configured ones.
      assert.equal(relaxedCount(client), 0);
      await client.close();
      await sim.close();
      await assertNoLeaks();
    });
  }

  it("control: the same stall with notifications disabled times commands out", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const client = new RedisClient({
      ...sim.endpoint,
      commandTimeout: 300,
      maintenanceNotifications: { mode: "disabled" },
    });
    await client.ping();
    const load = startLoad(client, 16, "migctl");
    await sleep(200);
    await sim.migrate({ time: 1, stallMs: 900 });
    await sleep(200);
    const stats = await load.stop();
    assert.ok(stats.failed > 0, "expected timeouts without relaxation");
    assert.ok(stats.errors.every((e) => /timed out/.test(e)), stats.errors.join("\n"));
    await client.close();
    await sim.close();
    await assertNoLeaks();
  });

  for (const workers of [16, 64]) {
    it(`FAILING_OVER with a real replica promotion, ${workers} workers: zero failures, data on the new primary`, async () => {
      const own = await startRedis();
      const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${own.port}` });
      const client = new RedisClient({ ...sim.endpoint, commandTimeout: 500 });
      const seen = events(client);
      await client.ping();
      const load = startLoad(client, workers, `fo${workers}`);
      await sleep(200);
      const result = await sim.failover({ time: 1 });
      await sleep(300);
      const stats = await load.stop();
      assert.deepEqual(stats.errors, []);
      await assertCounters(client, stats, `fo${workers}`);
      assert.ok(seen.some((s) => s.type === "m:window-opened" && s.detail.kind === "FAILING_OVER"));
      assert.ok(seen.some((s) => s.type === "m:window-closed" && s.detail.kind === "FAILING_OVER"));
      // The counters are on the promoted replica, which now answers as a primary.
      assert.notEqual(result.upstream.port, own.port);
      const direct = new RedisClient({ port: result.upstream.port });
      const role = await direct.sendCommand(["ROLE"]) as unknown[];
      assert.equal(role[0], "master");
      assert.equal(Number(await direct.get(`fo${workers}:ctr:0`)), stats.incrs[0]);
      await direct.close();
      await client.close();
      await sim.close();
      await own.stop();
      await assertNoLeaks();
    });
  }

  for (const workers of [16, 64]) {
    it(`MOVING with endpoint type none, ${workers} workers: reconnects at about half the window`, async () => {
      const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
      const client = new RedisClient({
        ...sim.endpoint,
        commandTimeout: 1000,
        maintenanceNotifications: { endpointType: "none" },
      });
      const seen = events(client);
      await client.ping();
      const prefix = `none${workers}`;
      const load = startLoad(client, workers, prefix);
      await sleep(200);
      const t0 = Date.now();
      await sim.bind({ time: 2 });
      await sleep(300);
      const stats = await load.stop();
      assert.deepEqual(stats.errors, []);
      await assertCounters(client, stats, prefix);
      const handoffs = seen.filter((s) => s.type === "handoff");
      assert.equal(handoffs.length, 1, JSON.stringify(seen.map((s) => s.type)));
      const at = handoffs[0]!.at - t0;
      assert.ok(at >= 800 && at < 1600, `reconnected ${at} ms after MOVING (window 2000 ms)`);
      await client.close();
      await sim.close();
      await assertNoLeaks();
    });
  }

  it("a subscription moves with the connection: every message published after the handoff arrives", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const client = new RedisClient({ ...sim.endpoint });
    const pub = new RedisClient({ port: server.port });
    const seen = events(client);
    const got: string[] = [];
    await client.subscribe("mv:news", (m) => got.push(m));
    for (let i = 0; i < 10; i++) await pub.publish("mv:news", `before-${i}`);
    await waitFor(() => got.length === 10, 2000, "the first messages");
    const bind = sim.bind({ time: 2 });
    await waitFor(() => seen.some((s) => s.type === "handoff"), 2000, "the handoff");
    for (let i = 0; i < 100; i++) await pub.publish("mv:news", `after-${i}`);
    await bind; // old connections closed by the server
    for (let i = 100; i < 110; i++) await pub.publish("mv:news", `after-${i}`);
    await waitFor(() => got.length >= 120, 2000, "every message");
    assert.deepEqual(got.slice(10), Array.from({ length: 110 }, (_, i) => `after-${i}`));
    assert.equal(await client.ping(), "PONG");
    await client.close();
    await pub.close();
    await sim.close();
    await assertNoLeaks();
  });

  it("a BLPOP in flight across MOVING completes", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const client = new RedisClient({ ...sim.endpoint, commandTimeout: 500 });
    const pusher = new RedisClient({ port: server.port });
    await client.ping();
    await client.del("mv:q");
    const popped = client.blpop(["mv:q"], 5);
    await sleep(100);
    const bind = sim.bind({ time: 1.5 });
    await sleep(500);
    await pusher.rpush("mv:q", "job");
    assert.deepEqual(await popped, { key: "mv:q", element: "job" });
    // Its exclusive connection went to the old endpoint and is retired on release, long before
    // the server would close it: only connections to the target are left.
    await waitFor(
      () =>
        sim.connections().every((c) => c.endpoint !== `${sim.endpoint.host}:${sim.endpoint.port}`),
      1000,
      "the old exclusive connection to close",
    );
    await bind;
    // Exclusive connections to the old endpoint were retired; new ones work.
    const again = client.blpop(["mv:q"], 0.2);
    assert.equal(await again, null);
    await client.close();
    await pusher.close();
    await sim.close();
    await assertNoLeaks();
  });

  it("enabled mode against plain redis-server fails with a clear error; auto works without", async () => {
    const strict = new RedisClient({
      port: server.port,
      maintenanceNotifications: { mode: "enabled" },
    });
    await assert.rejects(strict.ping(), (e: unknown) => {
      assert.ok(e instanceof ConnectionError, String(e));
      assert.match(
        (e as Error).message,
        /Cannot enable maintenance notifications on "127\.0\.0\.1:\d+"/,
      );
      return true;
    });
    await strict.close();
    const auto = new RedisClient({ port: server.port });
    assert.equal(await auto.ping(), "PONG");
    assert.equal(relaxedCount(auto), 0);
    assert.equal(auto.maintenanceState()?.endpoints.length, 0);
    await auto.close();
    assert.throws(
      () => new RedisClient({ protocol: 2, maintenanceNotifications: { mode: "enabled" } }),
      TypeError,
    );
    // The simulator can answer like open-source Redis, too.
    const sim = await MaintenanceSimulator.start({
      upstream: `127.0.0.1:${server.port}`,
      rejectMaintNotifications: true,
    });
    const viaSim = new RedisClient({
      ...sim.endpoint,
      maintenanceNotifications: { mode: "enabled" },
    });
    await assert.rejects(viaSim.ping(), ConnectionError);
    await viaSim.close();
    const autoSim = new RedisClient({ ...sim.endpoint });
    assert.equal(await autoSim.ping(), "PONG");
    assert.equal(sim.connections()[0]?.optedIn, false);
    await autoSim.close();
    await sim.close();
    await assertNoLeaks();
  });

  it("connections opened during a MOVING window are relaxed from their first byte", async () => {
    const sim = await MaintenanceSimulator.start({ upstream: `127.0.0.1:${server.port}` });
    const client = new RedisClient({ ...sim.endpoint, commandTimeout: 200 });
    await client.ping();
    const bind = sim.bind({ time: 1.5 });
    await waitFor(() => (client.maintenanceState()?.endpoints.length ?? 0) > 0, 2000, "the window");
    // A new exclusive connection during the window goes to the target and is relaxed.
    const blocked = client.blpop(["relax:q"], 0.1);
    assert.equal(await blocked, null);
    // The shared connection (moved) and the exclusive one (new) are both relaxed.
    assert.ok(relaxedCount(client) >= 2, JSON.stringify(client.maintenanceState()));
    await bind;
    await client.close();
    await sim.close();
    await assertNoLeaks();
  });

  it("TimeoutError is still raised outside windows", async () => {
    const client = new RedisClient({ port: server.port, commandTimeout: 100 });
    await assert.rejects(client.sendCommand(["DEBUG", "SLEEP", "0.3"]), TimeoutError);
    await sleep(300);
    await client.close();
  });
});
