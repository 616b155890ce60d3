// Byte-level tests of the MaintenanceSimulator's data plane: ordering, handshake, pushes.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { RespDecoder } from "../../src/resp/mod.ts";
import type { RespValue } from "../../src/resp/types.ts";
import { ReplyError } from "../../src/errors.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { RawClient } from "../_helpers/raw_client.ts";

const HELLO3 = ["HELLO", "3"];
const optIn = (type?: string): string[] =>
  type === undefined
    ? ["CLIENT", "MAINT_NOTIFICATIONS", "ON"]
    : ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", type];

function errText(v: RespValue): string {
  assert.ok(v instanceof ReplyError, `expected an error reply, got ${String(v)}`);
  return v.message;
}

describe("MaintenanceSimulator data plane", () => {
  let redis: RedisServer;
  let sim: MaintenanceSimulator;
  const clients: RawClient[] = [];
  const connect = async (s: MaintenanceSimulator = sim): Promise<RawClient> => {
    const c = await RawClient.connect(s.endpoint.port, s.endpoint.host);
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

  it("answers a pipelined handshake strictly in command order", async () => {
    const c = await connect();
    c.send(HELLO3, optIn("internal-ip"), ["SELECT", "1"], ["SET", "hs", "v1"], ["GET", "hs"]);
    const items = await c.take(5);
    assert.deepEqual(items.map((i) => i.kind), ["reply", "reply", "reply", "reply", "reply"]);
    assert.ok(items[0]!.value instanceof Map, "HELLO 3 reply (a map) comes first");
    assert.equal((items[0]!.value as Map<RespValue, RespValue>).get("proto"), 3);
    assert.deepEqual(items.slice(1).map((i) => i.value), ["OK", "OK", "OK", "v1"]);
    // Byte level: the proxy's own +OK sits right after the whole HELLO map.
    const text = new TextDecoder().decode(c.bytes());
    assert.ok(text.startsWith("%"), "the stream starts with the HELLO map");
    assert.ok(text.endsWith("+OK\r\n+OK\r\n+OK\r\n$2\r\nv1\r\n"), text.slice(-40));
    const info = sim.connections().find((x) => x.db === 1 && x.optedIn);
    assert.ok(info !== undefined);
    assert.equal(info.protocol, 3);
    assert.equal(info.endpointType, "internal-ip");
    assert.equal(info.inFlight, 0);
    assert.ok(info.bytesIn > 0 && info.bytesOut > 0);
  });

  it("lets only RESP3 connections opt in and validates the endpoint type", async () => {
    const c = await connect();
    assert.match(errText(await c.call(...optIn("internal-ip"))), /RESP3/);
    assert.deepEqual(await c.call("CLIENT", "MAINT_NOTIFICATIONS", "OFF"), "OK");
    assert.ok((await c.call(...HELLO3)) instanceof Map);
    assert.match(errText(await c.call(...optIn("bogus"))), /moving-endpoint-type 'bogus'/);
    assert.match(
      errText(await c.call("CLIENT", "MAINT_NOTIFICATIONS")),
      /wrong number of arguments/,
    );
    assert.match(errText(await c.call("CLIENT", "MAINT_NOTIFICATIONS", "MAYBE")), /syntax error/);
    for (const t of ["internal-ip", "internal-fqdn", "external-ip", "external-fqdn", "none"]) {
      assert.equal(await c.call(...optIn(t)), "OK", t);
      const info = await c.call("CLIENT", "MAINT_NOTIFICATIONS_INFO");
      assert.ok(info instanceof Map);
      assert.equal(info.get("status"), "on");
      assert.equal(
        (info.get("parameters") as Map<RespValue, RespValue>).get("moving-endpoint-type"),
        t,
      );
    }
    assert.equal(await c.call(...optIn()), "OK");
    assert.equal(
      sim.connections().find((x) => x.optedIn && x.endpointType === null)?.optedIn,
      true,
    );
    assert.equal(await c.call("CLIENT", "MAINT_NOTIFICATIONS", "OFF"), "OK");
    const off = await c.call("CLIENT", "MAINT_NOTIFICATIONS_INFO") as Map<RespValue, RespValue>;
    assert.equal(off.get("status"), "off");
    // HELLO 2 drops the opt-in.
    assert.equal(await c.call(...optIn("external-ip")), "OK");
    assert.ok(Array.isArray(await c.call("HELLO", "2")));
    const info2 = await c.call("CLIENT", "MAINT_NOTIFICATIONS_INFO");
    assert.ok(Array.isArray(info2));
    assert.deepEqual(info2.slice(0, 2), ["status", "off"]);
  });

  it("rejects the handshake exactly like open-source Redis when asked to", async () => {
    const oss = await MaintenanceSimulator.start({
      upstream: `${redis.host}:${redis.port}`,
      rejectMaintNotifications: true,
    });
    try {
      const c = await connect(oss);
      c.send(HELLO3, optIn("internal-ip"), ["PING"]);
      const [hello, maint, ping] = await c.take(3);
      assert.ok(hello!.value instanceof Map);
      assert.equal(
        errText(maint!.value),
        "ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP.",
      );
      assert.equal(ping!.value, "PONG");
      const direct = await RawClient.connect(redis.port, redis.host);
      clients.push(direct);
      assert.equal(errText(await direct.call(...optIn("internal-ip"))), errText(maint!.value));
    } finally {
      await oss.close();
    }
  });

  it("passes RESP3 pub/sub pushes through without consuming reply slots", async () => {
    const sub = await connect();
    const pub = await connect();
    sub.send(HELLO3, ["SUBSCRIBE", "ch-a", "ch-b", "ch-c"], ["PING"], ["PSUBSCRIBE", "pat-*"]);
    const items = await sub.take(6);
    assert.ok(items[0]!.value instanceof Map);
    assert.deepEqual(items.slice(1, 4).map((i) => [i.kind, (i.value as RespValue[])[1]]), [
      ["push", "ch-a"],
      ["push", "ch-b"],
      ["push", "ch-c"],
    ]);
    assert.deepEqual(items[4], { kind: "reply", value: "PONG" });
    assert.deepEqual(items[5], { kind: "push", value: ["psubscribe", "pat-*", 4] });
    assert.equal(await pub.call("PUBLISH", "ch-b", "hello"), 1);
    assert.deepEqual(await sub.next(), { kind: "push", value: ["message", "ch-b", "hello"] });
    assert.equal(await pub.call("PUBLISH", "pat-x", "p"), 1);
    assert.deepEqual(await sub.next(), {
      kind: "push",
      value: ["pmessage", "pat-*", "pat-x", "p"],
    });
    // UNSUBSCRIBE of everything: one confirmation per channel, then the next reply.
    sub.send(["UNSUBSCRIBE"], ["GET", "nothing-here"]);
    const rest = await sub.take(4);
    assert.deepEqual(rest.slice(0, 3).map((i) => i.kind), ["push", "push", "push"]);
    assert.deepEqual(rest.slice(0, 3).map((i) => (i.value as RespValue[])[0]), [
      "unsubscribe",
      "unsubscribe",
      "unsubscribe",
    ]);
    assert.deepEqual(rest[3], { kind: "reply", value: null });
    assert.equal(sim.connections().every((x) => x.inFlight === 0), true);
  });

  it("tracks RESP2 subscriptions: confirmations take their slots, messages do not", async () => {
    const sub = await connect();
    const pub = await connect();
    sub.send(["SUBSCRIBE", "r2-a", "r2-b"], ["PING"]);
    const items = await sub.take(3);
    assert.deepEqual(items.map((i) => i.value), [
      ["subscribe", "r2-a", 1],
      ["subscribe", "r2-b", 2],
      ["pong", ""],
    ]);
    assert.equal(await pub.call("PUBLISH", "r2-a", "m1"), 1);
    assert.deepEqual((await sub.next()).value, ["message", "r2-a", "m1"]);
    sub.send(["UNSUBSCRIBE"], ["PING"]);
    const rest = await sub.take(3);
    assert.deepEqual(rest.slice(0, 2).map((i) => (i.value as RespValue[])[0]), [
      "unsubscribe",
      "unsubscribe",
    ]);
    assert.equal(rest[2]!.value, "PONG");
  });

  it("sends notifications only to opted-in RESP3 connections", async () => {
    const optedIn = await connect();
    const resp3Only = await connect();
    const resp2 = await connect();
    const optedOut = await connect();
    optedIn.send(HELLO3, optIn("internal-ip"));
    resp3Only.send(HELLO3);
    resp2.send(optIn("internal-ip"));
    optedOut.send(HELLO3, optIn("internal-ip"), ["CLIENT", "MAINT_NOTIFICATIONS", "OFF"]);
    await Promise.all([optedIn.take(2), resp3Only.take(1), resp2.take(1), optedOut.take(3)]);
    const start = sim.events().length;
    const result = await sim.migrate({ time: 1, shardIds: ["7"] });
    const ev = sim.events().slice(start);
    assert.deepEqual(ev.map((e) => e.type), ["MIGRATING", "MIGRATED"]);
    assert.equal(result.migratedSeq, result.migratingSeq + 1);
    const [a, b] = await optedIn.take(2);
    assert.deepEqual(a, { kind: "push", value: ["MIGRATING", result.migratingSeq, 1, '["7"]'] });
    assert.deepEqual(b, { kind: "push", value: ["MIGRATED", result.migratedSeq, '["7"]'] });
    for (const c of [resp3Only, resp2, optedOut]) {
      assert.equal(await c.call("PING"), "PONG", "nothing arrived before the PONG");
      assert.equal(c.unread.length, 0);
    }
  });

  it("never lands a push inside a reply under a 10 000-command pipeline with a bind", async () => {
    const local = await MaintenanceSimulator.start({
      upstream: { host: redis.host, port: redis.port },
    });
    try {
      const c = await connect(local);
      c.send(HELLO3, optIn("internal-ip"));
      await c.take(2);
      const n = 10_000;
      const value = (i: number) => `v${i}:` + "x".repeat((i * 37) % 1500);
      const cmds: string[][] = [];
      for (let i = 0; i < n; i += 2) {
        cmds.push(["SET", `pipe:${i}`, value(i)]);
        cmds.push(["GET", `pipe:${i}`]);
      }
      c.send(...cmds);
      await c.until(() => c.items.length >= 2 + 50, 10_000, "the first replies");
      const bind = local.bind({ time: 1 });
      await c.until(() => c.items.length >= 2 + n + 1, 20_000, "every reply and the push");
      assert.equal(c.error, undefined, "the stream decodes");
      const items = c.items.slice(2);
      const pushes = items.filter((i) => i.kind === "push");
      assert.equal(pushes.length, 1);
      const moving = pushes[0]!.value as RespValue[];
      assert.equal(moving.length, 4);
      assert.equal(moving[0], "MOVING");
      assert.equal(moving[2], 1);
      const replies = items.filter((i) => i.kind === "reply").map((i) => i.value);
      assert.equal(replies.length, n);
      for (let i = 0; i < n; i += 2) {
        assert.equal(replies[i], "OK");
        assert.equal(replies[i + 1], value(i));
      }
      // A fresh decode of the raw bytes agrees: every frame whole, pushes included.
      const seen: string[] = [];
      const d = new RespDecoder({ onReply: () => seen.push("r"), onPush: () => seen.push("p") });
      d.feed(c.bytes());
      assert.equal(seen.length, 2 + n + 1);
      const pushAt = items.findIndex((i) => i.kind === "push");
      assert.ok(
        pushAt > 0 && pushAt < n,
        `the MOVING landed mid-stream (after ${pushAt} of ${n} replies)`,
      );
      const result = await bind;
      assert.equal(result.notified, 1);
      await c.waitClosed();
    } finally {
      await local.close();
    }
  });
});
