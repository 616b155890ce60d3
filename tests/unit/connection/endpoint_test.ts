// The endpoint type's text forms: parse, format, and the map key.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  endpointKey,
  formatEndpoint,
  parseEndpoint,
  sameEndpoint,
} from "../../../src/connection/endpoint.ts";

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
});
