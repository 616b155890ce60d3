// Mutated streams: the decoder, fed whole or in random pieces, and the framer must agree on the
// outcome (the same frames, or a ProtocolError at the same offset), and nothing but a
// ProtocolError may ever escape.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ProtocolError } from "../../../src/errors.ts";
import { encodeValue } from "../../../src/resp/encoder.ts";
import { RespFramer } from "../../../src/resp/framer.ts";
import {
  CASES,
  collector,
  concat,
  decodeCuts,
  type Event,
  prng,
  randomValue,
  raw,
} from "./_helpers.ts";

type Outcome = { events: Event[]; error?: number };

function decodeOutcome(bytes: Uint8Array, cuts: number[], binary = false): Outcome {
  const c = collector(binary);
  try {
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      c.decoder.feed(bytes.subarray(from, cut));
      from = cut;
    }
    return { events: c.events };
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    // the frames delivered before the fault count too
    return { events: c.events, error: e.offset };
  }
}

function frameOutcome(bytes: Uint8Array, cuts: number[]): { frames: Uint8Array[]; error?: number } {
  const frames: Uint8Array[] = [];
  const framer = new RespFramer((f) => frames.push(f));
  try {
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      framer.feed(bytes.subarray(from, cut));
      from = cut;
    }
    return { frames };
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    return { frames, error: e.offset };
  }
}

const MUTANTS = [
  0x2a,
  0x24,
  0x25,
  0x7e,
  0x3e,
  0x7c,
  0x3f,
  0x2e,
  0x3b,
  0x2d,
  0x2b,
  0x3a,
  0x30,
  0x39,
  13,
  10,
  0x5f,
  0x23,
  0x2c,
  0x28,
  0x21,
  0x3d,
  0x74,
  0xff,
  0x00,
];

describe("RESP fuzz: mutated streams", () => {
  it("decoder (whole, split, bytewise) and framer agree on 5000 mutants", () => {
    const rand = prng(2024);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    let errors = 0;
    for (let round = 0; round < 5000; round++) {
      const parts: Uint8Array[] = [];
      const n = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) {
        parts.push(rand() < 0.5 ? raw(pick(CASES)[1]) : encodeValue(randomValue(rand), 3));
      }
      const bytes = concat(parts);
      const edits = 1 + Math.floor(rand() * 3);
      let mutated = bytes;
      for (let k = 0; k < edits; k++) {
        const at = Math.floor(rand() * mutated.length);
        const r = rand();
        if (r < 0.6) {
          mutated = mutated.slice();
          mutated[at] = pick(MUTANTS);
        } else if (r < 0.8) {
          mutated = concat([mutated.subarray(0, at), mutated.subarray(at + 1)]);
        } else {
          mutated = concat([
            mutated.subarray(0, at),
            new Uint8Array([pick(MUTANTS)]),
            mutated.subarray(at),
          ]);
        }
      }
      const cuts: number[] = [];
      for (let at = 0;;) {
        at += 1 + Math.floor(rand() * 12);
        if (at >= mutated.length) break;
        cuts.push(at);
      }
      const whole = decodeOutcome(mutated, []);
      const split = decodeOutcome(mutated, cuts);
      const bytewise = decodeOutcome(mutated, Array.from({ length: mutated.length }, (_, i) => i));
      assert.deepEqual(split, whole, `round ${round}: split`);
      assert.deepEqual(bytewise, whole, `round ${round}: bytewise`);
      if (round % 4 === 0) {
        assert.deepEqual(
          decodeOutcome(mutated, cuts, true),
          decodeOutcome(mutated, [], true),
          `round ${round}: binary split`,
        );
      }
      const framed = frameOutcome(mutated, cuts);
      assert.equal(framed.error, whole.error, `round ${round}: framer error offset`);
      assert.equal(framed.frames.length, whole.events.length, `round ${round}: frame count`);
      // each frame decodes on its own to the decoder's value for it
      let offset = 0;
      for (let i = 0; i < framed.frames.length; i++) {
        const f = framed.frames[i]!;
        assert.deepEqual(
          f,
          mutated.subarray(offset, offset + f.length),
          `round ${round}: frame ${i}`,
        );
        offset += f.length;
        assert.deepEqual(decodeCuts(f, []), [whole.events[i]], `round ${round}: frame ${i}`);
      }
      if (whole.error !== undefined) {
        errors++;
        assert.ok(whole.error >= offset && whole.error < mutated.length, `round ${round}: offset`);
      }
    }
    // the mutations must actually produce both outcomes
    assert.ok(errors > 500 && errors < 4900, `${errors} of 5000 mutants were rejected`);
  });
});
