import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError } from "../../../src/errors.ts";
import type { Endpoint } from "../../../src/endpoint.ts";
import type { PubSubListener } from "../../../src/client/subscription.ts";
import type { SentinelSession } from "../../../src/sentinel/_dial.ts";
import { SentinelSet } from "../../../src/sentinel/_discovery.ts";
import { MONITOR_CHANNELS, SentinelMonitor } from "../../../src/sentinel/_monitor.ts";
import type { SentinelEvent } from "../../../src/sentinel/_replies.ts";
import { silentLogger } from "../../../src/logger.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../../_helpers/leaks.ts";
import { ManualClock } from "../connection/_manual_clock.ts";

const ep = (port: number): Endpoint => ({ host: "127.0.0.1", port });

interface FakeSession extends SentinelSession {
  listener?: PubSubListener;
  channels: string[];
  closed: boolean;
  publish(channel: string, message: string): void;
  lose(): void;
}

function fakes(up: Set<number>) {
  const sessions: FakeSession[] = [];
  const open = (e: Endpoint): Promise<SentinelSession> => {
    if (!up.has(e.port)) {
      return Promise.reject(
        new ConnectionError(`Cannot connect to "127.0.0.1:${e.port}": refused`),
      );
    }
    let lost: ((e: Error | undefined) => void) | undefined;
    const s: FakeSession = {
      endpoint: e,
      channels: [],
      closed: false,
      subscribe(channels, listener) {
        s.channels = channels;
        s.listener = listener;
        return Promise.resolve();
      },
      command: () =>
        up.has(e.port) ? Promise.resolve("OK") : Promise.reject(new ConnectionError("gone")),
      onLost(fn) {
        lost = fn;
      },
      close() {
        s.closed = true;
        return Promise.resolve();
      },
      publish(channel, message) {
        s.listener?.(message, channel);
      },
      lose() {
        lost?.(new ConnectionError("closed"));
      },
    };
    sessions.push(s);
    return Promise.resolve(s);
  };
  return { sessions, open };
}

