// MaintenanceSimulator HTTP API (fault-injector shape), REST mock and CLI.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { RawClient } from "../_helpers/raw_client.ts";

interface Status {
  status: string;
  output: unknown;
  error: string | null;
}

describe("MaintenanceSimulator HTTP API", () => {
  let redis: RedisServer;
  let sim: MaintenanceSimulator;
  let base: string;
  const clients: RawClient[] = [];

  const post = async (type: string, parameters: Record<string, unknown> = {}): Promise<Response> =>
    await fetch(`${base}/action`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type, parameters }),
    });
  const start = async (type: string, parameters: Record<string, unknown> = {}): Promise<string> => {
    const res = await post(type, parameters);
    assert.equal(res.status, 200);
    const body = await res.json() as { action_id: string };
    assert.equal(typeof body.action_id, "string");
    return body.action_id;
  };
  const status = async (id: string): Promise<Status> => {
    const res = await fetch(`${base}/action/${id}`);
    assert.equal(res.status, 200);
    return await res.json() as Status;
  };
  const finish = async (id: string, timeoutMs = 15_000): Promise<Status> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const s = await status(id);
      if (s.status === "success" || s.status === "failed") return s;
      assert.ok(["pending", "running"].includes(s.status), s.status);
      if (Date.now() > end) throw new Error(`action ${id} still ${s.status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const opted = async (): Promise<RawClient> => {
    const c = await RawClient.connect(sim.endpoint.port);
    clients.push(c);
    c.send(["HELLO", "3"], [
      "CLIENT",
      "MAINT_NOTIFICATIONS",
      "ON",
      "moving-endpoint-type",
      "internal-ip",
    ]);
    await c.take(2);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    sim = await MaintenanceSimulator.start({
      upstream: `${redis.host}:${redis.port}`,
      http: { host: "127.0.0.1", port: 0 },
      rest: { username: "ops", password: "pw", uid: 7 },
    });
    base = `http://127.0.0.1:${sim.http!.port}`;
  });
  after(async () => {
    for (const c of clients) await c.close();
    await sim.close();
    await redis.stop();
  });

  it("drives migrate, failover and bind through POST /action and GET /action/{id}", async () => {
    const c = await opted();
    const m = await start("migrate", { time: 1, shard_ids: ["4"] });
    assert.ok(["pending", "running"].includes((await status(m)).status));
    const ms = await finish(m);
    assert.equal(ms.status, "success", ms.error ?? "");
    assert.deepEqual(ms.output, { migratingSeq: 0, migratedSeq: 1, notified: 1 });
    assert.deepEqual((await c.take(2)).map((i) => (i.value as RespValue[]).slice(0, 2)), [
      ["MIGRATING", 0],
      ["MIGRATED", 1],
    ]);
    const f = await finish(await start("failover", { time: 1 }));
    assert.equal(f.status, "success", f.error ?? "");
    assert.equal((f.output as { failedOverSeq: number }).failedOverSeq, 3);
    const b = await finish(await start("bind", { time: 1, target: "127.0.0.1:0" }));
    assert.equal(b.status, "success", b.error ?? "");
    assert.equal((b.output as { seq: number }).seq, 4);
    assert.deepEqual((await c.take(3)).map((i) => (i.value as RespValue[])[0]), [
      "FAILING_OVER",
      "FAILED_OVER",
      "MOVING",
    ]);
    await c.waitClosed();
  });

  it("runs network_failure and sequence_of_actions; reports failures", async () => {
    const c = await RawClient.connect(sim.endpoint.port);
    clients.push(c);
    assert.equal(await c.call("PING"), "PONG");
    const id = await start("network_failure", { kind: "latency", latency_ms: 300, duration: 1 });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    assert.equal(await c.call("PING"), "PONG");
    assert.ok(Date.now() - t0 >= 250, "latency applied while the action runs");
    assert.equal((await finish(id)).status, "success");
    assert.equal(sim.faults.state().latencyMs, 0, "and removed after it");
    const seq = await finish(
      await start("sequence_of_actions", {
        actions: [
          { type: "network_failure", parameters: { kind: "blackhole", duration_ms: 200 } },
          { type: "sleep", parameters: { duration_ms: 50 } },
          { type: "dmc_restart" },
        ],
      }),
    );
    assert.equal(seq.status, "success", seq.error ?? "");
    assert.equal((seq.output as unknown[]).length, 3);
    await c.waitClosed();
    // A failing action: a replica that does not exist.
    const bad = await finish(await start("failover", { time: 0, replica: "127.0.0.1:1" }));
    assert.equal(bad.status, "failed");
    assert.match(bad.error ?? "", /.+/);
    const unknown = await post("explode");
    assert.equal(unknown.status, 400);
    assert.match((await unknown.json() as { error: string }).error, /explode/);
    assert.equal((await fetch(`${base}/action/nope`)).status, 404);
  });

  it("lists connections, events, faults and endpoints; rejects bad requests", async () => {
    const c = await opted();
    const res = await fetch(`${base}/connections`);
    assert.equal(res.status, 200);
    const list = await res.json() as { optedIn: boolean; endpointType: string; protocol: number }[];
    assert.ok(list.some((x) => x.optedIn && x.endpointType === "internal-ip" && x.protocol === 3));
    await c.close();
    const events = await (await fetch(`${base}/events`)).json() as { type: string; seq: number }[];
    assert.deepEqual(events.map((e) => e.seq), sim.events().map((e) => e.seq));
    assert.deepEqual(await (await fetch(`${base}/faults`)).json(), sim.faults.state());
    const root = await (await fetch(`${base}/`)).json() as {
      endpoints: unknown[];
      upstream: unknown;
    };
    assert.deepEqual(root.endpoints, sim.endpoints());
    assert.deepEqual(root.upstream, sim.upstream);
    const missing = await fetch(`${base}/nothing`);
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
    const badJson = await fetch(`${base}/action`, { method: "POST", body: "{nope" });
    assert.equal(badJson.status, 400);
    await badJson.body?.cancel();
  });

  it("mocks the management REST API with Basic auth and scripted answers", async () => {
    const auth = { authorization: `Basic ${btoa("ops:pw")}` };
    const avail =
      `${base}/v1/bdbs/7/availability?extend_check=lag&availability_lag_tolerance_ms=100`;
    const list = await fetch(`${base}/v1/bdbs?fields=uid,endpoints`, { headers: auth });
    assert.equal(list.status, 200);
    const dbs = await list.json() as {
      uid: number;
      endpoints: { addr: string[]; port: number }[];
    }[];
    assert.equal(dbs[0]!.uid, 7);
    assert.ok(
      dbs[0]!.endpoints.some((e) => e.port === sim.endpoint.port && e.addr.includes("127.0.0.1")),
    );
    assert.equal((await fetch(avail, { headers: auth })).status, 200);
    const wrong = await fetch(avail, { headers: { authorization: `Basic ${btoa("ops:nope")}` } });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    assert.equal((await fetch(avail)).status, 401);
    sim.rest.script({ status: 503 });
    const lagging = await fetch(avail, { headers: auth });
    assert.equal(lagging.status, 503);
    assert.match(JSON.stringify(await lagging.json()), /100 ms/);
    sim.rest.script([{ status: 200, delayMs: 300 }, { status: 401 }]);
    const t0 = Date.now();
    assert.equal((await fetch(avail, { headers: auth })).status, 200);
    assert.ok(Date.now() - t0 >= 290, "the slow answer was slow");
    assert.equal((await fetch(avail, { headers: auth })).status, 401);
    assert.equal(
      (await fetch(avail, { headers: auth })).status,
      503,
      "back to the standing answer",
    );
    sim.rest.script({ status: 200 });
    assert.equal((await fetch(`${base}/v1/bdbs/8/availability`, { headers: auth })).status, 404);
    const log = sim.rest.requests();
    assert.ok(log.length >= 8);
    assert.equal(log.filter((r) => !r.authorized).length, 2);
  });
});

