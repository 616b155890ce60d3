import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  endpointKeyOf,
  formatEndpoint,
  parseEndpoint,
  parseNotificationEndpoint,
  parseSlotRanges,
} from "../../../src/maintenance/mod.ts";

describe("parseNotificationEndpoint", () => {
  it("parses IPv4, host names and IPv6 in both spellings", () => {
    assert.deepEqual(parseNotificationEndpoint("127.0.0.1:6379"), {
      host: "127.0.0.1",
      port: 6379,
    });
    assert.deepEqual(parseNotificationEndpoint("db.example:1"), { host: "db.example", port: 1 });
    assert.deepEqual(parseNotificationEndpoint("[2001:db8::1]:6379"), {
      host: "2001:db8::1",
      port: 6379,
    });
    assert.deepEqual(parseNotificationEndpoint("2001:db8::1:6379"), {
      host: "2001:db8::1",
      port: 6379,
    });
  });

  it("returns null for every spelling of no endpoint", () => {
    for (const t of ["", "  ", "null", "Null", "?", ":1", "?:1", "null:1", "h:0", "[]:1"]) {
      assert.equal(parseNotificationEndpoint(t), null, JSON.stringify(t));
    }
  });

  it("returns an Error saying what is wrong", () => {
    const cases: [string, RegExp][] = [
      ["host", /^Cannot parse the endpoint "host": missing the port$/],
      ["host:", /the port is not a number/],
      ["host:-1", /the port is not a number/],
      ["host:65536", /the port is above 65535/],
      ["[::1]", /missing the port after "\]"/],
      ["[::1", /missing "\]"/],
    ];
    for (const [text, message] of cases) {
      const r = parseNotificationEndpoint(text);
      assert.ok(r instanceof Error, text);
      assert.match(r.message, message);
    }
  });
});

describe("endpointKeyOf", () => {
  it("brackets IPv6 and lower-cases host names", () => {
    assert.equal(endpointKeyOf({ host: "::1", port: 6379 }), "[::1]:6379");
    assert.equal(endpointKeyOf({ host: "10.0.0.1", port: 1 }), "10.0.0.1:1");
    assert.equal(endpointKeyOf("Redis.Example.COM:6379"), "redis.example.com:6379");
  });

  it("gives one key for two spellings of the same endpoint", () => {
    assert.equal(endpointKeyOf("::1:6379"), endpointKeyOf("[::1]:6379"));
    assert.equal(
      endpointKeyOf(" 10.0.0.1:7000 "),
      endpointKeyOf({ host: "10.0.0.1", port: 7000 }),
    );
  });

  it("returns a text that is not an endpoint trimmed and unchanged", () => {
    assert.equal(endpointKeyOf(" /tmp/redis.sock "), "/tmp/redis.sock");
    assert.equal(endpointKeyOf("null"), "null");
  });
});

describe("the deprecated names of ./maintenance", () => {
  it("are the same functions", () => {
    assert.equal(parseEndpoint, parseNotificationEndpoint);
    assert.equal(formatEndpoint, endpointKeyOf);
  });
});

describe("parseSlotRanges", () => {
  it("parses single slots and ranges in order", () => {
    assert.deepEqual(parseSlotRanges("5000-7000,1,0,16383"), [
      { start: 5000, end: 7000 },
      { start: 1, end: 1 },
      { start: 0, end: 0 },
      { start: 16383, end: 16383 },
    ]);
    assert.deepEqual(parseSlotRanges("3-3"), [{ start: 3, end: 3 }]);
    assert.deepEqual(parseSlotRanges(""), []);
  });

  it("rejects words, negatives, out-of-range slots and backwards ranges", () => {
    for (const t of ["a", "1-", "-1", "1-2-3", "16384", "0-16384", "99999", "5-4", "1.5"]) {
      assert.ok(parseSlotRanges(t) instanceof Error, t);
    }
  });
});
