import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HandlerSlot } from "../../../src/transport/_handler_slot.ts";
import type { TransportHandlers } from "../../../src/transport/types.ts";

function recorder(): TransportHandlers & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    onData: (c) => events.push(`data ${[...c].join(",")}`),
    onDrain: () => events.push("drain"),
    onClose: (e) => events.push(`close ${e?.message ?? ""}`),
  };
}

describe("HandlerSlot", () => {
  it("forwards events and reports the close once", () => {
    const slot = new HandlerSlot();
    const r = recorder();
    slot.set(r);
    slot.data(Uint8Array.of(1, 2));
    slot.drain();
    slot.close(new Error("connection reset"));
    slot.close();
    slot.data(Uint8Array.of(3));
    slot.drain();
    assert.deepEqual(r.events, ["data 1,2", "drain", "close connection reset"]);
    assert.equal(slot.closed, true);
  });

  it("replays early data (copied) and an early close after set, asynchronously", async () => {
    const slot = new HandlerSlot();
    const reused = Uint8Array.of(9, 9);
    slot.data(reused);
    reused.fill(0);
    slot.close();
    const r = recorder();
    slot.set(r);
    assert.deepEqual(r.events, []);
    await Promise.resolve();
    await Promise.resolve();
    assert.deepEqual(r.events, ["close "]);
  });

  it("delivers early data before later data", () => {
    const slot = new HandlerSlot();
    slot.data(Uint8Array.of(1));
    const r = recorder();
    slot.set(r);
    slot.data(Uint8Array.of(2));
    assert.deepEqual(r.events, ["data 1", "data 2"]);
  });

  it("refuses a second set", () => {
    const slot = new HandlerSlot();
    slot.set(recorder());
    assert.throws(() => slot.set(recorder()), /twice/);
  });
});
