import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clientOptions, parseRedisUrl, resolveClientOptions } from "../../../src/client/options.ts";
import { resolveClusterOptions } from "../../../src/cluster/options.ts";
import { resolveSentinelOptions } from "../../../src/sentinel/options.ts";
import { resolveDatabaseConfig, resolveMultiDbOptions } from "../../../src/multi_db/config.ts";
import { RedisClient } from "../../../mod.ts";
import { RedisClusterClient } from "../../../src/cluster/mod.ts";
import { RedisSentinelClient } from "../../../src/sentinel/mod.ts";
import { MultiDbClient } from "../../../src/multi_db/mod.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** Asserts that `fn` throws a `TypeError` whose message matches every pattern. */
function throwsType(fn: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof TypeError, `a TypeError, got ${String(e)}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

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

describe("client options from plain JavaScript", () => {
  it("new RedisClient(url) takes the URL, not the default endpoint", () => {
    assert.deepEqual(clientOptions("redis://127.0.0.1:17379", undefined), {
      url: "redis://127.0.0.1:17379",
    });
    const o = resolveClientOptions(clientOptions("redis://127.0.0.1:17379/2", { db: 3 }));
    assert.equal(o.port, 17379);
    assert.equal(o.db, 3);
    throwsType(
      () => clientOptions("redis://h:1", { url: "redis://h:2" } as Any),
      /two URLs/,
    );
    throwsType(() => new RedisClient(6379 as Any), /the number 6379/, /URL string/);
    throwsType(() => new RedisClient({} as Any, { port: 1 } as Any), /second argument/);
  });

  it("the other kinds refuse a string, naming the expected form", () => {
    throwsType(() => new RedisClusterClient("redis://u:pw@h:1" as Any), /nodes: \[/);
    throwsType(() => new RedisSentinelClient("redis://h:1" as Any), /masterName/);
    throwsType(() => new MultiDbClient("redis://h:1" as Any), /databases/);
    // Never the string itself: it may hold a password.
    assert.throws(() => new RedisClusterClient("redis://u:pw@h:1" as Any), (e: Error) => {
      return !e.message.includes("pw");
    });
  });

  it("an unknown option key is a TypeError with a Did you mean hint, on every kind", () => {
    throwsType(
      () => new RedisClient({ comandTimeout: 100 } as Any),
      /`comandTimeout` of the client/,
      /Did you mean `commandTimeout`\?/,
    );
    throwsType(
      () => new RedisClient("redis://h:1", { conectTimeout: 1 } as Any),
      /Did you mean `connectTimeout`\?/,
    );
    throwsType(
      () => resolveClusterOptions({ nodes: ["h:1"], readFom: "replica" } as Any),
      /of the cluster client/,
      /Did you mean `readFrom`\?/,
    );
    throwsType(
      () => resolveClusterOptions({ nodes: ["h:1"], url: "redis://h:1" } as Any),
      /`url` of the cluster client: .*nodes/,
    );
    throwsType(
      () => resolveSentinelOptions({ masterName: "m", sentinels: ["h:1"], masterNmae: 1 } as Any),
      /of the sentinel client/,
      /Did you mean `masterName`\?/,
    );
    throwsType(
      () => resolveMultiDbOptions({ databases: [{ url: "redis://h:1" }], gracePeriode: 1 } as Any),
      /of the multi-database client/,
      /Did you mean `gracePeriod`\?/,
    );
    const top = resolveMultiDbOptions({ databases: [{ url: "redis://h:1" }] });
    throwsType(
      () => resolveDatabaseConfig({ url: "redis://h:1", wieght: 2 } as Any, top),
      /of a database/,
      /Did you mean `weight`\?/,
    );
    throwsType(
      () => new RedisClient({ maintenanceNotifications: { relaxedTimout: 1 } } as Any),
      /of maintenanceNotifications/,
      /Did you mean `relaxedTimeout`\?/,
    );
    for (
      const [options, pattern] of [
        [{ reconnect: { baseDelai: 1 } }, /of reconnect: .*Did you mean `baseDelay`\?/],
        [{ tls: { caCert: ["pem"] } }, /of tls: .*Did you mean `caCerts`\?/],
      ] as const
    ) throwsType(() => new RedisClient(options as Any), pattern);
    throwsType(
      () =>
        resolveMultiDbOptions({ databases: [], failureDetector: { minNumOfFailure: 1 } } as Any),
      /of failureDetector: .*Did you mean `minNumOfFailures`\?/,
    );
    throwsType(
      () =>
        resolveDatabaseConfig({ url: "redis://h:1", healthCheck: { intervall: 1 } } as Any, top),
      /of the healthCheck of "h:1": .*Did you mean `interval`\?/,
    );
    // A key set to undefined (a spread of defaults) is no slip.
    assert.equal(
      resolveClientOptions(clientOptions({ nodes: undefined } as Any, undefined)).port,
      6379,
    );
  });

  it("a value of the wrong type says what it got", () => {
    throwsType(
      () => resolveClientOptions({ port: "17379" } as Any),
      /port: expected an integer from 1 to 65535, got the string "17379"/,
    );
    throwsType(
      () => resolveClientOptions({ db: "1" } as Any),
      /database: expected a non-negative integer, got the string "1"/,
    );
    throwsType(
      () => resolveClientOptions({ commandTimeout: "100" } as Any),
      /commandTimeout: expected a non-negative number, got the string "100"/,
    );
  });

  it("nodes and sentinels take a single seed, and say they want a list otherwise", () => {
    assert.deepEqual(resolveClusterOptions({ nodes: "127.0.0.1:7000" }).seeds, [
      { host: "127.0.0.1", port: 7000, tls: false },
    ]);
    assert.deepEqual(resolveClusterOptions({ nodes: { host: "h", port: 1 } }).seeds, [
      { host: "h", port: 1, tls: false },
    ]);
    throwsType(() => resolveClusterOptions({ nodes: 7000 } as Any), /nodes is the number 7000/);
    throwsType(() => resolveClusterOptions({ nodes: [] }), /nodes is empty/);
    assert.deepEqual(resolveSentinelOptions({ masterName: "m", sentinels: "h:26380" }).sentinels, [
      { host: "h", port: 26380 },
    ]);
  });

  it("url takes host:port, like nodes and sentinels", () => {
    const o = resolveClientOptions({ url: "127.0.0.1:17379" });
    assert.equal(o.host, "127.0.0.1");
    assert.equal(o.port, 17379);
    assert.equal(o.tls, undefined);
    assert.equal(parseRedisUrl("[::1]:6380").host, "::1");
    throwsType(() => parseRedisUrl("localhost"), /"localhost": missing the scheme/);
  });

  it("a bad URL names the bad part, never the password", () => {
    throwsType(() => parseRedisUrl("redis://u:s3cret@h:abc"), /the port "abc" is not a number/);
    throwsType(() => parseRedisUrl("redis://h:99999"), /the port 99999 is above 65535/);
    throwsType(() => parseRedisUrl("redis://ho st:1"), /the host "ho st"/);
    throwsType(() => parseRedisUrl("redis://[::1:1"), /IPv6 host .* missing "\]"/);
    throwsType(() => parseRedisUrl("redis://::1:6379"), /IPv6 host needs brackets/);
    throwsType(() => parseRedisUrl("redis://h/x"), /database "x"/);
    throwsType(() => parseRedisUrl("redis://h/0?db=x"), /database "x" of the URL's "db"/);
    throwsType(() => parseRedisUrl("https://h"), /scheme "https:"/);
    for (const url of ["redis://u:s3/cr3t@h:1", "redis://u:12/s3@cr3t@h", "redis://u:s3#cr3t@h"]) {
      assert.throws(() => parseRedisUrl(url), (e: Error) => {
        assert.ok(e instanceof TypeError);
        assert.match(e.message, /user name or password has a "\/", "\?" or "#"/);
        assert.ok(!/s3|cr3t/.test(e.message), e.message);
        return true;
      });
    }
  });
});
