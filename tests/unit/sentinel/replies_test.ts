import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  entriesOf,
  entryAddress,
  masterAddressOf,
  parseSentinelAddress,
  parseSentinelEvent,
  replicaEntryHealthy,
  roleOf,
} from "../../../src/sentinel/_replies.ts";

describe("sentinel replies", () => {
  it("parses sentinel addresses in every accepted form", () => {
    assert.deepEqual(parseSentinelAddress("redis://127.0.0.1:26380"), {
      host: "127.0.0.1",
      port: 26380,
    });
    assert.deepEqual(parseSentinelAddress("127.0.0.1:26381"), { host: "127.0.0.1", port: 26381 });
    assert.deepEqual(parseSentinelAddress("redis://[::1]:26382"), { host: "::1", port: 26382 });
    assert.deepEqual(parseSentinelAddress("sentinel.example"), {
      host: "sentinel.example",
      port: 26379,
    });
    assert.deepEqual(parseSentinelAddress({ host: "h", port: 1 }), { host: "h", port: 1 });
  });

  it("refuses bad sentinel addresses, and credentials in them without echoing them", () => {
    assert.throws(() => parseSentinelAddress("http://h:1"), /scheme "http:"/);
    assert.throws(() => parseSentinelAddress(""), TypeError);
    assert.throws(() => parseSentinelAddress({ host: "h", port: 0 }), RangeError);
    assert.throws(() => parseSentinelAddress("h:70000"), TypeError);
    assert.throws(
      () => parseSentinelAddress("redis://user:hunter2@h:26379"),
      (e: Error) =>
        e instanceof TypeError && /sentinelPassword/.test(e.message) &&
        !e.message.includes("hunter2"),
    );
  });

  it("reads SENTINEL REPLICAS entries from RESP2 arrays and RESP3 maps", () => {
    const resp2 = [[
      "name",
      "127.0.0.1:7001",
      "ip",
      "127.0.0.1",
      "port",
      "7001",
      "flags",
      "slave",
      "master-link-status",
      "ok",
    ]];
    const resp3 = [
      new Map<string, string>([
        ["ip", "127.0.0.1"],
        ["port", "7002"],
        ["flags", "slave,s_down"],
        ["master-link-status", "ok"],
      ]),
      new Map<string, string>([
        ["ip", "127.0.0.1"],
        ["port", "7003"],
        ["flags", "slave"],
        ["master-link-status", "err"],
      ]),
    ];
    const [a] = entriesOf(resp2);
    assert.deepEqual(entryAddress(a!), { host: "127.0.0.1", port: 7001 });
    assert.equal(replicaEntryHealthy(a!), true);
    const [b, c] = entriesOf(resp3);
    assert.deepEqual(entryAddress(b!), { host: "127.0.0.1", port: 7002 });
    assert.equal(replicaEntryHealthy(b!), false, "s_down");
    assert.equal(replicaEntryHealthy(c!), false, "link to the master down");
    assert.deepEqual(entriesOf(null), []);
  });

  it("reads GET-MASTER-ADDR-BY-NAME and ROLE replies", () => {
    assert.deepEqual(masterAddressOf(["127.0.0.1", "6379"]), { host: "127.0.0.1", port: 6379 });
    assert.equal(masterAddressOf(null), undefined);
    assert.equal(masterAddressOf(["h", "x"]), undefined);
    assert.deepEqual(roleOf(["master", 10, []]), { role: "master" });
    assert.deepEqual(roleOf(["slave", "127.0.0.1", 6379, "connected", 10]), {
      role: "replica",
      master: { host: "127.0.0.1", port: 6379 },
      connected: true,
    });
    const r = roleOf(["slave", "127.0.0.1", 6379, "sync", -1]);
    assert.equal(r.role === "replica" && r.connected, false);
    assert.deepEqual(roleOf(["sentinel", ["mymaster"]]), { role: "other", name: "sentinel" });
  });

  it("parses the events of the monitored master and ignores other masters'", () => {
    assert.deepEqual(
      parseSentinelEvent("+switch-master", "mymaster 127.0.0.1 7000 127.0.0.1 7001", "mymaster"),
      {
        kind: "switch-master",
        from: { host: "127.0.0.1", port: 7000 },
        to: { host: "127.0.0.1", port: 7001 },
      },
    );
    assert.equal(
      parseSentinelEvent("+switch-master", "other 127.0.0.1 7000 127.0.0.1 7001", "mymaster"),
      undefined,
    );
    assert.deepEqual(
      parseSentinelEvent(
        "+sdown",
        "slave 127.0.0.1:7002 127.0.0.1 7002 @ mymaster 127.0.0.1 7000",
        "mymaster",
      ),
      {
        kind: "instance",
        channel: "+sdown",
        type: "slave",
        address: { host: "127.0.0.1", port: 7002 },
      },
    );
    assert.deepEqual(
      parseSentinelEvent("+sdown", "master mymaster 127.0.0.1 7000", "mymaster"),
      {
        kind: "instance",
        channel: "+sdown",
        type: "master",
        address: { host: "127.0.0.1", port: 7000 },
      },
    );
    assert.equal(
      parseSentinelEvent("+sdown", "master other 127.0.0.1 7000", "mymaster"),
      undefined,
    );
    assert.deepEqual(
      parseSentinelEvent(
        "+sentinel",
        "sentinel 5aae 127.0.0.1 26381 @ mymaster 127.0.0.1 7000",
        "mymaster",
      )?.kind,
      "instance",
    );
    assert.equal(parseSentinelEvent("+sdown", "garbage", "mymaster"), undefined);
  });
});
