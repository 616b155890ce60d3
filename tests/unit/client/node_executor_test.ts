// The per-endpoint executor against an in-memory server: where each command runs, the session
// steps per role, subscriptions restored on a new socket, moveExecutor, close and destroy.
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  moveExecutor,
  NodeExecutor,
  type NodeExecutorOptions,
} from "../../../src/client/node_executor.ts";
import { resolveClientOptions } from "../../../src/client/options.ts";
import { FLAG_BLOCKING } from "../../../src/commands/command_runner.ts";
import { ClosedError, ConnectionError, ReplyError } from "../../../src/errors.ts";
import { silentLogger } from "../../../src/logger.ts";
import { MemoryRedis } from "../../_helpers/memory_redis.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../../_helpers/leaks.ts";

function executor(
  server: MemoryRedis,
  extra: Partial<NodeExecutorOptions> = {},
  protocol: 2 | 3 = 3,
): { node: NodeExecutor; events: string[] } {
  const events: string[] = [];
  const node = new NodeExecutor({
    endpoint: { host: "127.0.0.1", port: 7000 },
    settings: resolveClientOptions({ protocol, reconnect: { baseDelay: 1, maxDelay: 5 } }),
    connector: server.connector,
    logger: silentLogger,
    emit: (name) => events.push(name),
    ...extra,
  });
  return { node, events };
}

