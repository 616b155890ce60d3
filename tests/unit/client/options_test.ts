import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseRedisUrl, resolveClientOptions } from "../../../src/client/options.ts";

describe("client options", () => {
  it("parses redis:// and rediss:// URLs", () => {
    assert.deepEqual(parseRedisUrl("redis://127.0.0.1:6380/2"), {
      host: "127.0.0.1",
      port: 6380,
      username: undefined,
      password: undefined,
      db: 2,
      tls: false,
    });
    assert.deepEqual(parseRedisUrl("rediss://app:s%40cret@cache.example/0"), {
      host: "cache.example",
      port: undefined,
      username: "app",
      password: "s@cret",
      db: 0,
      tls: true,
    });
    assert.equal(parseRedisUrl("redis://[::1]:7000").host, "::1");
    assert.equal(parseRedisUrl("redis://:only-pass@h").password, "only-pass");
  });

  it("rejects bad URLs and values with clear errors", () => {
    assert.throws(() => parseRedisUrl("http://h"), /scheme "http:"/);
    assert.throws(() => parseRedisUrl("not a url"), TypeError);
    assert.throws(() => parseRedisUrl("redis://h/abc"), /database "abc"/);
    assert.throws(() => resolveClientOptions({ port: 70000 }), RangeError);
    assert.throws(() => resolveClientOptions({ commandTimeout: -1 }), /commandTimeout/);
    assert.throws(() => resolveClientOptions({ protocol: 4 as 3 }), /protocol 4/);
    assert.throws(() => resolveClientOptions({ db: -1 }), RangeError);
  });

  it("applies defaults, and separate options override the URL", () => {
    const o = resolveClientOptions({ url: "rediss://u:p@h:1/3", port: 2, db: 4 });
    assert.equal(o.host, "h");
    assert.equal(o.port, 2);
    assert.equal(o.db, 4);
    assert.equal(o.username, "u");
    assert.deepEqual(o.tls, {});
    const d = resolveClientOptions({});
    assert.equal(d.host, "127.0.0.1");
    assert.equal(d.port, 6379);
    assert.equal(d.protocol, 3);
    assert.equal(d.commandTimeout, 5000);
    assert.equal(d.tls, undefined);
  });
});
