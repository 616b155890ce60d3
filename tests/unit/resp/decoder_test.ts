import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProtocolError, ReplyError } from "../../../src/errors.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import {
  canon,
  CASES,
  collector,
  concat,
  decodeBytewise,
  decodeCuts,
  type Event,
  prng,
  randomValue,
  raw,
  te,
} from "./_helpers.ts";

describe("RespDecoder: every frame type", () => {
  for (const [name, frame, expected] of CASES) {
    const bytes = raw(frame);
    it(`${name}: whole`, () => {
      assert.deepEqual(decodeCuts(bytes, []), [expected]);
    });
    it(`${name}: split at every byte boundary`, () => {
      for (let i = 1; i < bytes.length; i++) {
        assert.deepEqual(decodeCuts(bytes, [i]), [expected], `split at ${i}`);
      }
    });
    it(`${name}: one byte at a time`, () => {
      assert.deepEqual(decodeBytewise(bytes), [expected]);
    });
    it(`${name}: between other frames, split at every boundary`, () => {
      const stream = concat([raw("+a\r\n"), bytes, raw(":1\r\n")]);
      const want: Event[] = [
        { kind: "reply", value: { s: "a" } },
        expected,
        { kind: "reply", value: { n: 1 } },
      ];
      for (let i = 0; i <= stream.length; i++) {
        for (const j of [i, Math.min(stream.length, i + 3), stream.length]) {
          assert.deepEqual(decodeCuts(stream, [i, j]), want, `cuts at ${i}, ${j}`);
        }
      }
    });
  }

  it("decodes the whole corpus in one chunk, in order", () => {
    const stream = concat(CASES.map(([, f]) => raw(f)));
    assert.deepEqual(decodeCuts(stream, []), CASES.map(([, , e]) => e));
    assert.deepEqual(decodeBytewise(stream), CASES.map(([, , e]) => e));
  });

  it("gives integers outside the safe range as bigint and others as number", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.feed(te.encode(":-9007199254740991\r\n:-9007199254740992\r\n:0\r\n:-0\r\n"));
    assert.deepEqual(values, [-9007199254740991, -9007199254740992n, 0, 0]);
    assert.equal(Object.is(values[3], 0), true);
  });

  it("decodes many distinct short keys and simple strings exactly (string cache collisions)", () => {
    const keys: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      keys.push((i * 2654435761 >>> 0).toString(36).slice(0, 1 + i % 16));
    }
    const m = new Map<RespValue, RespValue>(keys.map((k, i) => [k, i]));
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    for (let round = 0; round < 2; round++) {
      d.feed(encodeValue(m));
      d.feed(te.encode(keys.map((k) => `+${k}\r\n`).join("")));
    }
    const expected: RespValue[] = [m, ...keys];
    assert.deepEqual(values, [...expected, ...expected]);
  });

  it("delivers a top-level error as a ReplyError value", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.feed(te.encode("-WRONGTYPE Operation against a key\r\n"));
    assert.ok(values[0] instanceof ReplyError);
    assert.equal((values[0] as ReplyError).prefix, "WRONGTYPE");
  });

  it("merges consecutive top-level attributes and passes none when absent", () => {
    const got: [RespValue, Map<RespValue, RespValue> | undefined][] = [];
    const d = new RespDecoder({ onReply: (v, a) => got.push([v, a]), onPush: () => {} });
    d.feed(te.encode("|1\r\n+a\r\n:1\r\n|1\r\n+b\r\n:2\r\n+v\r\n+w\r\n"));
    assert.equal(got.length, 2);
    assert.deepEqual(got[0], ["v", new Map<RespValue, RespValue>([["a", 1], ["b", 2]])]);
    assert.deepEqual(got[1], ["w", undefined]);
  });

  it("drops attributes before a push and sends the push to onPush", () => {
    const c = collector();
    c.decoder.feed(te.encode("|1\r\n+a\r\n:1\r\n>1\r\n+p\r\n"));
    assert.deepEqual(c.events, [{ kind: "push", value: { a: [{ s: "p" }] } }]);
  });
});

