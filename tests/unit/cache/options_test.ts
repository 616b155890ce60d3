// Defaults and validation of the clientSideCache option: the part `clientSideCache()` of
// `@edge/redis/cache` makes, and the refusal of anything else by the client options.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ENTRIES,
  resolveCacheOptions,
} from "../../../src/cache/options.ts";
import { resolveClientOptions } from "../../../src/client/options.ts";
import { clientSideCache } from "../../../src/cache/mod.ts";
import { RedisClient } from "../../../mod.ts";

/** The message of the refusal of a cache given as anything but a part, for `what`. */
function refusal(what: string): string {
  return `Cannot enable clientSideCache from ${what}: pass clientSideCache({ ... }), imported ` +
    `from "@edge/redis/cache"`;
}

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
    const part = clientSideCache();
    assert.equal(resolveClientOptions({ clientSideCache: part }).clientSideCache, part);
    assert.equal(part._create({}).options.maxEntries, DEFAULT_MAX_ENTRIES);
    assert.equal(clientSideCache({ maxEntries: 7 })._create({}).options.maxEntries, 7);
  });

  it("refuses the old form (an options object, true) with what to import instead", () => {
    for (
      const [value, what] of [
        [{ maxEntries: 10 }, "a plain options object"],
        [{}, "a plain options object"],
        [true, "true"],
        ["yes", 'the string "yes"'],
        [{ part: "clientSideCache" }, "a plain options object"],
      ] as const
    ) {
      const options = { clientSideCache: value as never };
      assert.throws(() => resolveClientOptions(options), {
        name: "TypeError",
        message: refusal(what),
      });
      assert.throws(() => new RedisClient(options), { name: "TypeError", message: refusal(what) });
    }
  });

  it("checks the part's options where the part is made, with a hint for a slip", () => {
    assert.throws(() => clientSideCache({ maxEntires: 1 } as never), {
      name: "TypeError",
      message: "Cannot use the option `maxEntires` of clientSideCache: no such option. Did you " +
        "mean `maxEntries`?",
    });
    assert.throws(() => clientSideCache({ maxEntries: 0 }), RangeError);
    assert.throws(() => clientSideCache("big" as never), {
      name: "TypeError",
      message: "Cannot make the client-side cache from a string: expected an options object, " +
        "e.g. clientSideCache({ maxEntries: 10_000 })",
    });
    assert.throws(() => clientSideCache(null as never), TypeError);
  });

  it("is a frozen value each client builds its own cache from", () => {
    const part = clientSideCache({ maxEntries: 5 });
    assert.ok(Object.isFrozen(part));
    assert.equal(part.part, "clientSideCache");
    const a = part._create({});
    const b = part._create({});
    assert.notEqual(a, b);
    assert.deepEqual(a.options, b.options);
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
