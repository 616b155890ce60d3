import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, ReplyError } from "../../../src/errors.ts";
import type { Endpoint } from "../../../src/endpoint.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import type { Probe } from "../../../src/sentinel/_dial.ts";
import {
  discoverMaster,
  discoverReplicas,
  MAX_SENTINELS,
  SentinelSet,
} from "../../../src/sentinel/_discovery.ts";

const ep = (port: number): Endpoint => ({ host: "127.0.0.1", port });
const key = (e: Endpoint) => `${e.host}:${e.port}`;

/** A world of sentinels and nodes that answer from tables; unlisted endpoints refuse. */
function world(
  sentinels: Record<number, (args: string[]) => RespValue>,
  nodes: Record<number, RespValue>,
): Probe & { asked: string[] } {
  const asked: string[] = [];
  const refuse = (e: Endpoint) =>
    Promise.reject(new ConnectionError(`Cannot connect to "${key(e)}": connection refused`));
  return {
    asked,
    sentinel(e, commands) {
      asked.push(`sentinel ${key(e)}`);
      const s = sentinels[e.port];
      if (!s) return refuse(e);
      return Promise.resolve(commands.map((c) => s(c.map(String))));
    },
    node(e, commands) {
      asked.push(`node ${key(e)}`);
      const role = nodes[e.port];
      if (role === undefined) return refuse(e);
      return Promise.resolve(commands.map(() => role));
    },
    close: () => Promise.resolve(),
  };
}

const master = ["master", 0, []];
const replica = (port: number, state = "connected") => ["slave", "127.0.0.1", port, state, 0];

function sentinel(
  masterPort: number | null,
  extra: { sentinels?: number[]; replicas?: [number, string][] } = {},
) {
  return (args: string[]): RespValue => {
    if (masterPort === null) {
      return args[1] === "GET-MASTER-ADDR-BY-NAME"
        ? null
        : new ReplyError("ERR No such master with that name");
    }
    switch (args[1]) {
      case "GET-MASTER-ADDR-BY-NAME":
        return ["127.0.0.1", String(masterPort)];
      case "SENTINELS":
        return (extra.sentinels ?? []).map((
          p,
        ) => ["ip", "127.0.0.1", "port", String(p), "flags", "sentinel"]);
      case "REPLICAS":
        return (extra.replicas ?? []).map(([p, flags]) =>
          new Map<string, string>([["ip", "127.0.0.1"], ["port", String(p)], ["flags", flags], [
            "master-link-status",
            "ok",
          ]])
        );
      default:
        return new ReplyError("ERR unknown");
    }
  };
}

