import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { backoffDelay } from "../../../src/resilience/backoff.ts";

describe("backoffDelay", () => {
  it("grows exponentially up to the cap, with full jitter", () => {
    const o = { baseDelay: 100, maxDelay: 1000 };
    assert.equal(backoffDelay(0, o, () => 0.999999), 99);
    assert.equal(backoffDelay(2, o, () => 0.5), 200);
    assert.equal(backoffDelay(10, o, () => 0.5), 500);
    assert.equal(backoffDelay(1000, o, () => 0.5), 500);
    assert.equal(backoffDelay(3, o, () => 0), 0);
  });
});
