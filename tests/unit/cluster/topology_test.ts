import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ReplyError } from "../../../src/errors.ts";
import {
  addressMapper,
  chooseTopology,
  clusterInfoEpoch,
  type ClusterTopology,
  diffTopology,
  emptyTopology,
  isClusterDisabledError,
  MAX_NODES,
  NO_NODE,
  parseClusterShards,
  parseClusterSlots,
  patchSlot,
} from "../../../src/cluster/topology.ts";
import { type ModelShard, shardsReply, slotsReply } from "./_model.ts";

const answeredBy = { host: "127.0.0.1", port: 7000 };

const THREE: ModelShard[] = [
  {
    primary: { host: "127.0.0.1", port: 7000 },
    replicas: [{ host: "127.0.0.1", port: 7003 }],
    ranges: [[0, 5460]],
  },
  {
    primary: { host: "127.0.0.1", port: 7001 },
    replicas: [{ host: "127.0.0.1", port: 7004 }],
    ranges: [[5461, 10922]],
  },
  {
    primary: { host: "127.0.0.1", port: 7002 },
    replicas: [{ host: "127.0.0.1", port: 7005 }],
    ranges: [[10923, 16383]],
  },
];

function owner(t: ClusterTopology, slot: number): string | undefined {
  const i = t.slots[slot]!;
  return i === NO_NODE ? undefined : t.nodes[i]!.address;
}

