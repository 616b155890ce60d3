// The simulator's endpoints over TLS: the client side of the *-fqdn path.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { RawClient } from "../_helpers/raw_client.ts";
import { makeCerts, type TestCerts } from "../_helpers/tls.ts";

describe("MaintenanceSimulator over TLS", () => {
  let redis: RedisServer;
  let certs: TestCerts;
  let sim: MaintenanceSimulator;
  const clients: RawClient[] = [];

  before(async () => {
    certs = makeCerts();
    redis = await startRedis();
    sim = await MaintenanceSimulator.start({
      upstream: { host: redis.host, port: redis.port },
      tls: { cert: readFileSync(certs.certFile, "utf8"), key: readFileSync(certs.keyFile, "utf8") },
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await sim.close();
    await redis.stop();
    rmSync(certs.dir, { recursive: true, force: true });
  });

  it("serves TLS clients and moves them to a host name for *-fqdn", async () => {
    const tlsTo = async (port: number) => {
      const c = await RawClient.connectTls(port, "127.0.0.1", {
        ca: certs.caPem,
        servername: "localhost",
      });
      clients.push(c);
      return c;
    };
    const c = await tlsTo(sim.endpoint.port);
    c.send(["HELLO", "3"], [
      "CLIENT",
      "MAINT_NOTIFICATIONS",
      "ON",
      "moving-endpoint-type",
      "internal-fqdn",
    ], [
      "SET",
      "tls:k",
      "v",
    ]);
    assert.deepEqual((await c.take(3)).slice(1).map((i) => i.value), ["OK", "OK"]);
    const info = sim.connections().find((x) => x.optedIn);
    assert.equal(info?.tls, true);
    assert.equal(info?.endpointType, "internal-fqdn");
    const bind = sim.bind({ time: 1, target: "127.0.0.1:0" });
    const moving = await c.next();
    const target = (await sim.waitForEvent("MOVING")).target!;
    assert.deepEqual(moving, { kind: "push", value: ["MOVING", 0, 1, `localhost:${target.port}`] });
    const moved = await tlsTo(target.port);
    assert.equal(await moved.call("GET", "tls:k"), "v", "the target speaks TLS too");
    await bind;
    await c.waitClosed();
    assert.equal(await moved.call("PING"), "PONG");
  });
});
