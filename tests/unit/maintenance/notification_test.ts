import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  isMaintenanceFrame,
  type MalformedMaintenanceNotification,
  parseMaintenanceNotification,
} from "../../../src/maintenance/mod.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import { bytes, push, pushes } from "./_helpers.ts";

function malformed(frame: RespValue[]): MalformedMaintenanceNotification {
  const r = parseMaintenanceNotification(frame);
  assert.ok(
    r !== undefined && r.type === "malformed",
    `expected malformed, got ${JSON.stringify(r)}`,
  );
  return r;
}

describe("parseMaintenanceNotification: byte-exact frames from the protocol reference", () => {
  it("MOVING with a target (bulk type name)", () => {
    const frame = push(">4\r\n$6\r\nMOVING\r\n:1\r\n:15\r\n$14\r\n10.0.0.2:12000\r\n");
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "MOVING",
      seq: 1,
      time: 15,
      target: { host: "10.0.0.2", port: 12000 },
    });
  });

  it("MOVING with a RESP3 null target", () => {
    const frame = push(">4\r\n$6\r\nMOVING\r\n:0\r\n:15\r\n_\r\n");
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "MOVING",
      seq: 0,
      time: 15,
      target: null,
    });
  });

  it("MOVING with a RESP2 null bulk target", () => {
    const frame = push(">4\r\n$6\r\nMOVING\r\n:5\r\n:15\r\n$-1\r\n");
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "MOVING",
      seq: 5,
      time: 15,
      target: null,
    });
  });

  it("MIGRATING (simple type name) and MIGRATED", () => {
    const [a, b] = pushes(
      '>4\r\n+MIGRATING\r\n:2\r\n:10\r\n+["1"]\r\n>3\r\n+MIGRATED\r\n:3\r\n+["1"]\r\n',
    );
    assert.deepEqual(parseMaintenanceNotification(a!), {
      type: "MIGRATING",
      seq: 2,
      time: 10,
      shardIds: '["1"]',
    });
    assert.deepEqual(parseMaintenanceNotification(b!), {
      type: "MIGRATED",
      seq: 3,
      shardIds: '["1"]',
    });
  });

  it("FAILING_OVER and FAILED_OVER", () => {
    const [a, b] = pushes(
      '>4\r\n$12\r\nFAILING_OVER\r\n:7\r\n:2\r\n$9\r\n["1","2"]\r\n' +
        '>3\r\n$11\r\nFAILED_OVER\r\n:8\r\n$9\r\n["1","2"]\r\n',
    );
    assert.deepEqual(parseMaintenanceNotification(a!), {
      type: "FAILING_OVER",
      seq: 7,
      time: 2,
      shardIds: '["1","2"]',
    });
    assert.deepEqual(parseMaintenanceNotification(b!), {
      type: "FAILED_OVER",
      seq: 8,
      shardIds: '["1","2"]',
    });
  });

  it("SMIGRATING", () => {
    const frame = push(">3\r\n+SMIGRATING\r\n:12\r\n+123,456,5000-7000\r\n");
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "SMIGRATING",
      seq: 12,
      slots: [{ start: 123, end: 123 }, { start: 456, end: 456 }, { start: 5000, end: 7000 }],
    });
  });

  it("SMIGRATED with [src, dst, slots] triples", () => {
    const frame = push(
      ">3\r\n+SMIGRATED\r\n:13\r\n*1\r\n*3\r\n+127.0.0.1:15379\r\n+127.0.0.1:15380\r\n+123,456,5000-7000\r\n",
    );
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "SMIGRATED",
      seq: 13,
      entries: [{
        source: { host: "127.0.0.1", port: 15379 },
        destination: { host: "127.0.0.1", port: 15380 },
        slots: [{ start: 123, end: 123 }, { start: 456, end: 456 }, { start: 5000, end: 7000 }],
      }],
    });
  });

  it("SMIGRATED with [dst, slots] pairs (older tools) and several entries", () => {
    const frame = push(
      ">3\r\n+SMIGRATED\r\n:14\r\n*2\r\n*2\r\n+127.0.0.1:7001\r\n+0-99\r\n" +
        "*3\r\n+127.0.0.1:7000\r\n+127.0.0.1:7002\r\n+100\r\n",
    );
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "SMIGRATED",
      seq: 14,
      entries: [
        {
          source: null,
          destination: { host: "127.0.0.1", port: 7001 },
          slots: [{ start: 0, end: 99 }],
        },
        {
          source: { host: "127.0.0.1", port: 7000 },
          destination: { host: "127.0.0.1", port: 7002 },
          slots: [{ start: 100, end: 100 }],
        },
      ],
    });
  });

  it("SMIGRATED with an empty entry list", () => {
    const frame = push(">3\r\n+SMIGRATED\r\n:15\r\n*0\r\n");
    assert.deepEqual(parseMaintenanceNotification(frame), {
      type: "SMIGRATED",
      seq: 15,
      entries: [],
    });
  });

  it("a pub/sub message and an invalidation are not maintenance frames", () => {
    const [msg, inv] = pushes(
      ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n>2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n",
    );
    assert.equal(parseMaintenanceNotification(msg!), undefined);
    assert.equal(parseMaintenanceNotification(inv!), undefined);
    assert.equal(isMaintenanceFrame(msg!), false);
  });

  it("a malformed MOVING off the wire (seq is a string)", () => {
    const frame = push(">4\r\n$6\r\nMOVING\r\n+x\r\n:15\r\n_\r\n");
    const r = malformed(frame);
    assert.equal(r.name, "MOVING");
    assert.match(r.reason, /sequence number at index 1/);
    assert.match(r.reason, /got "x"/);
  });
});