describe("sentinel discovery", () => {
  it("skips a sentinel that is down and finds the master through the next one", async () => {
    const probe = world({ 26380: sentinel(7000) }, { 7000: master });
    const set = new SentinelSet([ep(26379), ep(26380)]);
    const found = await discoverMaster({ masterName: "m", sentinels: set, probe });
    assert.deepEqual(found, { master: ep(7000), sentinel: ep(26380) });
    assert.deepEqual(
      set.list()[0],
      ep(26380),
      "the sentinel that answered is asked first next time",
    );
    assert.deepEqual(probe.asked, [
      "sentinel 127.0.0.1:26379",
      "sentinel 127.0.0.1:26380",
      "node 127.0.0.1:7000",
    ]);
  });

  it("skips a sentinel that names a replica, and one that names an address nobody listens on", async () => {
    const probe = world(
      { 26379: sentinel(7001), 26380: sentinel(7999), 26381: sentinel(7000) },
      { 7000: master, 7001: replica(7000) },
    );
    const set = new SentinelSet([ep(26379), ep(26380), ep(26381)]);
    const found = await discoverMaster({ masterName: "m", sentinels: set, probe });
    assert.deepEqual(found.master, ep(7000));
    assert.deepEqual(found.sentinel, ep(26381));
  });

  it("learns further sentinels and reports each new one", async () => {
    const probe = world(
      { 26379: sentinel(7001, { sentinels: [26380, 26381] }), 26381: sentinel(7000) },
      { 7000: master, 7001: replica(7000) },
    );
    const added: Endpoint[] = [];
    const set = new SentinelSet([ep(26379)]);
    const found = await discoverMaster({
      masterName: "m",
      sentinels: set,
      probe,
      onSentinelAdded: (e) => added.push(e),
    });
    assert.deepEqual(added, [ep(26380), ep(26381)]);
    assert.deepEqual(found.sentinel, ep(26381), "a learnt sentinel is asked in the same round");
    assert.equal(set.size, 3);
  });

  it("a reply naming 50 000 sentinels is read in linear time and capped at MAX_SENTINELS", async () => {
    const many = Array.from({ length: 50_000 }, (_, i) => 30_000 + (i % 35_000));
    const probe = world({ 26379: sentinel(7000, { sentinels: many }) }, { 7000: master });
    const set = new SentinelSet([ep(26379)]);
    let tooMany = 0;
    let added = 0;
    const found = await discoverMaster({
      masterName: "m",
      sentinels: set,
      probe,
      onSentinelAdded: () => added++,
      onTooMany: () => tooMany++,
    });
    assert.deepEqual(found.master, ep(7000));
    assert.equal(set.size, MAX_SENTINELS);
    assert.equal(added, MAX_SENTINELS - 1);
    assert.equal(tooMany, 1, "told once per reply");
  });

  it("names every sentinel tried when none knows the master name", async () => {
    const probe = world({ 26379: sentinel(null), 26380: sentinel(null) }, {});
    const set = new SentinelSet([ep(26379), ep(26380)]);
    await assert.rejects(
      discoverMaster({ masterName: "nope", sentinels: set, probe }),
      (e: Error) => {
        assert.ok(e instanceof ConnectionError);
        assert.match(
          e.message,
          /Cannot discover the master: no sentinel knows the master name "nope"/,
        );
        assert.match(e.message, /127\.0\.0\.1:26379: does not know "nope"/);
        assert.match(e.message, /127\.0\.0\.1:26380: does not know "nope"/);
        return true;
      },
    );
  });

  it("names every sentinel tried and why when all are down", async () => {
    const probe = world({}, {});
    const set = new SentinelSet([ep(26379), ep(26380)]);
    await assert.rejects(
      discoverMaster({ masterName: "m", sentinels: set, probe }),
      /Cannot discover the master: no sentinel answered for "m" \(sentinel 127\.0\.0\.1:26379: connection refused; sentinel 127\.0\.0\.1:26380: connection refused\)$/,
    );
  });

  it("keeps healthy, connected replicas only", async () => {
    const probe = world(
      {
        26379: sentinel(7000, {
          replicas: [[7001, "slave"], [7002, "slave"], [7003, "slave,s_down"], [7004, "slave"]],
        }),
      },
      { 7000: master, 7001: replica(7000), 7002: replica(7000, "sync"), 7004: master },
    );
    const set = new SentinelSet([ep(26379)]);
    const found = await discoverReplicas({ masterName: "m", sentinels: set, probe });
    assert.deepEqual(found.replicas, [ep(7001)]);
    assert.ok(
      !probe.asked.includes("node 127.0.0.1:7003"),
      "a replica the sentinel sees down is not dialled",
    );
    const none = discoverReplicas({ masterName: "m", sentinels: set, probe }, [ep(7001)]);
    await assert.rejects(none, (e: Error) => {
      assert.match(
        e.message,
        /Cannot discover a replica: no sentinel listed a healthy replica of "m"/,
      );
      assert.match(e.message, /127\.0\.0\.1:7002 is not connected to its master/);
      assert.match(e.message, /127\.0\.0\.1:7004 is a master/);
      return true;
    });
  });

  it("orders the sentinels after a failed one for moving off it", () => {
    const set = new SentinelSet([ep(1), ep(2), ep(3), ep(2)]);
    assert.equal(set.size, 3);
    assert.deepEqual(set.after(ep(2)), [ep(3), ep(1), ep(2)]);
    assert.deepEqual(set.after(ep(9)), [ep(1), ep(2), ep(3)]);
    set.promote(ep(3));
    assert.deepEqual(set.list(), [ep(3), ep(1), ep(2)]);
  });
});
