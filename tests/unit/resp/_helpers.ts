// Shared fixtures of the RESP codec tests: a frame corpus, a seeded PRNG, a canonical form of
// decoded values (comparable the same way under Deno and Bun) and feeding helpers.
import { ReplyError } from "../../../src/errors.ts";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";

export const te: TextEncoder = new TextEncoder();

/** Latin-1 bytes of `s` (each char code one byte): lets the tests write arbitrary bytes. */
export function raw(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** mulberry32: a small seeded PRNG, returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A JSON-able canonical form: types tagged, so `1` and `"1"`, Map and array, differ. */
export type Canon = unknown;

export function canon(v: RespValue): Canon {
  if (v === null) return { null: true };
  if (typeof v === "string") return { s: v };
  if (typeof v === "number") return { n: Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : v };
  if (typeof v === "bigint") return { big: v.toString() };
  if (typeof v === "boolean") return { b: v };
  if (v instanceof Uint8Array) return { bytes: Array.from(v) };
  if (v instanceof ReplyError) return { err: v.message, prefix: v.prefix };
  if (Array.isArray(v)) return { a: v.map(canon) };
  if (v instanceof Map) return { m: [...v].map(([k, x]) => [canon(k), canon(x)]) };
  if (v instanceof Set) return { set: [...v].map(canon) };
  throw new TypeError(`unexpected value ${String(v)}`);
}

/** One decoded frame, canonical. */
export interface Event {
  kind: "reply" | "push";
  value: Canon;
  attrs?: Canon;
}

export interface Collector {
  decoder: RespDecoder;
  events: Event[];
}

export function collector(binary = false): Collector {
  const events: Event[] = [];
  const decoder = new RespDecoder({
    onReply(value, attributes) {
      const e: Event = { kind: "reply", value: canon(value) };
      if (attributes !== undefined) e.attrs = canon(attributes);
      events.push(e);
    },
    onPush(frame) {
      events.push({ kind: "push", value: canon(frame) });
    },
  });
  decoder.binary = binary;
  return { decoder, events };
}

/** Decodes `bytes` fed as the given pieces (cut positions), returns the events. */
export function decodeCuts(bytes: Uint8Array, cuts: readonly number[], binary = false): Event[] {
  const c = collector(binary);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    c.decoder.feed(bytes.subarray(from, cut));
    from = cut;
  }
  return c.events;
}

/** Decodes `bytes` one byte at a time, each byte in a reused 1-byte array. */
export function decodeBytewise(bytes: Uint8Array, binary = false): Event[] {
  const c = collector(binary);
  const one = new Uint8Array(1);
  for (const b of bytes) {
    one[0] = b;
    c.decoder.feed(one);
  }
  return c.events;
}

const S = (v: string): Canon => ({ s: v });
const N = (v: number): Canon => ({ n: v });

