// The parts of a Connection that stand alone: admission checks, pub/sub confirmation matching,
// the reconnect schedule, the close promise, the keep-alive and the LOADING retry, each on a
// manual clock and without a socket.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  argumentsError,
  asUnwritten,
  bindSignal,
  closedError,
  queueFullError,
} from "../../../src/connection/_admission.ts";
import { Closing } from "../../../src/connection/_close.ts";
import { KeepAlive } from "../../../src/connection/_keep_alive.ts";
import { Link } from "../../../src/connection/_link.ts";
import { LOADING_RETRY_MS, LoadingRetry } from "../../../src/connection/_loading_retry.ts";
import {
  acquirePending,
  captureResolvers,
  type Pending,
  rejectPending,
  releasePending,
} from "../../../src/connection/_pending.ts";
import {
  isPubSubArray,
  pushKind,
  takeConfirmation,
} from "../../../src/connection/_pubsub_replies.ts";
import { Reconnect } from "../../../src/connection/_reconnect.ts";
import { Deque } from "../../../src/connection/_deque.ts";
import { FLAG_RAW, FLAG_SUBSCRIBE, FLAG_TRANSACTION } from "../../../src/command_flags.ts";
import { ClosedError, ConnectionError, TimeoutError } from "../../../src/errors.ts";
import { silentLogger } from "../../../src/logger.ts";
import type { Transport } from "../../../src/transport/types.ts";
import { ManualClock } from "./_manual_clock.ts";

const HERE = { host: "127.0.0.1", port: 6379 };

function pending(args: string[], flags = 0, timeout = 0): Pending {
  new Promise<unknown>(captureResolvers).catch(() => {});
  return acquirePending(args, undefined, flags, timeout, 0, 0, false);
}

function idleLink(): Link {
  const transport = { close() {}, write: () => true, setHandlers() {} } as unknown as Transport;
  return new Link(transport, HERE, () => {}, () => {});
}

describe("Connection admission checks", () => {
  it("refuses arguments that are not strings, numbers or bytes, naming the argument", () => {
    const e = argumentsError(["SET", "k", null as unknown as string], 0);
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /^Cannot send "SET": argument 2 is null/);
    assert.match(argumentsError([], 0)!.message, /Cannot send an empty command/);
    assert.equal(argumentsError(["GET", "k"], 0), undefined);
    assert.ok(argumentsError(["SELECT", "1"], FLAG_RAW) !== undefined, "reserved with FLAG_RAW");
  });

  it("says the connection is closed, never written", () => {
    const e = closedError(["get", "k"], HERE);
    assert.ok(e instanceof ClosedError && e.written === false);
    assert.match(e.message, /Cannot send "GET": the connection to "127.0.0.1:6379" is closed/);
  });

  it("names the bound a full queue passed", () => {
    const load = { waiting: 3, unsent: 2, bytes: 10, maxLength: 3, maxBytes: 100 };
    const byCount = queueFullError(["GET", "k"], 1, 5, load, HERE)!;
    assert.ok(byCount instanceof ConnectionError && byCount.written === false);
    assert.match(byCount.message, /2 commands already wait .*maxQueueLength 3/);
    const byBytes = queueFullError(["GET", "k"], 1, 95, { ...load, maxLength: 10 }, HERE)!;
    assert.match(byBytes.message, /95 bytes, and 10 bytes already wait .*maxQueueBytes 100/);
    assert.equal(queueFullError(["GET", "k"], 1, 5, { ...load, maxLength: 10 }, HERE), undefined);
  });

  it("marks a written error as unwritten, keeping its class and message", () => {
    const t = asUnwritten(new TimeoutError("Cannot x: y", { written: true }));
    assert.ok(t instanceof TimeoutError && t.written === false && t.message === "Cannot x: y");
    const c = new ConnectionError("Cannot x: z", { written: false });
    assert.equal(asUnwritten(c), c);
    const other = new Error("other");
    assert.equal(asUnwritten(other), other);
  });
});

describe("Connection pub/sub reply matching", () => {
  it("tells a RESP2 pub/sub array by its kind, decoding the kind in place", () => {
    const frame = [new TextEncoder().encode("message"), "ch", "hi"];
    assert.equal(isPubSubArray(frame), true);
    assert.equal(frame[0], "message");
    assert.equal(isPubSubArray(["OK"]), false);
    assert.equal(pushKind([new TextEncoder().encode("smessage"), "x"]), "smessage");
    assert.equal(pushKind([1]), undefined);
  });

  it("answers a subscribe-family command with its last confirmation of the same kind", () => {
    const p = pending(["SUBSCRIBE", "a", "b"], FLAG_SUBSCRIBE);
    p.pushes = 2;
    assert.equal(takeConfirmation(p, "unsubscribe"), false, "another kind");
    assert.equal(takeConfirmation(p, "subscribe"), false, "first of two");
    assert.equal(takeConfirmation(p, "subscribe"), true, "last of two");
    assert.equal(takeConfirmation(p, "subscribe"), false, "none left");
  });
});

describe("Connection reconnect schedule", () => {
  it("goes at once first, then after a backoff; a timer starts the attempt", async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const r = new Reconnect(clock, { baseDelay: 100, maxDelay: 100 }, () => attempts++);
    assert.equal(r.next(), 0);
    assert.equal(r.attempt, 1);
    r.start(0);
    await clock.advance(0);
    assert.equal(attempts, 1);
    const d = r.next();
    assert.ok(d >= 0 && d < 100);
    r.start(d);
    r.cancel();
    await clock.advance(200);
    assert.equal(attempts, 1, "cancelled");
    assert.equal(clock.pending, 0);
  });
});

