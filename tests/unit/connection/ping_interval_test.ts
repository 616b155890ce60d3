// pingInterval on a manual clock: a PING after the interval of silence, none while traffic
// flows; a PING that is never answered gets the socket replaced; a RESP2 subscriber's
// ["pong", ""] answers it.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, HANG } from "./_fake_transport.ts";
import { ManualClock } from "./_manual_clock.ts";

const pings = (cmds: string[][]) => cmds.filter((c) => c[0] === "PING").length;

describe("Connection pingInterval", () => {
  beforeEach(markLeakBaseline);

  it("writes a PING after the interval of silence, none while commands flow", async () => {
    const clock = new ManualClock();
    const { conn, transports } = fakeConnection(() => undefined, { clock, pingInterval: 1000 });
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    const t = transports[0]!;
    for (let i = 0; i < 5; i++) {
      await clock.advance(500);
      assert.equal(await conn.send(["ECHO", `${i}`], undefined, 0), `${i}`); // traffic
    }
    assert.equal(pings(t.commands), 0, "no PING while commands flow");
    await clock.advance(999);
    assert.equal(pings(t.commands), 0);
    await clock.advance(1);
    assert.equal(pings(t.commands), 1, "a PING after a full interval of silence");
    await clock.advance(0);
    assert.equal(conn.inflightCount, 0, "its reply was taken, by no caller");
    await conn.close();
    await assertNoLeaks();
  });

  it("a PING that is never answered gets the socket replaced", async () => {
    const clock = new ManualClock();
    let first = true;
    const { conn, transports } = fakeConnection(
      (cmd) => (cmd[0] === "PING" && first ? HANG : undefined),
      { clock, pingInterval: 1000, commandTimeout: 1000 },
    );
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    await clock.advance(1000); // the PING goes out and is never answered
    first = false;
    for (let i = 0; i < 10 && transports.length === 1; i++) await clock.advance(500);
    assert.equal(transports.length, 2, "the dead socket was replaced");
    assert.ok(transports[0]!.closed);
    const r = conn.send(["ECHO", "alive"], undefined, 0);
    await clock.advance(0);
    assert.equal(await r, "alive");
    conn.destroy();
    await assertNoLeaks();
  });

  it('a RESP2 subscriber\'s ["pong", ""] answers the PING and is not passed on as a push', async () => {
    const clock = new ManualClock();
    const pushed: unknown[] = [];
    const { conn } = fakeConnection(
      (cmd) => (cmd[0] === "PING" ? ["pong", ""] : undefined),
      {
        clock,
        pingInterval: 1000,
        protocol: 2,
        subscriber: true,
        hooks: { onPush: (f) => pushed.push(f) },
      },
    );
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    await clock.advance(1000);
    await clock.advance(0);
    assert.equal(conn.inflightCount, 0, "the PING was answered");
    assert.deepEqual(pushed, []);
    await conn.close();
    await assertNoLeaks();
  });
});
