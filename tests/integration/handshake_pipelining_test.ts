// The first commands of a new socket leave in the handshake's write, against real servers: one
// round trip for a fresh client's first command; each command's own reply when the handshake
// fails (the server ran it, or said NOAUTH: not run); never behind SELECT or CLIENT TRACKING;
// RESP2; queued commands across a server restart; a server that does not know HELLO.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, RedisClient } from "../../mod.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { type CountingProxy, startCountingProxy } from "../_helpers/counting_proxy.ts";
import { startFakeServer } from "../_helpers/fake_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
}

/** The first socket from `n` on that sent anything (Bun's transport probes the port first). */
function firstUsed(proxy: CountingProxy, n: number) {
  const s = proxy.sockets.slice(n).find((x) => x.chunks.length > 0);
  assert.ok(s, "a socket sent commands through the proxy");
  return s;
}

const hasGet = (chunk: string | undefined) => /\r\nGET\r\n/i.test(chunk ?? "");

describe("commands behind the handshake (real server)", () => {
  let server: RedisServer;
  let proxy: CountingProxy;
  let admin: RedisClient;
  before(async () => {
    server = await startRedis();
    proxy = await startCountingProxy(server.port);
    // No command timeout: no deadline timer of its own in the leak counts.
    admin = new RedisClient({ url: server.url, commandTimeout: 0 });
    await admin.connect();
  });
  after(async () => {
    await admin.close();
    await proxy.close();
    await server.stop();
  });
  beforeEach(async () => {
    markLeakBaseline();
    await admin.sendCommand(["FLUSHALL"]);
  });

  for (const protocol of [3, 2] as const) {
    it(`RESP${protocol}: a fresh client's first command goes in the same write as the handshake`, async () => {
      await admin.set("k", "v");
      const n = proxy.sockets.length;
      const client = new RedisClient({ url: proxy.url, protocol });
      assert.equal(await client.get("k"), "v");
      const s = firstUsed(proxy, n);
      assert.match(s.chunks[0]!, protocol === 3 ? /HELLO/ : /SETINFO/);
      assert.ok(hasGet(s.chunks[0]), `GET in the first write: ${JSON.stringify(s.chunks)}`);
      assert.equal(s.beforeFirstReply, 1, "one write before the first reply: one round trip");
      // Later commands: the ordinary path.
      assert.equal(await client.get("k"), "v");
      await client.close();
      await assertNoLeaks();
    });
  }

  it("db: 3 takes two round trips (SELECT first) and nothing lands on database 0", async () => {
    const n = proxy.sockets.length;
    const client = new RedisClient({ url: proxy.url, db: 3 });
    await client.set("only-in-3", "x");
    const s = firstUsed(proxy, n);
    assert.match(s.chunks[0]!, /SELECT/);
    assert.ok(!/only-in-3/.test(s.chunks[0]!), "SET not in the handshake's write");
    await client.close();
    assert.equal(await admin.exists("only-in-3"), 0);
    const db3 = new RedisClient({ url: server.url, db: 3 });
    assert.equal(await db3.get("only-in-3"), "x");
    await db3.close();
    await assertNoLeaks();
  });

  it("a SELECT that fails (db 99 of 16) runs nothing on database 0", async () => {
    const client = new RedisClient({ url: server.url, db: 99, reconnect: false });
    const err = await client.set("nowhere", "x").then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.written, false);
    assert.match(err.message, /Cannot select database 99/);
    await client.close();
    assert.equal(await admin.exists("nowhere"), 0);
    await assertNoLeaks();
  });

  it("client-side cache on: the tracking step is answered first (two round trips), no stale read", async () => {
    const n = proxy.sockets.length;
    const client = new RedisClient({ url: proxy.url, clientSideCache: clientSideCache() });
    await admin.set("c", "1");
    assert.equal(await client.get("c"), "1");
    const s = firstUsed(proxy, n);
    assert.match(s.chunks[0]!, /TRACKING/);
    assert.ok(!hasGet(s.chunks[0]), "GET not in the handshake's write");
    assert.equal(await client.get("c"), "1"); // from memory now
    await admin.set("c", "2");
    let v: string | null = "1";
    for (let i = 0; i < 100 && v === "1"; i++) {
      v = await client.get("c");
      if (v === "1") await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(v, "2", "the invalidation arrived and the cache does not answer the old value");
    await client.close();
    await assertNoLeaks();
  });

  it("commands queued while the server restarts run once each on the new socket", async () => {
    const client = new RedisClient({ url: server.url, reconnect: { baseDelay: 20, maxDelay: 50 } });
    await client.set("r", "0");
    await server.kill();
    const incrs = [client.incr("r"), client.incr("r"), client.incr("r")];
    await new Promise((r) => setTimeout(r, 100));
    await server.restart();
    // The restarted server has no data (no persistence): each INCR ran once.
    assert.deepEqual(await Promise.all(incrs), [1, 2, 3]);
    assert.equal(await client.get("r"), "3");
    await client.close();
    // The admin client reconnects by itself.
    await assertNoLeaks();
  });

  it("the reconnect after a fault writes no command behind its handshake; a ready socket ends that", async () => {
    const client = new RedisClient({ url: proxy.url, reconnect: { baseDelay: 20, maxDelay: 50 } });
    await client.set("f", "1");
    const lost = new Promise((r) => client.addEventListener("reconnecting", r, { once: true }));
    await server.kill();
    await lost; // the client saw the fault: the GET below is queued, not written on the old socket
    const n = proxy.sockets.length;
    const got = client.get("f"); // queued across the fault
    await new Promise((r) => setTimeout(r, 150));
    await server.restart();
    assert.equal(await got, null, "the restarted server has no data: the GET ran there");
    const used = proxy.sockets.slice(n).filter((x) => x.chunks.length > 0);
    assert.ok(used.length >= 1, "the reconnect went through the proxy");
    for (const s of used) {
      assert.ok(!hasGet(s.chunks[0]), `a GET behind a reconnect's handshake: ${s.chunks[0]}`);
    }
    const last = used.at(-1)!;
    assert.ok(last.beforeFirstReply >= 1 && hasGet(last.chunks.join("")), "the GET went after");
    await client.close();
    await assertNoLeaks();
  });
});

