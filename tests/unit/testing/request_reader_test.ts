import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  argText,
  RequestReader,
  RequestSyntaxError,
} from "../../../src/testing/_request_reader.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

describe("RequestReader", () => {
  it("splits pipelined arrays, keeping each request's original bytes", () => {
    const r = new RequestReader();
    const wire = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n";
    const out = r.feed(enc.encode(wire));
    assert.equal(out.length, 2);
    assert.deepEqual(out[0]!.args.map(argText), ["HELLO", "3"]);
    assert.deepEqual(out[1]!.args.map(argText), ["SET", "k", "a\r\nb"]);
    assert.equal(dec.decode(out[0]!.raw) + dec.decode(out[1]!.raw), wire);
    assert.equal(r.pending, 0);
  });

  it("resumes across chunks of any size, byte by byte", () => {
    const r = new RequestReader();
    const wire = enc.encode("*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\nPING\r\n");
    const got: string[][] = [];
    for (const b of wire) {
      const chunk = new Uint8Array([b]);
      for (const q of r.feed(chunk)) got.push(q.args.map(argText));
      chunk[0] = 0; // the reader must not keep a view on the caller's buffer
    }
    assert.deepEqual(got, [["PING"], ["GET", "0123456789"], ["PING"]]);
  });

  it("reads inline commands", () => {
    const r = new RequestReader();
    const out = r.feed(enc.encode("PING\r\nset  k v\n\r\n"));
    assert.deepEqual(out.map((q) => q.args.map(argText)), [["PING"], ["set", "k", "v"]]);
  });

  it("rejects a malformed array", () => {
    const r = new RequestReader();
    assert.throws(() => r.feed(enc.encode("*1\r\n+PING\r\n")), RequestSyntaxError);
    assert.throws(() => new RequestReader().feed(enc.encode("*x\r\n")), RequestSyntaxError);
    assert.throws(
      () => new RequestReader().feed(enc.encode("*1\r\n$3\r\nGETX\r\n")),
      RequestSyntaxError,
    );
  });
});
