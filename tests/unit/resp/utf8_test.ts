import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import { RespFramer } from "../../../src/resp/framer.ts";
import { setUtf8Decoder } from "../../../src/utf8_decoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";

const enc = new TextEncoder();

function decodeAll(bytes: Uint8Array, binary = false): RespValue[] {
  const out: RespValue[] = [];
  const d = new RespDecoder({ onReply: (v) => out.push(v), onPush: (f) => out.push(f) });
  d.binary = binary;
  d.feed(bytes);
  return out;
}

function bulk(payload: Uint8Array): Uint8Array {
  const head = enc.encode(`$${payload.length}\r\n`);
  const out = new Uint8Array(head.length + payload.length + 2);
  out.set(head);
  out.set(payload, head.length);
  out.set([13, 10], head.length + payload.length);
  return out;
}

describe("RespDecoder: UTF-8", () => {
  after(() => setUtf8Decoder(undefined));

  it("keeps a leading byte order mark of a value", () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x41]);
    assert.deepEqual(decodeAll(bulk(bom)), ["\ufeffA"]);
    const long = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode("x".repeat(40))]);
    assert.deepEqual(decodeAll(bulk(long)), ["\ufeff" + "x".repeat(40)]);
  });

  it("decodes multi-byte and invalid sequences like TextDecoder, short and long", () => {
    const td = new TextDecoder("utf-8", { ignoreBOM: true });
    const samples = [
      enc.encode("héllo"),
      enc.encode("日本語のテキスト".repeat(5)),
      new Uint8Array([0x41, 0xc3]),
      new Uint8Array([0xff, 0xfe, 0x41, 0xe2, 0x82]),
      new Uint8Array([...enc.encode("a".repeat(30)), 0xed, 0xa0, 0x80, 0x42]),
    ];
    for (const s of samples) assert.deepEqual(decodeAll(bulk(s)), [td.decode(s)]);
  });

  it("uses an installed decoder for strings of 5 to 4096 bytes, never in binary mode", () => {
    const calls: [number, number][] = [];
    setUtf8Decoder((buf, start, end) => {
      calls.push([start, end]);
      return new TextDecoder("utf-8", { ignoreBOM: true }).decode(buf.subarray(start, end));
    });
    const stream = new Uint8Array([
      ...enc.encode("*3\r\n$2\r\nab\r\n$6\r\nhéllo\r\n$20\r\n"),
      ...enc.encode("x".repeat(20)),
      ...enc.encode("\r\n"),
    ]);
    assert.deepEqual(decodeAll(stream), [["ab", "héllo", "x".repeat(20)]]);
    assert.deepEqual(calls, [[16, 22], [29, 49]]);
    calls.length = 0;
    const long = "y".repeat(4097);
    assert.deepEqual(decodeAll(bulk(enc.encode(long))), [long]);
    assert.deepEqual(calls, []);
    assert.deepEqual(decodeAll(bulk(enc.encode("héllo")), true), [enc.encode("héllo")]);
    assert.deepEqual(calls, []);
    setUtf8Decoder(undefined);
    assert.deepEqual(decodeAll(stream), [["ab", "héllo", "x".repeat(20)]]);
    assert.deepEqual(calls, []);
  });
});

describe("RespDecoder and RespFramer: Buffer chunks (Bun's transport passes them as they are)", () => {
  it("return plain copies of byte values, never views of the chunk", () => {
    const sizes = [3, 40, 2000, 70000];
    for (const n of sizes) {
      const chunk = Buffer.from(bulk(new Uint8Array(n).fill(0x61)));
      const [v] = decodeAll(chunk, true) as [Uint8Array];
      assert.equal(Object.getPrototypeOf(v), Uint8Array.prototype);
      assert.equal(v.length, n);
      chunk.fill(0x7a);
      assert.equal(v[0], 0x61);
      assert.equal(v[n - 1], 0x61);
    }
  });

  it("frames are plain copies", () => {
    const chunk = Buffer.from(enc.encode("+OK\r\n:1\r\n"));
    const frames: Uint8Array[] = [];
    const framer = new RespFramer((frame) => frames.push(frame));
    framer.feed(chunk);
    chunk.fill(0x7a);
    assert.equal(frames.length, 2);
    for (const f of frames) assert.equal(Object.getPrototypeOf(f), Uint8Array.prototype);
    assert.deepEqual(frames, [enc.encode("+OK\r\n"), enc.encode(":1\r\n")]);
  });
});