describe("parseMaintenanceNotification: element shapes", () => {
  it("accepts Uint8Array elements (binary decoding)", () => {
    assert.deepEqual(
      parseMaintenanceNotification([bytes("MOVING"), 3, 15, bytes("10.0.0.9:6379")]),
      { type: "MOVING", seq: 3, time: 15, target: { host: "10.0.0.9", port: 6379 } },
    );
    assert.deepEqual(parseMaintenanceNotification([bytes("MIGRATED"), 4, bytes('["2"]')]), {
      type: "MIGRATED",
      seq: 4,
      shardIds: '["2"]',
    });
    assert.deepEqual(
      parseMaintenanceNotification([bytes("SMIGRATING"), 5, bytes("1-3")]),
      { type: "SMIGRATING", seq: 5, slots: [{ start: 1, end: 3 }] },
    );
    assert.equal(isMaintenanceFrame([bytes("FAILED_OVER"), 1]), true);
  });

  it("accepts the type name in any case", () => {
    assert.equal(parseMaintenanceNotification(["moving", 1, 15, null])?.type, "MOVING");
    assert.equal(parseMaintenanceNotification(["Failed_Over", 1, null])?.type, "FAILED_OVER");
  });

  it("accepts numbers as safe bigints and decimal strings", () => {
    assert.deepEqual(parseMaintenanceNotification(["MOVING", 9n, "20", "h:1"]), {
      type: "MOVING",
      seq: 9,
      time: 20,
      target: { host: "h", port: 1 },
    });
    assert.deepEqual(parseMaintenanceNotification(["MIGRATING", "11", 2.5, null]), {
      type: "MIGRATING",
      seq: 11,
      time: 2.5,
      shardIds: null,
    });
  });

  it("keeps shard ids as text: missing or null gives null, an array is JSON", () => {
    assert.deepEqual(parseMaintenanceNotification(["MIGRATED", 1]), {
      type: "MIGRATED",
      seq: 1,
      shardIds: null,
    });
    assert.deepEqual(parseMaintenanceNotification(["FAILING_OVER", 1, 2, ["1", "2"]]), {
      type: "FAILING_OVER",
      seq: 1,
      time: 2,
      shardIds: '["1","2"]',
    });
  });

  it("ignores elements after the last expected one", () => {
    assert.deepEqual(parseMaintenanceNotification(["MIGRATED", 1, "[]", "extra", 5]), {
      type: "MIGRATED",
      seq: 1,
      shardIds: "[]",
    });
  });

  it("accepts slot lists with spaces, empty items, single slots as integers, and arrays", () => {
    assert.deepEqual(parseMaintenanceNotification(["SMIGRATING", 1, " 1 , ,2- 4,"]), {
      type: "SMIGRATING",
      seq: 1,
      slots: [{ start: 1, end: 1 }, { start: 2, end: 4 }],
    });
    assert.deepEqual(parseMaintenanceNotification(["SMIGRATING", 1, ["7", 9, "16383"]]), {
      type: "SMIGRATING",
      seq: 1,
      slots: [{ start: 7, end: 7 }, { start: 9, end: 9 }, { start: 16383, end: 16383 }],
    });
    assert.deepEqual(parseMaintenanceNotification(["SMIGRATING", 1, ""]), {
      type: "SMIGRATING",
      seq: 1,
      slots: [],
    });
  });

  it("accepts a single SMIGRATED entry sent unwrapped", () => {
    assert.deepEqual(parseMaintenanceNotification(["SMIGRATED", 2, ["a:1", "b:2", "5"]]), {
      type: "SMIGRATED",
      seq: 2,
      entries: [{
        source: { host: "a", port: 1 },
        destination: { host: "b", port: 2 },
        slots: [{ start: 5, end: 5 }],
      }],
    });
  });

  it("accepts an SMIGRATED source that names no node", () => {
    const r = parseMaintenanceNotification(["SMIGRATED", 2, [["?", "b:2", "5"]]]);
    assert.ok(r?.type === "SMIGRATED");
    assert.equal(r.entries[0]?.source, null);
  });
});

