// connect({ signal }): an abort stops the attempt, the dial included, and the connection stays
// usable.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError } from "../../../src/errors.ts";
import type { ConnectOptions } from "../../../src/transport/types.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, FakeTransport } from "./_fake_transport.ts";

describe("Connection connect({ signal })", () => {
  beforeEach(markLeakBaseline);

  it("rejects at once with an already aborted signal, without dialling", async () => {
    let dials = 0;
    const { conn } = fakeConnection(() => undefined, {
      connector: () => {
        dials++;
        return new Promise(() => {});
      },
    });
    const ac = new AbortController();
    ac.abort(new Error("not now"));
    await assert.rejects(
      conn.connect({ signal: ac.signal }),
      (e: Error) =>
        e instanceof ConnectionError && /aborted/.test(e.message) &&
        (e.cause as Error).message === "not now",
    );
    assert.equal(dials, 0);
    conn.destroy();
    await assertNoLeaks();
  });

  it("an abort during the dial stops the dial and fails the attempt; the next connect works", async () => {
    const dialSignals: (AbortSignal | undefined)[] = [];
    let hang = true;
    const transports: FakeTransport[] = [];
    const { conn } = fakeConnection(() => undefined, {
      connectTimeout: 0,
      connector: (o: ConnectOptions) => {
        dialSignals.push(o.signal);
        if (hang) return new Promise(() => {});
        const t = new FakeTransport(o, () => undefined);
        transports.push(t);
        return Promise.resolve(t);
      },
    });
    const ac = new AbortController();
    const p = conn.connect({ signal: ac.signal });
    await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error("user gave up"));
    await assert.rejects(p, /Cannot connect to "127\.0\.0\.1:7000": aborted/);
    assert.equal(dialSignals[0]?.aborted, true, "the dial was told to stop");
    hang = false;
    await conn.connect();
    assert.equal(await conn.send(["ECHO", "ok"], undefined, 0), "ok");
    await conn.close();
    await assertNoLeaks();
  });

  it("the connect timeout aborts the dial too", async () => {
    const dialSignals: (AbortSignal | undefined)[] = [];
    const { conn } = fakeConnection(() => undefined, {
      connectTimeout: 30,
      connector: (o: ConnectOptions) => {
        dialSignals.push(o.signal);
        return new Promise(() => {});
      },
    });
    await assert.rejects(conn.connect(), /timed out after 30 ms/);
    assert.equal(dialSignals[0]?.aborted, true);
    conn.destroy();
    await assertNoLeaks();
  });
});