describe("parseClusterShards", () => {
  for (const resp3 of [false, true]) {
    it(`reads nodes, roles, replicas and slots (${resp3 ? "RESP3" : "RESP2"})`, () => {
      const t = parseClusterShards(shardsReply(THREE, resp3), { answeredBy, epoch: 6 });
      assert.equal(t.nodes.length, 6);
      assert.equal(t.epoch, 6);
      assert.equal(owner(t, 0), "127.0.0.1:7000");
      assert.equal(owner(t, 5460), "127.0.0.1:7000");
      assert.equal(owner(t, 5461), "127.0.0.1:7001");
      assert.equal(owner(t, 16383), "127.0.0.1:7002");
      const p = t.nodes.findIndex((n) => n.port === 7001);
      assert.deepEqual(t.replicas[p]!.map((i) => t.nodes[i]!.port), [7004]);
      const r = t.nodes.find((n) => n.port === 7004)!;
      assert.equal(r.role, "replica");
      assert.equal(r.primary, "127.0.0.1:7001");
      assert.equal(r.id, "r1.0");
      assert.equal(r.replicationOffset, 1234);
    });
  }

  it("reads a shard of 1 999 replicas in linear time, and refuses a view of 50 000 nodes", () => {
    const big = (n: number): ModelShard[] => [{
      primary: { host: "127.0.0.1", port: 7000 },
      replicas: Array.from({ length: n }, (_, i) => ({ host: "127.0.0.2", port: 10_000 + i })),
      ranges: [[0, 16383]],
    }];
    const t = parseClusterShards(shardsReply(big(MAX_NODES - 1)), { answeredBy });
    assert.equal(t.nodes.length, MAX_NODES);
    assert.equal(t.replicas[0]!.length, MAX_NODES - 1);
    // Before: 50 000 nodes froze the event loop for 21-25 s (a quadratic replica list).
    assert.throws(
      () => parseClusterShards(shardsReply(big(50_000)), { answeredBy }),
      (e: unknown) => e instanceof RangeError && /more than 2000 nodes/.test((e as Error).message),
    );
    assert.throws(
      () => parseClusterSlots(slotsReply(big(50_000)), { answeredBy }),
      (e: unknown) => e instanceof RangeError && /more than 2000 nodes/.test((e as Error).message),
    );
  });

  it("routes nothing to a primary that is loading or failed, nor reads to such a replica", () => {
    const shards: ModelShard[] = [
      { ...THREE[0]!, primary: { host: "127.0.0.1", port: 7000, health: "fail" } },
      {
        ...THREE[1]!,
        replicas: [{ host: "127.0.0.1", port: 7004, health: "loading" }],
      },
      { ...THREE[2]!, primary: { host: "127.0.0.1", port: 7002, health: "loading" } },
    ];
    const t = parseClusterShards(shardsReply(shards), { answeredBy });
    assert.equal(owner(t, 100), undefined);
    assert.equal(owner(t, 6000), "127.0.0.1:7001");
    assert.equal(owner(t, 12000), undefined);
    const p = t.nodes.findIndex((n) => n.port === 7001);
    assert.deepEqual(t.replicas[p], []);
    assert.equal(t.nodes.find((n) => n.port === 7000)!.health, "fail");
  });

  it("picks the TLS port with tls, and the plain port without", () => {
    const shards: ModelShard[] = [{
      primary: { host: "127.0.0.1", port: 7000, tlsPort: 8000 },
      replicas: [],
      ranges: [[0, 16383]],
    }];
    assert.equal(
      parseClusterShards(shardsReply(shards), { answeredBy, tls: true }).nodes[0]!.port,
      8000,
    );
    assert.equal(parseClusterShards(shardsReply(shards), { answeredBy }).nodes[0]!.port, 7000);
  });

  it("uses the answering node for an empty or unknown endpoint and ip", () => {
    const reply = [[
      "slots",
      [0, 16383],
      "nodes",
      [["id", "a", "port", 7000, "ip", "", "endpoint", "?", "role", "master", "health", "online"]],
    ]];
    const t = parseClusterShards(reply, { answeredBy: { host: "10.1.1.1", port: 7000 } });
    assert.equal(t.nodes[0]!.address, "10.1.1.1:7000");
  });

  it("prefers the endpoint (hostname) over the ip", () => {
    const reply = [[
      "slots",
      [0, 16383],
      "nodes",
      [[
        "id",
        "a",
        "port",
        7000,
        "ip",
        "10.0.0.1",
        "endpoint",
        "redis-0.local",
        "hostname",
        "redis-0.local",
        "role",
        "master",
        "health",
        "online",
      ]],
    ]];
    const t = parseClusterShards(reply, { answeredBy });
    assert.equal(t.nodes[0]!.host, "redis-0.local");
    assert.equal(t.nodes[0]!.hostname, "redis-0.local");
  });

  it("rewrites announced addresses with the nodeAddressMap", () => {
    const shards: ModelShard[] = [{
      primary: { host: "10.0.0.5", port: 6379 },
      replicas: [{ host: "10.0.0.6", port: 6379 }],
      ranges: [[0, 16383]],
    }];
    const mapAddress = addressMapper({ "10.0.0.5:6379": "127.0.0.1:7000" });
    const t = parseClusterShards(shardsReply(shards), { answeredBy, mapAddress });
    assert.equal(owner(t, 1), "127.0.0.1:7000");
    assert.equal(t.nodes[1]!.address, "10.0.0.6:6379");
    const fn = addressMapper((a) =>
      a.host === "10.0.0.6" ? { host: "localhost", port: 7001 } : undefined
    );
    const u = parseClusterShards(shardsReply(shards), { answeredBy, mapAddress: fn });
    assert.equal(u.nodes[1]!.address, "localhost:7001");
    assert.equal(u.nodes[1]!.primary, "10.0.0.5:6379");
  });

  it("rejects replies that are not CLUSTER SHARDS", () => {
    assert.throws(() => parseClusterShards("OK", { answeredBy }), TypeError);
    assert.throws(
      () => parseClusterShards([["slots", [0], "nodes", []]], { answeredBy }),
      TypeError,
    );
    assert.throws(
      () => parseClusterShards([["slots", [5, 2], "nodes", []]], { answeredBy }),
      TypeError,
    );
    assert.throws(
      () => parseClusterShards([["slots", [0, 16384], "nodes", []]], { answeredBy }),
      TypeError,
    );
    assert.throws(() => parseClusterShards([["slots", [0, 1]]], { answeredBy }), TypeError);
    assert.throws(
      () =>
        parseClusterShards([["slots", [0, 1], "nodes", [["id", "a", "role", "master"]]]], {
          answeredBy,
        }),
      /no port/,
    );
  });
});

