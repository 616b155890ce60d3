import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ReplyError } from "../../../src/errors.ts";
import { aggregateReplies } from "../../../src/cluster/_aggregate.ts";
import { isRetryableRefusal, parseRedirect } from "../../../src/cluster/_redirect.ts";
import { resolveClusterOptions } from "../../../src/cluster/options.ts";
import { clientSideCache } from "../../../src/cache/mod.ts";

const from = { host: "10.0.0.1", port: 7000 };

describe("parseRedirect", () => {
  it("reads MOVED and ASK", () => {
    assert.deepEqual(parseRedirect(new ReplyError("MOVED 3999 127.0.0.1:6381"), from), {
      ask: false,
      slot: 3999,
      to: { host: "127.0.0.1", port: 6381 },
    });
    assert.deepEqual(parseRedirect(new ReplyError("ASK 1 [::1]:7001"), from), {
      ask: true,
      slot: 1,
      to: { host: "::1", port: 7001 },
    });
  });
  it("takes the replying node's host for an empty one", () => {
    assert.deepEqual(parseRedirect(new ReplyError("MOVED 5 :7002"), from)?.to, {
      host: "10.0.0.1",
      port: 7002,
    });
  });
  it("ignores other errors and malformed redirects", () => {
    assert.equal(parseRedirect(new ReplyError("ERR wrong"), from), undefined);
    assert.equal(parseRedirect(new ReplyError("MOVED x 1.2.3.4:5"), from), undefined);
    assert.equal(parseRedirect(new ReplyError("MOVED 16384 1.2.3.4:5"), from), undefined);
    assert.equal(parseRedirect(new ReplyError("MOVED 1 nowhere"), from), undefined);
  });
});

describe("isRetryableRefusal", () => {
  it("accepts TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN only", () => {
    for (
      const m of [
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "CLUSTERDOWN The cluster is down",
        "LOADING Redis is loading",
        "MASTERDOWN Link with MASTER is down",
      ]
    ) {
      assert.equal(isRetryableRefusal(new ReplyError(m)), true, m);
    }
    assert.equal(isRetryableRefusal(new ReplyError("ERR x")), false);
    assert.equal(isRetryableRefusal(new Error("TRYAGAIN")), false);
  });
});

describe("aggregateReplies", () => {
  it("sums, takes min and max, elementwise for arrays", () => {
    assert.equal(aggregateReplies([1, 2, 3], "agg_sum"), 6);
    assert.equal(aggregateReplies([4, 2, 3], "agg_min"), 2);
    assert.equal(aggregateReplies([4, 2, 3], "agg_max"), 4);
    assert.deepEqual(aggregateReplies([[1, 0], [2, 5]], "agg_sum"), [3, 5]);
  });
  it("ANDs and ORs (SCRIPT EXISTS)", () => {
    assert.deepEqual(aggregateReplies([[1, 1, 0], [1, 0, 0]], "agg_logical_and"), [1, 0, 0]);
    assert.deepEqual(aggregateReplies([[1, 0, 0], [0, 0, 1]], "agg_logical_or"), [1, 0, 1]);
    assert.equal(aggregateReplies([true, false], "agg_logical_and"), 0);
  });
  it("concatenates arrays and merges maps without a policy, first reply otherwise", () => {
    assert.deepEqual(aggregateReplies([["a"], ["b", "c"]], undefined), ["a", "b", "c"]);
    const m = aggregateReplies([new Map([["a", 1]]), new Map([["b", 2]])], undefined) as Map<
      string,
      number
    >;
    assert.deepEqual([...m], [["a", 1], ["b", 2]]);
    assert.equal(aggregateReplies(["OK", "OK"], "all_succeeded"), "OK");
    assert.equal(aggregateReplies(["x", "y"], undefined), "x");
  });
  it("refuses what cannot be combined", () => {
    assert.throws(() => aggregateReplies(["a", 1], "agg_sum"), /expected numbers/);
    assert.throws(() => aggregateReplies([[1], [1, 2]], "agg_sum"), /different lengths/);
  });
});

describe("resolveClusterOptions", () => {
  it("reads seeds as URLs, host:port and objects, with defaults", () => {
    const o = resolveClusterOptions({
      nodes: [
        "redis://u:p@127.0.0.1:7000",
        "127.0.0.1:7001",
        { host: "::1", port: 7002 },
        "[::1]:7003",
      ],
    });
    assert.deepEqual(o.seeds.map((s) => `${s.host}:${s.port}`), [
      "127.0.0.1:7000",
      "127.0.0.1:7001",
      "::1:7002",
      "::1:7003",
    ]);
    assert.equal(o.maxAttempts, 5);
    assert.equal(o.maxTotalRetriesDuration, 10_000);
    assert.equal(o.readFrom, "primary");
    assert.equal(o.topologyRefreshInterval, 60_000);
    assert.equal(o.shardMigrationProbeInterval, 100);
    assert.equal(o.failoverShadows, true);
    assert.equal(o.crossSlot, "split");
    assert.equal(o.node.username, "u");
    assert.equal(o.node.password, "p");
  });
  it("turns TLS on for rediss:// seeds", () => {
    assert.equal(resolveClusterOptions({ nodes: ["rediss://h:1"] }).node.tls, true);
  });
  it("rejects bad input", () => {
    assert.throws(() => resolveClusterOptions({ nodes: [] }), TypeError);
    assert.throws(() => resolveClusterOptions({} as never), TypeError);
    assert.throws(() => resolveClusterOptions({ nodes: ["nohost"] }), TypeError);
    assert.throws(() => resolveClusterOptions({ nodes: ["h:0"] }), TypeError);
    assert.throws(() => resolveClusterOptions({ nodes: [{ host: "h", port: 70000 }] }), TypeError);
    assert.throws(() => resolveClusterOptions({ nodes: ["h:1"], maxAttempts: 0 }), RangeError);
    assert.throws(
      () => resolveClusterOptions({ nodes: ["h:1"], readFrom: "any" as never }),
      RangeError,
    );
    assert.throws(
      () => resolveClusterOptions({ nodes: ["h:1"], crossSlot: "x" as never }),
      RangeError,
    );
    assert.throws(
      () => resolveClusterOptions({ nodes: ["h:1"], topologyRefreshInterval: -1 }),
      RangeError,
    );
    assert.throws(
      () => resolveClusterOptions({ nodes: ["h:1"], shardMigrationProbeInterval: 1.5 }),
      RangeError,
    );
    assert.equal(
      resolveClusterOptions({ nodes: ["h:1"], shardMigrationProbeInterval: 0 })
        .shardMigrationProbeInterval,
      0,
    );
    assert.throws(
      () => resolveClusterOptions({ nodes: ["h:1"], failoverShadows: "yes" as never }),
      TypeError,
    );
    assert.equal(
      resolveClusterOptions({ nodes: ["h:1"], failoverShadows: false }).failoverShadows,
      false,
    );
    const cache = clientSideCache({ maxEntries: 10 });
    assert.equal(
      resolveClusterOptions({ nodes: ["h:1"], clientSideCache: cache }).node.clientSideCache,
      cache,
    );
    assert.throws(
      () => resolveClusterOptions({ nodes: ["h:1"], clientSideCache: { maxEntries: 10 } as never }),
      { name: "TypeError", message: /^Cannot enable clientSideCache from a plain options object/ },
    );
    assert.equal(resolveClusterOptions({ nodes: ["h:1"], clientSideCache: false }).maxAttempts, 5);
  });
});
