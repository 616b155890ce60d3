// The connection refuses raw commands (FLAG_RAW) that would change its state for every caller,
// whatever path they come from (client, pipeline, transaction) and however they are spelled;
// and it replaces a socket whose replies no longer match their commands.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { FLAG_RAW } from "../../../src/command_flags.ts";
import { reservedCommandError } from "../../../src/connection/reserved.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, SKIP, sleep } from "./_fake_transport.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("Connection reserved raw commands", () => {
  beforeEach(markLeakBaseline);

  it("refuses connection-state commands sent raw, by name, bytes or sub-command, and sends none", async () => {
    const { conn, transports } = fakeConnection(() => undefined);
    await conn.connect();
    const cases: [unknown[], RegExp][] = [
      [["select", 1], /Cannot send "SELECT" with sendCommand: use the db option/],
      [[bytes("select"), 1], /Cannot send "SELECT" with sendCommand/],
      [[bytes("MULTI")], /Cannot send "MULTI" with sendCommand: use multi\(\)/],
      [
        ["client", "reply", "skip"],
        /Cannot send "CLIENT REPLY" with sendCommand: use a pipeline\(\)/,
      ],
      [[bytes("CLIENT"), bytes("Reply"), "OFF"], /Cannot send "CLIENT REPLY"/],
      [["CLIENT", "TRACKING", "ON"], /Cannot send "CLIENT TRACKING" with sendCommand: use /],
      [["subscribe", "ch"], /use subscribe\(\)/],
      [["HELLO", "2"], /use the protocol option/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(
        conn.send(args as never, undefined, FLAG_RAW),
        (e: Error) => e instanceof TypeError && message.test(e.message),
        String(args[0]),
      );
    }
    // A transaction with a reserved raw command is refused whole.
    const group = conn.sendAll([
      { args: ["MULTI"], transform: undefined, flags: 0 },
      { args: ["SET", "k", "v"], transform: undefined, flags: FLAG_RAW },
      { args: ["SELECT", "2"], transform: undefined, flags: FLAG_RAW },
      { args: ["EXEC"], transform: undefined, flags: 0 },
    ]);
    for (const p of group) await assert.rejects(p, /Cannot send "SELECT" with sendCommand/);
    // Errors as values (pipelines) get the refusal as their value.
    const v = await conn.send(["SELECT", 3], undefined, FLAG_RAW | 2048);
    assert.ok(v instanceof TypeError);
    await sleep(5);
    const sent = transports[0]!.commands.map((c) => c.join(" ").toUpperCase());
    assert.ok(
      !sent.some((c) => /^(SELECT|MULTI|CLIENT REPLY|CLIENT TRACKING|SUBSCRIBE|HELLO 2)/.test(c)),
      `nothing reserved was written: ${sent.join(", ")}`,
    );
    // The same commands from the typed layer (no FLAG_RAW) go through.
    assert.equal(await conn.send(["CLIENT", "REPLY", "ON"], undefined, 0), "OK");
    assert.equal(await conn.send(["ECHO", "raw ok"], undefined, FLAG_RAW), "raw ok");
    await conn.close();
    await assertNoLeaks();
  });

  it("reservedCommandError leaves ordinary commands alone", () => {
    assert.equal(reservedCommandError(["GET", "k"]), undefined);
    assert.equal(reservedCommandError(["CLIENT", "LIST"]), undefined);
    assert.equal(reservedCommandError([bytes("client"), "kill", "ID", 5]), undefined);
    assert.match(reservedCommandError(["Client", "SetName", "x"])!.message, /clientName option/);
  });

  it("replaces the socket when replies stop matching their commands after a timeout", async () => {
    // The peer loses the reply of one command: every later reply would land one command early.
    const { conn, transports } = fakeConnection(
      (cmd) => (cmd[0] === "GET" && cmd[1] === "lost" ? SKIP : undefined),
      { commandTimeout: 100 },
    );
    await conn.connect();
    conn.send(["GET", "lost"], undefined, 0).catch(() => {});
    const b = conn.send(["ECHO", "b"], undefined, 0);
    await assert.rejects(b, { name: "TimeoutError" });
    // From here on every command must get its own reply, at the latest after a short while.
    let own = 0;
    const wrong: string[] = [];
    const t0 = Date.now();
    for (let i = 0; own < 3 && Date.now() - t0 < 5000; i++) {
      const r = await conn.send(["ECHO", `c${i}`], undefined, 0).then((v) => v, (e) => e);
      if (r === `c${i}`) own++;
      else if (typeof r === "string") wrong.push(`c${i} got ${r}`);
    }
    assert.equal(own, 3, "commands get their own replies again");
    assert.deepEqual(wrong, [], "no command resolved with another command's reply");
    assert.ok(transports.length >= 2, "the out-of-step socket was replaced");
    assert.ok(transports[0]!.closed);
    await conn.close();
    await assertNoLeaks();
  });
});
