import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ReplyError } from "../../../src/errors.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import {
  encodeCommand,
  encodePush,
  encodeSimple,
  encodeValue,
  RespEncoder,
} from "../../../src/resp/encoder.ts";
import type { RedisArgument, RespValue } from "../../../src/resp/types.ts";
import { canon, concat, decodeCuts, prng, randomString, randomValue, te } from "./_helpers.ts";

const td = new TextDecoder();

/** Decodes every frame of `bytes` (strings as bytes when `binary`). */
function decodeAll(bytes: Uint8Array, binary = false): RespValue[] {
  const out: RespValue[] = [];
  const d = new RespDecoder({ onReply: (v) => out.push(v), onPush: (f) => out.push(f) });
  d.binary = binary;
  d.feed(bytes);
  return out;
}

/** What Redis receives for an argument. */
function argBytes(a: RedisArgument): Uint8Array {
  if (a instanceof Uint8Array) return a;
  if (typeof a === "number") {
    return te.encode(a === Infinity ? "+inf" : a === -Infinity ? "-inf" : String(a));
  }
  return te.encode(a);
}

describe("RespEncoder.writeCommand", () => {
  it("writes an array of bulk strings", () => {
    assert.equal(
      td.decode(encodeCommand(["SET", "key", "value"])),
      "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
    );
    assert.equal(td.decode(encodeCommand([])), "*0\r\n");
  });

  it("writes numbers in decimal", () => {
    assert.equal(
      td.decode(encodeCommand(["X", 0, 42, -7, 1.5, 1e21, Infinity, -Infinity, 2 ** 53])),
      "*9\r\n$1\r\nX\r\n$1\r\n0\r\n$2\r\n42\r\n$2\r\n-7\r\n$3\r\n1.5\r\n$5\r\n1e+21\r\n" +
        "$4\r\n+inf\r\n$4\r\n-inf\r\n$16\r\n9007199254740992\r\n",
    );
  });

  const cases: [string, RedisArgument[]][] = [
    ["empty string", ["SET", "", ""]],
    ["unicode", ["SET", "clé", "€ 😀 \u0000 日本語"]],
    ["unicode longer than the short-string path", ["SET", "é".repeat(100), "😀".repeat(1000)]],
    ["ascii at the short-string limit", ["A".repeat(63), "B".repeat(64), "C".repeat(65)]],
    ["lone surrogate", ["SET", "a\ud800b"]],
    ["bytes", ["SET", new Uint8Array([0, 13, 10, 255]), new Uint8Array(0)]],
    ["numbers", ["INCRBY", 1234567890123, -1, 0.25]],
    ["1 MB string", ["SET", "big", "x".repeat(1024 * 1024)]],
    ["1 MB unicode string", ["SET", "big", "é".repeat(512 * 1024)]],
    ["1 MB bytes", ["SET", "big", new Uint8Array(1024 * 1024).fill(7)]],
  ];
  for (const [name, args] of cases) {
    it(`round trips: ${name}`, () => {
      const [got] = decodeAll(encodeCommand(args), true);
      assert.deepEqual(got, args.map(argBytes));
    });
  }

  it("round trips random commands through one encoder, taken at random points", () => {
    const rand = prng(99);
    const encoder = new RespEncoder(64);
    const expected: Uint8Array[][] = [];
    const taken: Uint8Array[] = [];
    for (let i = 0; i < 2000; i++) {
      const args: RedisArgument[] = [];
      const n = Math.floor(rand() * 6);
      for (let j = 0; j < n; j++) {
        const r = rand();
        args.push(
          r < 0.5
            ? randomString(rand, r < 0.05 ? 3000 : 30)
            : r < 0.8
            ? Math.floor((rand() - 0.5) * 1e12)
            : new Uint8Array(Math.floor(rand() * 100)).map(() => rand() * 256),
        );
      }
      expected.push(args.map(argBytes));
      encoder.writeCommand(args);
      if (rand() < 0.3) taken.push(encoder.take());
    }
    taken.push(encoder.take());
    assert.equal(encoder.length, 0);
    assert.deepEqual(decodeAll(concat(taken), true), expected);
  });

  it("never overwrites a taken array", () => {
    const encoder = new RespEncoder(32);
    encoder.writeCommand(["GET", "a"]);
    const first = encoder.take();
    const copy = first.slice();
    for (let i = 0; i < 100; i++) encoder.writeCommand(["SET", `k${i}`, "v".repeat(i)]);
    encoder.take();
    encoder.writeCommand(["PING"]);
    assert.deepEqual(first, copy);
  });

  it("tracks the pending length", () => {
    const encoder = new RespEncoder();
    assert.equal(encoder.length, 0);
    encoder.writeCommand(["PING"]);
    assert.equal(encoder.length, 14);
    encoder.writeCommand(["PING"]);
    assert.equal(encoder.length, 28);
    assert.equal(encoder.take().length, 28);
    assert.equal(encoder.length, 0);
    assert.equal(encoder.take().length, 0);
  });

  it("rejects bad arguments without corrupting pending bytes", () => {
    const encoder = new RespEncoder();
    encoder.writeCommand(["PING"]);
    assert.throws(
      () => encoder.writeCommand(["SET", "k", undefined as unknown as string]),
      (e: unknown) => e instanceof TypeError && /argument 2 is undefined/.test(e.message),
    );
    assert.throws(() => encoder.writeCommand(["SET", "k", null as unknown as string]), TypeError);
    assert.throws(() => encoder.writeCommand(["SET", "k", NaN]), RangeError);
    encoder.writeCommand(["ECHO", "x"]);
    assert.deepEqual(decodeAll(encoder.take()), [["PING"], ["ECHO", "x"]]);
    assert.throws(() => new RespEncoder(0), RangeError);
  });
});

