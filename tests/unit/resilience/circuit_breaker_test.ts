import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitStateChange,
  isConnectionFailure,
} from "../../../src/resilience/circuit_breaker.ts";
import {
  CircuitOpenError,
  ClosedError,
  ConnectionError,
  ReplyError,
  TimeoutError,
} from "../../../src/errors.ts";

function manual(options: CircuitBreakerOptions = {}) {
  const clock = {
    t: 1_000_000,
    now() {
      return this.t;
    },
  };
  const changes: CircuitStateChange[] = [];
  const breaker = new CircuitBreaker({
    clock,
    onStateChange: (c) => changes.push(c),
    ...options,
  });
  return { breaker, clock, changes };
}

const conn = () => new ConnectionError("Cannot get the reply: the connection was lost");

/** Records `successes` then `failures` outcomes; returns the state after each failure. */
function play(breaker: CircuitBreaker, successes: number, failures: number): string[] {
  for (let i = 0; i < successes; i++) breaker.onSuccess();
  const states: string[] = [];
  for (let i = 0; i < failures; i++) {
    breaker.onFailure();
    states.push(breaker.state);
  }
  return states;
}

describe("CircuitBreaker", () => {
  it("has the reference defaults: 1000 failures and 10 % in 2 s", () => {
    const { breaker } = manual();
    // 999 failures at 100 %: not enough failures.
    assert.ok(play(breaker, 0, 999).every((s) => s === "closed"));
    breaker.onFailure();
    assert.equal(breaker.state, "open");
    // 1000 failures among 10 001 calls (9.999 %): below the rate.
    const b2 = manual().breaker;
    play(b2, 9001, 999);
    assert.equal(b2.state, "closed");
    b2.onFailure(); // 1000 of 10 001
    assert.equal(b2.state, "closed");
    const b3 = manual().breaker;
    play(b3, 9000, 1000); // 1000 of 10 000 = 10 %
    assert.equal(b3.state, "open");
  });

  // [minNumOfFailures, failureRateThreshold, successes, failures, opens]
  const matrix: [number, number, number, number, boolean][] = [
    [3, 50, 0, 2, false], // too few failures
    [3, 50, 0, 3, true], // enough failures, 100 %
    [3, 50, 4, 3, false], // 3 of 7 = 42.9 % < 50 %
    [3, 50, 3, 3, true], // 3 of 6 = 50 %: the failing call is counted
    [3, 0, 100, 3, true], // rate disabled: the count alone
    [0, 50, 1, 1, true], // count disabled: 1 of 2 = 50 %
    [0, 50, 2, 1, false], // 1 of 3 < 50 %
    [0, 0, 100, 1, true], // both disabled: any failure opens
    [1, 100, 0, 1, true], // 100 % needs every call to fail
    [1, 100, 1, 5, false], // 5 of 6 < 100 %
  ];
  for (const [min, rate, ok, bad, opens] of matrix) {
    it(
      `min ${min}, rate ${rate} %: ${ok} successes then ${bad} failures ${
        opens ? "open" : "stay closed"
      }`,
      () => {
        const { breaker } = manual({ minNumOfFailures: min, failureRateThreshold: rate });
        const states = play(breaker, ok, bad);
        assert.equal(breaker.state, opens ? "open" : "closed");
        // It opens on the failure that met the thresholds, not later.
        if (opens) assert.equal(states.indexOf("open"), bad - 1);
      },
    );
  }

  it("forgets outcomes older than the window, one bucket at a time", () => {
    const { breaker, clock } = manual({
      slidingWindowMs: 1000,
      windowBuckets: 10,
      minNumOfFailures: 3,
      failureRateThreshold: 0,
    });
    breaker.onFailure();
    breaker.onFailure();
    assert.deepEqual(breaker.metrics(), {
      state: "closed",
      calls: 2,
      failures: 2,
      failureRate: 100,
    });
    clock.t += 950; // still inside the window (the bucket of t=0 is the oldest of 10)
    assert.equal(breaker.metrics().failures, 2);
    clock.t += 100; // that bucket left the window
    assert.equal(breaker.metrics().failures, 0);
    breaker.onFailure();
    assert.equal(breaker.state, "closed", "two failures expired, one does not open");
    breaker.onFailure();
    breaker.onFailure();
    assert.equal(breaker.state, "open");
  });

  it("spreads outcomes over buckets and sums the window", () => {
    const { breaker, clock } = manual({
      slidingWindowMs: 2000,
      windowBuckets: 4,
      minNumOfFailures: 0,
      failureRateThreshold: 60,
    });
    breaker.onSuccess();
    clock.t += 500;
    breaker.onSuccess();
    clock.t += 500;
    breaker.onFailure(); // 1 of 3
    clock.t += 500;
    breaker.onFailure(); // 2 of 4 = 50 %
    assert.equal(breaker.state, "closed");
    clock.t += 500; // the first success leaves: 2 of 3 failed so far
    assert.equal(breaker.metrics().calls, 3);
    breaker.onFailure(); // 3 of 4 = 75 %
    assert.equal(breaker.state, "open");
  });

  it("open -> half-open after openDuration; trial successes close it", () => {
    const { breaker, clock, changes } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 5000,
      halfOpenMaxCalls: 2,
    });
    breaker.onFailure();
    assert.equal(breaker.state, "open");
    assert.equal(breaker.openUntil, clock.t + 5000);
    assert.equal(breaker.tryAcquire(), false);
    clock.t += 4999;
    assert.equal(breaker.state, "open");
    clock.t += 1;
    assert.equal(breaker.state, "half-open");
    assert.equal(breaker.tryAcquire(), true);
    assert.equal(breaker.tryAcquire(), true);
    assert.equal(breaker.tryAcquire(), false, "only halfOpenMaxCalls trial calls at once");
    breaker.onSuccess();
    assert.equal(breaker.state, "half-open");
    breaker.onSuccess();
    assert.equal(breaker.state, "closed");
    assert.equal(breaker.metrics().calls, 0, "closing clears the window");
    assert.deepEqual(changes.map((c) => `${c.from}>${c.to}`), [
      "closed>open",
      "open>half-open",
      "half-open>closed",
    ]);
  });

  it("a failure while half-open opens it again for a new openDuration", () => {
    const { breaker, clock } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 1000,
    });
    breaker.onFailure();
    clock.t += 1000;
    assert.ok(breaker.tryAcquire());
    breaker.onError(new TimeoutError("Command timed out"));
    assert.equal(breaker.state, "open");
    assert.equal(breaker.openUntil, clock.t + 1000);
  });

  it("an ignored trial call frees its permit without an outcome", () => {
    const { breaker, clock } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 10,
      halfOpenMaxCalls: 1,
    });
    breaker.onFailure();
    clock.t += 10;
    assert.ok(breaker.tryAcquire());
    assert.equal(breaker.tryAcquire(), false);
    breaker.onIgnored();
    assert.equal(breaker.state, "half-open");
    assert.ok(breaker.tryAcquire());
  });

  it("openDuration 0 stays open until reset()", () => {
    const { breaker, clock } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 0,
    });
    breaker.onFailure();
    clock.t += 1e9;
    assert.equal(breaker.state, "open");
    assert.equal(breaker.openUntil, undefined);
    breaker.reset();
    assert.equal(breaker.state, "closed");
  });

  it("forced-open refuses calls, with or without a duration, and ignores outcomes", () => {
    const { breaker, clock } = manual({ minNumOfFailures: 1, failureRateThreshold: 0 });
    breaker.forceOpen();
    assert.equal(breaker.state, "forced-open");
    assert.equal(breaker.tryAcquire(), false);
    breaker.onSuccess();
    breaker.onFailure();
    clock.t += 1e9;
    assert.equal(breaker.state, "forced-open");
    breaker.forceOpen(3000);
    assert.equal(breaker.openUntil, clock.t + 3000);
    clock.t += 3000;
    assert.equal(breaker.state, "half-open");
  });

  it("counts every error by default except a ReplyError", () => {
    const { breaker } = manual({ minNumOfFailures: 3, failureRateThreshold: 0 });
    assert.equal(breaker.onError(new ReplyError("WRONGTYPE Operation against a key")), false);
    assert.equal(breaker.metrics().failures, 0);
    assert.equal(breaker.onError(new TypeError("fetch failed")), true);
    assert.equal(breaker.onError(new ClosedError("Cannot send: the client is closed")), true);
    assert.equal(breaker.state, "closed");
    assert.equal(breaker.onError("a rejection that is no Error"), true);
    assert.equal(breaker.state, "open");
  });

  it("execute() around fetch counts its rejections and throws as failures", async () => {
    // The module's example: a breaker wrapping fetch, the service down.
    const { breaker } = manual({ minNumOfFailures: 5, failureRateThreshold: 50 });
    const down = () => Promise.reject(new TypeError("error sending request: connection refused"));
    for (let i = 0; i < 4; i++) await assert.rejects(breaker.execute(down), TypeError);
    assert.deepEqual(breaker.metrics(), {
      state: "closed",
      calls: 4,
      failures: 4,
      failureRate: 100,
    });
    await assert.rejects(
      breaker.execute(() => {
        throw new Error("thrown before any promise");
      }),
      /thrown before any promise/,
    );
    assert.equal(breaker.state, "open", "5 failures of 5 calls open it");
    await assert.rejects(breaker.execute(down), CircuitOpenError);
  });

  it("isConnectionFailure counts only ConnectionError and TimeoutError", () => {
    const { breaker } = manual({
      minNumOfFailures: 2,
      failureRateThreshold: 0,
      isFailure: isConnectionFailure,
    });
    assert.equal(breaker.onError(new ClosedError("Cannot send: the client is closed")), false);
    assert.equal(breaker.onError(new Error("boom")), false);
    assert.equal(breaker.metrics().failures, 0);
    assert.equal(breaker.metrics().calls, 2, "other errors count as successes");
    assert.equal(breaker.onError(conn()), true);
    assert.equal(breaker.onError(new TimeoutError("Command timed out")), true);
    assert.equal(breaker.state, "open");
  });

  it("a call granted before the breaker opened cannot close it under the half-open trial", async () => {
    const { breaker, clock, changes } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 1_000,
      halfOpenMaxCalls: 1,
    });
    const gate = () => {
      let resolve!: (v: string) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<string>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    };
    const slowOk = gate();
    const slowFail = gate();
    const early = breaker.execute(() => slowOk.promise); // granted while closed
    const earlyFail = breaker.execute(() => slowFail.promise); // granted while closed
    await assert.rejects(breaker.execute(() => Promise.reject(conn())), ConnectionError);
    assert.equal(breaker.state, "open");
    clock.t += 1_000;
    assert.equal(breaker.state, "half-open");
    const trialGate = gate();
    const trial = breaker.execute(() => trialGate.promise); // the one trial call
    slowOk.resolve("late");
    assert.equal(await early, "late");
    assert.equal(breaker.state, "half-open", "a stale success does not close it");
    assert.equal(breaker.tryAcquire(), false, "the trial still holds the permit");
    slowFail.reject(conn());
    await assert.rejects(earlyFail, ConnectionError);
    assert.equal(breaker.state, "half-open", "a stale failure does not reopen it");
    trialGate.resolve("trial");
    assert.equal(await trial, "trial");
    assert.equal(breaker.state, "closed");
    assert.deepEqual(changes.map((c) => c.to), ["open", "half-open", "closed"]);
  });

  it("the manual API drops outcomes of an earlier generation", () => {
    const { breaker, clock } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 1_000,
      halfOpenMaxCalls: 1,
    });
    assert.ok(breaker.tryAcquire());
    const before = breaker.generation;
    breaker.onFailure(breaker.generation);
    assert.equal(breaker.state, "open");
    clock.t += 1_000;
    assert.ok(breaker.tryAcquire());
    const trial = breaker.generation;
    assert.notEqual(trial, before);
    breaker.onSuccess(before);
    breaker.onIgnored(before);
    assert.equal(breaker.state, "half-open");
    assert.equal(breaker.tryAcquire(), false, "the stale outcomes freed no permit");
    breaker.onSuccess(trial);
    assert.equal(breaker.state, "closed");
    breaker.onFailure(trial);
    assert.equal(breaker.state, "closed", "a trial's late failure does not reopen it");
  });

  it("isFailure chooses which errors count, but a ReplyError never does", () => {
    const { breaker } = manual({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      isFailure: (e) => e instanceof ClosedError || e instanceof ReplyError,
    });
    assert.equal(breaker.onError(conn()), false);
    assert.equal(breaker.onError(new ReplyError("LOADING Redis is loading")), false);
    assert.equal(breaker.state, "closed");
    assert.equal(breaker.onError(new ClosedError("Cannot send")), true);
    assert.equal(breaker.state, "open");
  });

  it("execute() runs the call, records it, and refuses with CircuitOpenError when open", async () => {
    const { breaker } = manual({
      name: "east",
      minNumOfFailures: 1,
      failureRateThreshold: 0,
    });
    assert.equal(await breaker.execute(() => Promise.resolve(7)), 7);
    await assert.rejects(
      breaker.execute(() => Promise.reject(new ReplyError("ERR no"))),
      ReplyError,
    );
    assert.equal(breaker.state, "closed");
    await assert.rejects(breaker.execute(() => Promise.reject(conn())), ConnectionError);
    assert.equal(breaker.state, "open");
    let ran = false;
    await assert.rejects(
      breaker.execute(() => {
        ran = true;
        return Promise.resolve(1);
      }),
      (e: unknown) => {
        assert.ok(e instanceof CircuitOpenError);
        assert.equal(e.code, "ERR_REDIS_CIRCUIT_OPEN");
        assert.equal(e.message, 'Cannot run the call: the circuit "east" is open');
        return true;
      },
    );
    assert.equal(ran, false);
  });

  it("rejects options out of range", () => {
    assert.throws(() => new CircuitBreaker({ failureRateThreshold: 101 }), RangeError);
    assert.throws(() => new CircuitBreaker({ failureRateThreshold: -1 }), RangeError);
    assert.throws(() => new CircuitBreaker({ minNumOfFailures: -1 }), RangeError);
    assert.throws(() => new CircuitBreaker({ slidingWindowMs: 0 }), RangeError);
    assert.throws(() => new CircuitBreaker({ windowBuckets: 1.5 }), RangeError);
    assert.throws(() => new CircuitBreaker({ openDuration: Number.NaN }), RangeError);
    assert.throws(
      () => new CircuitBreaker({ isFailure: 1 as unknown as () => boolean }),
      TypeError,
    );
    assert.throws(() => new CircuitBreaker().forceOpen(-5), RangeError);
  });
});
