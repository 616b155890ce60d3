// A transaction queued while disconnected (Connection.sendAll) has one offline deadline: it
// expires whole, or is written whole; never a tail without its MULTI.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { TimeoutError } from "../../../src/errors.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, FakeTransport, sleep } from "./_fake_transport.ts";

describe("Connection transaction queued offline", () => {
  beforeEach(markLeakBaseline);

  it("expires as a unit when its deadline passes, so the server never sees a tail without MULTI", async () => {
    // A clock that moves 1 ms per reading while the transaction is queued: without one shared
    // deadline, MULTI would expire first.
    let virtual = 1_000_000;
    let ticking = false;
    const now = () => (ticking ? virtual++ : virtual);
    let down = false;
    const transports: FakeTransport[] = [];
    const { conn } = fakeConnection((cmd) => (cmd[0] === "EXEC" ? [] : undefined), {
      now,
      commandTimeout: 100,
      connectTimeout: 100,
      connector: (o) => {
        if (down) return Promise.reject(new Error("connection refused"));
        const t = new FakeTransport(o, (cmd) => (cmd[0] === "EXEC" ? [] : undefined));
        transports.push(t);
        return Promise.resolve(t);
      },
    });
    await conn.connect();
    down = true;
    transports[0]!.drop();
    await sleep(10); // lost; reconnect attempts fail

    ticking = true;
    const start = virtual;
    const commands = [
      { args: ["MULTI"], transform: undefined, flags: 0 },
      ...Array.from(
        { length: 50 },
        () => ({ args: ["INCR", "n"], transform: undefined, flags: 0 }),
      ),
      { args: ["EXEC"], transform: undefined, flags: 0 },
    ];
    const results = conn.sendAll(commands).map((p) => p.then(() => "ok", (e) => e));
    ticking = false;
    // Exactly MULTI's own deadline: a per-command deadline would expire MULTI alone.
    virtual = start + 100;
    await sleep(200); // the queue timer fires
    down = false;
    await sleep(100); // the connection comes back
    const settled = await Promise.all(results);
    const written = transports.slice(1).flatMap((t) => t.commands.map((c) => c[0]));
    assert.ok(!written.includes("INCR"), `no INCR reached the server: ${written.join(" ")}`);
    assert.ok(!written.includes("EXEC"));
    for (const r of settled) {
      assert.ok(r instanceof TimeoutError, `every command expired, got ${String(r)}`);
      assert.equal(r.written, false, "never written");
    }
    conn.destroy();
    await assertNoLeaks();
  });

  it("is written whole when the connection returns before its deadline", async () => {
    let down = false;
    const transports: FakeTransport[] = [];
    const answer = (cmd: string[]) =>
      cmd[0] === "INCR" ? "QUEUED" : cmd[0] === "EXEC" ? [1, 2, 3] : undefined;
    const { conn } = fakeConnection(answer, {
      connector: (o) => {
        if (down) return Promise.reject(new Error("connection refused"));
        const t = new FakeTransport(o, answer);
        transports.push(t);
        return Promise.resolve(t);
      },
    });
    await conn.connect();
    down = true;
    transports[0]!.drop();
    await sleep(10);
    const p = conn.sendAll([
      { args: ["MULTI"], transform: undefined, flags: 0 },
      { args: ["INCR", "a"], transform: undefined, flags: 0 },
      { args: ["INCR", "a"], transform: undefined, flags: 0 },
      { args: ["INCR", "a"], transform: undefined, flags: 0 },
      { args: ["EXEC"], transform: undefined, flags: 0 },
    ]);
    down = false;
    assert.deepEqual(await p[4], [1, 2, 3]);
    const last = transports.at(-1)!;
    const cmds = last.commands.map((c) => c[0]).filter((c) => c !== "HELLO" && c !== "CLIENT");
    assert.deepEqual(cmds, ["MULTI", "INCR", "INCR", "INCR", "EXEC"]);
    await conn.close();
    await assertNoLeaks();
  });
});
