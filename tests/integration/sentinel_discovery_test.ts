// RedisSentinelClient against a real group (1 master, 2 replicas, 3 sentinels): discovery
// through sentinels that are down or name a wrong address, the standalone API on the master,
// and the errors of bad input.
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ClosedError, ConnectionError, ReplyError } from "../../src/errors.ts";
import { RedisSentinelClient } from "../../src/sentinel/mod.ts";
import { type SentinelGroup, startSentinelGroup } from "../_helpers/sentinel.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";
import { makeCerts, type TestCerts } from "../_helpers/tls.ts";
import { startFakeServer } from "../_helpers/fake_server.ts";
import { RespDecoder } from "../../src/resp/mod.ts";
import { waitFor } from "../_helpers/load.ts";
import { rmSync } from "node:fs";

/** A sentinel of its own that monitors `name` at `port`: it names that address as the master. */
async function rogueSentinel(name: string, port: number): Promise<RedisServer> {
  const own = await freePort();
  return startRedis({
    port: own,
    debugCommand: false,
    args: ["--sentinel"],
    config: [
      `port ${own}`,
      "bind 127.0.0.1",
      `sentinel monitor ${name} 127.0.0.1 ${port} 1`,
      `sentinel down-after-milliseconds ${name} 60000`,
      "",
    ].join("\n"),
  });
}

