// RedisSentinelClient when it missed a switch: the old master, demoted, answers writes with
// READONLY; the client asks the sentinels (past one that hangs) and sends the refused write
// to the new master, never leaving it on the replica.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { RedisSentinelClient, type SentinelSwitchDetail } from "../../src/sentinel/mod.ts";
import { type SentinelGroup, startSentinelGroup } from "../_helpers/sentinel.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

describe("sentinel client: refused writes", () => {
  let group: SentinelGroup;

  before(async () => {
    group = await startSentinelGroup();
  });
  after(async () => {
    await group?.stop();
  });
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it("sends a write the demoted master refused with READONLY to the new master", async () => {
    const [hung, leader] = group.sentinels;
    const old = group.master;
    await using client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      // Neither the periodic check nor an event tells it about the switch.
      sentinelCheckInterval: 60_000,
      sentinelTimeout: 500,
    });
    const seen: SentinelSwitchDetail[] = [];
    client.addEventListener("switch", (e) => {
      const d = (e as CustomEvent<SentinelSwitchDetail>).detail;
      if (d.from) seen.push(d);
    });
    assert.equal(await client.incr("ro:n"), 1);
    assert.equal(client.endpoint?.port, old.port);
    // The sentinel it subscribed to (the first) hangs: no event, no lost connection.
    process.kill(hung!.pid, "SIGSTOP");
    try {
      await group.sentinelCommand(leader!, ["SENTINEL", "FAILOVER", group.masterName]);
      let next: { host: string; port: number } | undefined;
      for (let i = 0; i < 200 && next === undefined; i++) {
        const r = await group.sentinelCommand(leader!, [
          "SENTINEL",
          "GET-MASTER-ADDR-BY-NAME",
          group.masterName,
        ]);
        if (Array.isArray(r) && Number(r[1]) !== old.port) {
          next = { host: String(r[0]), port: Number(r[1]) };
        } else await sleep(50);
      }
      assert.ok(next, "the sentinels switched");
      // Demote the old master now, as the sentinels will on their next look at it.
      await group.command(old, ["REPLICAOF", next.host, String(next.port)]);
      assert.equal(client.endpoint?.port, old.port, "the client missed the switch");
      const start = Date.now();
      const n = await client.incr("ro:n");
      const took = Date.now() - start;
      console.log(`READONLY: the write went to the new master after ${took} ms`);
      assert.deepEqual(client.endpoint, next);
      assert.deepEqual(seen.map((d) => [d.to.port, d.reason]), [[next.port, "READONLY"]]);
      // It ran once, on the new master.
      assert.equal(
        String(
          await group.command(group.servers.find((s) => s.port === next.port)!, [
            "GET",
            "ro:n",
          ]),
        ),
        String(n),
      );
      assert.equal(await client.incr("ro:n"), n + 1);
    } finally {
      process.kill(hung!.pid, "SIGCONT");
    }
  });
});
