// Review: the exclusive pool must not lend again a connection that still waits for a reply
// (a timed-out blocking command, a WATCH session released after a timeout).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ExclusivePool } from "../../src/client/_pool.ts";
import type { Connection } from "../../src/connection/connection.ts";

/** The part of a Connection the pool uses. */
function fakeConnection(id: number) {
  return {
    id,
    closed: false,
    idle: true,
    close() {
      this.closed = true;
      return Promise.resolve();
    },
    destroy() {
      this.closed = true;
    },
  };
}

describe("review: ExclusivePool", () => {
  it("a connection released with a command in flight is not lent again", async () => {
    let n = 0;
    const pool = new ExclusivePool(() => fakeConnection(++n) as unknown as Connection, 4, 0);
    const c = await pool.acquire();
    (c as unknown as { idle: boolean }).idle = false; // a reply is still awaited
    pool.release(c);
    const d = await pool.acquire();
    await pool.close();
    assert.notEqual(d, c, "the busy connection was handed out again");
  });
});
