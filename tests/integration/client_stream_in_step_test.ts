// client-level bugs reproduced against a real redis-server. Each test states the
// correct behaviour.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { markLeakBaseline, sleep } from "../_helpers/leaks.ts";

/** Settles `p` or gives up after `ms`: "timeout" when it did not settle in time. */
async function within<T>(
  p: Promise<T>,
  ms: number,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown } | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
  try {
    return await Promise.race([
      p.then((value) => ({ ok: true as const, value }), (error) => ({ ok: false as const, error })),
      t,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const clients: RedisClient[] = [];
function track(c: RedisClient): RedisClient {
  clients.push(c);
  return c;
}

describe("the reply stream stays in step: transactions, subscriptions, WATCH sessions", () => {
  beforeEach(markLeakBaseline);
  afterEach(async () => {
    // Bounded: a close() that hangs must not hang the run.
    for (const c of clients.splice(0)) await within(c.close(), 2000);
  });
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
    const admin = new RedisClient({ url: server.url });
    // A user with every command and key but no pub/sub channel (Redis 7 default for new users).
    await admin.sendCommand(["ACL", "SETUSER", "nochan", "on", ">pw", "~*", "+@all"]);
    await admin.close();
  });
  after(async () => {
    await server.stop();
  });

  it("a transaction cut by maxQueueLength does not leave the shared connection in MULTI", async () => {
    const client = track(new RedisClient({ url: server.url, maxQueueLength: 3 }));
    // Offline (lazy connect): MULTI, SET, SET fill the queue, EXEC is refused.
    await assert.rejects(client.multi().set("rq:a", "1").set("rq:b", "2").exec());
    // The next command on the shared connection must run normally, not be "QUEUED".
    const v = await within(client.get("rq:a"), 2000);
    assert.deepEqual(v, { ok: true, value: null });
  });

  it("a transaction cut by maxQueueBytes is not executed partially", async () => {
    const client = track(new RedisClient({ url: server.url, maxQueueBytes: 1000 }));
    const tx = client.multi().set("rb:a", "1").set("rb:b", "x".repeat(400)).get("rb:a");
    const r = await within(tx.exec(), 2000);
    // Three commands were queued: either three results, or a rejection with nothing applied.
    if (r !== "timeout" && r.ok) {
      assert.equal((r.value as unknown[] | null)?.length, 3, "one result per queued command");
    } else {
      assert.notEqual(r, "timeout");
      assert.equal(await client.get("rb:a"), null, "nothing of a failed transaction applied");
    }
  });

  it("a refused SUBSCRIBE (NOPERM) does not take the reply of the next command (RESP3)", async () => {
    const client = track(
      new RedisClient({
        url: `redis://nochan:pw@127.0.0.1:${server.port}`,
        protocol: 3,
        reconnect: false,
      }),
    );
    await client.connect();
    const sub = client.subscribe("step:forbidden");
    sub.catch(() => {});
    const set = client.set("rs:k", "v"); // same tick, same batch, right after SUBSCRIBE
    const r = await within(set, 2000);
    assert.deepEqual(r, { ok: true, value: "OK" }, "SET gets its own reply");
    const s = await within(sub, 1000);
    assert.ok(s !== "timeout" && !s.ok, "subscribe() rejects instead of hanging");
  });

  it("a blocking command in a WATCH session waits its block time, not commandTimeout", async () => {
    const client = track(new RedisClient({ url: server.url, commandTimeout: 300 }));
    const tx = await client.watch("rw:k");
    // BLPOP for 0.6 s on an empty list: null after 600 ms (block time + commandTimeout allowed).
    const r = await within(tx.blpop("rw:empty", 0.6), 3000);
    assert.deepEqual(r, { ok: true, value: null });
    await tx.release();
  });

  it("a WATCH session with an unanswered blocking command is not returned to the pool", async () => {
    const client = track(
      new RedisClient({
        url: server.url,
        commandTimeout: 200,
        maxExclusiveConnections: 1,
      }),
    );
    const tx = await client.watch("rp:k");
    // Times out after commandTimeout (the WATCH session ignores the block time) while the
    // server keeps blocking for ~3 s.
    await tx.blpop("rp:never", 3).catch(() => {});
    await tx.release(); // UNWATCH queues behind the BLPOP
    // The next blocking command must not queue behind the stuck BLPOP.
    const pop = client.blpop("rp:q", 0);
    await sleep(50);
    await client.rpush("rp:q", "x");
    const r = await within(pop, 1500);
    assert.deepEqual(r, { ok: true, value: { key: "rp:q", element: "x" } });
  });
  it("a pub/sub listener that throws does not reset the RESP2 subscriber connection", async () => {
    const client = track(new RedisClient({ url: server.url, protocol: 2 }));
    const errors: unknown[] = [];
    client.addEventListener("error", (e) => errors.push((e as CustomEvent).detail));
    const got: string[] = [];
    await client.subscribe("step:ch", (message) => {
      got.push(message);
      if (message === "boom") throw new Error("listener failed");
    });
    await client.publish("step:ch", "boom");
    for (let i = 0; i < 100 && got.length < 1; i++) await sleep(5);
    await sleep(20);
    // The exception is reported as itself, never taken for a protocol fault.
    assert.deepEqual(errors.map((e) => (e as Error).message), ["listener failed"]);
    await client.publish("step:ch", "after");
    for (let i = 0; i < 100 && got.length < 2; i++) await sleep(5);
    assert.deepEqual(got, ["boom", "after"]);
  });
  it("a second subscribe() to a channel resolves only once the server confirmed it (RESP2)", async () => {
    const client = track(new RedisClient({ url: server.url, protocol: 2 }));
    await client.connect();
    const got: string[] = [];
    const first = client.subscribe("step:twice", () => {});
    const second = await client.subscribe("step:twice", (m) => got.push(m));
    // Resolved means subscribed: a message published now reaches the second listener.
    const receivers = await client.publish("step:twice", "m");
    for (let i = 0; i < 50 && got.length === 0; i++) await sleep(5);
    await first;
    await second.unsubscribe();
    assert.equal(receivers, 1, "the server had the subscription when subscribe() resolved");
    assert.deepEqual(got, ["m"]);
  });
  it("a raw SUBSCRIBE through sendCommand does not take the next command's reply (RESP3)", async () => {
    const client = track(new RedisClient({ url: server.url, commandTimeout: 500 }));
    await client.set("rr:k", "v");
    // Either refused (use subscribe()) or confirmed; never answered with another reply.
    const sub = client.sendCommand(["SUBSCRIBE", "step:raw"]).then(
      (v) => ({ ok: true, v }),
      (e: Error) => ({ ok: false, v: e.name }),
    );
    const get = within(client.get("rr:k"), 2000);
    const s = await within(sub, 2000);
    assert.notDeepEqual(s, { ok: true, value: { ok: true, v: "v" } }, "SUBSCRIBE got GET's reply");
    assert.deepEqual(await get, { ok: true, value: "v" });
  });
  it("after a refused SUBSCRIBE (NOPERM) the client keeps serving commands (RESP3)", async () => {
    const client = track(
      new RedisClient({ url: `redis://nochan:pw@127.0.0.1:${server.port}`, commandTimeout: 500 }),
    );
    let reconnects = 0;
    client.addEventListener("reconnecting", () => reconnects++);
    await client.connect();
    const sub = within(client.subscribe("step:forbidden2"), 1000);
    await sleep(300);
    const r = await within(client.set("rs2:k", "v"), 1500);
    await sub;
    assert.deepEqual(r, { ok: true, value: "OK" }, "SET succeeds after the refused SUBSCRIBE");
    assert.ok(reconnects <= 1, `the connection was reset ${reconnects} times`);
  });
});
