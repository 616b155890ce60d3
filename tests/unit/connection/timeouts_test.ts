// Timeouts on a manual clock: command, queue and connect deadlines fire exactly when due, and
// every error that rejects a command says whether the command may have reached the server.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClosedError, ConnectionError, TimeoutError } from "../../../src/errors.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, HANG } from "./_fake_transport.ts";
import { ManualClock } from "./_manual_clock.ts";

async function settledWithin(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  await new Promise((r) => setTimeout(r, 0));
  return done;
}

describe("Connection timeouts on a manual clock", () => {
  beforeEach(markLeakBaseline);

  it("a command times out exactly at its deadline, written", async () => {
    const clock = new ManualClock();
    const { conn } = fakeConnection((cmd) => (cmd[0] === "GET" ? HANG : undefined), {
      clock,
      commandTimeout: 1000,
    });
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    const p = conn.send(["GET", "k"], undefined, 0);
    p.catch(() => {});
    await clock.advance(999);
    assert.equal(await settledWithin(p), false);
    await clock.advance(1);
    await assert.rejects(p, (e: Error) => e instanceof TimeoutError && e.written === true);
    conn.destroy();
    await assertNoLeaks();
  });

  it("a per-command timeout overrides the configured one", async () => {
    const clock = new ManualClock();
    const { conn } = fakeConnection((cmd) => (cmd[0] === "GET" ? HANG : undefined), {
      clock,
      commandTimeout: 1000,
    });
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    const p = conn.send(["GET", "k"], undefined, 0, 50);
    p.catch(() => {});
    await clock.advance(49);
    assert.equal(await settledWithin(p), false);
    await clock.advance(1);
    await assert.rejects(p, /timed out after 50 ms/);
    conn.destroy();
    await assertNoLeaks();
  });

  it("a connect attempt that never completes fails at connectTimeout, the queued command unwritten", async () => {
    const clock = new ManualClock();
    const { conn } = fakeConnection(() => undefined, {
      clock,
      connectTimeout: 500,
      commandTimeout: 100,
      connector: () => new Promise(() => {}),
    });
    const p = conn.send(["GET", "k"], undefined, 0);
    p.catch(() => {});
    await clock.advance(499);
    assert.equal(await settledWithin(p), false, "waits for the connect (max of both timeouts)");
    await clock.advance(1);
    await assert.rejects(
      p,
      (e: Error) => e instanceof TimeoutError && e.written === false,
    );
    conn.destroy();
    await assertNoLeaks();
  });

  it("reconnects after the backoff the clock measures", async () => {
    const clock = new ManualClock();
    const { conn, transports } = fakeConnection(() => undefined, {
      clock,
      reconnect: { baseDelay: 1000, maxDelay: 1000 },
    });
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    transports[0]!.drop();
    await clock.advance(0); // the first reconnect is immediate
    assert.equal(transports.length, 2);
    transports[1]!.drop();
    await clock.advance(0);
    await clock.advance(1000); // the second waits at most baseDelay
    assert.equal(transports.length, 3);
    conn.destroy();
    await assertNoLeaks();
  });

  it("errors say whether the command may have reached the server", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => (cmd[0] === "GET" ? HANG : undefined),
      { reconnect: false, maxQueueLength: 2 },
    );
    await conn.connect();
    const inflight = conn.send(["GET", "k"], undefined, 0);
    inflight.catch(() => {});
    await new Promise((r) => setTimeout(r, 5));
    transports[0]!.drop();
    await assert.rejects(
      inflight,
      (e: Error) => e instanceof ConnectionError && e.written === true,
    );
    await assert.rejects(
      conn.send(["GET", "k"], undefined, 0),
      (e: Error) => e instanceof ClosedError && e.written === false,
    );

    const { conn: c2 } = fakeConnection(() => undefined, {
      maxQueueLength: 1,
      connector: () => new Promise(() => {}),
    });
    const queued = c2.send(["ECHO", "a"], undefined, 0);
    queued.catch(() => {});
    await assert.rejects(
      c2.send(["ECHO", "b"], undefined, 0),
      (e: Error) => e instanceof ConnectionError && e.written === false,
    );
    c2.destroy();
    await assert.rejects(queued, (e: Error) => e instanceof ClosedError && e.written === false);
    await assertNoLeaks();
  });
});