/** [name, frame bytes, expected event] for every frame type. */
export const CASES: [string, string, Event][] = [
  ["simple string", "+OK\r\n", { kind: "reply", value: S("OK") }],
  ["empty simple string", "+\r\n", { kind: "reply", value: S("") }],
  ["error", "-ERR unknown command 'x'\r\n", {
    kind: "reply",
    value: { err: "ERR unknown command 'x'", prefix: "ERR" },
  }],
  ["integer", ":1000\r\n", { kind: "reply", value: N(1000) }],
  ["negative integer", ":-42\r\n", { kind: "reply", value: N(-42) }],
  ["plus integer", ":+7\r\n", { kind: "reply", value: N(7) }],
  ["max safe integer", ":9007199254740991\r\n", { kind: "reply", value: N(9007199254740991) }],
  ["unsafe integer", ":9007199254740992\r\n", {
    kind: "reply",
    value: { big: "9007199254740992" },
  }],
  ["int64 min", ":-9223372036854775808\r\n", {
    kind: "reply",
    value: { big: "-9223372036854775808" },
  }],
  ["bulk string", "$5\r\nhello\r\n", { kind: "reply", value: S("hello") }],
  ["empty bulk", "$0\r\n\r\n", { kind: "reply", value: S("") }],
  ["bulk with CRLF", "$4\r\na\r\nb\r\n", { kind: "reply", value: S("a\r\nb") }],
  ["unicode bulk", "$6\r\nh\xc3\xa9\xe2\x82\xac\r\n", { kind: "reply", value: S("hé€") }],
  ["long bulk", `$100\r\n${"x".repeat(100)}\r\n`, { kind: "reply", value: S("x".repeat(100)) }],
  ["null bulk", "$-1\r\n", { kind: "reply", value: { null: true } }],
  ["null array", "*-1\r\n", { kind: "reply", value: { null: true } }],
  ["empty array", "*0\r\n", { kind: "reply", value: { a: [] } }],
  ["nested array", "*3\r\n:1\r\n$1\r\nx\r\n*2\r\n+y\r\n*0\r\n", {
    kind: "reply",
    value: { a: [N(1), S("x"), { a: [S("y"), { a: [] }] }] },
  }],
  ["null", "_\r\n", { kind: "reply", value: { null: true } }],
  ["true", "#t\r\n", { kind: "reply", value: { b: true } }],
  ["false", "#f\r\n", { kind: "reply", value: { b: false } }],
  ["double", ",3.14\r\n", { kind: "reply", value: N(3.14) }],
  ["double exponent", ",-1.5e-3\r\n", { kind: "reply", value: N(-0.0015) }],
  ["double big exponent", ",1E10\r\n", { kind: "reply", value: N(1e10) }],
  ["double integer", ",10\r\n", { kind: "reply", value: N(10) }],
  ["double inf", ",inf\r\n", { kind: "reply", value: N(Infinity) }],
  ["double -inf", ",-inf\r\n", { kind: "reply", value: N(-Infinity) }],
  ["double nan", ",nan\r\n", { kind: "reply", value: { n: "NaN" } }],
  ["big number", "(3492890328409238509324850943850943825024385\r\n", {
    kind: "reply",
    value: { big: "3492890328409238509324850943850943825024385" },
  }],
  ["negative big number", "(-12\r\n", { kind: "reply", value: { big: "-12" } }],
  ["bulk error", "!21\r\nSYNTAX invalid syntax\r\n", {
    kind: "reply",
    value: { err: "SYNTAX invalid syntax", prefix: "SYNTAX" },
  }],
  ["verbatim", "=15\r\ntxt:Some string\r\n", { kind: "reply", value: S("Some string") }],
  ["empty verbatim", "=4\r\nmkd:\r\n", { kind: "reply", value: S("") }],
  ["map", "%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", {
    kind: "reply",
    value: { m: [[S("first"), N(1)], [S("second"), N(2)]] },
  }],
  ["set", "~3\r\n+a\r\n:1\r\n#f\r\n", {
    kind: "reply",
    value: { set: [S("a"), N(1), { b: false }] },
  }],
  ["errors inside an array", "*2\r\n-ERR a\r\n!5\r\nMOVED\r\n", {
    kind: "reply",
    value: { a: [{ err: "ERR a", prefix: "ERR" }, { err: "MOVED", prefix: "MOVED" }] },
  }],
  [
    "attribute",
    "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n",
    {
      kind: "reply",
      value: { a: [N(2039123), N(9543892)] },
      attrs: {
        m: [[S("key-popularity"), { m: [[S("a"), N(0.1923)], [S("b"), N(0.0012)]] }]],
      },
    },
  ],
  ["empty attribute", "|0\r\n+x\r\n", { kind: "reply", value: S("x"), attrs: { m: [] } }],
  ["nested attribute dropped", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n|0\r\n:2\r\n", {
    kind: "reply",
    value: { a: [N(1), N(2)] },
  }],
  ["push", ">3\r\n+message\r\n+chan\r\n$5\r\nhello\r\n", {
    kind: "push",
    value: { a: [S("message"), S("chan"), S("hello")] },
  }],
  ["streamed string", "$?\r\n;4\r\nHell\r\n;5\r\no wor\r\n;1\r\nd\r\n;0\r\n", {
    kind: "reply",
    value: S("Hello word"),
  }],
  ["empty streamed string", "$?\r\n;0\r\n", { kind: "reply", value: S("") }],
  ["streamed array", "*?\r\n:1\r\n:2\r\n*?\r\n.\r\n.\r\n", {
    kind: "reply",
    value: { a: [N(1), N(2), { a: [] }] },
  }],
  ["streamed set", "~?\r\n+a\r\n+b\r\n.\r\n", { kind: "reply", value: { set: [S("a"), S("b")] } }],
  ["streamed map", "%?\r\n+a\r\n:1\r\n+b\r\n:2\r\n.\r\n", {
    kind: "reply",
    value: { m: [[S("a"), N(1)], [S("b"), N(2)]] },
  }],
  ["streamed push", ">?\r\n+pubsub\r\n+x\r\n.\r\n", {
    kind: "push",
    value: { a: [S("pubsub"), S("x")] },
  }],
];

/** Random RESP value trees (every encodable type), for round trips. */
export function randomValue(rand: () => number, depth = 0): RespValue {
  const r = Math.floor(rand() * (depth > 3 ? 9 : 13));
  switch (r) {
    case 0:
      return randomString(rand);
    case 1:
      return Math.floor((rand() - 0.5) * 2 ** 40);
    case 2:
      return rand() < 0.5 ? null : randomString(rand, 300);
    case 3:
      return rand() < 0.5;
    case 4:
      return (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20);
    case 5:
      return BigInt(Math.floor(rand() * 1e15)) * 10n ** 20n;
    case 6:
      return new ReplyError(`ERR ${randomString(rand, 10)}`.replace(/[\r\n]/g, " "));
    case 7:
      return "";
    case 8:
      return randomString(rand, 5000);
    case 9:
    case 10: {
      const n = Math.floor(rand() * 5);
      const a: RespValue[] = [];
      for (let i = 0; i < n; i++) a.push(randomValue(rand, depth + 1));
      return a;
    }
    case 11: {
      const m = new Map<RespValue, RespValue>();
      const n = Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) m.set(`k${i}`, randomValue(rand, depth + 1));
      return m;
    }
    default: {
      const s = new Set<RespValue>();
      const n = Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) s.add(Math.floor(rand() * 1000) + i * 1000);
      return s;
    }
  }
}

const CHARS = [..."abcXYZ019 :\r\n\té€😀"];

export function randomString(rand: () => number, max = 20): string {
  const n = Math.floor(rand() * max);
  let s = "";
  for (let i = 0; i < n; i++) s += CHARS[Math.floor(rand() * CHARS.length)] ?? "";
  return s;
}
