// The redirect policy on the manual clock, over fake node executors: MOVED patches and retries,
// ASK one attempt behind ASKING, TRYAGAIN/CLUSTERDOWN pauses within the budget, attempts
// exhausted, unwritten work sent again, and transactions and WATCH through the same policy.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { ConnectionError, ReplyError } from "../../../src/errors.ts";
import { keySlot } from "../../../src/cluster/slot.ts";
import { retryPause } from "../../../src/cluster/_redirect_policy.ts";
import { REFRESH_GAP_MS } from "../../../src/cluster/_topology_holder.ts";
import { flush, keyIn, parts, reply } from "./_parts.ts";

const A = "127.0.0.1:7000";
const B = "127.0.0.1:7001";
const key = keyIn(0, 5460, keySlot); // served by A
const slot = keySlot(key);

async function ready(options: Parameters<typeof parts>[1] = {}) {
  const p = parts(undefined, options);
  await p.holder.discover();
  // Past the discovery's own refresh: background refreshes are rate-limited.
  await p.clock.advance(REFRESH_GAP_MS);
  return p;
}

describe("retryPause", () => {
  it("spreads the time left over the attempts left, at least 10 ms", () => {
    assert.equal(retryPause(10_000, 4), 500);
    assert.equal(retryPause(10_000, 1), 5_000);
    assert.equal(retryPause(100, 9), 10);
  });
  it("never waits past the time left", () => {
    assert.equal(retryPause(4, 5), 4);
    assert.equal(retryPause(0, 5), 0);
  });
});

