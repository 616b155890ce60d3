// ClientSideCache and TrackingSession without a server: what is answered from memory, when a
// reply is kept, and how the tracking session's steps, pushes and losses drive it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClientSideCache, type CommandExec } from "../../../src/cache/client_side_cache.ts";
import type { TrackingNode } from "../../../src/cache/tracking_session.ts";
import {
  FLAG_BINARY,
  FLAG_BLOCKING,
  FLAG_ERRORS_AS_VALUES,
  FLAG_READONLY,
} from "../../../src/command_flags.ts";
import { ReplyError } from "../../../src/errors.ts";
import type { RedisArgument, RespValue } from "../../../src/resp/types.ts";
import { ManualClock } from "../connection/_manual_clock.ts";

const RO = FLAG_READONLY;

/** A fake server: records commands, answers from a map, or holds replies until released. */
function fakeExec(data: Map<string, RespValue>) {
  const sent: RedisArgument[][] = [];
  const held: (() => void)[] = [];
  let hold = false;
  const exec: CommandExec = (args, transform) => {
    sent.push(args);
    const reply = data.get(String(args[1])) ?? null;
    const done = () => (transform ? transform(reply) : reply);
    if (!hold) return Promise.resolve().then(done);
    return new Promise((resolve) => held.push(() => resolve(done())));
  };
  return {
    exec,
    sent,
    hold(on: boolean) {
      hold = on;
    },
    releaseAll() {
      for (const r of held.splice(0)) r();
    },
  };
}

function activeCache(options = {}) {
  const cache = new ClientSideCache(options);
  const t = cache.tracking(3);
  const steps = t.session("shared");
  return { cache, t, steps };
}

