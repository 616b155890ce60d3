import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  MULTI_DB_DEFAULTS,
  MultiDbClient,
  type MultiDbClientOptions,
  pingHealthCheck,
} from "../../../src/multi_db/mod.ts";
import { resolveDatabaseConfig, resolveMultiDbOptions } from "../../../src/multi_db/config.ts";
import type { DatabaseClientOptions } from "../../../src/multi_db/database_client.ts";
import { openResources } from "../../../src/_resources.ts";

const custom = () => Promise.resolve(true);

describe("multi-db options", () => {
  it("has the reference defaults", () => {
    const o = resolveMultiDbOptions({ databases: [{ url: "redis://127.0.0.1:1" }] });
    assert.deepEqual(o.healthCheck, {
      interval: 5000,
      timeout: 1000,
      probes: 3,
      probeDelay: 500,
      policy: "all",
      checkActive: "always",
    });
    assert.deepEqual(
      { ...o.failureDetector, isFailure: undefined },
      {
        slidingWindowMs: 2000,
        windowBuckets: 10,
        minNumOfFailures: 1000,
        failureRateThreshold: 10,
        isFailure: undefined,
      },
    );
    assert.deepEqual(o.commandRetry, { maxAttempts: 3, initialDelay: 500, backoffMultiplier: 2 });
    assert.equal(o.failbackSupported, true);
    assert.equal(o.failbackCheckInterval, 120_000);
    assert.equal(o.gracePeriod, 60_000);
    assert.equal(o.maxNumFailoverAttempts, 10);
    assert.equal(o.delayInBetweenFailoverAttempts, 12_000);
    assert.equal(o.initializationPolicy, "one-available");
    assert.equal(o.retryOnFailover, true);
    assert.equal(MULTI_DB_DEFAULTS.weight, 1);
    const db = resolveDatabaseConfig({ url: "redis://127.0.0.1:1" }, o);
    assert.equal(db.weight, 1);
    assert.equal(db.healthCheck?.strategy, pingHealthCheck);
  });

  it("applies top-level client options to every database, a database's own win", () => {
    const top = resolveMultiDbOptions({
      databases: [],
      commandTimeout: 1500,
      password: "top",
      maintenanceNotifications: { mode: "enabled", relaxedTimeout: 3000 },
      healthCheck: { interval: 100, probes: 2 },
    });
    const a = resolveDatabaseConfig({ url: "redis://10.0.0.1:6379" }, top);
    assert.equal(a.clientOptions.commandTimeout, 1500);
    assert.equal(a.clientOptions.password, "top");
    assert.equal(a.clientOptions.url, "redis://10.0.0.1:6379");
    assert.equal(a.name, "10.0.0.1:6379");
    assert.deepEqual(a.endpoint, { host: "10.0.0.1", port: 6379 });
    const b = resolveDatabaseConfig({
      host: "10.0.0.2",
      port: 7000,
      name: "west",
      weight: 0.5,
      commandTimeout: 200,
      maintenanceNotifications: { relaxedTimeout: 9000 },
      healthCheck: { timeout: 50, strategy: custom },
    }, top);
    assert.equal(b.name, "west");
    assert.equal(b.weight, 0.5);
    assert.equal(b.clientOptions.commandTimeout, 200);
    assert.equal(b.clientOptions.password, "top");
    assert.deepEqual(b.clientOptions.maintenanceNotifications, {
      mode: "enabled",
      relaxedTimeout: 9000,
    });
    assert.deepEqual(b.healthCheck, {
      interval: 100,
      timeout: 50,
      probes: 2,
      probeDelay: 500,
      policy: "all",
      checkActive: "always",
      strategy: custom,
    });
    assert.equal("weight" in b.clientOptions, false, "multi-db fields are not client options");
    assert.equal("healthCheck" in b.clientOptions, false);
    const c = resolveDatabaseConfig({ url: "redis://10.0.0.3:1", healthCheck: false }, top);
    assert.equal(c.healthCheck, undefined);
    const d = resolveDatabaseConfig({ url: "redis://10.0.0.4:1", healthCheck: custom }, top);
    assert.equal(d.healthCheck?.strategy, custom);
    assert.equal(d.healthCheck?.interval, 100);
  });

  it("hands the merged options to the client factory, and creates nothing else", () => {
    const seen: DatabaseClientOptions[] = [];
    const before = openResources();
    const client = new MultiDbClient({
      databases: [{ url: "redis://127.0.0.1:1", db: 2 }, { nodes: ["redis://127.0.0.1:2"] }],
      commandTimeout: 700,
      createClient: (o) => {
        seen.push(o);
        return {
          _run: () => Promise.resolve(null),
          sendCommand: () => Promise.resolve("PONG"),
          multi: () => {
            throw new Error("unused");
          },
          watch: () => Promise.reject(new Error("unused")),
          subscribe: () => Promise.reject(new Error("unused")),
          psubscribe: () => Promise.reject(new Error("unused")),
          ssubscribe: () => Promise.reject(new Error("unused")),
          close: () => Promise.resolve(),
          addEventListener: () => {},
          removeEventListener: () => {},
        };
      },
    });
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[0], { commandTimeout: 700, url: "redis://127.0.0.1:1", db: 2 });
    assert.deepEqual(seen[1], { commandTimeout: 700, nodes: ["redis://127.0.0.1:2"] });
    assert.deepEqual(client.databases().map((d) => d.name), [
      "127.0.0.1:1",
      "cluster(127.0.0.1:2)",
    ]);
    assert.equal(client.activeDatabase, undefined, "nothing is chosen before connecting");
    assert.deepEqual(openResources(), before, "no timer or socket before the first command");
    return client.close();
  });

  const bad: [string, MultiDbClientOptions, RegExp, ErrorConstructor][] = [
    ["no databases", { databases: [] }, /no databases given/, TypeError],
    [
      "databases not a list",
      { databases: undefined as unknown as [] },
      /no databases given/,
      TypeError,
    ],
    [
      "duplicate endpoints",
      { databases: [{ url: "redis://127.0.0.1:6379" }, { host: "127.0.0.1", name: "b" }] },
      /another database has the endpoint "127\.0\.0\.1:6379"/,
      TypeError,
    ],
    [
      "duplicate names",
      {
        databases: [
          { url: "redis://127.0.0.1:1", name: "x" },
          { url: "redis://127.0.0.1:2", name: "x" },
        ],
      },
      /another database has that name/,
      TypeError,
    ],
    [
      "weight 0",
      { databases: [{ url: "redis://h:1", weight: 0 }] },
      /weight 0 .*above 0/,
      RangeError,
    ],
    ["negative weight", { databases: [{ url: "redis://h:1", weight: -1 }] }, /above 0/, RangeError],
    [
      "infinite weight",
      { databases: [{ url: "redis://h:1", weight: Infinity }] },
      /finite/,
      RangeError,
    ],
    ["NaN weight", { databases: [{ url: "redis://h:1", weight: NaN }] }, /weight NaN/, RangeError],
    ["no endpoint", { databases: [{ weight: 1 }] }, /give its url, host or nodes/, TypeError],
    ["empty nodes", { databases: [{ nodes: [] }] }, /non-empty list/, TypeError],
    [
      "failure rate above 100",
      { databases: [{ url: "redis://h:1" }], failureDetector: { failureRateThreshold: 150 } },
      /failureRateThreshold 150/,
      RangeError,
    ],
    [
      "bad probe count",
      { databases: [{ url: "redis://h:1" }], healthCheck: { probes: 0 } },
      /healthCheck\.probes 0/,
      RangeError,
    ],
    [
      "bad probe policy",
      { databases: [{ url: "redis://h:1" }], healthCheck: { policy: "most" as "all" } },
      /healthCheck\.policy "most"/,
      TypeError,
    ],
    [
      "bad initialization policy",
      { databases: [{ url: "redis://h:1" }], initializationPolicy: "some" as "one-available" },
      /initializationPolicy "some"/,
      TypeError,
    ],
    [
      "bad health check",
      { databases: [{ url: "redis://h:1", healthCheck: 3 as unknown as false }] },
      /expected false, a function or an options object/,
      TypeError,
    ],
    [
      "negative grace period",
      { databases: [{ url: "redis://h:1" }], gracePeriod: -1 },
      /gracePeriod -1/,
      RangeError,
    ],
  ];
  for (const [what, options, message, type] of bad) {
    it(`rejects ${what}`, () => {
      assert.throws(() => new MultiDbClient(options), (e: unknown) => {
        assert.ok(e instanceof type, `expected a ${type.name}, got ${e}`);
        assert.match((e as Error).message, message);
        assert.match((e as Error).message, /^Cannot /);
        return true;
      });
    });
  }

  it("never puts a password in an error message", () => {
    assert.throws(
      () =>
        new MultiDbClient({
          databases: [
            { url: "redis://user:hunter2@127.0.0.1:6379" },
            { url: "redis://user:hunter2@127.0.0.1:6379", name: "b" },
          ],
        }),
      (e: unknown) => !(e as Error).message.includes("hunter2"),
    );
  });
});