describe("MaintenanceSimulator CLI", () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.stop();
  });

  for (const file of ["cli.ts", "mod.ts"]) {
    it(`prints its addresses as one JSON line and serves until its stdin closes (${file})`, async () => {
      const isBun = (globalThis as { Bun?: unknown }).Bun !== undefined;
      const script = new URL(`../../src/testing/${file}`, import.meta.url).pathname;
      const args = [
        ...(isBun ? [] : ["run", "-A"]),
        script,
        "--upstream",
        `${redis.host}:${redis.port}`,
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
        "--stdin",
      ];
      const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
      const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
      try {
        const line = await new Promise<string>((resolve, reject) => {
          let buf = "";
          const t = setTimeout(() => reject(new Error(`no output: ${buf}`)), 20_000);
          child.stdout!.on("data", (d: Uint8Array) => {
            buf += new TextDecoder().decode(d);
            const nl = buf.indexOf("\n");
            if (nl >= 0) {
              clearTimeout(t);
              resolve(buf.slice(0, nl));
            }
          });
        });
        const info = JSON.parse(line) as { endpoint: string; http: string; upstream: string };
        assert.equal(info.upstream, `${redis.host}:${redis.port}`);
        const port = Number(info.endpoint.split(":")[1]);
        const c = await RawClient.connect(port);
        assert.equal(await c.call("PING"), "PONG");
        const conns = await (await fetch(`http://${info.http}/connections`)).json() as unknown[];
        assert.equal(conns.length, 1);
        child.stdin!.end();
        assert.equal(await exited, 0, "a clean exit");
        await c.waitClosed();
        await c.close();
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
        await exited;
      }
    });
  }
});
