// Pipelines and transactions with a recording sender: what is sent, in which order, and how
// replies, errors and EXEC results come back.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Pipeline, Transaction } from "../../../src/client/pipeline.ts";
import { FLAG_ERRORS_AS_VALUES } from "../../../src/connection/connection.ts";
import { ReplyError } from "../../../src/errors.ts";
import type { RedisArgument, RespValue } from "../../../src/resp/types.ts";
import type { Transform } from "../../../src/commands/command_runner.ts";
import { RedisCommands } from "../../../src/commands/commands.ts";

interface Sent {
  args: RedisArgument[];
  transform: Transform | undefined;
  flags: number;
}

describe("Pipeline", () => {
  it("sends every recorded command with errors as values and keeps their order", async () => {
    const sent: Sent[] = [];
    const p = new Pipeline((args, transform, flags) => {
      sent.push({ args, transform, flags });
      const reply: RespValue = args[0] === "GET"
        ? "v"
        : args[0] === "BAD"
        ? new ReplyError("ERR bad")
        : "OK";
      if (reply instanceof ReplyError) return Promise.resolve(reply);
      return Promise.resolve(transform ? transform(reply) : reply);
    });
    p.set("k", "v").get("k").sendCommand(["BAD"]);
    assert.equal(p.length, 3);
    const r = await p.exec();
    assert.deepEqual(sent.map((s) => s.args), [["SET", "k", "v"], ["GET", "k"], ["BAD"]]);
    assert.ok(sent.every((s) => (s.flags & FLAG_ERRORS_AS_VALUES) !== 0));
    assert.equal(r[0], "OK");
    assert.equal(r[1], "v");
    assert.ok(r[2] instanceof ReplyError);
    assert.equal(p.length, 0, "exec() empties the pipeline");
  });
});

describe("Batch methods", () => {
  it("every typed method of RedisCommands records on a batch, but evalScript, through the prototype chain", () => {
    const sent: RedisArgument[][] = [];
    const p = new Pipeline((args) => {
      sent.push(args);
      return Promise.resolve("OK");
    });
    const names = Object.getOwnPropertyNames(RedisCommands.prototype)
      .filter((n) => n !== "constructor" && n !== "_run" && n !== "evalScript");
    assert.ok(names.length > 200, `${names.length} methods`);
    for (const n of names) {
      assert.equal(typeof (p as unknown as Record<string, unknown>)[n], "function", n);
    }
    // Inherited through the prototype chain, recorded by Batch._run, not run.
    assert.equal(p.hset("h", { f: "v" }).zadd("z", { score: 1, member: "m" }), p);
    assert.deepEqual(sent, []);
    assert.deepEqual(p._queue.map((q) => q.args), [["HSET", "h", "f", "v"], ["ZADD", "z", 1, "m"]]);
    // evalScript runs EVALSHA and may fall back to EVAL: not one command, not in a batch.
    assert.equal((p as unknown as Record<string, unknown>).evalScript, undefined);
    assert.equal(
      (new Transaction(() => []) as unknown as Record<string, unknown>).evalScript,
      undefined,
    );
    // Inherited, not copied onto each batch class at load (the cost this layout removes).
    for (const n of names) {
      assert.equal(Object.hasOwn(Pipeline.prototype, n), false, `Pipeline copies ${n}`);
      assert.equal(Object.hasOwn(Transaction.prototype, n), false, `Transaction copies ${n}`);
    }
    assert.ok(p instanceof RedisCommands);
  });
});

describe("Transaction", () => {
  function recording(exec: RespValue | Error, queueError?: number) {
    const groups: Sent[][] = [];
    const t = new Transaction((cmds) => {
      groups.push(cmds.map((c) => ({ ...c })));
      return cmds.map((c, i) => {
        if (i === queueError) {
          return Promise.reject(new ReplyError("ERR wrong number of arguments"));
        }
        if (i === cmds.length - 1) {
          if (exec instanceof Error) return Promise.reject(exec);
          return Promise.resolve(c.transform ? c.transform(exec) : exec);
        }
        return Promise.resolve(i === 0 ? "OK" : "QUEUED");
      });
    });
    return { t, groups };
  }

  it("sends MULTI, the commands and EXEC as one group and transforms each result", async () => {
    const { t, groups } = recording(["OK", 3]);
    const r = await t.set("a", "1").incr("n").exec();
    assert.equal(groups.length, 1);
    assert.deepEqual(groups[0]!.map((c) => c.args), [["MULTI"], ["SET", "a", "1"], ["INCR", "n"], [
      "EXEC",
    ]]);
    assert.deepEqual(r, ["OK", 3]);
  });

  it("returns null when a WATCHed key changed", async () => {
    const { t } = recording(null);
    assert.equal(await t.get("a").exec(), null);
  });

  it("gives a failing command its ReplyError as a value", async () => {
    const { t } = recording([new ReplyError("WRONGTYPE bad"), "x"]);
    const r = await t.incr("s").get("g").exec();
    assert.ok(r![0] instanceof ReplyError);
    assert.equal(r![1], "x");
  });

  it("rejects with EXECABORT and the queueing error as its cause", async () => {
    const { t } = recording(new ReplyError("EXECABORT Transaction discarded"), 1);
    const e = await t.sendCommand(["SET"]).exec().catch((x: Error) => x);
    assert.ok(e instanceof ReplyError);
    assert.match(e.message, /EXECABORT/);
    assert.match(String((e.cause as Error).message), /wrong number/);
  });

  it("discard() drops the commands and calls onDone", () => {
    let done = 0;
    const t = new Transaction(() => [], () => done++);
    t.set("a", "1").discard();
    assert.equal(t.length, 0);
    assert.equal(done, 1);
  });
});
