// The exclusive pool: lazy creation, the bound, waiters, idle sweeping, retirement and close,
// with stand-in connections.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ExclusivePool } from "../../../src/client/_pool.ts";
import type { Connection } from "../../../src/connection/connection.ts";
import { ClosedError, TimeoutError } from "../../../src/errors.ts";
import { sleep } from "../../_helpers/leaks.ts";
import type { Clock } from "../../../src/_clock.ts";
import { ManualClock } from "../connection/_manual_clock.ts";

interface Fake {
  id: number;
  closed: boolean;
  idle: boolean;
  destroyed: boolean;
  close(): Promise<void>;
  destroy(): void;
}

/** The part of a Connection the pool uses. */
function fakeConnection(id: number): Fake {
  return {
    id,
    closed: false,
    idle: true,
    destroyed: false,
    close() {
      this.closed = true;
      return Promise.resolve();
    },
    destroy() {
      this.closed = true;
      this.destroyed = true;
    },
  };
}

function pool(max: number, idleTimeout = 0, waitTimeout = 0, clock?: Clock) {
  const made: Fake[] = [];
  const p = new ExclusivePool(
    () => {
      const c = fakeConnection(made.length + 1);
      made.push(c);
      return c as unknown as Connection;
    },
    max,
    idleTimeout,
    waitTimeout,
    clock,
  );
  return { p, made };
}

const fake = (c: Connection) => c as unknown as Fake;

describe("ExclusivePool", () => {
  it("creates connections lazily and reuses released ones", async () => {
    const { p, made } = pool(4);
    assert.equal(made.length, 0);
    const a = await p.acquire();
    p.release(a);
    const b = await p.acquire();
    assert.equal(b, a);
    assert.equal(made.length, 1);
    await p.close();
  });

  it("a connection released with a command in flight is not lent again", async () => {
    const { p } = pool(4);
    const c = await p.acquire();
    fake(c).idle = false; // a reply is still awaited
    p.release(c);
    assert.equal(fake(c).destroyed, true);
    const d = await p.acquire();
    assert.notEqual(d, c, "the busy connection was handed out again");
    await p.close();
  });

  it("past the bound, callers wait for a release, in order", async () => {
    const { p, made } = pool(1);
    const a = await p.acquire();
    const order: number[] = [];
    const w1 = p.acquire().then((c) => {
      order.push(1);
      return c;
    });
    const w2 = p.acquire().then((c) => {
      order.push(2);
      return c;
    });
    await sleep(5);
    assert.deepEqual(order, []);
    p.release(a);
    const c1 = await w1;
    assert.equal(c1, a);
    p.release(c1);
    await w2;
    assert.deepEqual(order, [1, 2]);
    assert.equal(made.length, 1);
    await p.close();
  });

  it("a waiter gives up after the wait timeout with TimeoutError", async () => {
    const { p } = pool(1, 0, 30);
    await p.acquire();
    await assert.rejects(p.acquire(), TimeoutError);
    await p.close();
  });

  it("a discarded connection frees its place for a waiter", async () => {
    const { p, made } = pool(1);
    const a = await p.acquire();
    const w = p.acquire();
    p.discard(a);
    const b = await w;
    assert.notEqual(b, a);
    assert.equal(made.length, 2);
    assert.equal(fake(a).destroyed, true);
    await p.close();
  });

  it("retire closes idle matches at once and busy ones on release", async () => {
    const { p } = pool(4);
    const a = await p.acquire();
    const b = await p.acquire();
    p.release(a);
    assert.equal(p.retire(() => true), 2);
    assert.equal(fake(a).closed, true, "idle one closed at once");
    assert.equal(fake(b).closed, false, "busy one kept until released");
    p.release(b);
    assert.equal(fake(b).closed, true);
    await p.close();
  });

  it("closes idle connections after the idle timeout", async () => {
    const { p } = pool(4, 20);
    const a = await p.acquire();
    p.release(a);
    await sleep(80);
    assert.equal(fake(a).closed, true);
    await p.close();
  });

  it("close rejects waiters with ClosedError and destroys busy connections", async () => {
    const { p } = pool(1);
    const a = await p.acquire();
    const w = p.acquire();
    await p.close();
    await assert.rejects(w, ClosedError);
    assert.equal(fake(a).destroyed, true);
    await assert.rejects(p.acquire(), ClosedError);
  });

  it("sweeps idle connections and bounds the wait on the injected clock", async () => {
    const clock = new ManualClock();
    const { p, made } = pool(1, 1_000, 500, clock);
    const a = await p.acquire();
    const waiting = p.acquire().then(() => "served", (e) => e);
    await clock.advance(499);
    p.release(a); // served before the bound
    assert.equal(await waiting, "served");
    const late = p.acquire().then(() => "served", (e) => e);
    await clock.advance(500);
    assert.ok((await late) instanceof TimeoutError);
    p.release(a);
    assert.equal(p.size, 1);
    await clock.advance(999);
    assert.equal(made[0]!.closed, false);
    await clock.advance(1);
    assert.equal(made[0]!.closed, true, "idle past idleTimeout on the clock");
    assert.equal(p.size, 0);
    await p.close();
    assert.equal(clock.pending, 0);
  });
});
