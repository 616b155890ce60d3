import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { endFrame, movingFrame, startFrame } from "../../../src/testing/_notifications.ts";
import { RespDecoder } from "../../../src/resp/mod.ts";
import type { RespValue } from "../../../src/resp/types.ts";

const dec = new TextDecoder();

function parse(bytes: Uint8Array): RespValue[] {
  const pushes: RespValue[][] = [];
  const d = new RespDecoder({
    onReply: () => assert.fail("not a push"),
    onPush: (p) => pushes.push(p),
  });
  d.feed(bytes);
  assert.equal(pushes.length, 1);
  return pushes[0]!;
}

describe("notification frames", () => {
  it("match the reference examples byte for byte", () => {
    assert.equal(
      dec.decode(movingFrame(1, 15, "10.0.0.2:12000", "reference")),
      ">4\r\n$6\r\nMOVING\r\n:1\r\n:15\r\n$14\r\n10.0.0.2:12000\r\n",
    );
    assert.equal(
      dec.decode(movingFrame(0, 15, null, "reference")),
      ">4\r\n$6\r\nMOVING\r\n:0\r\n:15\r\n_\r\n",
    );
    assert.equal(
      dec.decode(startFrame("MIGRATING", 2, 10, '["1"]', "reference")),
      '>4\r\n+MIGRATING\r\n:2\r\n:10\r\n+["1"]\r\n',
    );
    assert.equal(
      dec.decode(endFrame("MIGRATED", 3, '["1"]', "reference")),
      '>3\r\n+MIGRATED\r\n:3\r\n+["1"]\r\n',
    );
    assert.equal(
      dec.decode(startFrame("FAILING_OVER", 4, 2, '["1","2"]', "reference")),
      '>4\r\n+FAILING_OVER\r\n:4\r\n:2\r\n+["1","2"]\r\n',
    );
    assert.equal(
      dec.decode(endFrame("FAILED_OVER", 5, '["1"]', "reference")),
      '>3\r\n+FAILED_OVER\r\n:5\r\n+["1"]\r\n',
    );
  });

  it("parse to the same values in every string style", () => {
    for (const style of ["reference", "bulk", "simple"] as const) {
      assert.deepEqual(parse(movingFrame(7, 15, "127.0.0.2:6379", style)), [
        "MOVING",
        7,
        15,
        "127.0.0.2:6379",
      ]);
      assert.deepEqual(parse(movingFrame(7, 15, null, style)), ["MOVING", 7, 15, null]);
      assert.deepEqual(parse(startFrame("MIGRATING", 8, 2, '["1"]', style)), [
        "MIGRATING",
        8,
        2,
        '["1"]',
      ]);
      assert.deepEqual(parse(endFrame("FAILED_OVER", 9, '["1"]', style)), [
        "FAILED_OVER",
        9,
        '["1"]',
      ]);
    }
    assert.ok(dec.decode(endFrame("MIGRATED", 1, "[]", "bulk")).includes("$8\r\nMIGRATED"));
    assert.ok(dec.decode(movingFrame(1, 1, "a:1", "simple")).includes("+MOVING"));
  });

  it("writes whole seconds", () => {
    assert.deepEqual(parse(movingFrame(1, 1.2, null, "reference")), ["MOVING", 1, 2, null]);
  });
});
