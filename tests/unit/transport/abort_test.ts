// dialAbortable: one connection attempt under an AbortSignal.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { dialAbortable } from "../../../src/transport/_abort.ts";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("dialAbortable", () => {
  it("dials without a signal and passes no inner signal", async () => {
    let inner: AbortSignal | undefined = new AbortController().signal;
    const v = await dialAbortable(undefined, (s) => {
      inner = s;
      return Promise.resolve(7);
    }, () => assert.fail("nothing to dispose"));
    assert.equal(v, 7);
    assert.equal(inner, undefined);
  });

  it("rejects with the reason of an aborted signal without dialling", async () => {
    const reason = new Error("gone");
    let dialled = false;
    await assert.rejects(
      dialAbortable(AbortSignal.abort(reason), () => {
        dialled = true;
        return Promise.resolve(1);
      }, () => {}),
      (e) => e === reason,
    );
    assert.equal(dialled, false);
  });

  it("rejects at once on abort, aborts the inner signal and disposes a late connection", async () => {
    const ac = new AbortController();
    const d = deferred<{ id: number }>();
    let inner: AbortSignal | undefined;
    const disposed: number[] = [];
    const p = dialAbortable(ac.signal, (s) => {
      inner = s;
      return d.promise;
    }, (late) => disposed.push(late.id));
    const reason = new Error("stop");
    ac.abort(reason);
    await assert.rejects(p, (e) => e === reason);
    assert.equal(inner?.aborted, true);
    assert.equal(inner?.reason, reason);
    d.resolve({ id: 3 });
    await d.promise;
    await Promise.resolve();
    assert.deepEqual(disposed, [3]);
  });

  it("ignores a dial error that comes after the abort", async () => {
    const ac = new AbortController();
    const d = deferred<number>();
    const p = dialAbortable(ac.signal, () => d.promise, () => {});
    ac.abort("first");
    d.reject(new Error("later"));
    await assert.rejects(p, (e) => e === "first");
  });

  it("settles with the dial and lets go of the signal afterwards", async () => {
    const ac = new AbortController();
    let inner: AbortSignal | undefined;
    const v = await dialAbortable(ac.signal, (s) => {
      inner = s;
      return Promise.resolve("conn");
    }, () => assert.fail("nothing to dispose"));
    assert.equal(v, "conn");
    ac.abort();
    assert.equal(inner?.aborted, false, "an abort after the connect reached the attempt");
  });

  it("turns a synchronous throw of the dial into a rejection", async () => {
    const ac = new AbortController();
    const boom = new Error("sync");
    await assert.rejects(
      dialAbortable(ac.signal, () => {
        throw boom;
      }, () => {}),
      (e) => e === boom,
    );
  });
});
