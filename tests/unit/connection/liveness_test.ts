// Liveness is judged by replies to commands: a socket that answers no command is replaced even
// while pub/sub pushes keep arriving; a command queued behind a full socket gets its deadline.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { TimeoutError } from "../../../src/errors.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, HANG, sleep } from "./_fake_transport.ts";
import { ManualClock } from "./_manual_clock.ts";

describe("Connection liveness", () => {
  beforeEach(markLeakBaseline);

  it("replaces a socket that answers no command while pushes keep arriving", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => (cmd[0] === "BLPOP" ? HANG : undefined),
      { commandTimeout: 100 },
    );
    await conn.connect();
    const first = transports[0]!;
    // A blocking command on the shared connection: the server answers nothing after it.
    await assert.rejects(conn.send(["BLPOP", "q", 0], undefined, 0), TimeoutError);
    const t0 = Date.now();
    while (transports.length === 1 && Date.now() - t0 < 6000) {
      first.push(["message", "news", "still here"]); // pub/sub traffic on the same socket
      conn.send(["GET", "k"], undefined, 0).catch(() => {});
      await sleep(50);
    }
    assert.ok(transports.length >= 2, "the wedged socket was replaced");
    assert.ok(first.closed);
    assert.ok(Date.now() - t0 < 4000, `replaced within the liveness bound (${Date.now() - t0} ms)`);
    assert.equal(await conn.send(["ECHO", "fresh"], undefined, 0), "fresh");
    await conn.close();
    await assertNoLeaks();
  });

  it("times out a command queued behind a full socket", async () => {
    const clock = new ManualClock();
    const { conn, transports } = fakeConnection(() => undefined, { clock, commandTimeout: 100 });
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    const t = transports[0]!;
    t.writable = false; // the peer stops reading: the next write leaves the socket full
    const written = conn.send(["ECHO", "0"], undefined, 0);
    await clock.advance(0);
    const queued = conn.send(["ECHO", "1"], undefined, 0);
    queued.catch(() => {});
    await clock.advance(99);
    assert.equal(await written, "0");
    const early = await Promise.race([queued.then(() => "settled", () => "settled"), "pending"]);
    assert.equal(early, "pending", "still within its timeout");
    await clock.advance(2);
    await assert.rejects(
      queued,
      (e: Error) =>
        e instanceof TimeoutError && e.written === false && /socket .* is full/.test(e.message),
    );
    assert.ok(!t.commands.some((c) => c[1] === "1"), "never written");
    conn.destroy();
    await assertNoLeaks();
  });
});