describe("RespDecoder: random splits of a long mixed stream", () => {
  const rand = prng(0x5eed);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < 400; i++) {
    if (rand() < 0.5) {
      const c = CASES[Math.floor(rand() * CASES.length)]!;
      parts.push(raw(c[1]));
    } else parts.push(encodeValue(randomValue(rand), rand() < 0.8 ? 3 : 2));
  }
  // a few large bulks, so frames straddle many chunks
  parts.push(encodeValue("y".repeat(200_000)), encodeValue(["z".repeat(70_000), 1]));
  const stream = concat(parts);
  const whole = decodeCuts(stream, []);

  it("has the expected frame count", () => {
    assert.equal(whole.length, parts.length);
  });

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: equals the whole-stream decode`, () => {
      const r = prng(seed);
      const cuts: number[] = [];
      const maxPiece = seed <= 4 ? 16 : 70_000;
      for (let at = 0;;) {
        at += 1 + Math.floor(r() * maxPiece);
        if (at >= stream.length) break;
        cuts.push(at);
      }
      assert.deepEqual(decodeCuts(stream, cuts), whole);
    });
  }

  it("reused chunk memory does not corrupt pending frames", () => {
    const c = collector();
    const buf = new Uint8Array(37);
    for (let at = 0; at < stream.length; at += buf.length) {
      const piece = stream.subarray(at, at + buf.length);
      buf.set(piece);
      c.decoder.feed(buf.subarray(0, piece.length));
      buf.fill(0x21);
    }
    assert.deepEqual(c.events, whole);
  });
});

describe("RespDecoder: large bulk strings", () => {
  it("decodes a 16 MB bulk fed in 64 KB chunks", () => {
    const size = 16 * 1024 * 1024;
    const payload = new Uint8Array(size);
    for (let i = 0; i < size; i++) payload[i] = i * 7 & 0xff;
    const frame = concat([te.encode(`$${size}\r\n`), payload, te.encode("\r\n+OK\r\n")]);
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.binary = true;
    for (let at = 0; at < frame.length; at += 65536) d.feed(frame.subarray(at, at + 65536));
    assert.equal(values.length, 2);
    assert.ok(values[0] instanceof Uint8Array);
    assert.equal((values[0] as Uint8Array).length, size);
    assert.deepEqual(values[0], payload);
    assert.deepEqual(values[1], te.encode("OK"));
  });

  it("decodes a large array of small elements fed in small chunks", () => {
    const n = 100_000;
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(`member:${i}`);
    const frame = encodeValue(items);
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    for (let at = 0; at < frame.length; at += 1000) d.feed(frame.subarray(at, at + 1000));
    assert.deepEqual(values, [items]);
  });
});

describe("RespDecoder: long lines", () => {
  it("decodes a 4 MB simple string fed in 512-byte chunks (no rescan from the line start)", () => {
    const line = "s".repeat(4 * 1024 * 1024);
    const stream = te.encode(`+${line}\r\n-ERR ${line}\r\n:1\r\n`);
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    for (let at = 0; at < stream.length; at += 512) d.feed(stream.subarray(at, at + 512));
    assert.equal(values.length, 3);
    assert.equal(values[0], line);
    assert.ok(values[1] instanceof ReplyError);
    assert.equal(values[1].message, `ERR ${line}`);
    assert.equal(values[2], 1);
  });

  it("rejects a double longer than 1024 bytes at its start, at any split", () => {
    const stream = te.encode(`+OK\r\n,${"1".repeat(1100)}\r\n`);
    for (const cut of [0, 6, 500, 1030, 1031, 1100, stream.length - 1]) {
      const d = new RespDecoder({ onReply: () => {}, onPush: () => {} });
      assert.throws(() => {
        d.feed(stream.subarray(0, cut));
        d.feed(stream.subarray(cut));
      }, {
        name: "ProtocolError",
        offset: 6,
        message: "Cannot decode the reply: double is longer than 1024 bytes",
      });
    }
  });
});

describe("RespDecoder: binary mode", () => {
  const invalid = "\xff\xfe\r\n\x00\x80";
  const stream = raw(
    `$${invalid.length}\r\n${invalid}\r\n+\xc3\xa9\r\n=7\r\ntxt:\xff\r\n\r\n*2\r\n$1\r\n\xff\r\n:1\r\n` +
      `>2\r\n+message\r\n$2\r\nhi\r\n%1\r\n$1\r\nk\r\n$1\r\nv\r\n`,
  );
  const expected: Event[] = [
    { kind: "reply", value: { bytes: [0xff, 0xfe, 13, 10, 0, 0x80] } },
    { kind: "reply", value: { bytes: [0xc3, 0xa9] } },
    { kind: "reply", value: { bytes: [0xff, 13, 10] } },
    { kind: "reply", value: { a: [{ bytes: [0xff] }, { n: 1 }] } },
    { kind: "push", value: { a: [{ s: "message" }, { s: "hi" }] } },
    { kind: "reply", value: { m: [[{ bytes: [0x6b] }, { bytes: [0x76] }]] } },
  ];

  it("keeps bytes exactly, including invalid UTF-8 and CRLF inside bulks", () => {
    assert.deepEqual(decodeCuts(stream, [], true), expected);
  });

  it("decodes the same at every split and byte by byte", () => {
    const whole = decodeCuts(stream, [], true);
    for (let i = 1; i < stream.length; i++) {
      assert.deepEqual(decodeCuts(stream, [i], true), whole, `split at ${i}`);
    }
    assert.deepEqual(decodeBytewise(stream, true), whole);
  });

  it("keeps every byte value intact while many more are decoded (shared blocks)", () => {
    const rand = prng(11);
    const expected: Uint8Array[] = [];
    for (let i = 0; i < 5000; i++) {
      const n = Math.floor(rand() * (i % 10 === 0 ? 3000 : 60));
      expected.push(new Uint8Array(n).map(() => rand() * 256));
    }
    const stream = concat(expected.map((v) => encodeValue(v)));
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.binary = true;
    for (let at = 0; at < stream.length; at += 7001) d.feed(stream.subarray(at, at + 7001));
    assert.deepEqual(values, expected);
    // writing into one value leaves its neighbours alone
    (values[1] as Uint8Array).fill(0xee);
    assert.deepEqual(values.slice(2), expected.slice(2));
  });

  it("decodes invalid UTF-8 as U+FFFD in string mode", () => {
    const got = decodeCuts(raw("$2\r\n\xff\x41\r\n"), []);
    assert.deepEqual(got, [{ kind: "reply", value: { s: "\ufffdA" } }]);
  });

  it("reads the flag at the start of each frame", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({
      onReply(v) {
        values.push(v);
        d.binary = !d.binary; // the next frame decodes the other way
      },
      onPush: () => {},
    });
    const frames = te.encode("$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n");
    d.feed(frames.subarray(0, 10)); // the second frame straddles the chunks
    d.feed(frames.subarray(10));
    assert.deepEqual(values, ["a", te.encode("b"), "c", te.encode("d")]);
  });

  it("gives large binary bulks that own their memory", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.binary = true;
    const chunk = concat([te.encode("$3\r\nabc\r\n$200000\r\n"), new Uint8Array(200_000)]);
    d.feed(chunk);
    d.feed(te.encode("\r\n"));
    chunk.fill(0x7a);
    assert.deepEqual(values[0], te.encode("abc"));
    assert.equal((values[1] as Uint8Array).length, 200_000);
    assert.ok((values[1] as Uint8Array).every((b) => b === 0));
  });
});

describe("RespDecoder: malformed input", () => {
  // [name, bytes after a 5-byte "+OK\r\n" prefix, expected offset of the fault in the stream]
  const bad: [string, string, number][] = [
    ["unknown type byte", "?x\r\n", 5],
    ["end marker outside a streamed aggregate", ".\r\n", 5],
    ["non-numeric length", "$abc\r\n", 6],
    ["empty length", "*\r\n", 6],
    ["negative length", "$-2\r\n", 6],
    ["negative array length", "*-5\r\n", 6],
    ["null map", "%-1\r\n", 6],
    ["absurd length", "$536870913\r\n", 6],
    ["absurd array length", "*9999999999\r\n", 6],
    ["missing CRLF after a bulk", "$3\r\nabcd\r\n", 12],
    ["CR without LF after a bulk", "$3\r\nabc\rX", 13],
    ["missing LF after a length", "$3\rabc\r\n", 8],
    ["bare LF in a simple string", "+OK\n", 8],
    ["CR not followed by LF", "+OK\rX", 9],
    ["non-numeric integer", ":12a\r\n", 8],
    ["empty integer", ":\r\n", 6],
    ["integer too long", ":12345678901234567890\r\n", 6],
    ["bad boolean", "#x\r\n", 6],
    ["bad null", "_x\r\n", 6],
    ["bad double", ",abc\r\n", 6],
    ["bad big number", "(12a\r\n", 6],
    ["verbatim without a prefix", "=3\r\nabc\r\n", 9],
    ["streamed attribute", "|?\r\n", 6],
    ["streamed bulk error", "!?\r\n", 6],
    ["streamed string without a chunk", "$?\r\n+x\r\n", 9],
    ["streamed map ending after a key", "%?\r\n+a\r\n.\r\n", 13],
    ["bad element inside an array", "*2\r\n:1\r\n?\r\n", 13],
    ["bad element deep inside a map", "%1\r\n+k\r\n*1\r\n$x\r\n", 18],
  ];
  for (const [name, body, offset] of bad) {
    const stream = concat([raw("+OK\r\n"), raw(body)]);
    it(`${name}: ProtocolError at offset ${offset}, at any split`, () => {
      for (let i = 0; i <= stream.length; i++) {
        const values: RespValue[] = [];
        const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
        let error: unknown;
        try {
          d.feed(stream.subarray(0, i));
          d.feed(stream.subarray(i));
        } catch (e) {
          error = e;
        }
        assert.ok(error instanceof ProtocolError, `split at ${i}: ${error}`);
        assert.equal(error.offset, offset, `split at ${i}: ${error.message}`);
        assert.match(error.message, /^Cannot decode the reply: /);
        assert.deepEqual(values, ["OK"]);
      }
    });
  }

  it("refuses input after an error until reset, then decodes again from offset 0", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.feed(te.encode("$1\r\n"));
    assert.throws(() => d.feed(te.encode("abc")), { name: "ProtocolError", offset: 5 });
    assert.throws(() => d.feed(te.encode("+OK\r\n")), ProtocolError);
    d.reset();
    d.feed(te.encode("+OK\r\n"));
    assert.deepEqual(values, ["OK"]);
    assert.throws(() => d.feed(te.encode("x")), { name: "ProtocolError", offset: 5 });
  });

  it("counts offsets across many chunks", () => {
    const d = new RespDecoder({ onReply: () => {}, onPush: () => {} });
    for (let i = 0; i < 1000; i++) d.feed(te.encode("+PONG\r\n"));
    assert.throws(() => d.feed(te.encode(":1\r\n:x")), { name: "ProtocolError", offset: 7005 });
  });
});

describe("RespDecoder: deep nesting", () => {
  it("accepts 512 levels", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.feed(te.encode("*1\r\n".repeat(511) + "~1\r\n:7\r\n"));
    let v = values[0];
    for (let i = 0; i < 511; i++) {
      assert.ok(Array.isArray(v));
      v = v[0];
    }
    assert.ok(v instanceof Set);
    assert.deepEqual([...v], [7]);
  });

  for (const [name, open] of [["arrays", "*1\r\n"], ["maps", "%1\r\n+k\r\n"]] as const) {
    it(`rejects 100000 nested ${name} with a ProtocolError, whole and split`, () => {
      const stream = te.encode(open.repeat(100_000) + ":1\r\n");
      const offset = open.length * 512;
      for (const cut of [0, 1, 2000, 2051, stream.length - 1]) {
        const d = new RespDecoder({ onReply: () => assert.fail("no reply"), onPush: () => {} });
        assert.throws(() => {
          d.feed(stream.subarray(0, cut));
          d.feed(stream.subarray(cut));
        }, (e: unknown) => e instanceof ProtocolError && e.offset === offset);
      }
    });
  }

  it("survives 100000 chained attributes", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    const stream = te.encode(
      "*1\r\n" + "|0\r\n".repeat(100_000) + ":1\r\n" + "|0\r\n".repeat(1000) + "+x\r\n",
    );
    d.feed(stream);
    d.reset();
    for (let at = 0; at < stream.length; at += 999) d.feed(stream.subarray(at, at + 999));
    assert.deepEqual(values, [[1], "x", [1], "x"]);
  });
});

describe("RespDecoder: handlers", () => {
  it("keeps decoding when a handler throws and rethrows the first error", () => {
    const seen: RespValue[] = [];
    const d = new RespDecoder({
      onReply(v) {
        seen.push(v);
        if (v === "a" || v === "b") throw new Error(`boom ${v}`);
      },
      onPush: () => {},
    });
    assert.throws(() => d.feed(te.encode("+a\r\n+b\r\n+c\r\n+d")), { message: "boom a" });
    d.feed(te.encode("\r\n"));
    assert.deepEqual(seen, ["a", "b", "c", "d"]);
  });

  it("stops decoding the chunk when a handler resets the decoder", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({
      onReply(v) {
        values.push(v);
        if (v === "reset") d.reset();
      },
      onPush: () => {},
    });
    d.feed(te.encode("+a\r\n+reset\r\n+dropped\r\n$5\r\ndro"));
    // offsets restart at the reset
    assert.throws(() => d.feed(te.encode("+b\r\n?")), { name: "ProtocolError", offset: 4 });
    assert.deepEqual(values, ["a", "reset", "b"]);
  });

  it("refuses to be fed from its own handler", () => {
    const errors: unknown[] = [];
    const values: RespValue[] = [];
    const d = new RespDecoder({
      onReply(v) {
        values.push(v);
        try {
          d.feed(te.encode("+x\r\n"));
        } catch (e) {
          errors.push(e);
        }
      },
      onPush: () => {},
    });
    d.feed(te.encode("+a\r\n+b\r\n"));
    assert.deepEqual(values, ["a", "b"]);
    assert.equal(errors.length, 2);
    assert.match(String(errors[0]), /Cannot feed the decoder from one of its handlers/);
  });

  it("gives each frame its own values", () => {
    const values: RespValue[] = [];
    const d = new RespDecoder({ onReply: (v) => values.push(v), onPush: () => {} });
    d.binary = true;
    const chunk = te.encode("$3\r\nabc\r\n");
    d.feed(chunk);
    chunk.fill(0);
    d.feed(te.encode("$3\r\nabc\r\n"));
    assert.deepEqual(values, [te.encode("abc"), te.encode("abc")]);
    assert.notEqual(values[0], values[1]);
    assert.deepEqual(canon(values[0]!), { bytes: [97, 98, 99] });
  });
});
