// Option validation of the connection settings: reconnect delays, closeTimeout, URL user and
// password decoding, client names.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseRedisUrl, resolveClientOptions } from "../../../src/client/options.ts";

describe("connection options", () => {
  it("rejects reconnect delays of 0, negative or NaN like the other options", () => {
    for (const bad of [0, -1, NaN, Infinity]) {
      assert.throws(() => resolveClientOptions({ reconnect: { baseDelay: bad } }), RangeError);
      assert.throws(() => resolveClientOptions({ reconnect: { maxDelay: bad } }), RangeError);
    }
    assert.throws(
      () => resolveClientOptions({ reconnect: { baseDelay: 500, maxDelay: 100 } }),
      /maxDelay 100: expected at least baseDelay/,
    );
    assert.throws(() => resolveClientOptions({ reconnect: true as never }), TypeError);
    assert.deepEqual(resolveClientOptions({}).reconnect, { baseDelay: 100, maxDelay: 5000 });
    assert.deepEqual(resolveClientOptions({ reconnect: { baseDelay: 7000 } }).reconnect, {
      baseDelay: 7000,
      maxDelay: 7000,
    });
    assert.equal(resolveClientOptions({ reconnect: false }).reconnect, false);
  });

  it("closeTimeout defaults to 3000 ms and must be a non-negative number", () => {
    assert.equal(resolveClientOptions({}).closeTimeout, 3000);
    assert.equal(resolveClientOptions({ closeTimeout: 0 }).closeTimeout, 0);
    assert.throws(() => resolveClientOptions({ closeTimeout: -5 }), RangeError);
  });

  it("pingInterval and unref are validated, off by default", () => {
    const d = resolveClientOptions({});
    assert.equal(d.pingInterval, 0);
    assert.equal(d.unref, false);
    assert.equal(resolveClientOptions({ pingInterval: 30_000, unref: true }).pingInterval, 30_000);
    assert.throws(() => resolveClientOptions({ pingInterval: -1 }), RangeError);
    assert.throws(() => resolveClientOptions({ unref: "yes" as never }), TypeError);
  });

  it("a stray % in a URL password is a TypeError that does not show the password", () => {
    let err: unknown;
    try {
      parseRedisUrl("redis://app:50%off@127.0.0.1:6379");
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof TypeError, `TypeError, got ${String(err)}`);
    assert.match((err as Error).message, /password has an invalid percent-encoding.*%25/);
    assert.ok(!(err as Error).message.includes("50%off"));
    assert.equal(parseRedisUrl("redis://app:50%25off@h").password, "50%off");
  });

  it("a user name without a password is kept, with no password", () => {
    const u = parseRedisUrl("redis://reporting@127.0.0.1:6379");
    assert.equal(u.username, "reporting");
    assert.equal(u.password, undefined);
    const o = resolveClientOptions({ url: "redis://reporting@127.0.0.1:6379" });
    assert.equal(o.username, "reporting");
  });

  it("a client name with spaces or newlines is refused as a client name", () => {
    assert.throws(
      () => resolveClientOptions({ clientName: "my app" }),
      (e: Error) => e instanceof TypeError && /clientName/.test(e.message),
    );
    assert.throws(() => resolveClientOptions({ clientName: "a\nb" }), TypeError);
    assert.equal(
      resolveClientOptions({ clientName: "billing-worker.3" }).clientName,
      "billing-worker.3",
    );
  });
});