describe("ClientSideCache", () => {
  it("a number key is filed as the encoder sends it (Infinity as +inf), so its invalidation matches", async () => {
    const { cache, t } = activeCache();
    const f = fakeExec(new Map([["Infinity", "v"]]));
    await cache.run(["GET", Infinity], undefined, RO, undefined, f.exec);
    await cache.run(["GET", Infinity], undefined, RO, undefined, f.exec);
    assert.equal(cache.stats().hits, 1);
    // The server names the key it stores: "+inf".
    assert.equal(t.onPush(["invalidate", ["+inf"]], "shared"), true);
    await cache.run(["GET", Infinity], undefined, RO, undefined, f.exec);
    assert.equal(
      f.sent.length,
      2,
      "the invalidation of +inf dropped the entry of Infinity",
    );
  });

  it("a script's keys are written keys: EVAL, EVALSHA and FCALL drop them, the _RO forms do not", async () => {
    const { cache } = activeCache();
    const f = fakeExec(new Map([["k", "v"]]));
    const read = () => cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    for (
      const script of [
        ["EVAL", "redis.call('SET', KEYS[1], 'w')", 1, "k"],
        ["EVALSHA", "0123456789012345678901234567890123456789", 1, "k"],
        ["FCALL", "setter", 1, "k"],
      ]
    ) {
      await read();
      const before = f.sent.length;
      await read();
      assert.equal(f.sent.length, before, "cached");
      await cache.run(script, undefined, 0, undefined, f.exec);
      await read();
      assert.equal(
        f.sent.length,
        before + 2,
        `${script[0]} dropped the key it was given`,
      );
    }
    await read();
    const before = f.sent.length;
    await cache.run(
      ["EVAL_RO", "return 1", 1, "k"],
      undefined,
      RO,
      undefined,
      f.exec,
    );
    await read();
    assert.equal(f.sent.length, before + 1, "EVAL_RO kept the entry");
  });

  it("an argument of the wrong type reaches the encoder's TypeError, not a crash in the cache", () => {
    const { cache } = activeCache();
    const exec: CommandExec = (args) => {
      throw new TypeError(
        `Cannot encode the command: argument 2 is ${typeof args[2]}`,
      );
    };
    for (const bad of [{}, null, true]) {
      assert.throws(
        () =>
          cache.run(
            ["HGET", "h", bad as never],
            undefined,
            RO,
            undefined,
            exec,
          ),
        /Cannot encode the command/,
      );
    }
  });

  it("answers a repeated read from memory once tracking is on", async () => {
    const { cache, steps } = activeCache();
    assert.deepEqual(steps.map((s) => s.args), [["CLIENT", "TRACKING", "ON"]]);
    const f = fakeExec(new Map([["k", "v"]]));
    assert.equal(
      await cache.run(["GET", "k"], undefined, RO, undefined, f.exec),
      "v",
    );
    assert.equal(
      await cache.run(["GET", "k"], undefined, RO, undefined, f.exec),
      "v",
    );
    assert.equal(f.sent.length, 1);
    assert.equal(cache.stats().hits, 1);
    assert.equal(cache.stats().misses, 1);
  });

  it("when owners move (a cluster), replies of absent keys are kept at most clusterMissTtl", async () => {
    let now = 0;
    const clock = { now: () => now };
    const make = (clusterMissTtl: number, ownersMove: boolean) => {
      const cache = new ClientSideCache({ clusterMissTtl }, { clock, ownersMove });
      cache.tracking(3).session("shared");
      return cache;
    };
    const f = fakeExec(new Map<string, RespValue>([["k", "v"], ["h", [null, "x"]]]));
    const read = (c: ClientSideCache, ...args: RedisArgument[]) =>
      c.run(args, undefined, RO, undefined, f.exec);
    const cache = make(100, true);
    for (const args of [["GET", "absent"], ["HMGET", "none", "a", "b"], ["STRLEN", "none"]]) {
      await read(cache, ...args);
      const sent = f.sent.length;
      now += 99;
      await read(cache, ...args);
      assert.equal(f.sent.length, sent, `${args[0]} from memory within the bound`);
      now += 1;
      await read(cache, ...args);
      assert.equal(f.sent.length, sent + 1, `${args[0]} read again at the bound`);
    }
    // Replies of existing keys are not bounded.
    assert.equal(await read(cache, "GET", "k"), "v");
    assert.deepEqual(await read(cache, "HMGET", "h", "a", "b"), [null, "x"]);
    const sent = f.sent.length;
    now += 1_000_000;
    assert.equal(await read(cache, "GET", "k"), "v");
    assert.deepEqual(await read(cache, "HMGET", "h", "a", "b"), [null, "x"]);
    assert.equal(f.sent.length, sent);
    // 0: not kept at all; a client whose owners do not move keeps them.
    const none = make(0, true);
    await read(none, "GET", "absent");
    await read(none, "GET", "absent");
    assert.equal(none.stats().hits, 0);
    const standalone = make(100, false);
    await read(standalone, "GET", "absent");
    now += 1_000_000;
    await read(standalone, "GET", "absent");
    assert.equal(standalone.stats().hits, 1);
  });

  it("the first socket's tracking step keeps what is cached; every later socket flushes", async () => {
    const cache = new ClientSideCache({});
    const t = cache.tracking(3); // idle: not connected yet
    const f = fakeExec(new Map([["k", "v"]]));
    // The read makes the executor connect: it is sent after the socket's CLIENT TRACKING ON.
    const connecting: CommandExec = (args, transform, flags, blockMs) => {
      t.session("shared");
      return f.exec(args, transform, flags, blockMs);
    };
    await cache.run(["GET", "k"], undefined, RO, undefined, connecting);
    assert.equal(cache.stats().entries, 1);
    // A second executor's first socket (a cluster node joining) drops nothing.
    cache.tracking(3).session("shared");
    assert.equal(cache.stats().entries, 1);
    // A reconnect (invalidations may have been missed) flushes.
    t.session("shared");
    assert.equal(cache.stats().entries, 0);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(cache.stats().entries, 1);
  });

  it("sends everything to the server while a session is off", async () => {
    const { cache, t } = activeCache();
    const other = cache.tracking(3);
    other.session("shared");
    t.onLost("shared");
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(f.sent.length, 2);
    assert.equal(cache.stats().entries, 0);
    // A session that goes away for good no longer holds the cache back.
    t.close();
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(f.sent.length, 3);
  });

  it("keeps the string and the binary view apart and keys by every argument", async () => {
    const { cache } = activeCache();
    const f = fakeExec(new Map([["h", "x"]]));
    await cache.run(["HGET", "h", "a"], undefined, RO, undefined, f.exec);
    await cache.run(["HGET", "h", "b"], undefined, RO, undefined, f.exec);
    await cache.run(
      ["HGET", "h", "a"],
      undefined,
      RO | FLAG_BINARY,
      undefined,
      f.exec,
    );
    await cache.run(["HGET", "h", "a\u0000"], undefined, RO, undefined, f.exec);
    await cache.run(
      ["HGET", "h", new TextEncoder().encode("a")],
      undefined,
      RO,
      undefined,
      f.exec,
    );
    assert.equal(f.sent.length, 5);
    assert.equal(cache.stats().entries, 5);
    await cache.run(
      ["HGET", "h", "a"],
      undefined,
      RO | FLAG_BINARY,
      undefined,
      f.exec,
    );
    assert.equal(f.sent.length, 5);
  });

  it("applies the transform to a private copy on every hit", async () => {
    const { cache } = activeCache();
    const f = fakeExec(new Map([["s", ["a", "b"]]]));
    const tr = (v: RespValue) => v as string[];
    const first = await cache.run(
      ["SMEMBERS", "s"],
      tr,
      RO,
      undefined,
      f.exec,
    ) as string[];
    first.push("mutated");
    const second = await cache.run(
      ["SMEMBERS", "s"],
      tr,
      RO,
      undefined,
      f.exec,
    ) as string[];
    second.push("again");
    const third = await cache.run(["SMEMBERS", "s"], tr, RO, undefined, f.exec);
    assert.deepEqual(third, ["a", "b"]);
    assert.equal(f.sent.length, 1);
  });

  it("does not keep a reply whose key was invalidated while it was on its way", async () => {
    const { cache, t } = activeCache();
    const f = fakeExec(new Map([["k", "old"]]));
    f.hold(true);
    const p = cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(t.onPush(["invalidate", ["k"]], "shared"), true);
    f.releaseAll();
    assert.equal(await p, "old", "the caller still gets its reply");
    f.hold(false);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(f.sent.length, 2, "the next read went to the server");
  });

  it("a null invalidation drops everything; named ones only their keys", async () => {
    const { cache, t } = activeCache();
    const f = fakeExec(new Map([["a", "1"], ["b", "2"]]));
    await cache.run(["GET", "a"], undefined, RO, undefined, f.exec);
    await cache.run(["GET", "b"], undefined, RO, undefined, f.exec);
    t.onPush(["invalidate", [new TextEncoder().encode("a")]], "shared");
    assert.equal(cache.stats().entries, 1);
    t.onPush(["invalidate", null], "shared");
    assert.equal(cache.stats().entries, 0);
    assert.equal(t.onPush(["message", "x", "y"], "shared"), false, "not taken");
  });

  it("a write drops its keys before it is sent; a blocking one again when done", async () => {
    const { cache } = activeCache();
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    await cache.run(["SET", "k", "w"], undefined, 0, undefined, f.exec);
    assert.equal(cache.stats().entries, 0);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    f.hold(true);
    const pop = cache.run(
      ["BLMOVE", "k", "d", "LEFT", "LEFT", 0],
      undefined,
      FLAG_BLOCKING,
      0,
      f.exec,
    );
    f.hold(false);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(cache.stats().entries, 1, "read again while the pop blocks");
    f.releaseAll();
    await pop;
    await Promise.resolve();
    assert.equal(cache.stats().entries, 0, "dropped once the pop returned");
  });

  it("a transaction's writes drop their keys", async () => {
    const { cache } = activeCache();
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    const out = cache.sendAll(
      [{ args: ["MULTI"], transform: undefined, flags: 0 }, {
        args: ["INCR", "k"],
        transform: undefined,
        flags: 0,
      }, { args: ["EXEC"], transform: undefined, flags: 0 }],
      (cmds) => cmds.map(() => Promise.resolve("OK")),
    );
    assert.equal(out.length, 3);
    assert.equal(cache.stats().entries, 0);
  });

  it("pipelines get errors as values and they are not kept", async () => {
    const { cache } = activeCache();
    const err = new ReplyError(
      "WRONGTYPE Operation against a key holding the wrong kind of value",
    );
    const exec: CommandExec = () => Promise.resolve(err);
    const v = await cache.run(
      ["GET", "k"],
      undefined,
      RO | FLAG_ERRORS_AS_VALUES,
      undefined,
      exec,
    );
    assert.equal(v, err);
    assert.equal(cache.stats().entries, 0);
    const f = fakeExec(new Map([["k", "1"]]));
    const boom = () => {
      throw new TypeError("bad reply");
    };
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    const hit = await cache.run(
      ["GET", "k"],
      boom,
      RO | FLAG_ERRORS_AS_VALUES,
      undefined,
      f.exec,
    );
    assert.ok(hit instanceof TypeError);
    await assert.rejects(
      cache.run(["GET", "k"], boom, RO, undefined, f.exec),
      TypeError,
    );
  });

  it("only keys with one of the prefixes are cached", async () => {
    const { cache } = activeCache({ prefixes: ["user:"] });
    const f = fakeExec(new Map());
    await cache.run(["GET", "user:1"], undefined, RO, undefined, f.exec);
    await cache.run(["GET", "order:1"], undefined, RO, undefined, f.exec);
    assert.equal(cache.stats().entries, 1);
  });
});

