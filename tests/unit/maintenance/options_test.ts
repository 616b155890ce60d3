import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  computeDrainCap,
  effectiveTimeout,
  MAINTENANCE_DEFAULTS,
  type MaintenanceOptions,
  resolveMaintenanceOptions,
} from "../../../src/maintenance/mod.ts";

describe("resolveMaintenanceOptions", () => {
  it("gives the documented defaults", () => {
    const expected = {
      mode: "auto",
      relaxedTimeout: 10_000,
      relaxedBlockingTimeout: 0,
      relaxedWindowMaxDuration: 60_000,
      endpointType: "auto",
    };
    assert.deepEqual(resolveMaintenanceOptions(), expected);
    assert.deepEqual(resolveMaintenanceOptions({}), expected);
    assert.deepEqual(MAINTENANCE_DEFAULTS, expected);
    assert.ok(Object.isFrozen(MAINTENANCE_DEFAULTS));
  });

  it("keeps given values, fills the rest, and returns a frozen object", () => {
    const o = resolveMaintenanceOptions({
      mode: "enabled",
      relaxedTimeout: 0,
      relaxedBlockingTimeout: 30_000,
      endpointType: "none",
    });
    assert.deepEqual(o, {
      mode: "enabled",
      relaxedTimeout: 0,
      relaxedBlockingTimeout: 30_000,
      relaxedWindowMaxDuration: 60_000,
      endpointType: "none",
    });
    assert.ok(Object.isFrozen(o));
    assert.deepEqual(resolveMaintenanceOptions(o), o);
  });

  it("accepts every mode and endpoint type", () => {
    for (const mode of ["auto", "enabled", "disabled"] as const) {
      assert.equal(resolveMaintenanceOptions({ mode }).mode, mode);
    }
    for (
      const endpointType of [
        "auto",
        "internal-ip",
        "internal-fqdn",
        "external-ip",
        "external-fqdn",
        "none",
      ] as const
    ) {
      assert.equal(resolveMaintenanceOptions({ endpointType }).endpointType, endpointType);
    }
  });

  const typeErrors: [string, unknown, RegExp][] = [
    [
      "a string",
      "auto",
      /^Cannot use maintenanceNotifications: expected an object, got string "auto"$/,
    ],
    ["null", null, /expected an object, got null/],
    ["an array", [], /expected an object, got object an array/],
    ["a number", 5, /expected an object, got number 5/],
    [
      "an unknown key",
      { relaxedTimout: 5 },
      /^Cannot use maintenanceNotifications\.relaxedTimout: unknown option, expected one of mode, relaxedTimeout/,
    ],
    [
      "a mode that is not a string",
      { mode: true },
      /^Cannot use maintenanceNotifications\.mode: expected a string, got boolean true$/,
    ],
    [
      "a timeout as a string",
      { relaxedTimeout: "100" },
      /^Cannot use maintenanceNotifications\.relaxedTimeout: expected a number of milliseconds, got string "100"$/,
    ],
    [
      "a timeout as a bigint",
      { relaxedBlockingTimeout: 5n },
      /relaxedBlockingTimeout: expected a number of milliseconds, got bigint 5n/,
    ],
    ["an endpoint type as null", { endpointType: null }, /endpointType: expected a string/],
  ];
  for (const [label, input, message] of typeErrors) {
    it(`throws a TypeError for ${label}`, () => {
      assert.throws(
        () => resolveMaintenanceOptions(input as MaintenanceOptions),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
      );
    });
  }

  const rangeErrors: [string, MaintenanceOptions, RegExp][] = [
    [
      "an unknown mode",
      { mode: "on" as "auto" },
      /^Cannot use maintenanceNotifications\.mode = "on": expected one of "auto", "enabled", "disabled"$/,
    ],
    [
      "an unknown endpoint type",
      { endpointType: "internal" as "none" },
      /endpointType = "internal": expected one of "auto", "internal-ip", .*"none"$/,
    ],
    [
      "a negative timeout",
      { relaxedTimeout: -1 },
      /^Cannot use maintenanceNotifications\.relaxedTimeout = -1: expected a finite number >= 0 \(0 means no timeout\)$/,
    ],
    ["a NaN timeout", { relaxedBlockingTimeout: NaN }, /relaxedBlockingTimeout = NaN/],
    ["an infinite timeout", { relaxedTimeout: Infinity }, /relaxedTimeout = Infinity/],
    [
      "a zero backstop",
      { relaxedWindowMaxDuration: 0 },
      /^Cannot use maintenanceNotifications\.relaxedWindowMaxDuration = 0: expected a finite number > 0$/,
    ],
    ["a negative backstop", { relaxedWindowMaxDuration: -5 }, /relaxedWindowMaxDuration = -5/],
  ];
  for (const [label, input, message] of rangeErrors) {
    it(`throws a RangeError for ${label}`, () => {
      assert.throws(
        () => resolveMaintenanceOptions(input),
        (e: unknown) => e instanceof RangeError && message.test(e.message),
      );
    });
  }

  it("writes messages without a trailing period", () => {
    for (const input of [{ relaxedTimeout: -1 }, { mode: "x" }, { nope: 1 }]) {
      try {
        resolveMaintenanceOptions(input as MaintenanceOptions);
        assert.fail("expected a throw");
      } catch (e) {
        assert.ok(!(e as Error).message.endsWith("."), (e as Error).message);
      }
    }
  });
});

describe("effectiveTimeout: the looser of configured and relaxed, 0 loosest", () => {
  const cases: [number, number, number][] = [
    [2_000, 10_000, 10_000],
    [30_000, 10_000, 30_000],
    [10_000, 10_000, 10_000],
    [2_000, 0, 0],
    [0, 10_000, 0],
    [0, 0, 0],
    [1, 2, 2],
  ];
  for (const [configured, relaxed, expected] of cases) {
    it(`configured ${configured}, relaxed ${relaxed} -> ${expected}`, () => {
      assert.equal(effectiveTimeout(configured, relaxed), expected);
    });
  }
});

describe("computeDrainCap: min(relaxed/2, remaining/2), floor 1000", () => {
  const cases: [number, number, number][] = [
    [10_000, 15_000, 5_000],
    [10_000, 6_000, 3_000],
    [10_000, 500, 1_000],
    [10_000, 0, 1_000],
    [10_000, -50, 1_000],
    [1_000, 15_000, 1_000],
    [0, 15_000, 7_500],
    [10_000, Infinity, 5_000],
    [0, Infinity, 1_000],
  ];
  for (const [relaxed, remaining, expected] of cases) {
    it(`relaxed ${relaxed}, remaining ${remaining} -> ${expected}`, () => {
      assert.equal(computeDrainCap(relaxed, remaining), expected);
    });
  }
});
