// RedisSentinelClient with role "replica" against a real group (1 master, 2 replicas, 3
// sentinels): reads from a healthy replica, and moves to the other one when it is killed.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { RedisSentinelClient, type SentinelSwitchDetail } from "../../src/sentinel/mod.ts";
import { type SentinelGroup, startSentinelGroup } from "../_helpers/sentinel.ts";
import { waitFor } from "../_helpers/load.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("sentinel client: replica reads", () => {
  let group: SentinelGroup;

  before(async () => {
    group = await startSentinelGroup();
  });
  after(async () => {
    await group?.stop();
  });
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it("reads what the master wrote from a replica", async () => {
    await using writer = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
    });
    await using reader = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      role: "replica",
    });
    await writer.set("replica:k", "v1");
    await writer.wait(2, 1000);
    assert.equal(await reader.get("replica:k"), "v1");
    const at = reader.endpoint!;
    assert.notEqual(at.port, writer.endpoint!.port);
    assert.ok(group.replicas.some((r) => r.port === at.port));
    const role = await reader.sendCommand(["ROLE"]);
    assert.ok(Array.isArray(role) && role[0] === "slave");
  });

  it("moves to the other replica when its replica stops answering (+sdown)", async () => {
    await using reader = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      role: "replica",
      commandTimeout: 3000,
    });
    const moves: { at: number; detail: SentinelSwitchDetail }[] = [];
    reader.addEventListener("switch", (e) => {
      const detail = e.detail;
      if (detail.from) moves.push({ at: Date.now(), detail });
    });
    await reader.ping();
    const first = group.replicas.find((r) => r.port === reader.endpoint!.port)!;
    const other = group.replicas.find((r) => r !== first)!;
    const stoppedAt = Date.now();
    process.kill(first.pid, "SIGSTOP");
    try {
      await waitFor(() => moves.length > 0, 10_000, "the reader to move");
      console.log(
        `replica stopped: the reader moved after ${moves[0]!.at - stoppedAt} ms (${
          moves[0]!.detail.reason
        })`,
      );
      assert.deepEqual(moves[0]!.detail.to, { host: other.host, port: other.port });
      assert.equal(moves[0]!.detail.reason, "+sdown");
      assert.equal(await reader.ping(), "PONG");
    } finally {
      process.kill(first.pid, "SIGCONT");
    }
  });

  it("moves to the other replica when its replica is killed", async () => {
    await using writer = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
    });
    await using reader = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      role: "replica",
    });
    const moves: { at: number; detail: SentinelSwitchDetail }[] = [];
    reader.addEventListener("switch", (e) => {
      const detail = e.detail;
      if (detail.from) moves.push({ at: Date.now(), detail });
    });
    await writer.set("replica:n", "1");
    await writer.wait(2, 1000);
    assert.equal(await reader.get("replica:n"), "1");
    const first = group.replicas.find((r) => r.port === reader.endpoint!.port)!;
    const other = group.replicas.find((r) => r !== first)!;
    let reads = 0;
    let failed = 0;
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        try {
          await reader.get("replica:n");
          reads++;
        } catch {
          failed++;
          await sleep(5);
        }
      }
    })();
    await sleep(200);
    const killedAt = Date.now();
    await first.kill();
    try {
      await waitFor(() => moves.length > 0, 10_000, "the reader to move");
      const movedAfter = moves[0]!.at - killedAt;
      const readsBefore = reads;
      await sleep(300);
      stop = true;
      await loop;
      console.log(
        `replica killed: the reader moved after ${movedAfter} ms (${
          moves[0]!.detail.reason
        }); ${reads} reads, ${failed} failed`,
      );
      assert.deepEqual(moves[0]!.detail.to, { host: other.host, port: other.port });
      assert.equal(moves[0]!.detail.role, "replica");
      assert.ok(reads > readsBefore, "reads continue on the other replica");
      assert.equal(await reader.get("replica:n"), "1");
      // Only reads in flight on the killed replica fail.
      assert.ok(failed <= 2, `${failed} reads failed`);
    } finally {
      stop = true;
      await loop;
    }
  });
});