describe("TrackingSession", () => {
  it("RESP3: tracking is a step of every new shared socket; broadcast adds its prefixes", () => {
    const cache = new ClientSideCache({
      mode: "broadcast",
      prefixes: ["a:", "b:"],
    });
    const t = cache.tracking(3);
    assert.deepEqual(t.session("exclusive"), []);
    assert.deepEqual(t.session("shared").map((s) => s.args), [[
      "CLIENT",
      "TRACKING",
      "ON",
      "BCAST",
      "PREFIX",
      "a:",
      "PREFIX",
      "b:",
    ]]);
    assert.equal(t.active, true);
  });

  it("RESP3: a new socket and a lost one flush the cache; a refused TRACKING turns caching off", async () => {
    const { cache, t, steps } = activeCache();
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    t.session("shared"); // a handoff's replacement
    assert.equal(cache.stats().entries, 0);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    t.onLost("shared");
    assert.equal(cache.stats().entries, 0);
    assert.equal(t.active, false);
    const again = t.session("shared");
    again[0]!.onReply!(new ReplyError("ERR unknown subcommand"));
    assert.equal(t.active, false);
    // The reply of an older socket's step does not undo a newer one.
    const newer = t.session("shared");
    steps[0]!.onReply!(new ReplyError("ERR late"));
    assert.equal(t.active, true);
    newer[0]!.onReply!("OK");
    assert.equal(t.active, true);
  });

  it("RESP2: subscribes for invalidations, reads CLIENT ID, then redirects the shared connection", async () => {
    const cache = new ClientSideCache({});
    const t = cache.tracking(2);
    const runs: RedisArgument[][] = [];
    const subs: string[][] = [];
    const node: TrackingNode = {
      run: (args) => {
        runs.push(args);
        return Promise.resolve("OK");
      },
      subscribe: (_kind, names) => {
        subs.push(names);
        return Promise.resolve(undefined);
      },
    };
    t.attach(node);
    assert.deepEqual(t.session("shared"), [], "no redirect target yet");
    assert.deepEqual(subs, [["__redis__:invalidate"]]);
    const sub = t.session("subscriber");
    assert.deepEqual(sub.map((s) => s.args), [["CLIENT", "ID"]]);
    sub[0]!.onReply!(42);
    assert.equal(t.active, false);
    assert.equal(
      t.onPush(["subscribe", "__redis__:invalidate", 1], "subscriber"),
      false,
    );
    assert.deepEqual(runs, [["CLIENT", "TRACKING", "OFF"], [
      "CLIENT",
      "TRACKING",
      "ON",
      "REDIRECT",
      42,
    ]]);
    assert.equal(t.active, true);
    // Invalidations come as messages of the channel.
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(
      t.onPush(["message", "__redis__:invalidate", ["k"]], "subscriber"),
      true,
    );
    assert.equal(cache.stats().entries, 0);
    assert.equal(t.onPush(["message", "news", "hello"], "subscriber"), false);
    // A reconnect of the shared connection redirects again at once.
    t.onLost("shared");
    assert.deepEqual(t.session("shared").map((s) => s.args), [[
      "CLIENT",
      "TRACKING",
      "ON",
      "REDIRECT",
      42,
    ]]);
    // Losing the invalidation connection turns caching off until it is back.
    t.onLost("subscriber");
    assert.equal(t.active, false);
    assert.deepEqual(t.session("shared"), []);
    assert.equal(
      subs.length,
      1,
      "the subscription is restored by the executor, not repeated",
    );
  });
});