describe("commands behind a failed AUTH (real server)", () => {
  let open: RedisServer;
  let locked: RedisServer;
  before(async () => {
    open = await startRedis();
    locked = await startRedis({ args: ["--requirepass", "right-pw"] });
  });
  after(async () => {
    await open.stop();
    await locked.stop();
  });
  beforeEach(markLeakBaseline);

  it("RESP2, AUTH refused by a server whose default user needs no password: the INCR ran, its reply is its own", async () => {
    const client = new RedisClient({
      url: `redis://:wrong-pw@127.0.0.1:${open.port}`,
      protocol: 2,
      reconnect: false,
    });
    const errors: Error[] = [];
    client.addEventListener("error", (e) => errors.push((e as CustomEvent).detail as Error));
    // Reported as run (it did), not as failed-and-unwritten: a caller would retry it.
    assert.equal(await client.incr("ran"), 1);
    // The attempt fails once the replies behind the handshake are in.
    await until(() => errors.length > 0);
    await client.close();
    const check = new RedisClient({ url: open.url });
    assert.equal(await check.get("ran"), "1");
    await check.close();
    assert.ok(errors.length > 0, "the handshake's error is reported");
    assert.match(errors[0]!.message, /Cannot authenticate/);
    assert.ok(!errors[0]!.message.includes("wrong-pw"));
    await assertNoLeaks();
  });

  for (const protocol of [3, 2] as const) {
    it(`RESP${protocol}, a wrong password with requirepass: the INCR gets the auth error, unwritten, not run`, async () => {
      const client = new RedisClient({
        url: `redis://:wrong-pw@127.0.0.1:${locked.port}`,
        protocol,
        reconnect: false,
      });
      const err = await client.incr("never").then(() => undefined, (e) => e);
      assert.ok(err instanceof ConnectionError, String(err));
      assert.equal(err.written, false);
      assert.match(err.message, /Cannot authenticate .*WRONGPASS|invalid username-password/);
      assert.ok(!err.message.includes("wrong-pw"));
      await client.close();
      const check = new RedisClient({ url: `redis://:right-pw@127.0.0.1:${locked.port}` });
      assert.equal(await check.get("never"), null);
      await check.close();
      await assertNoLeaks();
    });
  }
});

describe("commands behind HELLO on a server that does not know it (fake server)", () => {
  beforeEach(markLeakBaseline);

  it("the GET behind it gets its reply; the connection fails with the RESP3 hint", async () => {
    // Answers each command of a chunk in order: HELLO unknown, CLIENT +OK, GET "v".
    const fake = await startFakeServer((socket, chunk) => {
      const parts = new TextDecoder().decode(chunk).split("\r\n");
      let out = "";
      for (let i = 0; i < parts.length; i++) {
        const m = /^\*(\d+)$/.exec(parts[i]!);
        if (m === null) continue;
        const name = (parts[i + 2] ?? "").toUpperCase();
        out += name === "HELLO"
          ? "-ERR unknown command 'HELLO', with args beginning with: '3' \r\n"
          : name === "GET"
          ? "$1\r\nv\r\n"
          : "+OK\r\n";
        i += 2 * Number(m[1]);
      }
      socket.write(out);
    });
    const client = new RedisClient({ url: fake.url, reconnect: false });
    const errors: Error[] = [];
    client.addEventListener("error", (e) => errors.push((e as CustomEvent).detail as Error));
    assert.equal(await client.get("k"), "v");
    await until(() => errors.length > 0);
    assert.match(errors[0]?.message ?? "", /set protocol: 2/);
    await client.close();
    await fake.close();
    await assertNoLeaks();
  });
});