async function until(what: string, check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe("sentinel monitor", () => {
  beforeEach(markLeakBaseline);
  afterEach(assertNoLeaks);

  it("subscribes on the preferred sentinel and reports the monitored master's events", async () => {
    const f = fakes(new Set([1, 2]));
    const events: SentinelEvent[] = [];
    const m = new SentinelMonitor({
      masterName: "m",
      sentinels: new SentinelSet([ep(1), ep(2)]),
      open: f.open,
      interval: 10_000,
      onEvent: (e) => events.push(e),
      check: () => Promise.resolve(),
      onSentinelAdded: () => {},
      onError: () => {},
      logger: silentLogger,
    });
    await m.start(ep(2));
    assert.deepEqual(m.sentinel, ep(2));
    const s = f.sessions[0]!;
    assert.deepEqual(s.channels, [...MONITOR_CHANNELS]);
    s.publish("+switch-master", "m 127.0.0.1 7000 127.0.0.1 7001");
    s.publish("+switch-master", "other 127.0.0.1 7000 127.0.0.1 7001");
    assert.deepEqual(events, [{
      kind: "switch-master",
      from: ep(7000),
      to: ep(7001),
    }]);
    await m.close();
    assert.equal(s.closed, true);
  });

  it("moves to the next sentinel when its sentinel goes away, and checks after re-subscribing", async () => {
    const up = new Set([1, 2, 3]);
    const f = fakes(up);
    const checkedOn: number[] = [];
    const events: SentinelEvent[] = [];
    const m = new SentinelMonitor({
      masterName: "m",
      sentinels: new SentinelSet([ep(1), ep(2), ep(3)]),
      open: f.open,
      interval: 10_000,
      onEvent: (e) => events.push(e),
      check: (s) => {
        checkedOn.push(s.endpoint.port);
        return Promise.resolve();
      },
      onSentinelAdded: () => {},
      onError: () => {},
      logger: silentLogger,
    });
    await m.start();
    assert.deepEqual(m.sentinel, ep(1));
    up.delete(1);
    up.delete(2);
    f.sessions[0]!.lose();
    await until("re-subscription", () => m.sentinel?.port === 3);
    assert.equal(f.sessions[0]!.closed, true);
    assert.deepEqual(checkedOn, [3], "a switch missed while unsubscribed is caught at once");
    // Messages from the old session are no longer taken.
    f.sessions[0]!.publish("+sdown", "master m 127.0.0.1 7000");
    assert.deepEqual(events, []);
    f.sessions.at(-1)!.publish("+sdown", "master m 127.0.0.1 7000");
    assert.equal(events.length, 1);
    await m.close();
  });

  it("learns sentinels from +sentinel events", async () => {
    const f = fakes(new Set([1]));
    const added: Endpoint[] = [];
    const set = new SentinelSet([ep(1)]);
    const m = new SentinelMonitor({
      masterName: "m",
      sentinels: set,
      open: f.open,
      interval: 10_000,
      onEvent: () => {},
      check: () => Promise.resolve(),
      onSentinelAdded: (e) => added.push(e),
      onError: () => {},
      logger: silentLogger,
    });
    await m.start();
    f.sessions[0]!.publish("+sentinel", "sentinel abc 127.0.0.1 26390 @ m 127.0.0.1 7000");
    f.sessions[0]!.publish("+sentinel", "sentinel abc 127.0.0.1 26390 @ m 127.0.0.1 7000");
    assert.deepEqual(added, [ep(26390)]);
    assert.equal(set.size, 2);
    await m.close();
  });

  it("runs the periodic check, and a failing check moves it to another sentinel", async () => {
    const up = new Set([1, 2]);
    const f = fakes(up);
    let checks = 0;
    const m = new SentinelMonitor({
      masterName: "m",
      sentinels: new SentinelSet([ep(1), ep(2)]),
      open: f.open,
      interval: 20,
      onEvent: () => {},
      check: async (s) => {
        checks++;
        await s.command(["PING"]);
      },
      onSentinelAdded: () => {},
      onError: () => {},
      logger: silentLogger,
    });
    await m.start();
    await until("two checks", () => checks >= 2);
    up.delete(1);
    await until("the move to sentinel 2", () => m.sentinel?.port === 2);
    await m.close();
  });

  it("runs the periodic check on the injected clock", async () => {
    const f = fakes(new Set([1]));
    const clock = new ManualClock();
    let checks = 0;
    const m = new SentinelMonitor({
      masterName: "m",
      sentinels: new SentinelSet([ep(1)]),
      open: f.open,
      interval: 10_000,
      clock,
      onEvent: () => {},
      check: () => {
        checks++;
        return Promise.resolve();
      },
      onSentinelAdded: () => {},
      onError: () => {},
      logger: silentLogger,
    });
    await m.start();
    const after = checks;
    await clock.advance(9_999);
    assert.equal(checks, after);
    await clock.advance(1);
    assert.equal(checks, after + 1);
    await clock.advance(10_000);
    assert.equal(checks, after + 2);
    await m.close();
    assert.equal(clock.pending, 0);
  });

  it("reports an error naming every sentinel when none can be subscribed to, and retries", async () => {
    const up = new Set<number>();
    const f = fakes(up);
    const errors: Error[] = [];
    const m = new SentinelMonitor({
      masterName: "m",
      sentinels: new SentinelSet([ep(1), ep(2)]),
      open: f.open,
      interval: 20,
      onEvent: () => {},
      check: () => Promise.resolve(),
      onSentinelAdded: () => {},
      onError: (e) => errors.push(e),
      logger: silentLogger,
    });
    await m.start();
    assert.equal(errors.length, 1);
    assert.match(
      errors[0]!.message,
      /^Cannot subscribe to the sentinel events: no sentinel answered \(127\.0\.0\.1:1: .*; 127\.0\.0\.1:2: /,
    );
    up.add(2);
    await until("a later subscription", () => m.sentinel?.port === 2);
    await m.close();
  });
});