describe("ClientSideCache liveness of the invalidation connection", () => {
  /** A tracking cache on a manual clock whose carrier connection last replied at `heard`. */
  function liveCache(protocol: 2 | 3, options = {}) {
    const clock = new ManualClock(1_000_000);
    const cache = new ClientSideCache(options);
    const t = cache.tracking(protocol);
    const heard: Record<string, number | undefined> = {
      shared: clock.now(),
      subscriber: clock.now(),
    };
    const asked: string[] = [];
    t.attach({
      run: () => Promise.resolve("OK"),
      subscribe: () => Promise.resolve(undefined),
      lastReplyAt: (role) => {
        asked.push(role);
        return heard[role];
      },
      timers: clock,
    });
    if (protocol === 3) t.session("shared");
    else {
      t.session("shared");
      t.session("subscriber")[0]!.onReply!(7);
      t.onPush(["subscribe", "__redis__:invalidate", 1], "subscriber");
    }
    assert.equal(t.active, true);
    return { cache, t, clock, heard, asked };
  }

  for (const protocol of [3, 2] as const) {
    const carrier = protocol === 3 ? "shared" : "subscriber";
    it(`stops the hits once the ${carrier} connection is silent for maxStaleness (RESP${protocol})`, async () => {
      const { cache, clock, heard, asked } = liveCache(protocol);
      const f = fakeExec(new Map([["k", "v"]]));
      const get = () => cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
      await get();
      await get();
      assert.equal(cache.stats().hits, 1);
      await clock.advance(999); // nothing read for 999 ms: still within the default bound
      await get();
      assert.equal(cache.stats().hits, 2);
      const flushes = cache.stats().flushes;
      await clock.advance(1); // 1000 ms of silence
      assert.ok(asked.length > 0 && asked.every((r) => r === carrier), "the carrier is watched");
      assert.equal(cache.stats().entries, 0, "flushed");
      assert.equal(cache.stats().flushes, flushes + 1);
      await get();
      await get();
      assert.equal(cache.stats().hits, 2, "not answered from memory");
      assert.equal(f.sent.length, 3, "sent to the server");
      assert.equal(cache.stats().entries, 0, "nothing kept while overdue");
      await clock.advance(1_000);
      assert.equal(cache.stats().flushes, flushes + 1, "flushed once");
      heard[carrier] = clock.now(); // a reply arrived: confirmed at the next look (250 ms)
      await clock.advance(250);
      await get();
      await get();
      assert.equal(cache.stats().hits, 3, "answered from memory again");
    });
  }

  it("replies keep it fresh: the watch moves to the last reply plus maxStaleness", async () => {
    const { cache, clock, heard } = liveCache(3);
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    for (let i = 0; i < 10; i++) {
      await clock.advance(600);
      heard.shared = clock.now();
    }
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(cache.stats().hits, 1, "6 s of replies 600 ms apart: never overdue");
    assert.equal(cache.stats().flushes, 0);
  });

  it("a lost socket or a closed session stops the watch and leaves no timer", async () => {
    const { cache, t, clock } = liveCache(3);
    assert.equal(clock.pending, 1);
    t.onLost("shared");
    assert.equal(clock.pending, 0);
    const f = fakeExec(new Map([["k", "v"]]));
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    await cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(cache.stats().hits, 0);
    t.session("shared");
    assert.equal(clock.pending, 1);
    t.close();
    assert.equal(clock.pending, 0);
  });

  it("probes the carrier connection every maxStaleness / 2; 0 turns the bound and probe off", async () => {
    const three = new ClientSideCache({}).tracking(3).executorHooks();
    assert.equal(three.pingInterval("shared"), 500);
    assert.equal(three.pingInterval("subscriber"), undefined);
    const two = new ClientSideCache({ maxStaleness: 300 }).tracking(2).executorHooks();
    assert.equal(two.pingInterval("subscriber"), 150);
    assert.equal(two.pingInterval("shared"), undefined);
    const off = liveCache(3, { maxStaleness: 0 });
    assert.equal(off.t.executorHooks().pingInterval("shared"), undefined);
    assert.equal(off.clock.pending, 0, "no watch");
    const f = fakeExec(new Map([["k", "v"]]));
    await off.cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    await off.clock.advance(60_000);
    await off.cache.run(["GET", "k"], undefined, RO, undefined, f.exec);
    assert.equal(off.cache.stats().hits, 1, "no bound: still answered from memory");
  });
});
