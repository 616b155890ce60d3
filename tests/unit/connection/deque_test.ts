import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Deque } from "../../../src/connection/_deque.ts";

describe("Deque", () => {
  it("keeps FIFO order across growth and wrap-around", () => {
    const d = new Deque<number>(2);
    const model: number[] = [];
    let next = 0;
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < (round % 7) + 1; i++) {
        d.push(next);
        model.push(next++);
      }
      for (let i = 0; i < (round % 5); i++) assert.equal(d.shift(), model.shift());
      assert.equal(d.length, model.length);
      assert.equal(d.peek(), model[0]);
      assert.equal(d.at(1), model[1]);
    }
    d.unshift(-1);
    assert.equal(d.peek(), -1);
    assert.deepEqual(d.drain(), [-1, ...model]);
    assert.equal(d.shift(), undefined);
  });
});
