// The client shell over a fake core: what every client kind gets without writing it again.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ClientCore, ClientEvents, ClientShell } from "../../../src/client/client_shell.ts";
import type { RedisClientEventMap } from "../../../src/client/events.ts";
import { ClosedError, ConnectionError } from "../../../src/errors.ts";
import { FLAG_BINARY, FLAG_RAW } from "../../../src/commands/command_runner.ts";
import type { RedisArgument } from "../../../src/resp/types.ts";

interface Call {
  via: string;
  args?: RedisArgument[];
  flags?: number;
}

/** A core that answers from a map and records what reached it. */
function fakeCore(extra: Partial<ClientCore> = {}): { core: ClientCore; calls: Call[] } {
  const calls: Call[] = [];
  const data = new Map<string, string>();
  const answer = (args: RedisArgument[]): unknown => {
    const [name, key, value] = args.map(String);
    if (name === "SET") {
      data.set(key!, value!);
      return "OK";
    }
    if (name === "GET") return data.get(key!) ?? null;
    if (name === "SCAN") {
      const keys = [...data.keys()].sort();
      const at = Number(key);
      const next = at + 2 >= keys.length ? "0" : String(at + 2);
      return [next, keys.slice(at, at + 2)];
    }
    return "PONG";
  };
  const core: ClientCore = {
    run: (args, transform, flags) => {
      calls.push({ via: "run", args, flags });
      const v = answer(args);
      return Promise.resolve(transform ? transform(v as never) : v);
    },
    send: (args, flags) => {
      calls.push({ via: "send", args, flags });
      return Promise.resolve(answer(args));
    },
    sendAll: (commands) => {
      calls.push({ via: "sendAll", args: commands.flatMap((c) => c.args) });
      const replies = commands.slice(1, -1).map((c) => answer(c.args));
      return commands.map((c, i) =>
        Promise.resolve(
          i === commands.length - 1
            ? (c.transform ? c.transform(replies as never) : replies)
            : "QUEUED",
        )
      );
    },
    watch: () => {
      calls.push({ via: "watch" });
      return Promise.reject(new Error("no watch in the fake"));
    },
    subscribe: (kind, names, _listener, binary) => {
      calls.push({ via: `subscribe:${kind}:${binary}`, args: names });
      return Promise.resolve({ kind, names });
    },
    connect: () => {
      calls.push({ via: "connect" });
      return Promise.resolve();
    },
    close: () => {
      calls.push({ via: "close" });
      return Promise.resolve();
    },
    destroy: () => {
      calls.push({ via: "destroy" });
    },
    ...extra,
  };
  return { core, calls };
}

class TestClient extends ClientShell<RedisClientEventMap> {
  constructor(core: ClientCore) {
    super(core, new ClientEvents());
  }
}

async function rejectsClosed(p: Promise<unknown> | (() => unknown), what: string): Promise<void> {
  const run = typeof p === "function" ? Promise.resolve().then(p) : p;
  await assert.rejects(run, (e: unknown) => {
    assert.ok(e instanceof ClosedError, `${what}: ${String(e)}`);
    assert.match((e as Error).message, /the client is closed/);
    return true;
  });
}

