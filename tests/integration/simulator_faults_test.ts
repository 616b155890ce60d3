// MaintenanceSimulator faults: latency, blackhole, close-all, pause/resume; and close().
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Socket } from "node:net";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { RawClient } from "../_helpers/raw_client.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function refused(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => resolve(true));
    s.connect(port, host);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("MaintenanceSimulator faults", () => {
  let redis: RedisServer;
  let sim: MaintenanceSimulator;
  const clients: RawClient[] = [];
  const connect = async (): Promise<RawClient> => {
    const c = await RawClient.connect(sim.endpoint.port, sim.endpoint.host);
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    sim = await MaintenanceSimulator.start({ upstream: { host: redis.host, port: redis.port } });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await sim.close();
    await redis.stop();
  });

  it("latency delays every reply and keeps the order", async () => {
    const c = await connect();
    sim.faults.latency(200);
    assert.equal(sim.faults.state().latencyMs, 200);
    const t0 = Date.now();
    c.send(["SET", "lat", "1"], ["INCR", "lat"], ["GET", "lat"]);
    assert.deepEqual((await c.take(3)).map((i) => i.value), ["OK", 2, "2"]);
    assert.ok(Date.now() - t0 >= 190, `took ${Date.now() - t0} ms`);
    sim.faults.latency(0);
    const t1 = Date.now();
    assert.equal(await c.call("PING"), "PONG");
    assert.ok(Date.now() - t1 < 150);
  });

  it("blackhole accepts connections and never answers; lossy connections closed after", async () => {
    const before = await connect();
    assert.equal(await before.call("PING"), "PONG");
    const idle = await connect();
    assert.equal(await idle.call("PING"), "PONG");
    sim.faults.blackhole();
    assert.equal(sim.faults.state().blackhole, true);
    const during = await connect(); // accepted
    before.send(["PING"]);
    during.send(["PING"]);
    await sleep(300);
    assert.equal(before.unread.length, 0);
    assert.equal(during.unread.length, 0);
    assert.equal(during.ended, false);
    sim.faults.clear();
    await before.waitClosed();
    await during.waitClosed();
    assert.equal(await idle.call("PING"), "PONG", "a connection that lost nothing stays usable");
    const afterwards = await connect();
    assert.equal(await afterwards.call("PING"), "PONG");
    // A timed blackhole ends by itself.
    sim.faults.blackhole({ durationMs: 200 });
    await sleep(300);
    assert.equal(sim.faults.state().blackhole, false);
    assert.equal(await afterwards.call("PING"), "PONG");
  });

  it("closeAll closes every connection (FIN) and keeps accepting", async () => {
    const a = await connect();
    const b = await connect();
    assert.equal(await a.call("PING"), "PONG");
    assert.equal(await b.call("PING"), "PONG");
    const n = sim.faults.closeAll();
    assert.ok(n >= 2);
    await a.waitClosed();
    await b.waitClosed();
    assert.equal(a.ended, true, "a FIN, not a reset");
    const c = await connect();
    assert.equal(await c.call("PING"), "PONG");
  });

  it("pause holds requests and replies; resume delivers them in order", async () => {
    const c = await connect();
    assert.equal(await c.call("SET", "paused", "0"), "OK");
    sim.faults.pause();
    c.send(["INCR", "paused"], ["INCR", "paused"]);
    await sleep(250);
    assert.equal(c.unread.length, 0);
    const direct = await RawClient.connect(redis.port, redis.host);
    clients.push(direct);
    assert.equal(await direct.call("GET", "paused"), "0", "held requests were not forwarded");
    sim.faults.resume();
    assert.deepEqual((await c.take(2)).map((i) => i.value), [1, 2]);
  });

  it("close() leaves no listener, connection or spawned process behind", async () => {
    const local = await MaintenanceSimulator.start({
      upstream: { host: redis.host, port: redis.port },
      http: "127.0.0.1:0",
    });
    const c = await RawClient.connect(local.endpoint.port);
    clients.push(c);
    c.send(["HELLO", "3"], ["CLIENT", "MAINT_NOTIFICATIONS", "ON"]);
    await c.take(2);
    await local.failover({ time: 1 });
    const bind = await local.bind({ time: 1, dataMovement: true, target: "127.0.0.1:0" });
    const pids = local.spawnedPids();
    assert.equal(pids.length, 2);
    assert.ok(pids.every(alive));
    const c2 = await RawClient.connect(bind.target.port);
    clients.push(c2);
    assert.equal(await c2.call("PING"), "PONG");
    const ports = [local.endpoint.port, bind.target.port, local.http!.port];
    const waiting = local.waitForEvent("MIGRATING");
    await local.close();
    await assert.rejects(waiting, /closed/);
    await assert.rejects(local.waitForEvent("MIGRATING"), /closed/);
    await assert.rejects(local.migrate({ time: 1 }), /closed/);
    await c2.waitClosed();
    assert.ok(pids.every((p) => !alive(p)), "spawned redis-servers are gone");
    for (const p of ports) assert.ok(await refused(p), `port ${p} is closed`);
    assert.deepEqual(local.connections(), []);
    await local.close(); // idempotent
  });
});
