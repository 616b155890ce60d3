import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ConnectionError,
  ProtocolError,
  RedisClient,
  ReplyError,
  TimeoutError,
} from "../../mod.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import type { Socket } from "node:net";
import { startFakeServer } from "../_helpers/fake_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("faults", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it("SIGKILL mid-pipeline: in-flight commands reject with ConnectionError, queued ones complete after the restart", async () => {
    const own = await startRedis();
    const client = new RedisClient({
      url: own.url,
      reconnect: { baseDelay: 20, maxDelay: 100 },
      commandTimeout: 10_000,
    });
    await client.set("k", "v");
    // A slow command keeps the next ones in flight while the server dies.
    const slow = client.sendCommand(["DEBUG", "SLEEP", "0.5"]);
    const inflight = Array.from({ length: 100 }, () => client.incr("n"));
    const settled = Promise.allSettled([slow, ...inflight]);
    await sleep(100);
    await own.kill();
    const results = await settled;
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.ok(r.reason instanceof ConnectionError, String(r.reason));
      assert.match(r.reason.message, new RegExp(`127\\.0\\.0\\.1:${own.port}`));
    }
    // Commands issued while the server is down wait in the queue, then complete.
    const queued = Array.from({ length: 50 }, (_, i) => client.set(`q${i}`, String(i)));
    await sleep(200);
    await own.restart();
    const done = await Promise.all(queued);
    assert.ok(done.every((v) => v === "OK"));
    assert.equal(await client.get("q49"), "49");
    await client.close();
    await own.stop();
    await assertNoLeaks();
  });

  it("CLIENT KILL of our connection: the client reconnects transparently", async () => {
    const client = new RedisClient({ url: server.url, reconnect: { baseDelay: 10, maxDelay: 50 } });
    const admin = new RedisClient({ url: server.url });
    const id = await client.sendCommand(["CLIENT", "ID"]);
    let reconnects = 0;
    client.addEventListener("reconnecting", () => reconnects++);
    await admin.sendCommand(["CLIENT", "KILL", "ID", String(id)]);
    await sleep(50);
    assert.equal(await client.sendCommand(["PING"]), "PONG");
    const id2 = await client.sendCommand(["CLIENT", "ID"]);
    assert.notEqual(id2, id);
    assert.ok(reconnects >= 1);
    await client.close();
    await admin.close();
    await assertNoLeaks();
  });

  it("garbage from the server: ProtocolError, that connection reset, other clients unaffected", async () => {
    let garbage = true;
    const fake = await startFakeServer((s, chunk) => {
      // Answer the handshake like a server would, then garbage (or PONG) for each PING.
      const text = new TextDecoder().decode(chunk);
      for (
        const m of text.matchAll(
          /\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n(?:\$\d+\r\n([A-Za-z_-]+)\r\n)?/g,
        )
      ) {
        const [name, sub] = [m[1]!.toUpperCase(), (m[2] ?? "").toUpperCase()];
        if (name === "HELLO") s.write("%1\r\n+server\r\n+fake\r\n");
        else if (name === "CLIENT" && sub === "MAINT_NOTIFICATIONS") {
          s.write("-ERR unknown subcommand 'MAINT_NOTIFICATIONS'\r\n");
        } else if (name === "PING") s.write(garbage ? "?this is not RESP\r\n" : "+PONG\r\n");
        else s.write("+OK\r\n");
      }
    });
    const bad = new RedisClient({ url: fake.url, reconnect: { baseDelay: 10, maxDelay: 50 } });
    const good = new RedisClient({ url: server.url });
    await bad.connect();
    const errors: unknown[] = [];
    bad.addEventListener("error", (e) => errors.push((e as CustomEvent).detail));
    const [r1, r2] = await Promise.allSettled([
      bad.sendCommand(["PING"]),
      good.sendCommand(["PING"]),
    ]);
    assert.equal(r1.status, "rejected");
    assert.ok((r1 as PromiseRejectedResult).reason instanceof ProtocolError);
    assert.equal(typeof (r1 as PromiseRejectedResult).reason.offset, "number");
    assert.deepEqual(r2, { status: "fulfilled", value: "PONG" });
    assert.ok(errors.some((e) => e instanceof ProtocolError));
    // The bad connection was reset: a new socket was accepted, and it works once sane.
    garbage = false;
    await sleep(50);
    assert.equal(await bad.sendCommand(["PING"]), "PONG");
    assert.ok(fake.accepted >= 2, `accepted ${fake.accepted}`);
    await bad.close();
    await good.close();
    await fake.close();
    await assertNoLeaks();
  });

  it("a socket that stops answering is declared dead and replaced", async () => {
    // The first socket that speaks answers the handshake, then nothing; later ones answer
    // everything. Sockets are numbered by their first bytes, not by accept order: on Bun the
    // transport's dial probe (a node:net connect that sends nothing) is accepted too.
    const speaking = new Map<Socket, number>();
    const fake = await startFakeServer((s, chunk) => {
      if (!speaking.has(s)) speaking.set(s, speaking.size);
      const index = speaking.get(s)!;
      const text = new TextDecoder().decode(chunk);
      for (const m of text.matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)) {
        const name = m[1]!.toUpperCase();
        if (name === "HELLO") s.write("%1\r\n+server\r\n+fake\r\n");
        else if (name === "PING") {
          if (index > 0) s.write("+PONG\r\n");
        } else s.write("+OK\r\n");
      }
    });
    const client = new RedisClient({
      url: fake.url,
      commandTimeout: 200,
      reconnect: { baseDelay: 10, maxDelay: 20 },
    });
    await client.connect();
    const t0 = Date.now();
    await assert.rejects(client.ping(), TimeoutError);
    // Keep asking until the replacement answers.
    let answered = false;
    while (!answered && Date.now() - t0 < 4000) {
      answered = await client.ping().then(() => true, () => false);
    }
    assert.ok(answered, "the dead socket was replaced");
    assert.equal(speaking.size, 2, "one connection, then one replacement");
    const took = Date.now() - t0;
    // Silent for twice max(commandTimeout, 1 s): about 2 s here.
    assert.ok(took >= 1500 && took < 3000, `replaced after ${took} ms`);
    await client.close();
    await fake.close();
    await assertNoLeaks();
  });

  it("DEBUG SLEEP beyond commandTimeout: TimeoutError, then the next command gets its own reply", async () => {
    const client = new RedisClient({ url: server.url, commandTimeout: 200 });
    await client.set("own", "reply");
    const t0 = Date.now();
    await assert.rejects(client.sendCommand(["DEBUG", "SLEEP", "0.6"]), (e: unknown) => {
      assert.ok(e instanceof TimeoutError);
      assert.match((e as Error).message, /DEBUG.*200 ms/);
      return true;
    });
    assert.ok(Date.now() - t0 < 550);
    // Sent after the timeout, answered after the sleep: must be its own reply, not the
    // stale "OK" of DEBUG SLEEP.
    assert.equal(await client.sendCommand(["GET", "own"], { timeout: 2000 }), "reply");
    assert.equal(await client.sendCommand(["ECHO", "after"]), "after");
    await client.close();
    await assertNoLeaks();
  });

  it("a wrong password gives a clear error without the password", async () => {
    const own = await startRedis({ args: ["--requirepass", "right-secret"] });
    for (const protocol of [3, 2] as const) {
      const client = new RedisClient({ url: own.url, password: "wrong-secret-xyz", protocol });
      await assert.rejects(client.get("k"), (e: unknown) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match((e as Error).message, /authenticate/);
        assert.doesNotMatch((e as Error).message, /wrong-secret-xyz/);
        assert.doesNotMatch(String((e as Error).cause), /wrong-secret-xyz/);
        return true;
      });
      await client.close();
      const ok = new RedisClient({ url: `redis://:right-secret@127.0.0.1:${own.port}`, protocol });
      assert.equal(await ok.sendCommand(["PING"]), "PONG");
      await ok.close();
    }
    await own.stop();
    await assertNoLeaks();
  });

  it("a closed port gives a clear error within connectTimeout", async () => {
    const port = await freePort();
    const client = new RedisClient({ port, connectTimeout: 1000 });
    const t0 = Date.now();
    await assert.rejects(client.get("k"), (e: unknown) => {
      assert.ok(e instanceof ConnectionError, String(e));
      assert.match((e as Error).message, new RegExp(`Cannot connect to "127\\.0\\.0\\.1:${port}"`));
      assert.match((e as Error).message, /refused/);
      return true;
    });
    assert.ok(Date.now() - t0 < 1000);
    await assert.rejects(client.connect(), ConnectionError);
    await client.close();
    await assertNoLeaks();
  });

  it("a server that accepts but never answers times out the connect", async () => {
    const fake = await startFakeServer(() => {});
    const client = new RedisClient({ url: fake.url, connectTimeout: 300 });
    await assert.rejects(client.get("k"), (e: unknown) => {
      assert.ok(e instanceof TimeoutError, String(e));
      assert.match((e as Error).message, /timed out after 300 ms/);
      return true;
    });
    await client.close();
    await fake.close();
    await assertNoLeaks();
  });

  it("pub/sub is restored after a reconnect and delivers in order", async () => {
    const client = new RedisClient({ url: server.url, reconnect: { baseDelay: 10, maxDelay: 50 } });
    const pub = new RedisClient({ url: server.url });
    const got: string[] = [];
    await client.subscribe("restore", (m) => got.push(m));
    for (let i = 0; i < 10; i++) await pub.sendCommand(["PUBLISH", "restore", String(i)]);
    const id = await client.sendCommand(["CLIENT", "ID"]);
    await pub.sendCommand(["CLIENT", "KILL", "ID", String(id)]);
    // Wait until the subscription is back on the server.
    for (let i = 0; i < 200; i++) {
      const n = await pub.sendCommand(["PUBSUB", "NUMSUB", "restore"]) as unknown[];
      if (n[1] === 1) break;
      await sleep(10);
    }
    for (let i = 10; i < 20; i++) await pub.sendCommand(["PUBLISH", "restore", String(i)]);
    for (let i = 0; i < 100 && got.length < 20; i++) await sleep(10);
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => String(i)));
    await client.close();
    await pub.close();
    await assertNoLeaks();
  });

  it("a full offline queue rejects the new command, never an old one", async () => {
    const port = await freePort();
    const own = await startRedis({ port });
    const client = new RedisClient({
      url: own.url,
      maxQueueLength: 10,
      reconnect: { baseDelay: 10, maxDelay: 20 },
      commandTimeout: 5000,
    });
    await client.sendCommand(["PING"]);
    await own.kill();
    await sleep(50);
    const queued = Array.from({ length: 10 }, (_, i) => client.set(`f${i}`, "x"));
    await assert.rejects(client.set("overflow", "x"), (e: unknown) => {
      assert.ok(e instanceof ConnectionError);
      assert.match((e as Error).message, /maxQueueLength/);
      return true;
    });
    await own.restart();
    assert.deepEqual(await Promise.all(queued), Array(10).fill("OK"));
    await client.close();
    await own.stop();
    await assertNoLeaks();
  });

  it("server error replies inside EXEC are values", async () => {
    const client = new RedisClient({ url: server.url });
    await client.set("exs", "str");
    const res = await client.multi().incr("exs").get("exs").exec();
    assert.ok(res![0] instanceof ReplyError);
    assert.equal(res![1], "str");
    await client.close();
  });
});
