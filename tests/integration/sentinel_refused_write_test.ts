// RedisSentinelClient when it missed a switch: the old master, demoted, answers writes with
// READONLY; the client asks the sentinels (past one that hangs) and sends the refused write
// to the new master, never leaving it on the replica.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { ReplyError } from "../../src/errors.ts";
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
    const open = () =>
      new RedisSentinelClient({
        masterName: group.masterName,
        sentinels: group.sentinelUrls,
        // Neither the periodic check nor an event tells it about the switch.
        sentinelCheckInterval: 60_000,
        sentinelTimeout: 500,
      });
    let client = open();
    const seen: SentinelSwitchDetail[] = [];
    let next: { host: string; port: number } | undefined;
    try {
      // The sentinels reconfigure the old master themselves (and close its clients) some seconds
      // after a switch: on a loaded machine that can come before the test demotes it, and the
      // client then follows the switch without a refusal (and listens to a live sentinel from
      // then on). The setup is tried again then, with a new client.
      for (let attempt = 1;; attempt++) {
        client.addEventListener("switch", (e) => {
          const d = e.detail;
          if (d.from) seen.push(d);
        });
        await client.incr("ro:n");
        const old = group.servers.find((s) => s.port === client.endpoint?.port)!;
        assert.equal(old.port, (await group.masterAddress()).port);
        // The sentinel it subscribed to (the first) hangs: no event, no lost connection.
        process.kill(hung!.pid, "SIGSTOP");
        await group.sentinelCommand(leader!, ["SENTINEL", "FAILOVER", group.masterName]);
        next = undefined;
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
        if (client.endpoint?.port === old.port) break;
        console.log(
          `attempt ${attempt}: the client followed the switch before the test demoted the old master (${
            JSON.stringify(seen.map((d) => d.reason))
          }); again`,
        );
        assert.ok(attempt < 3, "the client missed the switch in one of 3 attempts");
        seen.length = 0;
        await client.close();
        process.kill(hung!.pid, "SIGCONT");
        // The next failover needs the replicas attached to the new master.
        await sleep(2000);
        client = open();
      }
      assert.ok(next);
      const to = next;
      const start = Date.now();
      const n = await client.incr("ro:n");
      const took = Date.now() - start;
      console.log(`READONLY: the write went to the new master after ${took} ms`);
      assert.deepEqual(client.endpoint, to);
      assert.deepEqual(seen.map((d) => [d.to.port, d.reason]), [[to.port, "READONLY"]]);
      // It ran once, on the new master.
      assert.equal(
        String(
          await group.command(group.servers.find((s) => s.port === to.port)!, [
            "GET",
            "ro:n",
          ]),
        ),
        String(n),
      );
      assert.equal(await client.incr("ro:n"), n + 1);
    } finally {
      process.kill(hung!.pid, "SIGCONT");
      await client.close();
    }
  });

  it("returns the refusal when no new master comes within failoverWait", async () => {
    await using waiting = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      failoverWait: 300,
    });
    await using now = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      failoverWait: 0,
    });
    await Promise.all([waiting.connect(), now.connect()]);
    assert.deepEqual(now.endpoint, waiting.endpoint);
    const master = group.servers.find((s) => s.port === waiting.endpoint!.port)!;
    // More replicas required than there are: every write is refused with NOREPLICAS.
    await group.command(master, ["CONFIG", "SET", "min-replicas-to-write", "5"]);
    try {
      for (const [client, min, max] of [[waiting, 250, 3000], [now, 0, 200]] as const) {
        const start = Date.now();
        await assert.rejects(client.set("norep:k", "v"), (e: Error) => {
          assert.ok(e instanceof ReplyError, String(e));
          assert.equal(e.prefix, "NOREPLICAS");
          return true;
        });
        const took = Date.now() - start;
        assert.ok(took >= min && took < max, `refused after ${took} ms`);
      }
      // Reads are not refused; the client stays on the master.
      assert.equal(await waiting.get("norep:k"), null);
      assert.equal(waiting.endpoint?.port, master.port);
    } finally {
      await group.command(master, ["CONFIG", "SET", "min-replicas-to-write", "0"]);
    }
  });
});
