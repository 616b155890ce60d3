// RespDecoder.pushBinary: push frames decode their strings as bytes, replies are unaffected,
// whole or split across chunks.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RespDecoder } from "../../../src/resp/decoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";

const enc = new TextEncoder();
const bytes = (...parts: (string | number[])[]) => {
  const chunks = parts.map((p) => typeof p === "string" ? enc.encode(p) : new Uint8Array(p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
};

// A push with a non-UTF-8 payload, then a reply.
const STREAM = bytes(
  ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\n",
  [0xff, 0x00, 0x80],
  "\r\n$2\r\nok\r\n",
);

function decode(pushBinary: boolean, split: number | undefined) {
  const pushes: RespValue[][] = [];
  const replies: RespValue[] = [];
  const d = new RespDecoder({ onReply: (v) => replies.push(v), onPush: (f) => pushes.push(f) });
  d.pushBinary = pushBinary;
  if (split === undefined) d.feed(STREAM);
  else {
    d.feed(STREAM.subarray(0, split));
    d.feed(STREAM.subarray(split));
  }
  return { pushes, replies };
}

describe("RespDecoder.pushBinary", () => {
  for (const split of [undefined, 5, 20, 30]) {
    it(`push strings as bytes, replies as text (${split === undefined ? "whole" : `split at ${split}`})`, () => {
      const { pushes, replies } = decode(true, split);
      assert.equal(pushes.length, 1);
      const [kind, channel, message] = pushes[0]!;
      assert.ok(kind instanceof Uint8Array && channel instanceof Uint8Array);
      assert.deepEqual(message, new Uint8Array([0xff, 0x00, 0x80]));
      assert.deepEqual(replies, ["ok"]);
    });
  }

  it("off by default: push strings as text", () => {
    const { pushes } = decode(false, undefined);
    assert.equal(pushes[0]![0], "message");
    assert.equal(pushes[0]![1], "ch");
    assert.equal(typeof pushes[0]![2], "string");
  });
});
