// The first queued commands written behind a new socket's handshake (`pipelineHandshake`): one
// write, their own replies whatever the handshake's outcome, back to the queue when the server
// says it did not run them, and never behind a step whose failure would change their meaning.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClosedError, ConnectionError, ReplyError, TimeoutError } from "../../../src/errors.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import { FLAG_BLOCKING, FLAG_SUBSCRIBE } from "../../../src/connection/connection.ts";
import { assertNoLeaks, markLeakBaseline } from "../../_helpers/leaks.ts";
import {
  fakeConnection,
  type FakeTransport,
  HANG,
  SKIP,
  sleep,
  within,
} from "./_fake_transport.ts";

const names = (t: FakeTransport, write: number): string[] =>
  (t.batches[write] ?? []).map((c) => c.join(" "));

/** Replies encoded back to back, for one chunk (a server's one write). */
function oneChunk(...values: RespValue[]): Uint8Array {
  const parts = values.map((v) => encodeValue(v, 3));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const WRONGPASS = new ReplyError("WRONGPASS invalid username-password pair or user is disabled.");
const NOAUTH = new ReplyError("NOAUTH Authentication required.");

describe("Connection commands behind the handshake", () => {
  beforeEach(markLeakBaseline);

  it("writes the queued commands in the handshake's write and answers each in order", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => cmd[0] === "GET" ? `v-${cmd[1]}` : undefined,
      {
        pipelineHandshake: true,
        libName: "edge-redis",
        libVersion: "1",
      },
    );
    const a = conn.send(["GET", "a"], undefined, 0);
    const b = conn.send(["GET", "b"], undefined, 0);
    assert.deepEqual(await Promise.all([a, b]), ["v-a", "v-b"]);
    const t = transports[0]!;
    assert.equal(t.writes, 1);
    assert.deepEqual(names(t, 0), [
      "HELLO 3",
      "CLIENT SETINFO LIB-NAME edge-redis",
      "CLIENT SETINFO LIB-VER 1",
      "GET a",
      "GET b",
    ]);
    // The steady state is the ordinary path.
    assert.equal(await conn.send(["GET", "c"], undefined, 0), "v-c");
    assert.equal(t.writes, 2);
    await conn.close();
    await assertNoLeaks();
  });

  it("a command behind the handshake resolves on a ready connection (ready reported first)", async () => {
    const order: string[] = [];
    // The peer answers the whole write in one chunk: the handshake's replies and the GET's.
    const { conn, transports } = fakeConnection((cmd, t) => {
      if (cmd[0] === "HELLO") return SKIP;
      t.send(oneChunk(new Map([["proto", 3]]), "v"));
      return SKIP;
    }, { pipelineHandshake: true, hooks: { onReady: () => order.push("ready") } });
    const got = await conn.send(["GET", "k"], undefined, 0);
    order.push(`reply ${got}`);
    assert.deepEqual(order, ["ready", "reply v"]);
    assert.equal(conn.ready, true);
    assert.equal(transports[0]!.writes, 1);
    conn.destroy();
    await assertNoLeaks();
  });

  it("without the option, the handshake is answered before the first command is written", async () => {
    const { conn, transports } = fakeConnection(() => undefined);
    await conn.send(["GET", "a"], undefined, 0);
    assert.equal(transports[0]!.writes, 2);
    assert.deepEqual(names(transports[0]!, 0), ["HELLO 3"]);
    await conn.close();
  });

  it("a failed AUTH: a command the server ran (no password needed) gets its reply, the error surfaces", async () => {
    const errors: Error[] = [];
    const { conn, transports } = fakeConnection(
      (cmd) => cmd[0] === "HELLO" ? WRONGPASS : cmd[0] === "INCR" ? 1 : undefined,
      { pipelineHandshake: true, password: "nope", hooks: { onError: (e) => errors.push(e) } },
    );
    const incr = conn.send(["INCR", "n"], undefined, 0);
    const connected = conn.connect().then(() => undefined, (e) => e);
    // Not one INCR reported as unwritten: it ran, its reply is its own.
    assert.equal(await incr, 1);
    const err = await connected;
    assert.ok(err instanceof ConnectionError);
    assert.match(err.message, /Cannot authenticate to "127.0.0.1:7000" as "default": invalid/);
    assert.ok(!err.message.includes("nope"));
    assert.equal(transports[0]!.writes, 1);
    assert.ok(transports[0]!.closed);
    conn.destroy();
    await assertNoLeaks();
  });

  it("a failed AUTH: a command answered NOAUTH did not run and fails unwritten on the first connect", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => cmd[0] === "HELLO" ? WRONGPASS : cmd[0] === "INCR" ? NOAUTH : undefined,
      { pipelineHandshake: true, password: "nope" },
    );
    const err = await conn.send(["INCR", "n"], undefined, 0).then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.written, false);
    assert.match(err.message, /Cannot authenticate/);
    assert.equal(transports.length, 1);
    conn.destroy();
    await assertNoLeaks();
  });

  it("the reconnect after a drop writes nothing behind its handshake: a refused AUTH leaves the command unwritten", async () => {
    // From the drop on, HELLO is refused once; the INCR waits for a ready socket.
    let refusals = 0;
    const { conn, transports } = fakeConnection(
      (cmd) => {
        if (cmd[0] === "HELLO" && refusals > 0) {
          refusals--;
          return WRONGPASS;
        }
        return cmd[0] === "INCR" ? 1 : undefined;
      },
      { pipelineHandshake: true, password: "pw" },
    );
    await conn.connect();
    refusals = 1;
    transports[0]!.drop();
    while (conn.ready) await sleep(1);
    assert.equal(await conn.send(["INCR", "n"], undefined, 0), 1);
    assert.ok(transports.length >= 3, `the first socket, the refused one, the ready one`);
    const incrs = transports.map((t) => t.commands.filter((c) => c[0] === "INCR").length);
    assert.deepEqual(incrs.slice(0, -1).every((n) => n === 0), true, `INCR per socket: ${incrs}`);
    assert.equal(incrs.at(-1), 1, "written once, on the ready socket");
    await conn.close();
    await assertNoLeaks();
  });

  for (const protocol of [3, 2] as const) {
    it(`RESP${protocol}: a server that does not know ${protocol === 3 ? "HELLO" : "AUTH"} still answers the command behind it`, async () => {
      const unknown = (c: string) =>
        encodeValue(new ReplyError(`ERR unknown command '${c}', with args beginning with: `), 3);
      const { conn } = fakeConnection(
        (cmd) =>
          cmd[0] === "HELLO" || cmd[0] === "AUTH"
            ? unknown(cmd[0])
            : cmd[0] === "GET"
            ? "v"
            : undefined,
        { pipelineHandshake: true, protocol, password: protocol === 2 ? "pw" : undefined },
      );
      const get = conn.send(["GET", "k"], undefined, 0);
      const err = await conn.connect().then(() => undefined, (e) => e);
      assert.equal(await get, "v");
      assert.ok(err instanceof ConnectionError);
      assert.match(err.message, protocol === 3 ? /set protocol: 2/ : /authenticate/);
      conn.destroy();
      await assertNoLeaks();
    });
  }

  it("a server at maxclients ran nothing: the command fails unwritten on the first connect", async () => {
    const { conn, transports } = fakeConnection((cmd, t) => {
      if (cmd[0] === "HELLO") {
        t.send(encodeValue(new ReplyError("ERR max number of clients reached"), 3));
        setTimeout(() => t.drop(), 0);
        return HANG;
      }
      return undefined;
    }, { pipelineHandshake: true });
    const err = await conn.send(["SET", "k", "v"], undefined, 0).then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.written, false);
    assert.match(err.message, /maxclients/);
    assert.equal(transports.length, 1);
    conn.destroy();
    await assertNoLeaks();
  });

  it("a socket closed after the handshake's replies but before the command's: the command may have run", async () => {
    const { conn } = fakeConnection((cmd, t) => {
      if (cmd[0] === "SET") {
        t.drop();
        return HANG;
      }
      return undefined;
    }, { pipelineHandshake: true, reconnect: false });
    const err = await conn.send(["SET", "k", "v"], undefined, 0).then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.written, true);
    conn.destroy();
    await assertNoLeaks();
  });

  it("a handshake that times out: the command written with it times out as written, never sent twice", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => (cmd[0] === "HELLO" ? HANG : undefined),
      { pipelineHandshake: true, connectTimeout: 50 },
    );
    const set = conn.send(["SET", "k", "v"], undefined, 0).then(() => undefined, (e) => e);
    const connectErr = await conn.connect().then(() => undefined, (e) => e);
    assert.ok(connectErr instanceof TimeoutError, String(connectErr));
    const err = await set;
    assert.ok(err instanceof TimeoutError, String(err));
    assert.equal(err.written, true);
    assert.match(err.message, /written with the handshake/);
    assert.equal(transports.length, 1);
    conn.destroy();
    await assertNoLeaks();
  });

  it("close() while the replies behind a failed handshake arrive: nothing is left waiting", async () => {
    const { conn } = fakeConnection(
      (cmd) => cmd[0] === "HELLO" ? WRONGPASS : cmd[0] === "GET" ? HANG : undefined,
      { pipelineHandshake: true, password: "nope" },
    );
    const get = conn.send(["GET", "k"], undefined, 0).then(() => undefined, (e) => e);
    await sleep(5);
    await conn.close();
    const err = await within(get, 500);
    assert.ok(err instanceof ClosedError, String(err));
    assert.equal(err.written, true);
    await assertNoLeaks();
  });

  it("close() while a NOAUTH'd command waits to be queued again: it fails as never sent", async () => {
    const { conn } = fakeConnection(
      (cmd) =>
        cmd[0] === "HELLO"
          ? WRONGPASS
          : cmd[0] === "GET"
          ? NOAUTH
          : cmd[0] === "PING"
          ? HANG
          : undefined,
      { pipelineHandshake: true, password: "nope" },
    );
    const get = conn.send(["GET", "k"], undefined, 0).then(() => undefined, (e) => e);
    const ping = conn.send(["PING"], undefined, 0).then(() => undefined, (e) => e);
    await sleep(5);
    await conn.close();
    const err = await within(get, 500);
    assert.ok(err instanceof Error && (err as ConnectionError).written === false, String(err));
    assert.notEqual(await within(ping, 500), "pending");
    await assertNoLeaks();
  });

  it("a command refused with LOADING behind the handshake is queued again and runs", async () => {
    let loading = 2;
    const { conn, transports } = fakeConnection(
      (cmd) => {
        if (cmd[0] !== "GET") return undefined;
        return loading-- > 0
          ? new ReplyError("LOADING Redis is loading the dataset in memory")
          : "v";
      },
      { pipelineHandshake: true },
    );
    assert.equal(await conn.send(["GET", "k"], undefined, 0), "v");
    assert.equal(transports[0]!.commands.filter((c) => c[0] === "GET").length, 3);
    await conn.close();
    await assertNoLeaks();
  });

  it("never behind SELECT (db != 0), a session step, or a user other than default", async () => {
    const cases = [
      { db: 3 },
      { hooks: { session: () => [{ args: ["CLIENT", "TRACKING", "ON"] }] } },
      { username: "app", password: "pw" },
    ];
    for (const options of cases) {
      const { conn, transports } = fakeConnection(() => undefined, {
        pipelineHandshake: true,
        ...options,
      });
      await conn.send(["GET", "k"], undefined, 0);
      const first = names(transports[0]!, 0);
      assert.ok(!first.includes("GET k"), `${JSON.stringify(options)}: ${first}`);
      assert.equal(transports[0]!.writes, 2);
      await conn.close();
    }
    await assertNoLeaks();
  });

  it("a SELECT that fails runs nothing on database 0: the command fails unwritten", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => cmd[0] === "SELECT" ? new ReplyError("ERR DB index is out of range") : undefined,
      { pipelineHandshake: true, db: 3 },
    );
    const err = await conn.send(["SET", "k", "v"], undefined, 0).then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError);
    assert.equal(err.written, false);
    assert.ok(!transports[0]!.commands.some((c) => c[0] === "SET"));
    conn.destroy();
    await assertNoLeaks();
  });

  it("stops at the first blocking, subscribe-family or transaction command: the rest waits for the ready socket", async () => {
    const { conn, transports } = fakeConnection(
      (cmd) => cmd[0] === "BLPOP" ? ["l", "x"] : cmd[0] === "GET" ? "v" : undefined,
      { pipelineHandshake: true },
    );
    const g1 = conn.send(["GET", "a"], undefined, 0);
    const bl = conn.send(["BLPOP", "l", "0"], undefined, FLAG_BLOCKING);
    const g2 = conn.send(["GET", "b"], undefined, 0);
    const tx = conn.sendAll([
      { args: ["MULTI"], transform: undefined, flags: 0 },
      { args: ["EXEC"], transform: undefined, flags: 0 },
    ]);
    await Promise.all([g1, bl, g2, ...tx]);
    const t = transports[0]!;
    assert.deepEqual(names(t, 0), ["HELLO 3", "GET a"]);
    assert.deepEqual(names(t, 1), ["BLPOP l 0", "GET b", "MULTI", "EXEC"]);
    await conn.close();

    const s = fakeConnection(() => undefined, { pipelineHandshake: true });
    const sub = s.conn.send(["SUBSCRIBE", "ch"], undefined, FLAG_SUBSCRIBE);
    await within(sub, 30);
    assert.deepEqual(names(s.transports[0]!, 0), ["HELLO 3"]);
    s.conn.destroy();
    sub.catch(() => {});
    await assertNoLeaks();
  });

  it("a command behind a handshake answered late (the server busy) times out at its own deadline", async () => {
    // The server runs the whole write before it replies: the handshake's replies come late.
    const { conn } = fakeConnection((cmd, t) => {
      if (cmd[0] === "HELLO") return SKIP;
      setTimeout(() => {
        t.send(oneChunk(new Map([["proto", 3]]), "OK"));
      }, 250);
      return SKIP;
    }, { pipelineHandshake: true, commandTimeout: 60, reconnect: false });
    const started = Date.now();
    const err = await conn.send(["DEBUG", "SLEEP", "0.25"], undefined, 0).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(err instanceof TimeoutError, String(err));
    assert.ok(Date.now() - started < 200, `timed out after ${Date.now() - started} ms`);
    await conn.connect();
    assert.equal(conn.ready, true);
    conn.destroy();
    await assertNoLeaks();
  });

  it("a command that times out behind the handshake is rejected on time; its late reply is discarded", async () => {
    const { conn } = fakeConnection(
      (cmd) => cmd[0] === "GET" && cmd[1] === "slow" ? HANG : undefined,
      { pipelineHandshake: true, commandTimeout: 60, reconnect: false },
    );
    const started = Date.now();
    const err = await conn.send(["GET", "slow"], undefined, 0).then(() => undefined, (e) => e);
    assert.ok(err instanceof TimeoutError, String(err));
    assert.ok(Date.now() - started < 1000);
    conn.destroy();
    await assertNoLeaks();
  });
});
