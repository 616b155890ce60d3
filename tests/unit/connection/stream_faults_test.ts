// Faults in the reply stream: an unsolicited reply resets the socket with an error report and a
// logged reason; a server loading its data set holds the work and the refused commands are sent
// again.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProtocolError, ReplyError } from "../../../src/errors.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { Logger } from "../../../src/logger.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import { fakeConnection, sleep } from "./_fake_transport.ts";

describe("Connection stream faults", () => {
  beforeEach(markLeakBaseline);

  it("an unsolicited reply resets the socket with an error report and a logged reason", async () => {
    const errors: Error[] = [];
    const logged: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (m: string) => logged.push(m),
      error: (m: string) => logged.push(m),
    };
    const { conn, transports } = fakeConnection(() => undefined, {
      logger,
      hooks: { onError: (e) => errors.push(e) },
    });
    await conn.connect();
    transports[0]!.send(encodeValue("surprise", 3)); // no command is waiting for it
    await sleep(20);
    assert.ok(transports[0]!.closed, "the socket was reset");
    assert.ok(
      errors.some((e) => e instanceof ProtocolError && /no command is waiting/.test(e.message)),
    );
    assert.ok(logged.some((m) => /unsolicited reply/.test(m)), logged.join("\n"));
    assert.equal(await conn.send(["ECHO", "after"], undefined, 0), "after");
    await conn.close();
    await assertNoLeaks();
  });

  it("retries the commands a loading server refused and holds new ones until it is done", async () => {
    let loading = true;
    const seen: string[] = [];
    let applied = 0;
    const { conn } = fakeConnection((cmd) => {
      if (cmd[0] === "GET" || cmd[0] === "SET") {
        seen.push(cmd.join(" "));
        if (loading) return new ReplyError("LOADING Redis is loading the dataset in memory");
        if (cmd[0] === "SET") applied++;
        return cmd[0] === "GET" ? `value of ${cmd[1]}` : "OK";
      }
      return undefined;
    }, { commandTimeout: 2000 });
    await conn.connect();
    const a = conn.send(["SET", "a", "1"], undefined, 0);
    const b = conn.send(["GET", "b"], undefined, 0);
    await sleep(30);
    const c = conn.send(["GET", "c"], undefined, 0); // while loading: held
    setTimeout(() => (loading = false), 250);
    assert.deepEqual(await Promise.all([a, b, c]), ["OK", "value of b", "value of c"]);
    assert.equal(applied, 1, "applied once");
    const firstOk = seen.lastIndexOf("SET a 1");
    assert.ok(firstOk < seen.lastIndexOf("GET c"), "the retried commands go before the held ones");
    await conn.close();
    await assertNoLeaks();
  });

  it("a LOADING refusal is returned once the command's timeout cannot be met", async () => {
    const { conn } = fakeConnection(
      (cmd) =>
        cmd[0] === "GET"
          ? new ReplyError("LOADING Redis is loading the dataset in memory")
          : undefined,
      { commandTimeout: 300 },
    );
    await conn.connect();
    const t0 = Date.now();
    await assert.rejects(
      conn.send(["GET", "k"], undefined, 0),
      (e: Error) => /LOADING|loading its data set/.test(e.message),
    );
    assert.ok(Date.now() - t0 < 1500, "within about its timeout");
    await conn.close();
    await assertNoLeaks();
  });
});