describe("NodeExecutor", () => {
  beforeEach(markLeakBaseline);

  it("runs plain commands on the shared connection and blocking ones on an exclusive one", async () => {
    const server = new MemoryRedis();
    server.handler = (cmd) => (cmd[0] === "BLPOP" ? [["q", "job"]] : undefined);
    const { node, events } = executor(server);
    assert.equal(await node.run(["SET", "k", "v"], undefined, 0), "OK");
    assert.equal(await node.run(["GET", "k"], undefined, 0), "v");
    assert.equal(server.opened.length, 1);
    assert.deepEqual(await node.run(["BLPOP", "q", "1"], undefined, FLAG_BLOCKING, 1000), [
      "q",
      "job",
    ]);
    assert.equal(server.opened.length, 2, "the blocking command got its own socket");
    assert.ok(server.opened[1]!.commands.some((c) => c[0] === "BLPOP"));
    assert.ok(!server.opened[0]!.commands.some((c) => c[0] === "BLPOP"));
    // WAIT counts the shared connection's writes: it runs there.
    server.handler = (cmd) => (cmd[0] === "WAIT" ? [0] : undefined);
    assert.equal(await node.run(["WAIT", "0", "10"], undefined, FLAG_BLOCKING, 10), 0);
    assert.ok(server.opened[0]!.commands.some((c) => c[0] === "WAIT"));
    assert.deepEqual(events.slice(0, 2), ["connect", "ready"]);
    await node.close();
    await assertNoLeaks();
  });

  it("applies the session steps of each role on every new socket, before queued work", async () => {
    const server = new MemoryRedis();
    const { node } = executor(server, {
      session: (role) => role === "shared" ? [{ args: ["READONLY"] }] : [],
    });
    await node.run(["PING"], undefined, 0);
    const first = server.opened[0]!;
    const names = first.commands.map((c) => c[0]);
    assert.ok(names.indexOf("READONLY") < names.indexOf("PING"), names.join(" "));
    // A new socket re-applies it before the command that was waiting.
    first.close();
    await sleep(20);
    await node.run(["PING"], undefined, 0);
    const second = server.opened[server.opened.length - 1]!;
    const again = second.commands.map((c) => c[0]);
    assert.notEqual(second, first);
    assert.ok(again.includes("READONLY") && again.indexOf("READONLY") < again.indexOf("PING"));
    await node.close();
    await assertNoLeaks();
  });

  for (const protocol of [3, 2] as const) {
    it(`restores subscriptions on a new socket (RESP${protocol})`, async () => {
      const server = new MemoryRedis();
      const { node } = executor(server, {}, protocol);
      const got: string[] = [];
      await node.subscribe("channel", ["a", "b"], (m) => got.push(m));
      const sock = server.opened[server.opened.length - 1]!;
      sock.close();
      for (let i = 0; i < 100 && server.opened.length < 2; i++) await sleep(5);
      await sleep(20);
      const fresh = server.opened[server.opened.length - 1]!;
      assert.notEqual(fresh, sock);
      assert.ok(
        fresh.commands.some((c) => c[0] === "SUBSCRIBE" && c[1] === "a" && c[2] === "b"),
        JSON.stringify(fresh.commands),
      );
      fresh.send(["message", "a", "after"], protocol === 3);
      for (let i = 0; i < 50 && got.length === 0; i++) await sleep(2);
      assert.deepEqual(got, ["after"]);
      await node.close();
      await assertNoLeaks();
    });
  }

  it("passes push frames nobody else took to onPush", async () => {
    const server = new MemoryRedis();
    const frames: unknown[] = [];
    const { node } = executor(server, {
      onPush: (frame, role) => {
        frames.push([role, ...frame]);
        return true;
      },
    });
    await node.run(["PING"], undefined, 0);
    server.opened[0]!.send(["invalidate", ["k"]], true);
    for (let i = 0; i < 50 && frames.length === 0; i++) await sleep(2);
    assert.deepEqual(frames, [["shared", "invalidate", ["k"]]]);
    await node.close();
    await assertNoLeaks();
  });

  it("dials where resolveEndpoint says, and moveExecutor hands the shared connection over", async () => {
    const server = new MemoryRedis();
    let target = { host: "127.0.0.2", port: 7001 };
    const { node } = executor(server, { resolveEndpoint: () => target });
    await node.run(["SET", "k", "1"], undefined, 0);
    assert.equal(server.opened[0]!.remoteAddress, "127.0.0.2");
    target = { host: "127.0.0.3", port: 7002 };
    const moved = moveExecutor(node, target, 1000);
    const during = node.run(["GET", "k"], undefined, 0);
    const r = await moved;
    assert.equal(r.replaced, true);
    assert.deepEqual(r.to, target);
    assert.equal(await during, "1");
    const last = server.opened[server.opened.length - 1]!;
    assert.equal(last.remoteAddress, "127.0.0.3");
    assert.ok(last.commands.some((c) => c[0] === "GET"), "held work went to the new endpoint");
    await node.close();
    await assertNoLeaks();
  });

  it("close() is shared by concurrent callers; destroy() rejects what waits with ClosedError", async () => {
    const server = new MemoryRedis();
    const { node } = executor(server);
    await node.run(["PING"], undefined, 0);
    server.opened[0]!.holding = true;
    const pending = node.run(["GET", "k"], undefined, 0).catch((e: Error) => e);
    await sleep(5);
    node.destroy();
    assert.ok((await pending) instanceof ClosedError);
    await assert.rejects(node.run(["PING"], undefined, 0), ClosedError);
    const a = node.close();
    assert.equal(a, node.close());
    await a;
    await assertNoLeaks();
  });

  it("an exclusive connection is never reconnected: a lost WATCH session fails", async () => {
    const server = new MemoryRedis();
    const { node } = executor(server);
    const tx = await node.watch(["k"]);
    const sock = server.opened[server.opened.length - 1]!;
    assert.ok(sock.commands.some((c) => c[0] === "WATCH"));
    sock.close();
    await sleep(20);
    await assert.rejects(tx.get("k"), ConnectionError);
    assert.equal(server.opened.filter((s) => s.commands.some((c) => c[0] === "WATCH")).length, 1);
    await tx.release();
    await node.close();
    await assertNoLeaks();
  });
});

describe("NodeExecutor unsubscribe", () => {
  beforeEach(markLeakBaseline);

  it("an unsubscribe answered by an error reply keeps the stream in step", async () => {
    const server = new MemoryRedis();
    // A cluster node answers SUNSUBSCRIBE of a slot it lost with MOVED.
    server.handler = (cmd) =>
      cmd[0] === "SUNSUBSCRIBE"
        ? [new ReplyError("MOVED 866 127.0.0.1:7001")]
        : cmd[0] === "UNSUBSCRIBE"
        ? cmd.slice(1).map((c) => ["unsubscribe", c, 0])
        : undefined;
    const errors: string[] = [];
    const { node } = executor(server, {
      emit: (name, detail) => {
        if (name === "error") errors.push(String(detail));
      },
    });
    const shard = await node.subscribe("shard", ["s"], () => {});
    const plain = await node.subscribe("channel", ["c"], () => {});
    await shard.unsubscribe();
    await plain.unsubscribe();
    assert.equal(await node.run(["SET", "k", "v"], undefined, 0), "OK");
    assert.equal(await node.run(["GET", "k"], undefined, 0), "v");
    assert.equal(server.opened.length, 1, "the connection was not reset");
    assert.deepEqual(errors, []);
    await node.close();
    await assertNoLeaks();
  });
});