describe("parseMaintenanceNotification: MOVING targets", () => {
  const target = (t: RespValue | undefined): unknown => {
    const frame: RespValue[] = t === undefined ? ["MOVING", 1, 15] : ["MOVING", 1, 15, t];
    const r = parseMaintenanceNotification(frame);
    assert.ok(r?.type === "MOVING", `expected MOVING, got ${JSON.stringify(r)}`);
    return r.target;
  };

  for (
    const [label, value] of [
      ["null", null],
      ["missing", undefined],
      ['"null"', "null"],
      ['"NULL"', "NULL"],
      ["empty", ""],
      ['"?"', "?"],
      ["empty host", ":6379"],
      ['host "?"', "?:6379"],
      ["port 0", "10.0.0.2:0"],
      ["IPv6 port 0", "[::1]:0"],
    ] as const
  ) {
    it(`reads ${label} as no target`, () => {
      assert.equal(target(value), null);
    });
  }

  for (
    const [text, host, port] of [
      ["[::1]:6379", "::1", 6379],
      ["::1:6379", "::1", 6379],
      ["[fe80::1%eth0]:7000", "fe80::1%eth0", 7000],
      ["2001:db8::5:6380", "2001:db8::5", 6380],
      ["redis-12000.cluster.example.com:12000", "redis-12000.cluster.example.com", 12000],
      [" 10.0.0.2:12000 ", "10.0.0.2", 12000],
      ["10.0.0.2:65535", "10.0.0.2", 65535],
    ] as const
  ) {
    it(`parses ${JSON.stringify(text)}`, () => {
      assert.deepEqual(target(text), { host, port });
    });
  }
});

