import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveSentinelOptions } from "../../../src/sentinel/options.ts";

describe("sentinel options", () => {
  it("applies the defaults and parses the sentinel addresses", () => {
    const o = resolveSentinelOptions({
      masterName: "m",
      sentinels: ["redis://127.0.0.1:26380", "h2", { host: "h3", port: 1 }],
    });
    assert.deepEqual(o, {
      masterName: "m",
      sentinels: [{ host: "127.0.0.1", port: 26380 }, { host: "h2", port: 26379 }, {
        host: "h3",
        port: 1,
      }],
      role: "master",
      sentinelUsername: undefined,
      sentinelPassword: undefined,
      sentinelTls: false,
      sentinelTimeout: 2000,
      sentinelCheckInterval: 2000,
      failoverWait: 10_000,
    });
  });

  it("takes TLS to the sentinels from rediss:// addresses", () => {
    const o = resolveSentinelOptions({
      masterName: "m",
      sentinels: ["rediss://a:1", "rediss://b"],
    });
    assert.equal(o.sentinelTls, true);
    const ca = { caCerts: ["pem"] };
    assert.deepEqual(
      resolveSentinelOptions({ masterName: "m", sentinels: ["rediss://a:1"], sentinelTls: ca })
        .sentinelTls,
      ca,
    );
  });

  it("refuses bad values with a TypeError or RangeError naming the option", () => {
    const ok = { masterName: "m", sentinels: ["h"] };
    assert.throws(() => resolveSentinelOptions({ ...ok, masterName: "" }), TypeError);
    assert.throws(() => resolveSentinelOptions({ ...ok, sentinels: [] }), TypeError);
    assert.throws(
      () => resolveSentinelOptions({ ...ok, role: "leader" as "master" }),
      /role "leader"/,
    );
    assert.throws(
      () => resolveSentinelOptions({ ...ok, sentinelTimeout: 0 }),
      /sentinelTimeout 0/,
    );
    assert.throws(
      () => resolveSentinelOptions({ ...ok, sentinelCheckInterval: 1 }),
      /sentinelCheckInterval 1/,
    );
    assert.throws(
      () => resolveSentinelOptions({ ...ok, failoverWait: -1 }),
      (e: Error) => e instanceof RangeError && /failoverWait -1/.test(e.message),
    );
    assert.equal(resolveSentinelOptions({ ...ok, failoverWait: 0 }).failoverWait, 0);
    assert.throws(
      () => resolveSentinelOptions({ ...ok, sentinels: ["rediss://a:1", "redis://b:1"] }),
      /Cannot mix redis:\/\/ and rediss:\/\//,
    );
    assert.throws(
      () => resolveSentinelOptions({ ...ok, sentinels: ["rediss://a:1"], sentinelTls: false }),
      TypeError,
    );
    assert.throws(
      () => resolveSentinelOptions({ ...ok, ...{ host: "h" } }),
      /come from the sentinels/,
    );
  });
});
