import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  commandRetryDelay,
  type FailoverCandidate,
  FailureDetector,
  healthPolicyDecision,
  selectFailbackTarget,
  selectFailoverTarget,
  TemporarilyUnavailableError,
  wasNotWritten,
} from "../../../src/multi_db/mod.ts";
import {
  CircuitOpenError,
  ClosedError,
  ConnectionError,
  ReplyError,
  TimeoutError,
} from "../../../src/errors.ts";

function c(
  name: string,
  weight: number,
  usable = true,
  inMaintenance = false,
  order = 0,
): FailoverCandidate {
  return { name, weight, usable, inMaintenance, order };
}

describe("selectFailoverTarget", () => {
  it("picks the usable database of highest weight, never the one failed away from", () => {
    const all = [c("a", 3, false), c("b", 2), c("c", 1), c("d", 5)];
    assert.equal(selectFailoverTarget(all, "d")?.name, "b");
    assert.equal(selectFailoverTarget(all)?.name, "d");
    assert.equal(selectFailoverTarget([c("a", 1, false)], undefined), undefined);
  });
  it("breaks ties by configuration order", () => {
    assert.equal(
      selectFailoverTarget([c("x", 1, true, false, 2), c("y", 1, true, false, 1)])?.name,
      "y",
    );
  });
  it("prefers a database outside maintenance, but takes one inside rather than none", () => {
    assert.equal(selectFailoverTarget([c("a", 5, true, true), c("b", 1)])?.name, "b");
    assert.equal(selectFailoverTarget([c("a", 5, true, true), c("b", 1, false)])?.name, "a");
  });
});

describe("selectFailbackTarget", () => {
  it("only a usable database of strictly higher weight, outside maintenance", () => {
    const active = c("b", 2);
    assert.equal(selectFailbackTarget([c("a", 2), active], active), undefined, "equal weight");
    assert.equal(selectFailbackTarget([c("a", 3, false), active], active), undefined, "unusable");
    assert.equal(
      selectFailbackTarget([c("a", 3, true, true), active], active),
      undefined,
      "inside a maintenance window",
    );
    assert.equal(selectFailbackTarget([c("a", 3), c("z", 4), active], active)?.name, "z");
    assert.equal(selectFailbackTarget([c("a", 0.1)], undefined)?.name, "a", "no active one");
  });
});

describe("healthPolicyDecision", () => {
  // [policy, probes, passed, failed, decision]
  const cases: [("all" | "any" | "majority"), number, number, number, boolean | undefined][] = [
    ["all", 3, 0, 0, undefined],
    ["all", 3, 2, 0, undefined],
    ["all", 3, 3, 0, true],
    ["all", 3, 2, 1, false],
    ["all", 3, 0, 1, false],
    ["any", 3, 1, 0, true],
    ["any", 3, 0, 2, undefined],
    ["any", 3, 0, 3, false],
    ["majority", 3, 2, 0, true],
    ["majority", 3, 1, 1, undefined],
    ["majority", 3, 0, 2, false],
    ["majority", 4, 2, 2, false],
    ["majority", 4, 3, 1, true],
    ["majority", 1, 1, 0, true],
    ["majority", 1, 0, 1, false],
  ];
  for (const [policy, probes, passed, failed, want] of cases) {
    it(`${policy} of ${probes}: ${passed} passed, ${failed} failed -> ${want}`, () => {
      assert.equal(healthPolicyDecision(policy, probes, passed, failed), want);
    });
  }
});

describe("wasNotWritten", () => {
  it("reads the written flag, and never retries what may have run", () => {
    assert.equal(wasNotWritten(new ReplyError("ERR no")), false);
    assert.equal(wasNotWritten(new Error("other")), false);
    assert.equal(wasNotWritten(new CircuitOpenError("Cannot run the call")), true);
    assert.equal(wasNotWritten(new TemporarilyUnavailableError("Cannot send")), true);
    const unwritten = new ConnectionError("Cannot get the reply: lost");
    Object.defineProperty(unwritten, "written", { value: false });
    assert.equal(wasNotWritten(unwritten), true);
    const written = new ConnectionError("Cannot send the command: lost");
    Object.defineProperty(written, "written", { value: true });
    assert.equal(wasNotWritten(written), false, "the flag wins over the message");
  });
  it("without the flag, knows the errors raised before a write by their messages", () => {
    const plain = (e: Error) => {
      Object.defineProperty(e, "written", { value: undefined });
      return e;
    };
    assert.equal(
      wasNotWritten(plain(new ClosedError("Cannot send the command: the client was closed"))),
      true,
    );
    assert.equal(
      wasNotWritten(
        plain(new TimeoutError('Command "GET" was not sent within 500 ms: no connection')),
      ),
      true,
    );
    assert.equal(
      wasNotWritten(plain(new TimeoutError('Command "GET" timed out after 500 ms'))),
      false,
    );
    assert.equal(
      wasNotWritten(plain(new ConnectionError("Cannot get the reply: the connection was lost"))),
      false,
    );
  });
});

describe("commandRetryDelay", () => {
  it("doubles from the initial delay, jitter in the upper half", () => {
    const o = { maxAttempts: 3, initialDelay: 500, backoffMultiplier: 2 };
    assert.equal(commandRetryDelay(1, o, () => 1), 500);
    assert.equal(commandRetryDelay(1, o, () => 0), 250);
    assert.equal(commandRetryDelay(2, o, () => 1), 1000);
    assert.equal(commandRetryDelay(3, o, () => 0.5), 1500);
  });
});

describe("FailureDetector", () => {
  it("does not count failures during maintenance, nor errors that are not failures", () => {
    let maintenance = false;
    const d = new FailureDetector(
      { minNumOfFailures: 2, failureRateThreshold: 0 },
      () => maintenance,
    );
    const lost = new ConnectionError("Cannot get the reply");
    assert.equal(d.record(new ReplyError("WRONGTYPE x")), "success");
    maintenance = true;
    assert.equal(d.record(lost), "ignored");
    assert.equal(d.record(lost), "ignored");
    assert.equal(d.record(lost), "ignored");
    assert.equal(d.breaker.state, "closed");
    assert.equal(d.breaker.metrics().failures, 0);
    maintenance = false;
    assert.equal(d.record(lost), "counted");
    assert.equal(d.record(lost), "tripped");
    assert.equal(d.breaker.state, "open");
    assert.equal(d.acquire(), false);
  });

  it("counts only connection errors and timeouts by default, whatever the breaker's default", () => {
    const d = new FailureDetector({ minNumOfFailures: 1, failureRateThreshold: 0 }, () => false);
    assert.equal(d.record(new Error("a bug in the caller")), "success");
    assert.equal(d.record(new ClosedError("Cannot send: the client is closed")), "success");
    assert.equal(d.breaker.state, "closed");
    assert.equal(d.record(new TimeoutError("Command timed out")), "tripped");
  });

  it("drops the outcome of a call granted in an earlier generation", () => {
    let t = 0;
    const d = new FailureDetector({
      minNumOfFailures: 1,
      failureRateThreshold: 0,
      openDuration: 10,
      halfOpenMaxCalls: 1,
      clock: { now: () => t },
    }, () => false);
    assert.ok(d.acquire());
    const early = d.generation;
    assert.equal(d.record(new ConnectionError("Cannot get the reply")), "tripped");
    t = 10;
    assert.ok(d.acquire(), "the half-open trial");
    d.success(early);
    assert.equal(d.record(new ConnectionError("late"), early), "ignored");
    assert.equal(d.breaker.state, "half-open");
    d.success(d.generation);
    assert.equal(d.breaker.state, "closed");
  });
});
