// SubscriptionManager and Subscription without a server: which commands go out, shared
// channels, routing of messages, restore steps, listener isolation and the iterator bound.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Subscription, SubscriptionManager } from "../../../src/client/subscription.ts";
import { ReplyError } from "../../../src/errors.ts";

function manager(fail?: (args: string[]) => Error | undefined) {
  const sent: string[][] = [];
  const errors: unknown[] = [];
  const m = new SubscriptionManager((args) => {
    sent.push(args);
    const e = fail?.(args);
    return e ? Promise.reject(e) : Promise.resolve();
  }, (e) => errors.push(e));
  return { m, sent, errors };
}

describe("SubscriptionManager", () => {
  it("subscribes a name once, unsubscribes when its last subscription ends", async () => {
    const { m, sent } = manager();
    const a = new Subscription(m, "channel", ["x", "y"], () => {});
    const b = new Subscription(m, "channel", ["x"], () => {});
    await m.add(a);
    await m.add(b);
    assert.deepEqual(sent, [["SUBSCRIBE", "x", "y"]]);
    await a.unsubscribe();
    assert.deepEqual(sent[1], ["UNSUBSCRIBE", "y"]);
    await b.unsubscribe();
    assert.deepEqual(sent[2], ["UNSUBSCRIBE", "x"]);
    assert.equal(m.size, 0);
  });

  it("routes channel, pattern and shard messages to their subscriptions", async () => {
    const { m } = manager();
    const got: string[] = [];
    await m.add(new Subscription(m, "channel", ["c"], (msg, ch) => got.push(`c:${ch}:${msg}`)));
    await m.add(
      new Subscription(m, "pattern", ["p*"], (msg, ch, pat) => got.push(`p:${pat}:${ch}:${msg}`)),
    );
    await m.add(new Subscription(m, "shard", ["s"], (msg, ch) => got.push(`s:${ch}:${msg}`)));
    assert.equal(m.onPush(["message", "c", "1"]), true);
    assert.equal(m.onPush(["pmessage", "p*", "pq", "2"]), true);
    assert.equal(m.onPush(["smessage", "s", "3"]), true);
    assert.equal(m.onPush(["message", "other", "4"]), true);
    assert.equal(m.onPush(["invalidate", ["k"]]), false);
    assert.deepEqual(got, ["c:c:1", "p:p*:pq:2", "s:s:3"]);
  });

  it("lists the restore steps of every kind with the number of confirmations", async () => {
    const { m } = manager();
    await m.add(new Subscription(m, "channel", ["a", "b"], () => {}));
    await m.add(new Subscription(m, "pattern", ["p*"], () => {}));
    assert.deepEqual(m.session(), [
      { args: ["SUBSCRIBE", "a", "b"], pushes: 2 },
      { args: ["PSUBSCRIBE", "p*"], pushes: 1 },
    ]);
  });

  it("a refused subscribe ends the subscription and forgets its names", async () => {
    const { m } = manager((args) =>
      args[0] === "SUBSCRIBE" ? new ReplyError("NOPERM no") : undefined
    );
    const s = new Subscription(m, "channel", ["secret"], () => {});
    await assert.rejects(m.add(s), ReplyError);
    assert.equal(s.active, false);
    assert.equal(m.size, 0);
  });

  it("isolates a throwing listener and reports it", async () => {
    const { m, errors } = manager();
    const got: string[] = [];
    await m.add(
      new Subscription(m, "channel", ["c"], () => {
        throw new Error("boom");
      }),
    );
    await m.add(new Subscription(m, "channel", ["c"], (msg) => got.push(msg)));
    m.onPush(["message", "c", "1"]);
    m.onPush(["message", "c", "2"]);
    assert.deepEqual(got, ["1", "2"]);
    assert.deepEqual(errors.map((e) => (e as Error).message), ["boom", "boom"]);
  });

  it("an unread iterator keeps the newest messages up to its bound", async () => {
    const { m, errors } = manager();
    const s = new Subscription(m, "channel", ["c"], undefined, 3);
    await m.add(s);
    for (let i = 0; i < 10; i++) m.onPush(["message", "c", String(i)]);
    assert.equal(s.buffered, 3);
    assert.equal(s.dropped, 7);
    assert.equal(errors.length, 1);
    const it = s[Symbol.asyncIterator]();
    const read: string[] = [];
    for (let i = 0; i < 3; i++) read.push((await it.next()).value!.message);
    assert.deepEqual(read, ["7", "8", "9"]);
    // Drained: the next overflow is reported again.
    for (let i = 0; i < 5; i++) m.onPush(["message", "c", String(i)]);
    assert.equal(errors.length, 2);
    m.endAll();
    assert.equal((await it.next()).done, false, "buffered messages are still readable");
  });
});
