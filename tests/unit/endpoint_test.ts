// The one endpoint type's helpers (src/endpoint.ts): parse, format, key, same; one rule for case.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  endpointKey,
  formatEndpoint,
  parseEndpoint,
  sameEndpoint,
  splitEndpoint,
} from "../../src/endpoint.ts";
import { parseEndpoint as parseSimulatorEndpoint } from "../../src/testing/mod.ts";

describe("endpoint", () => {
  it("parses host:port and [v6]:port", () => {
    assert.deepEqual(parseEndpoint("cache.example:6380"), { host: "cache.example", port: 6380 });
    assert.deepEqual(parseEndpoint(" [::1]:6379 "), { host: "::1", port: 6379 });
    assert.deepEqual(parseEndpoint("10.0.0.2:7000"), { host: "10.0.0.2", port: 7000 });
  });

  it("refuses what is not an endpoint with a TypeError", () => {
    for (
      const bad of [
        "cache.example",
        "[::1",
        "[::1]6379",
        "::1:6379",
        ":6379",
        "h:port",
        "h:0",
        "h:70000",
      ]
    ) {
      assert.throws(() => parseEndpoint(bad), TypeError, bad);
    }
  });

  it("formats IPv6 in brackets and keeps the host as given", () => {
    assert.equal(formatEndpoint({ host: "::1", port: 6379 }), "[::1]:6379");
    assert.equal(formatEndpoint({ host: "Cache.Example", port: 1 }), "Cache.Example:1");
    assert.deepEqual(parseEndpoint(formatEndpoint({ host: "fe80::2", port: 9 })), {
      host: "fe80::2",
      port: 9,
    });
  });

  it("keys the same endpoint the same however it is spelled", () => {
    assert.equal(endpointKey({ host: "Cache.Example", port: 6379 }), "cache.example:6379");
    assert.equal(endpointKey({ host: "FE80::2", port: 9 }), "[fe80::2]:9");
    assert.ok(sameEndpoint({ host: "A.b", port: 1 }, { host: "a.B", port: 1 }));
    assert.ok(!sameEndpoint({ host: "a", port: 1 }, { host: "a", port: 2 }));
  });

  it("reads endpoints as servers write them when lenient: bare IPv6, empty host", () => {
    assert.deepEqual(splitEndpoint("::1:6379", true), { host: "::1", port: 6379 });
    assert.deepEqual(splitEndpoint(":6379", true), { host: "", port: 6379 });
    assert.equal(typeof splitEndpoint("::1:6379"), "string");
    assert.equal(typeof splitEndpoint(":6379"), "string");
    assert.equal(splitEndpoint("h:70000", true), "the port is above 65535");
  });

  it("compares nothing as different from everything", () => {
    assert.ok(!sameEndpoint(undefined, { host: "a", port: 1 }));
    assert.ok(!sameEndpoint({ host: "a", port: 1 }, undefined));
    assert.ok(!sameEndpoint(undefined, undefined));
  });

  it("the simulator's parser takes defaults for what is missing and refuses bare IPv6", () => {
    const d = { host: "127.0.0.1", port: 7 };
    assert.deepEqual(parseSimulatorEndpoint("redis://u:p@h.example:6380/0", d), {
      host: "h.example",
      port: 6380,
    });
    assert.deepEqual(parseSimulatorEndpoint("h", d), { host: "h", port: 7 });
    assert.deepEqual(parseSimulatorEndpoint(":9", d), { host: "127.0.0.1", port: 9 });
    assert.deepEqual(parseSimulatorEndpoint("[::1]", d), { host: "::1", port: 7 });
    assert.deepEqual(parseSimulatorEndpoint("", d), d);
    assert.deepEqual(parseSimulatorEndpoint({ port: 1 }, d), { host: "127.0.0.1", port: 1 });
    assert.throws(() => parseSimulatorEndpoint("::1:6379", d), TypeError);
    assert.throws(() => parseSimulatorEndpoint("h:x", d), TypeError);
  });
});
