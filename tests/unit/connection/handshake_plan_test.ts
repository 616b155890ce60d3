// The handshake plan (pure): which commands set up a new socket, in which order.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { planHandshake } from "../../../src/connection/_handshake.ts";
import { ConnectionError, ReplyError } from "../../../src/errors.ts";

describe("planHandshake", () => {
  it("orders HELLO, SETNAME, SETINFO, the owner's steps, SELECT, then the session", () => {
    const steps = planHandshake(
      {
        protocol: 3,
        username: "app",
        password: "pw",
        db: 2,
        clientName: "svc",
        libName: "lib",
        libVersion: "1",
      },
      "h:1",
      [{ args: ["CLIENT", "MAINT_NOTIFICATIONS", "ON"] }],
      [{ args: ["SUBSCRIBE", "ch"], pushes: 1 }],
    );
    assert.deepEqual(steps.map((s) => s.args.join(" ")), [
      "HELLO 3 AUTH app pw",
      "CLIENT SETNAME svc",
      "CLIENT SETINFO LIB-NAME lib",
      "CLIENT SETINFO LIB-VER 1",
      "CLIENT MAINT_NOTIFICATIONS ON",
      "SELECT 2",
      "SUBSCRIBE ch",
    ]);
  });

  it("RESP2 authenticates with AUTH, with the user when one is given", () => {
    const plan = (o: { username?: string; password?: string }) =>
      planHandshake({ protocol: 2, db: 0, ...o }, "h:1", undefined, undefined).map((s) => s.args);
    assert.deepEqual(plan({ password: "pw" }), [["AUTH", "pw"]]);
    assert.deepEqual(plan({ username: "u", password: "pw" }), [["AUTH", "u", "pw"]]);
    assert.deepEqual(plan({ username: "u" }), [["AUTH", "u", ""]]);
    assert.deepEqual(plan({}), []);
  });

  it("an AUTH refusal names the user and a fixed reason, and keeps only the prefix as cause", () => {
    const [auth] = planHandshake(
      { protocol: 2, username: "u", password: "hunter2", db: 0 },
      "h:1",
      undefined,
      undefined,
    );
    let err: unknown;
    try {
      auth!.onReply!(new ReplyError("ERR something 'hunter2' echoed"));
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ConnectionError);
    assert.equal(err.message, 'Cannot authenticate to "h:1" as "u": the server refused AUTH (ERR)');
    assert.equal((err.cause as ReplyError).message, "ERR");
    assert.equal(err.written, false);
  });
});
