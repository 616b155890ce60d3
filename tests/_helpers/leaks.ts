// Asserts that every timer and socket a test's clients opened is closed again. Counts are
// compared with the baseline taken before the test (beforeEach(markLeakBaseline)), so a test
// that failed half-way and left a client open does not fail the tests after it.
import assert from "node:assert/strict";
import { openResources, trackResources } from "../../src/_resources.ts";

// Every test that asserts leaks imports this file before it creates a client.
trackResources();

let baseline = { timers: 0, sockets: 0 };

/** Records the current counts; call it in `beforeEach`. */
export function markLeakBaseline(): void {
  baseline = openResources();
}

/** Waits briefly for close callbacks, then asserts nothing beyond the baseline is left open. */
export async function assertNoLeaks(): Promise<void> {
  const within = () => {
    const r = openResources();
    return r.timers <= baseline.timers && r.sockets <= baseline.sockets;
  };
  for (let i = 0; i < 100 && !within(); i++) await new Promise((res) => setTimeout(res, 10));
  const r = openResources();
  assert.ok(
    within(),
    `timers or sockets left open: ${JSON.stringify(r)}, before the test: ${
      JSON.stringify(baseline)
    }`,
  );
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
