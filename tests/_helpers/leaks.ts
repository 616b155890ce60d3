// Asserts that every timer and socket the client opened is closed.
import assert from "node:assert/strict";
import { openResources } from "../../src/_resources.ts";

/** Waits briefly for socket close callbacks, then asserts nothing is left open. */
export async function assertNoLeaks(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = openResources();
    if (r.timers === 0 && r.sockets === 0) return;
    await new Promise((res) => setTimeout(res, 10));
  }
  assert.deepEqual(openResources(), { timers: 0, sockets: 0 }, "timers or sockets left open");
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