describe("Connection close promise", () => {
  it("is one promise, settled once; its bound fires unless stopped", async () => {
    const clock = new ManualClock();
    const c = new Closing(clock);
    assert.equal(c.promise, undefined);
    const p = c.begin();
    assert.equal(c.begin(), p);
    let gaveUp = 0;
    c.bound(50, () => gaveUp++);
    await clock.advance(49);
    assert.equal(gaveUp, 0);
    await clock.advance(1);
    assert.equal(gaveUp, 1);
    c.bound(50, () => gaveUp++);
    c.stop();
    await clock.advance(100);
    assert.equal(gaveUp, 1);
    c.settle();
    await p;
  });
});

describe("Connection keep-alive", () => {
  it("pings after the interval of silence, only when nothing is in flight", async () => {
    const clock = new ManualClock();
    const link = idleLink();
    let pings = 0;
    let quiet = true;
    const k = new KeepAlive({
      timers: clock,
      readyLink: () => link,
      quiet: () => quiet,
      ping: () => pings++,
    }, 1000);
    link.lastReplyAt = clock.now();
    k.start(link);
    await clock.advance(500);
    link.lastIoAt = clock.now(); // traffic: the silence starts again
    await clock.advance(999);
    assert.equal(pings, 0);
    await clock.advance(1);
    assert.equal(pings, 1);
    quiet = false;
    await clock.advance(1000);
    assert.equal(pings, 1, "busy: no ping");
    k.stop();
    assert.equal(clock.pending, 0);
  });
});

describe("Connection LOADING retry", () => {
  function setup(current = true) {
    const clock = new ManualClock();
    const deadlines: number[] = [];
    let due = 0;
    const retry = new LoadingRetry({
      timers: clock,
      logger: silentLogger,
      label: "test",
      current: () => current,
      deadline: (at) => deadlines.push(at),
      due: () => due++,
    });
    return { clock, retry, deadlines, due: () => due };
  }

  it("keeps a refused command with what is left of its timeout, and is due after 100 ms", async () => {
    const { clock, retry, deadlines, due } = setup();
    const p = pending(["GET", "k"], 0, 1000);
    p.deadline = clock.now() + 1000;
    assert.equal(retry.keep(idleLink(), p), true);
    assert.equal(retry.active, true);
    assert.equal(p.timeout, 1000 - LOADING_RETRY_MS);
    assert.deepEqual(deadlines, [p.deadline]);
    await clock.advance(LOADING_RETRY_MS);
    assert.equal(due(), 1);
    const unsent = new Deque<Pending>(4);
    const later = pending(["GET", "later"]);
    unsent.push(later);
    retry.release(unsent);
    assert.equal(retry.active, false);
    assert.equal(unsent.at(0), p, "the kept command goes first");
    assert.equal(unsent.at(1), later);
  });

  it("does not keep transactions, subscriptions, expiring commands or another socket's", () => {
    const { clock, retry } = setup();
    assert.equal(retry.keep(idleLink(), pending(["SET", "k", "v"], FLAG_TRANSACTION)), false);
    assert.equal(retry.keep(idleLink(), pending(["SUBSCRIBE", "c"], FLAG_SUBSCRIBE)), false);
    const soon = pending(["GET", "k"], 0, 50);
    soon.deadline = clock.now() + 50;
    assert.equal(retry.keep(idleLink(), soon), false);
    assert.equal(setup(false).retry.keep(idleLink(), pending(["GET", "k"])), false);
    assert.equal(retry.active, false);
  });

  it("rejects what it keeps when the connection gives up", () => {
    const { clock, retry } = setup();
    const p = pending(["GET", "k"]);
    let got: Error | undefined;
    p.reject = (e) => (got = e);
    retry.keep(idleLink(), p);
    retry.rejectAll(new ClosedError("Cannot send: closed"));
    assert.ok(got instanceof ClosedError);
    assert.equal(retry.active, false);
    assert.equal(retry.queue.length, 0);
    assert.equal(clock.pending, 0, "its timer is stopped");
  });
});

describe("Connection pending entries", () => {
  const entry = (errorsAsValues: boolean, tap?: (e: Error) => void) => {
    const promise = new Promise<unknown>(captureResolvers);
    const p = acquirePending(["GET", "k"], undefined, 0, 1000, 0, 0, errorsAsValues, tap);
    return { promise, p };
  };

  it("rejects through resolve with the very error, telling the tap first", async () => {
    const told: Error[] = [];
    const { promise, p } = entry(false, (e) => told.push(e));
    const error = new TimeoutError("Cannot get a reply: timed out");
    rejectPending(p, error);
    releasePending(p);
    await assert.rejects(promise, (e) => e === error);
    assert.deepEqual(told, [error]);
  });

  it("resolves with the error when errors are values, and resolves values as they are", async () => {
    const a = entry(true);
    const error = new ClosedError("Cannot send the command: the client is closed");
    rejectPending(a.p, error);
    assert.equal(await a.promise, error);
    const b = entry(false);
    b.p.resolve(null);
    assert.equal(await b.promise, null);
  });

  it("rejects a signal-bound entry through its wrapped resolve and drops the listener", async () => {
    const controller = new AbortController();
    const { promise, p } = entry(false);
    bindSignal(p, controller.signal);
    const error = new ConnectionError("Cannot get a reply: the connection was lost");
    p.done = true;
    rejectPending(p, error);
    controller.abort(new Error("too late")); // its listener is gone: nothing more happens
    await assert.rejects(promise, (e) => e === error);
  });

  it("rejects a signal-bound entry with the signal's reason when it aborts first", async () => {
    const controller = new AbortController();
    const { promise, p } = entry(false);
    bindSignal(p, controller.signal);
    const reason = new Error("stop");
    controller.abort(reason);
    assert.equal(p.done, true);
    await assert.rejects(promise, (e) => e === reason);
  });
});
