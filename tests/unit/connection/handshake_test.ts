// The handshake of a new socket: errors of steps that carry a secret never carry server text
// (which echoes arguments), a user name without a password authenticates as that user, a bad
// client name is reported as such, and raw TLS error names are explained.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, ReplyError } from "../../../src/errors.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection } from "./_fake_transport.ts";

/** What redis-server answers to an unknown command: its arguments echoed, cut, CR/LF as spaces. */
function unknownCommand(cmd: string[]): Uint8Array {
  const args = cmd.slice(1).map((a) => `'${a.slice(0, 128).replace(/[\r\n]/g, " ")}'`).join(" ");
  return encodeValue(
    new ReplyError(`ERR unknown command '${cmd[0]}', with args beginning with: ${args} `),
    3,
  );
}

const PASSWORD = "pa55\nword-" + "s3cret".repeat(40); // over 128 characters, with a newline

function leaks(text: string): boolean {
  const flat = PASSWORD.replace(/\n/g, " ");
  return text.includes("s3crets3cret") || text.includes(flat.slice(0, 10)) ||
    text.includes(PASSWORD.slice(0, 4) + "\n");
}

function allText(e: unknown): string {
  let out = "";
  for (let x = e as { message?: string; cause?: unknown } | undefined; x; x = x.cause as never) {
    out += ` ${x.message ?? String(x)}`;
    if (typeof x !== "object") break;
  }
  return out;
}

describe("Connection handshake", () => {
  beforeEach(markLeakBaseline);

  for (const protocol of [3, 2] as const) {
    it(`RESP${protocol}: a server that echoes the AUTH arguments does not leak the password`, async () => {
      const errors: Error[] = [];
      const { conn } = fakeConnection(
        (cmd) => (cmd[0] === "HELLO" || cmd[0] === "AUTH" ? unknownCommand(cmd) : undefined),
        { protocol, password: PASSWORD, hooks: { onError: (e) => errors.push(e) } },
      );
      const err = await conn.connect().then(() => undefined, (e) => e);
      assert.ok(err instanceof ConnectionError, String(err));
      assert.ok(!leaks(allText(err)), `no part of the password in: ${allText(err)}`);
      for (const e of errors) assert.ok(!leaks(allText(e)), allText(e));
      assert.match(err.message, protocol === 3 ? /RESP3|HELLO/ : /authenticate/);
      conn.destroy();
      await assertNoLeaks();
    });
  }

  it("a wrong password is reported with a fixed sentence", async () => {
    const { conn } = fakeConnection(
      (cmd) =>
        cmd[0] === "HELLO"
          ? new ReplyError("WRONGPASS invalid username-password pair or user is disabled.")
          : undefined,
      { username: "app", password: "nope" },
    );
    await assert.rejects(
      conn.connect(),
      /Cannot authenticate to "127.0.0.1:7000" as "app": invalid username-password pair/,
    );
    conn.destroy();
  });

  for (const protocol of [3, 2] as const) {
    it(`RESP${protocol}: a user name without a password authenticates as that user with an empty password`, async () => {
      const { conn, transports } = fakeConnection(() => undefined, {
        protocol,
        username: "reporting",
      });
      await conn.connect();
      const first = transports[0]!.commands[0]!;
      assert.deepEqual(
        first,
        protocol === 3 ? ["HELLO", "3", "AUTH", "reporting", ""] : ["AUTH", "reporting", ""],
      );
      await conn.close();
      await assertNoLeaks();
    });
  }

  it("a client name the server refuses is reported as a client-name error", async () => {
    const bad = new ReplyError(
      "ERR Client names cannot contain spaces, newlines or special characters.",
    );
    const { conn } = fakeConnection(
      (cmd) =>
        (cmd[0] === "CLIENT" && cmd[1] === "SETNAME") ||
          (cmd[0] === "HELLO" && cmd.includes("SETNAME"))
          ? bad
          : undefined,
      { clientName: "my app", password: "pw" },
    );
    const err = await conn.connect().then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError);
    assert.match(err.message, /Cannot set the client name on "127.0.0.1:7000": ERR Client names/);
    assert.doesNotMatch(err.message, /authenticate/);
    conn.destroy();
    await assertNoLeaks();
  });

  it("explains a raw TLS error name from the transport", async () => {
    const { conn } = fakeConnection(() => undefined, {
      connector: () => Promise.reject(new Error("other(OtherError(CaUsedAsEndEntity))")),
    });
    const err = await conn.connect().then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError);
    assert.match(err.message, /TLS handshake failed: the server presents a CA certificate/);
    assert.match(err.message, /CaUsedAsEndEntity/, "the raw name stays searchable");
    assert.equal(err.written, false);
    conn.destroy();
  });
});
