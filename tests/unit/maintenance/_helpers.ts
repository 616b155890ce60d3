// Test helpers of the maintenance unit tests: a fake clock and a RESP3 push decoder.
import { RespDecoder } from "../../../src/resp/decoder.ts";
import type { RespValue } from "../../../src/resp/types.ts";

/** A clock the test moves by hand. */
export class FakeClock {
  t = 0;
  now = (): number => this.t;
}

/** Decodes wire bytes (written as text with \r\n) into the push frames they hold. */
export function pushes(wire: string): RespValue[][] {
  const frames: RespValue[][] = [];
  const decoder = new RespDecoder({
    onReply: (v) => {
      throw new Error(`Expected only push frames, got a reply: ${String(v)}`);
    },
    onPush: (f) => frames.push(f),
  });
  decoder.feed(new TextEncoder().encode(wire));
  return frames;
}

/** Decodes wire bytes holding exactly one push frame. */
export function push(wire: string): RespValue[] {
  const frames = pushes(wire);
  if (frames.length !== 1) throw new Error(`Expected one push frame, got ${frames.length}`);
  return frames[0]!;
}

/** UTF-8 bytes of a text (a bulk string decoded as binary). */
export function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}
