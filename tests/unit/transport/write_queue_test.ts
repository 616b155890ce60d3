import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { WriteQueue } from "../../../src/transport/_write_queue.ts";

function bytes(n: number, fill: number): Uint8Array {
  return new Uint8Array(n).fill(fill);
}

/** Drains the queue writing at most `max` bytes per call, returns everything in order. */
function drain(q: WriteQueue, max: number): { out: number[]; calls: number } {
  const out: number[] = [];
  let calls = 0;
  for (let chunk = q.peek(); chunk !== undefined; chunk = q.peek()) {
    const n = Math.min(max, chunk.length);
    out.push(...chunk.subarray(0, n));
    q.consume(n);
    calls++;
  }
  return { out, calls };
}

describe("WriteQueue", () => {
  it("is empty at first", () => {
    const q = new WriteQueue();
    assert.equal(q.peek(), undefined);
    assert.equal(q.bytes, 0);
  });

  it("merges small chunks into one buffer and keeps their order", () => {
    const q = new WriteQueue();
    const expected: number[] = [];
    for (let i = 0; i < 1000; i++) {
      q.push(Uint8Array.of(i & 255, (i >> 8) & 255));
      expected.push(i & 255, (i >> 8) & 255);
    }
    q.push(new Uint8Array(0));
    assert.equal(q.bytes, 2000);
    const first = q.peek()!;
    assert.equal(first.length, 2000);
    const { out, calls } = drain(q, Infinity);
    assert.deepEqual(out, expected);
    assert.equal(calls, 1);
    assert.equal(q.bytes, 0);
  });

  it("hands out a large chunk without copying it", () => {
    const q = new WriteQueue();
    const big = bytes(100_000, 7);
    q.push(big);
    q.push(bytes(10, 8));
    assert.equal(q.peek(), big);
    q.consume(30_000);
    assert.equal(q.peek()!.buffer, big.buffer);
    assert.equal(q.peek()!.length, 70_000);
    assert.equal(q.bytes, 70_010);
    // A remainder below 64 KiB is merged with what follows.
    q.consume(10_000);
    assert.equal(q.peek()!.length, 60_010);
  });

  it("survives partial consumption across merged and unmerged chunks", () => {
    const q = new WriteQueue();
    const expected: number[] = [];
    const sizes = [3, 70_000, 5, 5, 300_000, 1, 2, 3, 200_000, 64 * 1024 - 1, 9];
    sizes.forEach((n, i) => {
      q.push(bytes(n, i));
      for (let k = 0; k < n; k++) expected.push(i);
    });
    const { out } = drain(q, 7_777);
    assert.equal(out.length, expected.length);
    assert.deepEqual(out, expected);
    assert.equal(q.bytes, 0);
    assert.equal(q.peek(), undefined);
  });

  it("never merges beyond 256 KiB", () => {
    const q = new WriteQueue();
    for (let i = 0; i < 20; i++) q.push(bytes(60_000, i));
    assert.ok(q.peek()!.length <= 256 * 1024);
    assert.equal(q.bytes, 1_200_000);
  });

  it("clear drops everything", () => {
    const q = new WriteQueue();
    q.push(bytes(5, 1));
    q.clear();
    assert.equal(q.bytes, 0);
    assert.equal(q.peek(), undefined);
  });

  it("reuses its slots once emptied: order and byte counts hold over many fill/drain rounds", () => {
    const q = new WriteQueue();
    const expected: number[] = [];
    const got: number[] = [];
    for (let round = 0; round < 200; round++) {
      // 1 to 5 chunks a round, drained in steps of 7 bytes: merges, partial writes, and slots
      // written again after the queue emptied
      const k = 1 + (round % 5);
      for (let j = 0; j < k; j++) {
        const chunk = bytes(1 + ((round + j) % 13), (round * 7 + j) & 0xff);
        q.push(chunk);
        expected.push(...chunk);
      }
      if (round % 3 !== 2) {
        const { out } = drain(q, 7);
        got.push(...out);
        assert.equal(q.bytes, 0);
        assert.equal(q.peek(), undefined);
      }
    }
    got.push(...drain(q, 7).out);
    assert.deepEqual(got, expected);
  });
});
