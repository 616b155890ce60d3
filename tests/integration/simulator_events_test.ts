// MaintenanceSimulator events: bind (MOVING), migrate, failover, sequence numbers, replays.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { RawClient } from "../_helpers/raw_client.ts";

const HELLO3 = ["HELLO", "3"];
const optIn = (type?: string): string[] =>
  type === undefined
    ? ["CLIENT", "MAINT_NOTIFICATIONS", "ON"]
    : ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", type];

function configPort(v: RespValue): number {
  if (v instanceof Map) return Number(v.get("port"));
  assert.ok(Array.isArray(v));
  return Number(v[1]);
}

describe("MaintenanceSimulator events", () => {
  let redis: RedisServer;
  const clients: RawClient[] = [];
  const sims: MaintenanceSimulator[] = [];
  const connect = async (port: number, host = "127.0.0.1"): Promise<RawClient> => {
    const c = await RawClient.connect(port, host);
    clients.push(c);
    return c;
  };
  const start = async (): Promise<MaintenanceSimulator> => {
    const s = await MaintenanceSimulator.start({
      upstream: { host: redis.host, port: redis.port },
    });
    sims.push(s);
    return s;
  };
  /** A RESP3 connection opted in with `type` (undefined: bare ON; null: not opted in). */
  const opted = async (
    s: MaintenanceSimulator,
    type: string | undefined | null,
    at = s.endpoint,
  ): Promise<RawClient> => {
    const c = await connect(at.port, at.host);
    if (type === null) {
      c.send(HELLO3);
      await c.take(1);
    } else {
      c.send(HELLO3, optIn(type));
      const [, ok] = await c.take(2);
      assert.equal(ok!.value, "OK");
    }
    return c;
  };

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) await c.close();
    for (const s of sims) await s.close();
    await redis.stop();
  });

  it("bind: MOVING per endpoint type, re-sent to late joiners, old connections closed, target serves", async () => {
    const sim = await start();
    const ip = await opted(sim, "internal-ip");
    const fqdn = await opted(sim, "external-fqdn");
    const none = await opted(sim, "none");
    const bare = await opted(sim, undefined);
    const quiet = await opted(sim, null);
    assert.equal(await ip.call("SET", "bind:k", "before"), "OK");
    const t0 = Date.now();
    const bind = sim.bind({ time: 2, target: "127.0.0.1:0", dnsDelay: 2 });
    const moving = await sim.waitForEvent("MOVING");
    const target = moving.target!;
    assert.equal(target.host, "127.0.0.1");
    assert.notEqual(target.port, sim.endpoint.port);
    assert.deepEqual((await ip.next()).value, [
      "MOVING",
      moving.seq,
      2,
      `127.0.0.1:${target.port}`,
    ]);
    assert.deepEqual((await fqdn.next()).value, [
      "MOVING",
      moving.seq,
      2,
      `localhost:${target.port}`,
    ]);
    assert.deepEqual((await none.next()).value, ["MOVING", moving.seq, 2, null]);
    assert.deepEqual((await bare.next()).value, ["MOVING", moving.seq, 2, null]);
    assert.equal(await quiet.call("PING"), "PONG");
    assert.equal(quiet.unread.length, 0, "no MOVING without opt-in");
    // Late opt-in, in the second half of the window: the same seq, the remaining time.
    await new Promise((r) => setTimeout(r, 1_100));
    const late = await connect(sim.endpoint.port);
    late.send(HELLO3, optIn("internal-ip"));
    const [, ok, again] = await late.take(3);
    assert.equal(ok!.value, "OK");
    assert.deepEqual(again, {
      kind: "push",
      value: ["MOVING", moving.seq, 1, `127.0.0.1:${target.port}`],
    });
    // A connection to the target is not moved and not closed.
    const onTarget = await opted(sim, "internal-ip", target);
    assert.equal(await onTarget.call("GET", "bind:k"), "before", "the target serves the same data");
    const result = await bind;
    assert.ok(Date.now() - t0 >= 1_900, "the window lasted its announced time");
    assert.equal(result.seq, moving.seq);
    assert.equal(result.notified, 4);
    for (const c of [ip, fqdn, none, bare, quiet, late]) await c.waitClosed(3_000);
    assert.equal(await onTarget.call("PING"), "PONG");
    assert.equal(onTarget.ended, false);
    // The old endpoint still accepts connections after the window.
    const fresh = await connect(sim.endpoint.port);
    assert.equal(await fresh.call("GET", "bind:k"), "before");
  });

  it("bind: connections accepted after the DNS delay count as the new place's", async () => {
    const sim = await start();
    const bind = sim.bind({ time: 2, target: "127.0.0.1:0" }); // dnsDelay: 1 s by default
    const moving = await sim.waitForEvent("MOVING");
    const early = await opted(sim, "internal-ip");
    assert.deepEqual((await early.next()).value, [
      "MOVING",
      moving.seq,
      2,
      `127.0.0.1:${moving.target!.port}`,
    ]);
    await new Promise((r) => setTimeout(r, 1_100));
    const afterDns = await opted(sim, "internal-ip");
    assert.equal(await afterDns.call("PING"), "PONG");
    assert.equal(afterDns.unread.length, 0, "no MOVING for a connection made after the DNS change");
    const result = await bind;
    assert.equal(result.closed, 1);
    await early.waitClosed();
    assert.equal(await afterDns.call("PING"), "PONG", "not closed at the end of the window");
  });

  it("bind defaults to the same port on 127.0.0.2", async () => {
    const sim = await start();
    const c = await opted(sim, "internal-ip");
    const bind = sim.bind({ time: 1 });
    const push = await c.next();
    assert.deepEqual(push.value, ["MOVING", 0, 1, `127.0.0.2:${sim.endpoint.port}`]);
    const onTarget = await connect(sim.endpoint.port, "127.0.0.2");
    assert.equal(await onTarget.call("PING"), "PONG");
    await bind;
    await c.waitClosed();
  });

  it("bind with data movement: the target really is another redis-server", async () => {
    const sim = await start();
    const old = await opted(sim, "internal-ip");
    old.send(["SELECT", "2"], ["SET", "dm:k", "moved"]);
    assert.deepEqual((await old.take(2)).map((i) => i.value), ["OK", "OK"]);
    const bind = sim.bind({ time: 1, dataMovement: true });
    const moving = await sim.waitForEvent("MOVING");
    const target = moving.target!;
    assert.equal((await old.next()).value instanceof Array, true);
    // A connection made to the target during the window, in db 2, survives the switch.
    const onTarget = await opted(sim, "internal-ip", target);
    assert.equal(await onTarget.call("SELECT", "2"), "OK");
    assert.equal(configPort(await onTarget.call("CONFIG", "GET", "port")), redis.port);
    const result = await bind;
    await old.waitClosed();
    assert.notEqual(result.upstream.port, redis.port);
    assert.deepEqual(sim.upstream, result.upstream);
    assert.equal(sim.spawnedPids().length, 1);
    // Same connection, now served by the promoted server, same db, same data.
    assert.equal(configPort(await onTarget.call("CONFIG", "GET", "port")), result.upstream.port);
    assert.equal(await onTarget.call("GET", "dm:k"), "moved");
    const role = await onTarget.call("ROLE") as RespValue[];
    assert.equal(role[0], "master");
    assert.equal(
      await onTarget.call("SET", "dm:after", "new"),
      "OK",
      "the promoted server takes writes",
    );
    const direct = await connect(redis.port);
    direct.send(["SELECT", "2"], ["GET", "dm:after"]);
    assert.deepEqual(
      (await direct.take(2)).map((i) => i.value),
      ["OK", null],
      "the old server did not get it",
    );
    // New connections on the old endpoint go to the new server too.
    const fresh = await connect(sim.endpoint.port);
    assert.equal(configPort(await fresh.call("CONFIG", "GET", "port")), result.upstream.port);
  });

  it("numbers events from 0, shared across types, identical on every connection", async () => {
    const sim = await start();
    const a = await opted(sim, "internal-ip");
    const b = await opted(sim, "none");
    const m = await sim.migrate({ time: 1 });
    const f = await sim.failover({ time: 1, shardIds: ["1", "2"] });
    const bind = sim.bind({ time: 1, target: "127.0.0.1:0" });
    const mv = await sim.waitForEvent("MOVING");
    assert.deepEqual([m.migratingSeq, m.migratedSeq, f.failingOverSeq, f.failedOverSeq, mv.seq], [
      0,
      1,
      2,
      3,
      4,
    ]);
    const seqsA = (await a.take(5)).map((
      i,
    ) => [(i.value as RespValue[])[0], (i.value as RespValue[])[1]]);
    const seqsB = (await b.take(5)).map((
      i,
    ) => [(i.value as RespValue[])[0], (i.value as RespValue[])[1]]);
    const expected = [["MIGRATING", 0], ["MIGRATED", 1], ["FAILING_OVER", 2], ["FAILED_OVER", 3], [
      "MOVING",
      4,
    ]];
    assert.deepEqual(seqsA, expected);
    assert.deepEqual(seqsB, expected);
    assert.deepEqual(sim.events().map((e) => e.seq), [0, 1, 2, 3, 4]);
    await bind;
  });

  it("migrate: stalls replies, slows replies, then MIGRATED", async () => {
    const sim = await start();
    const c = await opted(sim, "internal-ip");
    const stall = sim.migrate({ time: 1, stallMs: 600 });
    assert.equal((await c.next()).value instanceof Array, true);
    const t0 = Date.now();
    assert.equal(await c.call("PING"), "PONG");
    const stalled = Date.now() - t0;
    assert.ok(stalled >= 450, `the reply was held (${stalled} ms)`);
    await stall;
    assert.equal(((await c.next()).value as RespValue[])[0], "MIGRATED");
    const slow = sim.migrate({ time: 1, slowMs: 150 });
    assert.equal(((await c.next()).value as RespValue[])[0], "MIGRATING");
    const t1 = Date.now();
    c.send(["PING"], ["PING"]);
    assert.deepEqual((await c.take(2)).map((i) => i.value), ["PONG", "PONG"]);
    assert.ok(Date.now() - t1 >= 140, "replies were slowed");
    await slow;
    assert.equal(((await c.next()).value as RespValue[])[0], "MIGRATED");
    const t2 = Date.now();
    assert.equal(await c.call("PING"), "PONG");
    assert.ok(Date.now() - t2 < 140, "back to normal speed after MIGRATED");
  });

  it("failover: a real promotion; in-flight replies drained; session and subscriptions kept", async () => {
    const sim = await start();
    const c = await opted(sim, "internal-ip");
    c.send(["SELECT", "3"], ["SET", "fo:k", "kept"]);
    await c.take(2);
    const sub = await opted(sim, "none");
    sub.send(["SUBSCRIBE", "fo:ch"]);
    await sub.take(1);
    assert.equal(configPort(await c.call("CONFIG", "GET", "port")), redis.port);
    const fo = sim.failover({ time: 1 });
    assert.equal(((await c.next()).value as RespValue[])[0], "FAILING_OVER");
    assert.equal(((await sub.next()).value as RespValue[])[0], "FAILING_OVER");
    // A command still running on the old upstream at the switch gets its reply from there.
    // The switch (at 1 s) waits for it; a command sent meanwhile is held and goes to the new one.
    c.send(["BLPOP", "fo:empty", "2"]);
    await new Promise((r) => setTimeout(r, 1_300));
    c.send(["CONFIG", "GET", "port"]);
    const result = await fo;
    const three = await c.take(3, 5_000);
    const [blpop, port] = three.filter((i) => i.kind === "reply");
    const [done] = three.filter((i) => i.kind === "push");
    assert.equal(blpop!.value, null, "the in-flight BLPOP was answered");
    assert.equal(
      configPort(port!.value),
      result.upstream.port,
      "the next command went to the new primary",
    );
    assert.equal(((done!.value) as RespValue[])[0], "FAILED_OVER");
    assert.equal(await c.call("GET", "fo:k"), "kept", "same db, same data");
    assert.equal(((await c.call("ROLE")) as RespValue[])[0], "master");
    // The subscription moved with the connection.
    assert.equal(((await sub.next()).value as RespValue[])[0], "FAILED_OVER");
    const pub = await connect(sim.endpoint.port);
    assert.equal(await pub.call("PUBLISH", "fo:ch", "after"), 1);
    assert.deepEqual((await sub.next()).value, ["message", "fo:ch", "after"]);
    assert.equal(sim.connections().find((x) => x.db === 3)?.protocol, 3);
  });

  it("failover under load: no acknowledged write is lost", async () => {
    const sim = await start();
    const workers = await Promise.all(Array.from({ length: 8 }, () => connect(sim.endpoint.port)));
    let acked = 0;
    let stop = false;
    const loops = workers.map(async (w) => {
      while (!stop) {
        const v = await w.call("INCR", "fo:load");
        assert.equal(typeof v, "number");
        acked++;
      }
    });
    await new Promise((r) => setTimeout(r, 100));
    const result = await sim.failover({ time: 1 });
    await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await Promise.all(loops);
    const direct = await connect(result.upstream.port);
    assert.equal(
      Number(await direct.call("GET", "fo:load")),
      acked,
      "every acknowledged INCR is on the new primary",
    );
    assert.ok(acked > 100);
  });

  it("waitForEvent returns no notification from before the latest bind; minSeq chooses", async () => {
    const sim = await start();
    const first = await sim.bind({ time: 0.2, target: "127.0.0.1:0" });
    assert.equal((await sim.waitForEvent("MOVING")).seq, first.seq, "the bind in progress");
    const second = sim.bind({ time: 0.2, target: "127.0.0.1:0" });
    const moving = await sim.waitForEvent("MOVING", undefined, 5_000);
    const { seq } = await second;
    assert.notEqual(moving.seq, first.seq, "the first bind's MOVING, after a second bind");
    assert.equal(moving.seq, seq);
    assert.equal((await sim.waitForEvent("MOVING", 0)).seq, first.seq, "minSeq 0: the oldest");
    assert.equal((await sim.waitForEvent("MOVING", first.seq + 1)).seq, seq);
    const migrating = sim.migrate({ time: 0.1 });
    await assert.rejects(sim.waitForEvent("MOVING", undefined, 300), /none within 300 ms/);
    await migrating;
  });

  it("replays the last MIGRATED / FAILED_OVER right after an opt-in", async () => {
    const sim = await start();
    const fresh = await opted(sim, "internal-ip");
    assert.equal(fresh.unread.length, 0, "nothing to replay yet");
    const m = await sim.migrate({ time: 1, shardIds: ["3"] });
    const late = await connect(sim.endpoint.port);
    late.send(HELLO3, optIn("internal-ip"), ["PING"]);
    const [, ok, replay, pong] = await late.take(4);
    assert.equal(ok!.value, "OK");
    assert.deepEqual(replay, { kind: "push", value: ["MIGRATED", m.migratedSeq, '["3"]'] });
    assert.equal(pong!.value, "PONG");
    const f = await sim.failover({ time: 1 });
    const later = await connect(sim.endpoint.port);
    later.send(HELLO3, optIn());
    const [, ok2, replay2] = await later.take(3);
    assert.equal(ok2!.value, "OK");
    assert.deepEqual(replay2!.value, ["FAILED_OVER", f.failedOverSeq, '["1"]']);
  });
});
