// close() settles within closeTimeout even when replies never come, and every call shares one
// promise; a handoff to a target that never answers is bounded and stays on the old socket.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClosedError } from "../../../src/errors.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, FakeTransport, HANG, within } from "./_fake_transport.ts";
import { ManualClock } from "./_manual_clock.ts";

describe("Connection close and bounded handoff", () => {
  beforeEach(markLeakBaseline);

  it("close() destroys after closeTimeout when a reply never comes, one promise for all callers", async () => {
    const clock = new ManualClock();
    const { conn, transports } = fakeConnection(
      (cmd) => (cmd[0] === "GET" ? HANG : undefined),
      { clock, commandTimeout: 0, closeTimeout: 3000 },
    );
    const ready = conn.connect();
    await clock.advance(0);
    await ready;
    const stuck = conn.send(["GET", "k"], undefined, 0);
    stuck.catch(() => {});
    await clock.advance(0);
    const a = conn.close();
    const b = conn.close();
    assert.equal(a, b, "concurrent close() calls share one promise");
    await clock.advance(2999);
    assert.equal(await within(a, 20), "pending", "waits for the reply within closeTimeout");
    await clock.advance(1);
    assert.equal(await within(a, 1000), undefined, "settled once closeTimeout passed");
    await assert.rejects(
      stuck,
      (e: Error) => e instanceof ClosedError && /closeTimeout/.test(e.message),
    );
    assert.ok(transports[0]!.closed);
    await assertNoLeaks();
  });

  it("close() resolves at once when nothing is due, and after the last reply otherwise", async () => {
    const { conn } = fakeConnection(() => undefined, { closeTimeout: 60_000 });
    await conn.connect();
    const r = conn.send(["ECHO", "x"], undefined, 0);
    const closed = conn.close();
    assert.equal(await r, "x");
    assert.equal(await within(closed, 1000), undefined);
    await assertNoLeaks();
  });

  it("a handoff to a target that never answers gives up after a bounded connect and stays on the old socket", async () => {
    const target = { host: "127.0.0.9", port: 7009 };
    const transports: FakeTransport[] = [];
    let window = false;
    const { conn } = fakeConnection(() => undefined, {
      connectTimeout: 200,
      hooks: {
        resolveEndpoint: (configured) => (window ? target : configured),
        // relaxedTimeout 0 inside the window: no connect timeout from the owner.
        connectTimeout: () => 0,
      },
      connector: (o) => {
        if (o.host === target.host) return new Promise(() => {}); // SYN into the void
        const t = new FakeTransport(o, () => undefined);
        transports.push(t);
        return Promise.resolve(t);
      },
      endpoint: { host: "127.0.0.1", port: 7000 },
    });
    await conn.connect();
    window = true; // MOVING to the unreachable target
    const held = conn.handoff(50);
    const during = conn.send(["ECHO", "held"], undefined, 0);
    const r = await within(held, 3000);
    assert.notEqual(r, "pending", "the handoff settled");
    assert.equal((r as { replaced: boolean }).replaced, false);
    assert.equal(await within(during, 1000), "held", "the held command ran on the old socket");
    assert.equal(await within(conn.send(["ECHO", "still"], undefined, 0), 1000), "still");
    assert.equal(conn.endpoint.host, "127.0.0.1", "on the old endpoint");
    conn.destroy();
    await assertNoLeaks();
  });
});
