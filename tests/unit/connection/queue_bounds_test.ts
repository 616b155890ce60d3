// The offline queue bounds count real bytes, apply only while commands have to wait, and a
// command they refuse still starts the lazy connect.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encodedBytes } from "../../../src/connection/connection.ts";
import { ConnectionError } from "../../../src/errors.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, sleep } from "./_fake_transport.ts";

describe("Connection queue bounds", () => {
  beforeEach(markLeakBaseline);

  it("counts the encoded size: exact for ASCII and bytes, 3 per character otherwise", () => {
    // *3\r\n $3\r\nSET\r\n $1\r\nk\r\n $5\r\nvalue\r\n
    assert.equal(encodedBytes(["SET", "k", "value"]), 4 + 9 + 7 + 11);
    assert.equal(encodedBytes(["SET", "k", new Uint8Array(1000)]), 4 + 9 + 7 + 1009);
    assert.equal(encodedBytes(["SET", "k", 12345]), 4 + 9 + 7 + 11);
    assert.ok(encodedBytes(["SET", "k", "é".repeat(10)]) >= 4 + 9 + 7 + 20 + 6);
  });

  it("takes a first command as large as maxQueueBytes allows, counted in bytes", async () => {
    const { conn } = fakeConnection(() => undefined, { maxQueueBytes: 1000 });
    // 900 ASCII characters: 900-odd bytes, below the bound (an estimate of 3 per character is not).
    const big = "x".repeat(900);
    assert.equal(await conn.send(["ECHO", big], undefined, 0), big);
    await conn.close();
    await assertNoLeaks();
  });

  it("a command refused by maxQueueBytes still starts the lazy connect", async () => {
    const { conn, transports } = fakeConnection(() => undefined, { maxQueueBytes: 100 });
    await assert.rejects(
      conn.send(["ECHO", "x".repeat(500)], undefined, 0),
      (e: Error) =>
        e instanceof ConnectionError && e.written === false && /maxQueueBytes 100/.test(e.message),
    );
    await sleep(20);
    assert.equal(transports.length, 1, "connecting");
    assert.ok(conn.ready);
    assert.equal(
      await conn.send(["ECHO", "x".repeat(500)], undefined, 0),
      "x".repeat(500),
      "no bound once connected",
    );
    await conn.close();
    await assertNoLeaks();
  });

  it("maxQueueLength 0 still connects lazily", async () => {
    const { conn, transports } = fakeConnection(() => undefined, { maxQueueLength: 0 });
    await assert.rejects(conn.send(["ECHO", "a"], undefined, 0), /maxQueueLength 0/);
    await sleep(20);
    assert.equal(transports.length, 1);
    assert.equal(await conn.send(["ECHO", "b"], undefined, 0), "b");
    await conn.close();
    await assertNoLeaks();
  });
});
