// send(..., signal): an abort rejects with the signal's reason; a queued command is never
// written, a written one keeps its slot so every later reply still reaches its own command.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, FakeTransport, SKIP, sleep } from "./_fake_transport.ts";

describe("Connection command abort", () => {
  beforeEach(markLeakBaseline);

  it("an already aborted signal rejects at once and writes nothing", async () => {
    const { conn, transports } = fakeConnection(() => undefined);
    await conn.connect();
    const reason = new Error("stop");
    await assert.rejects(
      conn.send(["ECHO", "x"], undefined, 0, undefined, AbortSignal.abort(reason)),
      (e) => e === reason,
    );
    await sleep(5);
    assert.ok(!transports[0]!.commands.some((c) => c[0] === "ECHO"));
    await conn.close();
    await assertNoLeaks();
  });

  it("a command aborted while queued is never written", async () => {
    let release: (t: FakeTransport) => void = () => {};
    const made: FakeTransport[] = [];
    const { conn } = fakeConnection(() => undefined, {
      connector: (o) =>
        new Promise((r) => {
          release = (t) => r(t);
          made.push(new FakeTransport(o, () => undefined));
        }),
    });
    const ac = new AbortController();
    const p = conn.send(["ECHO", "never"], undefined, 0, undefined, ac.signal);
    const kept = conn.send(["ECHO", "kept"], undefined, 0);
    await sleep(5);
    ac.abort(new Error("gave up"));
    await assert.rejects(p, /gave up/);
    release(made[0]!);
    assert.equal(await kept, "kept");
    assert.ok(!made[0]!.commands.some((c) => c[1] === "never"), "never written");
    await conn.close();
    await assertNoLeaks();
  });

  it("a command aborted after the write keeps its slot: the next command gets its own reply", async () => {
    const { conn } = fakeConnection((cmd, t) => {
      if (cmd[0] !== "GET") return undefined;
      // Answered later, after the abort.
      setTimeout(() => t.send(new TextEncoder().encode("$4\r\nlate\r\n")), 30);
      return SKIP;
    });
    await conn.connect();
    const ac = new AbortController();
    const aborted = conn.send(["GET", "k"], undefined, 0, undefined, ac.signal);
    await sleep(5);
    ac.abort(new Error("gave up"));
    await assert.rejects(aborted, /gave up/);
    await sleep(50); // the late reply arrives and is discarded
    assert.equal(await conn.send(["ECHO", "mine"], undefined, 0), "mine");
    await conn.close();
    await assertNoLeaks();
  });

  it("removes its abort listener once the command settles", async () => {
    const { conn } = fakeConnection(() => undefined);
    await conn.connect();
    const ac = new AbortController();
    let added = 0;
    let removed = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener =
      ((...a: Parameters<typeof add>) => (added++, add(...a))) as typeof add;
    ac.signal.removeEventListener =
      ((...a: Parameters<typeof remove>) => (removed++, remove(...a))) as typeof remove;
    for (let i = 0; i < 10; i++) {
      assert.equal(await conn.send(["ECHO", `${i}`], undefined, 0, undefined, ac.signal), `${i}`);
    }
    assert.equal(added, 10);
    assert.equal(removed, 10);
    await conn.close();
    await assertNoLeaks();
  });
});