describe("sentinel client: discovery and the standalone API", () => {
  let group: SentinelGroup;
  const rogues: RedisServer[] = [];

  before(async () => {
    group = await startSentinelGroup();
  });
  after(async () => {
    await Promise.all(rogues.map((r) => r.stop()));
    await group?.stop();
  });
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it("finds the master past a sentinel that is down and ones that name a wrong address", async () => {
    const down = await freePort();
    const nowhere = await freePort();
    const toNowhere = await rogueSentinel(group.masterName, nowhere);
    const toReplica = await rogueSentinel(group.masterName, group.replicas[0]!.port);
    rogues.push(toNowhere, toReplica);
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: [`127.0.0.1:${down}`, toNowhere.url, toReplica.url, group.sentinelUrls[0]!],
    });
    const switches: unknown[] = [];
    client.addEventListener("switch", (e) => switches.push(e.detail));
    try {
      await client.connect();
      assert.deepEqual(client.endpoint, { host: "127.0.0.1", port: group.master.port });
      assert.equal(await client.set("discovery:k", "v"), "OK");
      assert.deepEqual(switches, [{
        from: undefined,
        to: { host: "127.0.0.1", port: group.master.port },
        role: "master",
        reason: "discovery",
      }]);
      const role = await client.sendCommand(["ROLE"]);
      assert.ok(Array.isArray(role) && role[0] === "master");
    } finally {
      await client.close();
    }
  });

  it("asks a sentinel over TLS (rediss://)", async () => {
    const certs: TestCerts = makeCerts();
    // TLS on `port`; the spawner's plain port is another one.
    const port = await freePort();
    const tlsSentinel = await startRedis({
      readyPort: port,
      debugCommand: false,
      args: ["--sentinel"],
      config: [
        `tls-port ${port}`,
        "bind 127.0.0.1",
        `tls-cert-file ${certs.certFile}`,
        `tls-key-file ${certs.keyFile}`,
        `tls-ca-cert-file ${certs.caFile}`,
        "tls-auth-clients no",
        `sentinel monitor ${group.masterName} 127.0.0.1 ${group.master.port} 2`,
        "",
      ].join("\n"),
    });
    try {
      await using client = new RedisSentinelClient({
        masterName: group.masterName,
        sentinels: [`rediss://127.0.0.1:${port}`],
        sentinelTls: { caCerts: [certs.caPem] },
      });
      assert.equal(await client.ping(), "PONG");
      assert.equal(client.endpoint?.port, group.master.port);
      const plain = new RedisSentinelClient({
        masterName: group.masterName,
        sentinels: [`redis://127.0.0.1:${port}`],
        sentinelTimeout: 500,
      });
      await assert.rejects(plain.ping(), new RegExp(`sentinel 127\\.0\\.0\\.1:${port}: `));
      await plain.close();
    } finally {
      await tlsSentinel.stop();
      rmSync(certs.dir, { recursive: true, force: true });
    }
  });

  it("learns the other sentinels from the one it is given", async () => {
    await using client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: [group.sentinelUrls[1]!],
    });
    const added: { host: string; port: number }[] = [];
    client.addEventListener("sentinel-added", (e) => added.push(e.detail));
    await client.ping();
    const expected = group.sentinels.filter((s) => s.url !== group.sentinelUrls[1]).map((s) =>
      s.port
    ).sort();
    assert.deepEqual(added.map((a) => a.port).sort(), expected);
    assert.equal(client.sentinels.length, 3);
  });

  it("serves typed commands, sendCommand, pipelines, transactions, WATCH and pub/sub on the master", async () => {
    await using client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      protocol: 2,
    });
    assert.equal(await client.set("api:k", "1"), "OK");
    assert.equal(await client.incr("api:k"), 2);
    assert.equal(await client.sendCommand(["GET", "api:k"]), "2");
    const [a, b] = await client.pipeline().incr("api:k").get("api:k").exec();
    assert.deepEqual([a, b], [3, "3"]);
    const t = await client.multi().incr("api:k").incr("api:k").exec();
    assert.deepEqual(t, [4, 5]);
    {
      await using tx = await client.watch("api:k");
      const n = Number(await tx.get("api:k"));
      assert.deepEqual(await tx.multi().set("api:k", String(n * 10)).exec(), ["OK"]);
    }
    assert.equal(await client.get("api:k"), "50");
    const got: string[] = [];
    const sub = await client.subscribe("api:ch", (m) => got.push(m));
    const psub = await client.psubscribe("api:p*", (m) => got.push(`p:${m}`));
    assert.equal(await client.publish("api:ch", "hello"), 1);
    assert.equal(await client.publish("api:px", "there"), 1);
    for (let i = 0; i < 100 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(got.sort(), ["hello", "p:there"]);
    await sub.unsubscribe();
    await psub.unsubscribe();
    await assert.rejects(client.sendCommand(["SUBSCRIBE", "x"]), TypeError);
  });

  it("rejects an unknown master name naming every sentinel asked", async () => {
    const client = new RedisSentinelClient({
      masterName: "no-such-master",
      sentinels: group.sentinelUrls,
    });
    try {
      await assert.rejects(client.get("k"), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match(
          e.message,
          /^Cannot discover the master: no sentinel knows the master name "no-such-master"/,
        );
        for (const s of group.sentinels) {
          assert.ok(e.message.includes(`127.0.0.1:${s.port}`), e.message);
        }
        return true;
      });
      // Nothing is cached: the next command asks again, with the same answer.
      await assert.rejects(client.get("k"), /no sentinel knows/);
    } finally {
      await client.close();
    }
  });

  it("rejects when every sentinel is down, naming each and why", async () => {
    const ports = [await freePort(), await freePort()];
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: ports.map((p) => `redis://127.0.0.1:${p}`),
      sentinelPassword: "s3cr3t-sentinel",
      password: "s3cr3t-data",
    });
    try {
      await assert.rejects(client.connect(), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match(e.message, /^Cannot discover the master: no sentinel answered for "mymaster"/);
        for (const p of ports) {
          assert.match(e.message, new RegExp(`sentinel 127\\.0\\.0\\.1:${p}: `));
        }
        assert.ok(!e.message.includes("s3cr3t"), e.message);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  it("gives up the first discovery when the caller's signal aborts", async () => {
    // A sentinel that accepts and never answers.
    const silent = await startFakeServer(() => {});
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: [silent.url],
      sentinelTimeout: 1000,
    });
    try {
      const start = Date.now();
      await assert.rejects(
        client.connect({ signal: AbortSignal.timeout(100) }),
        (e: Error) => e instanceof ConnectionError && /aborted/.test(e.message),
      );
      await assert.rejects(
        client.sendCommand(["PING"], { signal: AbortSignal.timeout(100) }),
        (e: Error) => e.name === "TimeoutError",
      );
      assert.ok(Date.now() - start < 900, "not held until the sentinel timeout");
    } finally {
      await client.close();
      await silent.close();
    }
  });

  it("close() during a discovery of silent sentinels ends it at once; the waiting command gets ClosedError", async () => {
    // Five sentinels that accept and never answer: asking them in turn takes 5 x 2 s.
    const silent = await Promise.all([1, 2, 3, 4, 5].map(() => startFakeServer(() => {})));
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: silent.map((s) => s.url),
      sentinelTimeout: 2000,
    });
    try {
      const pending = client.get("k").then(() => undefined, (e) => e);
      await sleep(100); // the first sentinel is being asked
      const closed = client.close().then(() => "closed");
      const timer = sleep(3000).then(() => "timer");
      assert.equal(
        await Promise.race([closed, timer]),
        "closed",
        "close() waited for the discovery",
      );
      const e = await pending;
      assert.ok(e instanceof ClosedError, `the waiting command got ${e}`);
    } finally {
      await client.close();
      await Promise.all(silent.map((s) => s.close()));
    }
  });

  it("a flood of +switch-master events is coalesced: a handful of moves, ending on the last named", async () => {
    // A fake sentinel (RESP2) naming the real master, whose event channel floods with switches
    // between the master and another (standalone) server.
    const master = await group.masterAddress();
    const other = await startRedis();
    const subscribers = new Set<import("node:net").Socket>();
    const bulk = (x: string) => `$${new TextEncoder().encode(x).length}\r\n${x}\r\n`;
    const arr = (xs: string[]) => `*${xs.length}\r\n${xs.map(bulk).join("")}`;
    const fake = await startFakeServer((socket, chunk) => {
      const decoder = new RespDecoder({
        onReply: (v) => {
          const args = (v as unknown[]).map(String);
          const cmd = args.map((a) => a.toUpperCase()).join(" ");
          if (cmd.startsWith("SENTINEL GET-MASTER-ADDR-BY-NAME")) {
            socket.write(arr([master.host, String(master.port)]));
          } else if (cmd.startsWith("SENTINEL SENTINELS")) {
            socket.write("*0\r\n");
          } else if (args[0]!.toUpperCase() === "SUBSCRIBE") {
            args.slice(1).forEach((ch, i) =>
              socket.write(`*3\r\n${bulk("subscribe")}${bulk(ch)}:${i + 1}\r\n`)
            );
            subscribers.add(socket);
          } else if (args[0]!.toUpperCase() === "PING") {
            socket.write("+PONG\r\n");
          } else {
            socket.write("+OK\r\n");
          }
        },
        onPush: () => {},
      });
      decoder.feed(chunk);
    });
    const logs: string[] = [];
    const log = (m: string) => void logs.push(m);
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: [fake.url],
      protocol: 2,
      logger: { debug: log, info: log, warn: log, error: log },
    });
    try {
      const switches: string[] = [];
      client.addEventListener("switch", (e) => {
        if (e.detail.from !== undefined) switches.push(`${e.detail.to.port}`);
      });
      await client.set("k", "v");
      await waitFor(
        () => logs.some((l) => l.includes("subscribed to the events")),
        5000,
        "the monitor's subscription",
      );
      const name = group.masterName;
      const m = `${master.host} ${master.port}`;
      const o = `127.0.0.1 ${other.port}`;
      // Flapping over about a second, as a sentinel set that cannot agree would.
      for (let i = 0; i < 400; i++) {
        const [from, to] = i % 2 === 0 ? [m, o] : [o, m];
        for (const s of subscribers) {
          s.write(arr(["message", "+switch-master", `${name} ${from} ${to}`]));
        }
        if (i % 4 === 3) await sleep(10);
      }
      // The last event named the master: the client ends there.
      await waitFor(
        () => client.endpoint?.port === master.port && switches.length > 0,
        10_000,
        `the client to settle on the master (at ${client.endpoint?.port}, moves ${
          switches.join(",")
        }, subscribers ${subscribers.size})`,
      );
      await sleep(500);
      assert.equal(client.endpoint?.port, master.port);
      // Before: one move (and new connections) per event, 273-393 of them for 400 events.
      assert.ok(switches.length <= 10, `${switches.length} moves for 400 events`);
      assert.equal(await client.get("k"), "v");
    } finally {
      await client.close();
      await fake.close();
      await other.stop();
    }
  });

  it("refuses bad options with a TypeError or RangeError", () => {
    const sentinels = group.sentinelUrls;
    assert.throws(
      () => new RedisSentinelClient({ masterName: "", sentinels }),
      /masterName must be a non-empty string/,
    );
    assert.throws(
      () => new RedisSentinelClient({ masterName: "m", sentinels: [] }),
      /sentinels must list at least one/,
    );
    assert.throws(
      () =>
        new RedisSentinelClient({
          masterName: "m",
          sentinels,
          role: "primary" as "master",
        }),
      RangeError,
    );
    assert.throws(
      () =>
        new RedisSentinelClient({
          masterName: "m",
          sentinels,
          ...{ url: "redis://127.0.0.1:6379" },
        }),
      /come from the sentinels/,
    );
    assert.throws(
      () => new RedisSentinelClient({ masterName: "m", sentinels: ["redis://u:pw123@h:1"] }),
      (e: Error) => e instanceof TypeError && !e.message.includes("pw123"),
    );
  });

  it("does not write to a replica in role replica: the replica refuses", async () => {
    await using client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      role: "replica",
    });
    await client.connect();
    const at = client.endpoint!;
    assert.ok(group.replicas.some((r) => r.port === at.port), `${at.port} is a replica`);
    await assert.rejects(client.set("ro:k", "v"), (e: Error) => {
      assert.ok(e instanceof ReplyError);
      assert.equal(e.prefix, "READONLY");
      return true;
    });
  });
});