describe("client shell", () => {
  it("routes every entry point of the face and of binary() through the core", async () => {
    const { core, calls } = fakeCore();
    const c = new TestClient(core);
    assert.equal(await c.set("k", "v"), "OK");
    assert.equal(await c.get("k"), "v");
    assert.equal(await c.sendCommand(["PING"], { binary: true }), "PONG");
    const raw = calls.find((x) => x.via === "send")!;
    assert.equal(raw.flags! & (FLAG_RAW | FLAG_BINARY), FLAG_RAW | FLAG_BINARY);
    const bin = calls.length;
    await c.binary().get("k");
    assert.equal(calls[bin]!.flags! & FLAG_BINARY, FLAG_BINARY, "binary() adds FLAG_BINARY");
    assert.deepEqual(await c.pipeline().set("a", "1").get("a").exec(), ["OK", "1"]);
    assert.deepEqual(await c.multi().set("b", "2").get("b").exec(), ["OK", "2"]);
    assert.ok(calls.some((x) => x.via === "sendAll"));
    await c.binary().subscribe("ch");
    await c.psubscribe("p*");
    assert.ok(calls.some((x) => x.via === "subscribe:channel:true"));
    assert.ok(calls.some((x) => x.via === "subscribe:pattern:false"));
    const keys: string[] = [];
    for await (const k of c.scan()) keys.push(k);
    assert.deepEqual(keys.sort(), ["a", "b", "k"]);
    await c.close();
  });

  it("validates channel names and watch keys before the core sees them", async () => {
    const { core, calls } = fakeCore();
    const c = new TestClient(core);
    await assert.rejects(c.subscribe([]), TypeError);
    await assert.rejects(c.ssubscribe([""]), TypeError);
    await assert.rejects(c.watch(), TypeError);
    await assert.rejects(c.sendCommand([]), TypeError);
    assert.equal(calls.length, 0);
    await c.close();
  });

  it("after close() every entry point rejects with ClosedError and nothing reaches the core", async () => {
    const { core, calls } = fakeCore();
    const c = new TestClient(core);
    let closes = 0;
    c.addEventListener("close", () => closes++);
    const first = c.close();
    assert.equal(c.close(), first, "one close promise");
    await first;
    assert.equal(closes, 1);
    const before = calls.length;
    await rejectsClosed(c.get("k"), "get");
    await rejectsClosed(c.sendCommand(["PING"]), "sendCommand");
    await rejectsClosed(c.pipeline().get("k").exec(), "pipeline");
    await rejectsClosed(c.multi().set("k", "v").exec(), "multi");
    await rejectsClosed(c.watch("k"), "watch");
    await rejectsClosed(c.subscribe("ch"), "subscribe");
    await rejectsClosed(c.psubscribe("p*"), "psubscribe");
    await rejectsClosed(c.ssubscribe("s"), "ssubscribe");
    await rejectsClosed(c.scan().next(), "scan");
    await rejectsClosed(c.hscan("h").next(), "hscan");
    await rejectsClosed(c.connect(), "connect");
    await rejectsClosed(c.binary().get("k"), "binary get");
    await rejectsClosed(c.binary().subscribe("ch"), "binary subscribe");
    await rejectsClosed(c.binary().multi().get("k").exec(), "binary multi");
    await rejectsClosed(c.binary().scan().next(), "binary scan");
    assert.equal(calls.length, before, "the core saw nothing after close");
    await c.destroy();
    assert.equal(closes, 1, "destroy after close does not close again");
  });

  it("a kind's own batch runners are used, and also refused after close", async () => {
    const ran: string[] = [];
    const { core } = fakeCore({
      runPipeline: (q) => {
        ran.push(`pipeline:${q.length}`);
        return Promise.resolve(q.map(() => "r"));
      },
      runTransaction: (q, flags) => {
        ran.push(`transaction:${q.length}:${flags & FLAG_BINARY}`);
        return Promise.resolve(q.map(() => "t"));
      },
    });
    const c = new TestClient(core);
    assert.deepEqual(await c.pipeline().get("a").get("b").exec(), ["r", "r"]);
    assert.deepEqual(await c.binary().multi().get("a").exec(), ["t"]);
    assert.deepEqual(ran, ["pipeline:2", `transaction:1:${FLAG_BINARY}`]);
    await c.close();
    await rejectsClosed(c.pipeline().get("a").exec(), "pipeline runner");
    await rejectsClosed(c.multi().get("a").exec(), "transaction runner");
    assert.equal(ran.length, 2);
  });

  it("a cursor guard that fires ends the walk with its error, never short", async () => {
    let switched = false;
    const { core } = fakeCore({
      cursorGuard: () => () => {
        if (switched) {
          throw new ConnectionError("Cannot continue the scan: the active database changed");
        }
      },
    });
    const c = new TestClient(core);
    for (const k of ["a", "b", "c", "d", "e"]) await c.set(k, "1");
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const k of c.scan()) {
        seen.push(k);
        switched = true;
      }
    }, ConnectionError);
    assert.deepEqual(seen, ["a", "b"], "only the first page's keys, then the error");
    await c.close();
  });

  it("destroy() destroys the core, then closes it; the close event fires once", async () => {
    const { core, calls } = fakeCore();
    const c = new TestClient(core);
    let closes = 0;
    c.addEventListener("close", () => closes++);
    await c.destroy();
    await c.close();
    assert.deepEqual(calls.map((x) => x.via), ["destroy", "close"]);
    assert.equal(closes, 1);
  });
});
