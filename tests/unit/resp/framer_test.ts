import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProtocolError } from "../../../src/errors.ts";
import { RespFramer } from "../../../src/resp/framer.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import { CASES, concat, decodeCuts, prng, randomValue, raw, te } from "./_helpers.ts";

interface Frame {
  bytes: Uint8Array;
  type: number;
}

function frameCuts(bytes: Uint8Array, cuts: readonly number[]): Frame[] {
  const frames: Frame[] = [];
  const framer = new RespFramer((f, type) => frames.push({ bytes: f, type }));
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    framer.feed(bytes.subarray(from, cut));
    from = cut;
  }
  return frames;
}

/** The framer's frames decode one by one to exactly what the decoder gives for the stream. */
function assertSameAsDecoder(stream: Uint8Array, frames: Frame[], msg?: string): void {
  assert.deepEqual(concat(frames.map((f) => f.bytes)), stream, msg);
  const whole = decodeCuts(stream, []);
  assert.equal(frames.length, whole.length, msg);
  for (let i = 0; i < frames.length; i++) {
    assert.deepEqual(decodeCuts(frames[i]!.bytes, []), [whole[i]], msg);
    assert.equal(frames[i]!.type === 0x3e, whole[i]!.kind === "push", msg);
  }
}

describe("RespFramer", () => {
  for (const [name, frame] of CASES) {
    it(`${name}: one frame at every split and byte by byte`, () => {
      const stream = concat([raw("+a\r\n"), raw(frame), raw(":1\r\n")]);
      for (let i = 0; i <= stream.length; i++) {
        const frames = frameCuts(stream, [i]);
        assertSameAsDecoder(stream, frames, `split at ${i}`);
        assert.deepEqual(frames[1]!.bytes, raw(frame));
      }
      const bytewise = frameCuts(stream, Array.from({ length: stream.length }, (_, i) => i));
      assertSameAsDecoder(stream, bytewise);
    });
  }

  it("passes the type byte of the value, after any attributes", () => {
    const frames = frameCuts(te.encode("|1\r\n+a\r\n:1\r\n*0\r\n>1\r\n+p\r\n+OK\r\n"), []);
    assert.deepEqual(frames.map((f) => String.fromCharCode(f.type)), ["*", ">", "+"]);
    assert.deepEqual(frames[0]!.bytes, te.encode("|1\r\n+a\r\n:1\r\n*0\r\n"));
  });

  it("gives copies the callee owns", () => {
    const frames: Uint8Array[] = [];
    const framer = new RespFramer((f) => frames.push(f));
    const chunk = te.encode("+OK\r\n$3\r\nab");
    framer.feed(chunk);
    chunk.fill(0);
    const rest = te.encode("c\r\n");
    framer.feed(rest);
    rest.fill(0);
    assert.deepEqual(frames, [te.encode("+OK\r\n"), te.encode("$3\r\nabc\r\n")]);
  });

  it("random splits of a long mixed stream match the decoder", () => {
    const rand = prng(4242);
    const parts: Uint8Array[] = [];
    for (let i = 0; i < 300; i++) {
      parts.push(
        rand() < 0.4
          ? raw(CASES[Math.floor(rand() * CASES.length)]![1])
          : encodeValue(randomValue(rand)),
      );
    }
    parts.push(encodeValue(["x".repeat(300_000)]));
    const stream = concat(parts);
    for (const seed of [1, 2, 3]) {
      const r = prng(seed);
      const cuts: number[] = [];
      for (let at = 0;;) {
        at += 1 + Math.floor(r() * (seed === 1 ? 8 : 40_000));
        if (at >= stream.length) break;
        cuts.push(at);
      }
      assertSameAsDecoder(stream, frameCuts(stream, cuts), `seed ${seed}`);
    }
  });

  it("frames a 16 MB bulk fed in 64 KB chunks", () => {
    const size = 16 * 1024 * 1024;
    const stream = concat([
      te.encode(`$${size}\r\n`),
      new Uint8Array(size).fill(1),
      te.encode("\r\n:1\r\n"),
    ]);
    const sizes: number[] = [];
    const framer = new RespFramer((f) => sizes.push(f.length));
    for (let at = 0; at < stream.length; at += 65536) framer.feed(stream.subarray(at, at + 65536));
    assert.deepEqual(sizes, [stream.length - 4, 4]);
  });

  it("raises the decoder's ProtocolError offsets on malformed input", () => {
    const bad = [
      "?x\r\n",
      "$abc\r\n",
      "$3\r\nabcd\r\n",
      ":12a\r\n",
      "%?\r\n+a\r\n.\r\n",
      "*1\r\n".repeat(600),
    ];
    for (const body of bad) {
      const stream = concat([te.encode("+OK\r\n"), te.encode(body)]);
      let decoderOffset = -2;
      try {
        decodeCuts(stream, []);
      } catch (e) {
        if (e instanceof ProtocolError) decoderOffset = e.offset;
      }
      for (const cut of [0, 3, 6, stream.length - 1]) {
        const frames: Uint8Array[] = [];
        assert.throws(
          () => frameCuts(stream, [cut]).forEach((f) => frames.push(f.bytes)),
          (e: unknown) => e instanceof ProtocolError && e.offset === decoderOffset,
          `${JSON.stringify(body.slice(0, 20))} cut at ${cut}`,
        );
      }
    }
  });

  it("stops splitting the chunk when the callback resets the framer", () => {
    const frames: string[] = [];
    const framer = new RespFramer((f) => {
      frames.push(new TextDecoder().decode(f));
      if (frames.length === 1) framer.reset();
    });
    framer.feed(te.encode("+a\r\n+dropped\r\n$3\r\nab"));
    framer.feed(te.encode("+b\r\n"));
    assert.deepEqual(frames, ["+a\r\n", "+b\r\n"]);
    assert.throws(() => {
      framer.feed(te.encode("+c\r\n"));
      framer.feed(te.encode("?"));
    }, { name: "ProtocolError", offset: 8 });
  });

  it("refuses input after an error until reset", () => {
    const frames: Uint8Array[] = [];
    const framer = new RespFramer((f) => frames.push(f));
    assert.throws(() => framer.feed(te.encode("?")), ProtocolError);
    assert.throws(() => framer.feed(te.encode("+OK\r\n")), ProtocolError);
    framer.reset();
    framer.feed(te.encode("+OK\r\n"));
    assert.equal(frames.length, 1);
  });
});