describe("sentinel client: sentinels and data nodes with passwords", () => {
  let group: SentinelGroup;
  before(async () => {
    group = await startSentinelGroup({
      replicas: 1,
      sentinels: 2,
      sentinelPassword: "sentinel-pw-1",
      password: "data-pw-1",
    });
  });
  after(async () => {
    await group?.stop();
  });
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it("connects with the sentinel password and the data password", async () => {
    await using client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      sentinelPassword: "sentinel-pw-1",
      password: "data-pw-1",
    });
    assert.equal(await client.ping(), "PONG");
    assert.equal(client.endpoint?.port, group.master.port);
  });

  it("rejects a wrong data password naming the master the sentinels named, never the password", async () => {
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      sentinelPassword: "sentinel-pw-1",
      password: "wrong-data-pw",
    });
    try {
      await assert.rejects(client.ping(), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match(e.message, /no sentinel named a reachable master/);
        assert.ok(
          e.message.includes(`named 127.0.0.1:${group.master.port}: cannot authenticate`),
          e.message,
        );
        assert.ok(!e.message.includes("wrong-data-pw"), e.message);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  it("connects as an ACL user of the sentinels", async () => {
    for (const s of group.sentinels) {
      await group.sentinelCommand(s, ["ACL", "SETUSER", "watcher", "on", ">watcher-pw", "+@all"]);
    }
    await using client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      sentinelUsername: "watcher",
      sentinelPassword: "watcher-pw",
      password: "data-pw-1",
    });
    assert.equal(await client.ping(), "PONG");
    const bad = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      sentinelUsername: "watcher",
      sentinelPassword: "not-the-watcher-pw",
    });
    await assert.rejects(bad.ping(), (e: Error) => {
      assert.match(e.message, /cannot authenticate as "watcher"/);
      assert.ok(!e.message.includes("not-the-watcher-pw"), e.message);
      return true;
    });
    await bad.close();
  });

  it("rejects a wrong sentinel password naming the sentinels, never the password", async () => {
    const client = new RedisSentinelClient({
      masterName: group.masterName,
      sentinels: group.sentinelUrls,
      sentinelPassword: "wrong-pw-42",
    });
    try {
      await assert.rejects(client.ping(), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match(e.message, /^Cannot discover the master: no sentinel answered/);
        for (const s of group.sentinels) {
          assert.ok(e.message.includes(`127.0.0.1:${s.port}`), e.message);
        }
        assert.match(e.message, /WRONGPASS|invalid password|authenticate/i);
        assert.ok(!e.message.includes("wrong-pw-42"), e.message);
        return true;
      });
    } finally {
      await client.close();
    }
  });
});