describe("encodeValue / decoder round trips", () => {
  const rand = prng(7);
  const values: RespValue[] = [];
  for (let i = 0; i < 500; i++) values.push(randomValue(rand));

  it("RESP3: decodes back to the same values", () => {
    const bytes = concat(values.map((v) => encodeValue(v)));
    assert.deepEqual(decodeAll(bytes).map(canon), values.map(canon));
  });

  it("RESP3: decodes back at any split", () => {
    const bytes = concat(values.slice(0, 40).map((v) => encodeValue(v)));
    const whole = decodeCuts(bytes, []);
    for (let i = 1; i < bytes.length; i += 7) assert.deepEqual(decodeCuts(bytes, [i]), whole);
  });

  it("RESP3: writes each type with its own type byte", () => {
    const text = (v: RespValue) => td.decode(encodeValue(v));
    assert.equal(text("a"), "$1\r\na\r\n");
    assert.equal(text(new Uint8Array([1])), "$1\r\n\x01\r\n");
    assert.equal(text(5), ":5\r\n");
    assert.equal(text(-0.5), ",-0.5\r\n");
    assert.equal(text(Infinity), ",inf\r\n");
    assert.equal(text(-Infinity), ",-inf\r\n");
    assert.equal(text(NaN), ",nan\r\n");
    assert.equal(text(2 ** 60), ",1152921504606847000\r\n");
    assert.equal(text(12n), "(12\r\n");
    assert.equal(text(true), "#t\r\n");
    assert.equal(text(false), "#f\r\n");
    assert.equal(text(null), "_\r\n");
    assert.equal(text(new ReplyError("ERR no")), "-ERR no\r\n");
    assert.equal(text(new ReplyError("ERR a\r\nb")), "!8\r\nERR a\r\nb\r\n");
    assert.equal(text([1, []]), "*2\r\n:1\r\n*0\r\n");
    assert.equal(text(new Map([["k", "v"]])), "%1\r\n$1\r\nk\r\n$1\r\nv\r\n");
    assert.equal(text(new Set([1])), "~1\r\n:1\r\n");
  });

  it("RESP2: writes the RESP2 stand-ins", () => {
    const text = (v: RespValue) => td.decode(encodeValue(v, 2));
    assert.equal(text(null), "$-1\r\n");
    assert.equal(text(true), ":1\r\n");
    assert.equal(text(false), ":0\r\n");
    assert.equal(text(1.5), "$3\r\n1.5\r\n");
    assert.equal(text(12n), "$2\r\n12\r\n");
    assert.equal(text(new Map([["k", 1]])), "*2\r\n$1\r\nk\r\n:1\r\n");
    assert.equal(text(new Set(["a"])), "*1\r\n$1\r\na\r\n");
    assert.equal(text(new ReplyError("ERR a\r\nb")), "-ERR a b\r\n");
  });

  it("RESP2: decodes back to the RESP2 forms", () => {
    const v: RespValue = [new Map<RespValue, RespValue>([["a", true]]), new Set([null]), 2.5, 3n];
    assert.deepEqual(decodeAll(encodeValue(v, 2)), [[["a", 1], [null], "2.5", "3"]]);
    const resp2 = values.map((x) => encodeValue(x, 2));
    // every RESP2 encoding decodes to a value (no RESP3-only types left)
    const decoded = decodeAll(concat(resp2));
    assert.equal(decoded.length, values.length);
    const resp3Only = (x: RespValue): boolean =>
      typeof x === "boolean" || typeof x === "bigint" || x instanceof Map || x instanceof Set ||
      (typeof x === "number" && !Number.isSafeInteger(x)) ||
      (Array.isArray(x) && x.some(resp3Only));
    assert.equal(decoded.some(resp3Only), false);
  });

  it("encodes pushes and simple strings", () => {
    assert.equal(
      td.decode(encodePush(["invalidate", ["k"]])),
      ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n",
    );
    assert.equal(td.decode(encodeSimple("OK")), "+OK\r\n");
    assert.throws(() => encodeSimple("a\r\nb"), TypeError);
    const pushes: RespValue[][] = [];
    const d = new RespDecoder({
      onReply: () => assert.fail("not a reply"),
      onPush: (f) => pushes.push(f),
    });
    d.feed(encodePush(["MOVING", 1, 15, "127.0.0.1:6380"]));
    assert.deepEqual(pushes, [["MOVING", 1, 15, "127.0.0.1:6380"]]);
  });

  it("rejects values it cannot encode", () => {
    assert.throws(() => encodeValue(undefined as unknown as RespValue), TypeError);
    let deep: RespValue = [];
    for (let i = 0; i < 2000; i++) deep = [deep];
    assert.throws(() => encodeValue(deep), RangeError);
    // the shared encoder is still usable
    assert.equal(td.decode(encodeValue("ok")), "$2\r\nok\r\n");
  });
});
