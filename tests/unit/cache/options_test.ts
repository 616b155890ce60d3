// Defaults and validation of the clientSideCache option.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ENTRIES,
  resolveCacheOptions,
} from "../../../src/cache/options.ts";
import { resolveClientOptions } from "../../../src/client/options.ts";

describe("clientSideCache options", () => {
  it("applies the defaults", () => {
    assert.deepEqual(resolveCacheOptions({}), {
      maxEntries: DEFAULT_MAX_ENTRIES,
      maxBytes: DEFAULT_MAX_BYTES,
      ttl: 0,
      clusterMissTtl: 1000,
      mode: "default",
      prefixes: [],
      maxStaleness: 1000,
    });
    assert.deepEqual(resolveCacheOptions(true), resolveCacheOptions({}));
  });

  it("is off unless asked for", () => {
    assert.equal(resolveClientOptions({}).clientSideCache, undefined);
    assert.equal(
      resolveClientOptions({ clientSideCache: false }).clientSideCache,
      undefined,
    );
    assert.equal(
      resolveClientOptions({ clientSideCache: true }).clientSideCache
        ?.maxEntries,
      DEFAULT_MAX_ENTRIES,
    );
  });

  it("rejects bad bounds with RangeError and bad modes and prefixes with TypeError", () => {
    assert.throws(() => resolveCacheOptions({ maxEntries: 0 }), RangeError);
    assert.throws(() => resolveCacheOptions({ maxEntries: 1.5 }), RangeError);
    assert.throws(() => resolveCacheOptions({ maxStaleness: -1 }), RangeError);
    assert.throws(() => resolveCacheOptions({ maxStaleness: Number.NaN }), RangeError);
    assert.throws(() => resolveCacheOptions({ maxBytes: -1 }), RangeError);
    assert.throws(() => resolveCacheOptions({ ttl: -1 }), RangeError);
    assert.throws(() => resolveCacheOptions({ ttl: Infinity }), RangeError);
    assert.throws(() => resolveCacheOptions({ clusterMissTtl: -1 }), RangeError);
    assert.throws(() => resolveCacheOptions({ clusterMissTtl: 0.5 }), RangeError);
    assert.throws(
      () => resolveCacheOptions({ mode: "optin" as "default" }),
      {
        name: "TypeError",
        message: 'Cannot use clientSideCache.mode "optin": expected "default" or "broadcast"',
      },
    );
    assert.throws(() => resolveCacheOptions({ prefixes: [""] }), TypeError);
    assert.throws(
      () => resolveCacheOptions({ prefixes: ["user:", "user:1"] }),
      TypeError,
    );
    assert.deepEqual(
      resolveCacheOptions({ prefixes: ["a:", "a:", "b:"] }).prefixes,
      ["a:", "b:"],
    );
  });
});