describe("parseClusterSlots", () => {
  it("reads the same view as CLUSTER SHARDS", () => {
    const a = parseClusterSlots(slotsReply(THREE), { answeredBy });
    const b = parseClusterShards(shardsReply(THREE), { answeredBy });
    for (let s = 0; s < 16384; s += 97) assert.equal(owner(a, s), owner(b, s));
    assert.deepEqual(a.nodes.map((n) => n.address).sort(), b.nodes.map((n) => n.address).sort());
    const p = a.nodes.findIndex((n) => n.port === 7002);
    assert.deepEqual(a.replicas[p]!.map((i) => a.nodes[i]!.port), [7005]);
  });
  it("groups several ranges of one primary into one shard", () => {
    const shards: ModelShard[] = [{
      primary: { host: "127.0.0.1", port: 7000 },
      replicas: [{ host: "127.0.0.1", port: 7001 }],
      ranges: [[0, 10], [20, 30]],
    }];
    const t = parseClusterSlots(slotsReply(shards), { answeredBy });
    assert.equal(t.nodes.length, 2);
    assert.equal(owner(t, 25), "127.0.0.1:7000");
    assert.equal(owner(t, 15), undefined);
  });
  it("fills an empty host with the answering node and reads hostnames from the metadata", () => {
    const reply = [[0, 16383, ["", 7000, "a", new Map([["hostname", "n0.local"]])]]];
    const t = parseClusterSlots(reply, { answeredBy: { host: "10.9.9.9", port: 7000 } });
    assert.equal(t.nodes[0]!.address, "10.9.9.9:7000");
    assert.equal(t.nodes[0]!.hostname, "n0.local");
  });
  it("rejects replies that are not CLUSTER SLOTS", () => {
    assert.throws(() => parseClusterSlots(1, { answeredBy }), TypeError);
    assert.throws(() => parseClusterSlots([[0, 1]], { answeredBy }), TypeError);
    assert.throws(() => parseClusterSlots([[0, 1, ["h", "x"]]], { answeredBy }), TypeError);
  });
});

describe("chooseTopology", () => {
  const base = () => parseClusterShards(shardsReply(THREE), { answeredBy, epoch: 5 });
  const moved = (epoch: number) => {
    const t = parseClusterShards(shardsReply(THREE), { answeredBy, epoch });
    t.slots.fill(1, 0, 100);
    return t;
  };
  it("never adopts a view older than the current one", () => {
    assert.equal(chooseTopology([moved(3), moved(4)], 5), undefined);
  });
  it("prefers the highest epoch", () => {
    const a = base();
    const b = moved(6);
    assert.equal(chooseTopology([a, b], 5), b);
  });
  it("takes the view most nodes agree on among equal epochs", () => {
    const a = base();
    const b = moved(5);
    const c = moved(5);
    assert.equal(chooseTopology([a, b, c], 5), b);
    assert.equal(chooseTopology([a, b], 0), a);
  });
});

describe("clusterInfoEpoch and isClusterDisabledError", () => {
  it("reads the current epoch", () => {
    assert.equal(
      clusterInfoEpoch("cluster_state:ok\r\ncluster_current_epoch:17\r\ncluster_my_epoch:2\r\n"),
      17,
    );
    assert.equal(clusterInfoEpoch("nothing"), 0);
  });
  it("recognises a server without cluster support", () => {
    assert.equal(
      isClusterDisabledError(new ReplyError("ERR This instance has cluster support disabled")),
      true,
    );
    assert.equal(isClusterDisabledError(new ReplyError("ERR unknown command")), false);
    assert.equal(isClusterDisabledError(new Error("cluster support disabled")), false);
  });
});

describe("patchSlot and diffTopology", () => {
  it("routes a slot to a known node, a promoted replica or a new node", () => {
    const t = parseClusterShards(shardsReply(THREE), { answeredBy });
    const before = parseClusterShards(shardsReply(THREE), { answeredBy });
    patchSlot(t, 10, { host: "127.0.0.1", port: 7001 });
    assert.equal(owner(t, 10), "127.0.0.1:7001");
    patchSlot(t, 11, { host: "127.0.0.1", port: 7003 });
    const r = t.nodes.find((n) => n.port === 7003)!;
    assert.equal(r.role, "primary");
    assert.equal(r.primary, null);
    const p = t.nodes.findIndex((n) => n.port === 7000);
    assert.deepEqual(t.replicas[p], []);
    patchSlot(t, 12, { host: "127.0.0.1", port: 7100 });
    assert.equal(owner(t, 12), "127.0.0.1:7100");
    const d = diffTopology(before, t);
    assert.deepEqual(d.added, ["127.0.0.1:7100"]);
    assert.deepEqual(d.removed, []);
    assert.equal(d.slotsMoved, 3);
    assert.deepEqual(d.changed, ["127.0.0.1:7003"]);
    assert.deepEqual(diffTopology(t, emptyTopology()).removed.length, 7);
  });
});