describe("RedirectPolicy", () => {
  it("MOVED patches the slot, sends again at once to the new owner and refreshes", async () => {
    const p = await ready();
    const shardsBefore = p.cluster.count("CLUSTER");
    p.cluster.script = (node, args) =>
      args[0] === "GET" ? (node === A ? reply(`MOVED ${slot} ${B}`) : "v") : undefined;
    assert.equal(await p.send("GET", key), "v");
    assert.equal(p.holder.ownerOf(slot), B);
    assert.equal(p.ctx.stats.moved, 1);
    assert.deepEqual(p.cluster.log.filter((x) => x.args[0] === "GET").map((x) => x.node), [A, B]);
    await flush();
    assert.ok(p.cluster.count("CLUSTER") > shardsBefore, "a refresh followed");
    // The next command goes straight to B.
    assert.equal(await p.send("GET", key), "v");
    assert.equal(p.cluster.log.filter((x) => x.args[0] === "GET").at(-1)!.node, B);
  });

  it("ASK sends ASKING and the command together once, leaving the table alone", async () => {
    const p = await ready();
    p.cluster.script = (node, args, asking) => {
      if (args[0] !== "GET") return undefined;
      if (node === A) return reply(`ASK ${slot} ${B}`);
      return asking ? "migrated" : reply(`MOVED ${slot} ${A}`);
    };
    assert.equal(await p.send("GET", key), "migrated");
    assert.equal(p.ctx.stats.ask, 1);
    assert.equal(p.ctx.stats.moved, 0);
    assert.equal(p.holder.ownerOf(slot), A, "the table is unchanged");
    const toB = p.cluster.log.filter((x) => x.node === B && x.args[0] !== "CLUSTER");
    assert.deepEqual(toB.map((x) => [x.args[0], x.asking]), [["ASKING", false], ["GET", true]]);
    // The next command asks A again (and is redirected again).
    await p.send("GET", key);
    assert.equal(p.cluster.log.filter((x) => x.args[0] === "GET").at(-2)!.node, A);
  });

  it("ASK to an importing node that is down fails the command, and leaves no rejection unhandled", async () => {
    const p = await ready();
    p.cluster.script = (node, args) =>
      args[0] === "GET" && node === A ? reply(`ASK ${slot} ${B}`) : undefined;
    const down = new ConnectionError(`Cannot reach ${B}`, { written: true });
    // The importing node's connection fails everything queued on it, ASKING included.
    p.cluster.nodes.get(B)!.sendAll = (commands) => commands.map(() => Promise.reject(down));
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      await assert.rejects(p.send("GET", key), (e: unknown) => e === down);
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    assert.deepEqual(unhandled, [], "the ASKING promise was left unhandled");
  });

  it("a connection error while the node's shared connection serves does not mark it down", async () => {
    const p = await ready();
    const a = p.cluster.nodes.get(A)!;
    // An exclusive connection refused (maxclients) for a blocking command: the shared one is up.
    (a as unknown as { shared: { ready: boolean } }).shared = { ready: true };
    let refuse = true;
    p.cluster.script = (node, args) => {
      if (node !== A || args[0] !== "GET") return undefined;
      if (refuse) {
        refuse = false;
        throw new ConnectionError("Cannot connect: max number of clients reached", {
          written: true,
        });
      }
      return "v";
    };
    await assert.rejects(p.send("GET", key), /max number of clients/);
    assert.equal(p.nodes.down.has(A), false, "the node is not down");
    // Before: every later command to the node failed unsent ("unreachable").
    assert.equal(await p.send("GET", key), "v");
    // With its shared connection not ready, the same error does mark it down.
    (a as unknown as { shared: { ready: boolean } }).shared = { ready: false };
    refuse = true;
    await assert.rejects(p.send("GET", key));
    assert.equal(p.nodes.down.has(A), true);
  });

  it("gives up with the last redirect once maxAttempts are spent", async () => {
    const p = await ready({ maxAttempts: 4 });
    p.cluster.script = (node, args) =>
      args[0] === "GET" ? reply(`MOVED ${slot} ${node === A ? B : A}`) : undefined;
    await assert.rejects(
      p.send("GET", key),
      (e: Error) => e instanceof ReplyError && e.prefix === "MOVED",
    );
    assert.equal(p.cluster.count("GET"), 4);
  });

  it("TRYAGAIN pauses (clamped to the budget) and gives up when the time is spent", async () => {
    const p = await ready({ maxAttempts: 100, maxTotalRetriesDuration: 1_000 });
    p.cluster.script = (_node, args) => args[0] === "GET" ? reply("TRYAGAIN busy") : undefined;
    let settled: unknown;
    p.send("GET", key).then(() => (settled = "ok"), (e) => (settled = e));
    await flush();
    assert.equal(p.cluster.count("GET"), 1);
    const start = p.clock.now();
    // Every pause stays within what is left of the 1000 ms.
    for (let i = 0; i < 200 && settled === undefined; i++) {
      const [next] = p.clock.delays();
      assert.ok(next !== undefined, `no timer after ${p.cluster.count("GET")} GETs`);
      assert.ok(next <= 1_000 - (p.clock.now() - start), `pause ${next} ms past the budget`);
      await p.clock.advance(next);
    }
    assert.ok(settled instanceof ReplyError && settled.prefix === "TRYAGAIN");
    assert.ok(p.clock.now() - start <= 1_000);
    assert.ok(p.ctx.stats.refused > 1);
  });

  it("CLUSTERDOWN pauses and refreshes the topology, then succeeds", async () => {
    const p = await ready();
    let refusals = 1;
    p.cluster.script = (_node, args) =>
      args[0] === "GET"
        ? (refusals-- > 0 ? reply("CLUSTERDOWN the cluster is down") : "v")
        : undefined;
    const shardsBefore = p.cluster.count("CLUSTER");
    const r = p.send("GET", key);
    await flush();
    assert.ok(p.cluster.count("CLUSTER") > shardsBefore, "a refresh started");
    assert.equal(p.clock.delays().length, 1, "one pause");
    await p.clock.advance(p.clock.delays()[0]!);
    assert.equal(await r, "v");
    assert.equal(p.ctx.stats.refused, 1);
  });

  it("sends again work that never left the client; fails work that was written", async () => {
    const p = await ready();
    let lost = 1;
    p.cluster.script = (_node, args) => {
      if (args[0] === "GET" && lost-- > 0) {
        return new ConnectionError("Cannot write: socket closed", { written: false });
      }
      if (args[0] === "SET") return new ConnectionError("Cannot read: socket closed");
      return args[0] === "GET" ? "v" : undefined;
    };
    const r = p.send("GET", key);
    await flush();
    assert.equal(p.clock.delays().length, 1, "a pause before the retry");
    p.cluster.nodes.get(A)!.ready(); // the node reconnected
    await p.clock.advance(p.clock.delays()[0]!);
    assert.equal(await r, "v");
    assert.equal(p.ctx.stats.unwrittenRetries, 1);
    await assert.rejects(p.send("SET", key, "1"), ConnectionError);
    assert.equal(p.cluster.count("SET"), 1, "a written command is never sent twice");
  });

  it("runs a transaction again, whole, on the new owner after a MOVED before EXEC", async () => {
    const p = await ready();
    p.cluster.script = (node, args) => {
      if (args[0] === "SET" && node === A) return reply(`MOVED ${slot} ${B}`);
      if (args[0] === "EXEC") return node === A ? reply("EXECABORT discarded") : ["OK"];
      return undefined;
    };
    const results = await Promise.allSettled(p.transactions.send([
      { args: ["MULTI"], transform: undefined, flags: 0 },
      { args: ["SET", key, "1"], transform: undefined, flags: 0 },
      { args: ["EXEC"], transform: undefined, flags: 0 },
    ]));
    assert.deepEqual(results.map((r) => r.status), ["fulfilled", "fulfilled", "fulfilled"]);
    assert.deepEqual(p.cluster.log.filter((x) => x.args[0] === "MULTI").map((x) => x.node), [A, B]);
    assert.equal(p.ctx.stats.moved, 1);
  });

  it("WATCH fails at once on an ASK, saying the slot is migrating; a lost connection fails it", async () => {
    const p = await ready();
    p.cluster.script = (_node, args) => args[0] === "WATCH" ? reply(`ASK ${slot} ${B}`) : undefined;
    await assert.rejects(p.transactions.watch([key]), (e: Error) => {
      assert.equal(e.name, "RedisError");
      assert.equal(
        e.message,
        `Cannot watch: slot ${slot} is migrating (ASK ${slot} ${B}); retry once the migration has ended`,
      );
      return true;
    });
    assert.equal(p.clock.delays().length, 0, "no pause");
    p.cluster.script = (_node, args) =>
      args[0] === "WATCH" ? new ConnectionError("Cannot write", { written: false }) : undefined;
    await assert.rejects(p.transactions.watch([key]), ConnectionError);
    p.cluster.script = () => undefined;
    assert.deepEqual(await p.transactions.watch([key]), { node: A });
  });

  it("fails the commands waiting for a pause when the client closes", async () => {
    const p = await ready();
    p.cluster.script = (_node, args) => args[0] === "GET" ? reply("TRYAGAIN busy") : undefined;
    const r = p.send("GET", key);
    await flush();
    p.ctx.closed = true;
    p.policy.close();
    await assert.rejects(r, (e: Error) => e.name === "ClosedError");
    assert.equal(p.clock.timers.length, 0);
  });
});