describe("parseMaintenanceNotification: malformed frames", () => {
  const cases: [string, RespValue[], RegExp][] = [
    ["MOVING without a seq", ["MOVING"], /sequence number at index 1.*got nothing/],
    ["a negative seq", ["MOVING", -1, 15, null], /non-negative integer, got -1/],
    ["a fractional seq", ["MIGRATED", 1.5, null], /non-negative integer, got 1\.5/],
    [
      "a seq above the safe integer range",
      ["MIGRATED", 2n ** 60n, null],
      /non-negative integer, got 1152921504606846976/,
    ],
    ["a seq that is an array", ["FAILED_OVER", [1], null], /got an array of 1/],
    ["MOVING without a time", ["MOVING", 1], /time at index 2.*got nothing/],
    ["a negative time", ["MIGRATING", 1, -5, null], /non-negative number of seconds, got -5/],
    ["an infinite time", ["FAILING_OVER", 1, Infinity, null], /got Infinity/],
    ["a time that is a word", ["MOVING", 1, "soon", null], /got "soon"/],
    ["a target without a port", ["MOVING", 1, 15, "10.0.0.2"], /missing the port/],
    ["a target with a word port", ["MOVING", 1, 15, "h:abc"], /the port is not a number/],
    ["a target with a port above 65535", ["MOVING", 1, 15, "h:70000"], /above 65535/],
    ["a bracketed target without a port", ["MOVING", 1, 15, "[::1]6379"], /missing the port/],
    ["a bracketed target without ]", ["MOVING", 1, 15, "[::1:6379"], /missing "]"/],
    ["a target that is a number", ["MOVING", 1, 15, 6379], /expected the endpoint.*got 6379/],
    ["SMIGRATING without slots", ["SMIGRATING", 1], /slots at index 2, got nothing/],
    ["a slot that is a word", ["SMIGRATING", 1, "1,abc"], /"abc"/],
    ["a slot above 16383", ["SMIGRATING", 1, "16384"], /slots are 0-16383/],
    ["a range backwards", ["SMIGRATING", 1, "10-5"], /start is above the end/],
    ["a slot list that is a map", ["SMIGRATING", 1, new Map()], /got a map/],
    ["SMIGRATED without entries", ["SMIGRATED", 1], /entries at index 2 to be an array/],
    ["SMIGRATED entries as a string", ["SMIGRATED", 1, "a:1 b:2 5"], /to be an array/],
    ["an entry of one element", ["SMIGRATED", 1, [["a:1"]]], /entry 0 to be/],
    ["an entry of four elements", ["SMIGRATED", 1, [["a:1", "b:2", "3", "4"]]], /entry 0/],
    ["an entry without a destination", ["SMIGRATED", 1, [["a:1", null, "5"]]], /destination/],
    ["an entry with a bad slot", ["SMIGRATED", 1, [["b:2", "x"]]], /of entry 0/],
    ["an entry with a bad address", ["SMIGRATED", 1, [["a", "b:2", "5"]]], /missing the port/],
    ["a second entry that is wrong", ["SMIGRATED", 1, [["b:2", "1"], "c:3"]], /entry 1/],
  ];
  for (const [label, frame, reason] of cases) {
    it(`flags ${label}`, () => {
      const r = malformed(frame);
      assert.equal(r.name, String(frame[0]));
      assert.match(r.reason, reason);
    });
  }
});

describe("parseMaintenanceNotification: frames that are not maintenance", () => {
  for (
    const [label, frame] of [
      ["an empty frame", []],
      ["a numeric first element", [42, "MOVING"]],
      ["a null first element", [null]],
      ["pmessage", ["pmessage", "n*", "news", "hi"]],
      ["smessage", ["smessage", "s", "hi"]],
      ["a near miss", ["MOVINGS", 1, 15, null]],
    ] as [string, RespValue[]][]
  ) {
    it(`returns undefined for ${label}`, () => {
      assert.equal(parseMaintenanceNotification(frame), undefined);
      assert.equal(isMaintenanceFrame(frame), false);
    });
  }

  it("returns undefined for a value that is not an array", () => {
    assert.equal(parseMaintenanceNotification("MOVING" as unknown as RespValue[]), undefined);
  });

  it("isMaintenanceFrame recognises every maintenance name without parsing the rest", () => {
    for (
      const name of [
        "MOVING",
        "MIGRATING",
        "MIGRATED",
        "FAILING_OVER",
        "FAILED_OVER",
        "SMIGRATING",
        "SMIGRATED",
      ]
    ) {
      assert.equal(isMaintenanceFrame([name, "garbage"]), true, name);
    }
  });
});
