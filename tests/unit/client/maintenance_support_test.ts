// MaintenanceSupport with stand-in connections: the opt-in step, relaxed timeouts, and which
// connection hands off and which retires on MOVING, for connections of several endpoints
// behind one controller.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MaintenanceSupport } from "../../../src/client/maintenance_support.ts";
import type { Connection, Endpoint, TimeoutPolicy } from "../../../src/connection/connection.ts";
import { silentLogger } from "../../../src/logger.ts";
import type { RespValue } from "../../../src/resp/types.ts";
import type { Transport } from "../../../src/transport/types.ts";

interface Fake {
  configuredEndpoint: Endpoint;
  closed: boolean;
  policy: TimeoutPolicy | undefined;
  handoffs: number;
  setTimeoutPolicy(p: TimeoutPolicy | undefined): void;
  handoff(cap: number): Promise<unknown>;
}

function fakeConnection(endpoint: Endpoint): Fake {
  return {
    configuredEndpoint: endpoint,
    closed: false,
    policy: undefined,
    handoffs: 0,
    setTimeoutPolicy(p) {
      this.policy = p;
    },
    handoff() {
      this.handoffs++;
      return Promise.resolve({ from: endpoint, to: endpoint, drainMs: 0, held: 0, replaced: true });
    },
  };
}

const transport = (host: string, port: number): Transport => ({
  remoteAddress: host,
  remotePort: port,
  secure: false,
  setHandlers() {},
  write: () => true,
  close() {},
});

const A = { host: "127.0.0.1", port: 7000 };
const B = { host: "127.0.0.1", port: 7001 };

function setup() {
  const events: [string, Record<string, unknown>][] = [];
  const m = new MaintenanceSupport({ mode: "enabled" }, {
    logger: silentLogger,
    emit: (name, detail) => events.push([name, detail as Record<string, unknown>]),
  });
  return { m, events };
}

/** Registers a connection and completes its opt-in. */
function optIn(
  m: MaintenanceSupport,
  f: Fake,
  label: string,
  role: "shared" | "exclusive",
  retired?: Fake[],
): Connection {
  const c = f as unknown as Connection;
  m.register(c, {
    label,
    role,
    endpoint: f.configuredEndpoint,
    retire: retired ? (x) => retired.push(x as unknown as Fake) : undefined,
  });
  const steps = m.handshake(c, transport(f.configuredEndpoint.host, f.configuredEndpoint.port), 3);
  assert.equal(steps.length, 1);
  assert.deepEqual(steps[0]!.args.slice(0, 3), ["CLIENT", "MAINT_NOTIFICATIONS", "ON"]);
  steps[0]!.onReply?.("OK");
  return c;
}

const frame = (...parts: RespValue[]): RespValue[] => parts;

describe("MaintenanceSupport", () => {
  it("relaxes the receiving connection on MIGRATING and restores it on MIGRATED", () => {
    const { m } = setup();
    const fa = fakeConnection(A);
    const a = optIn(m, fa, "shared", "shared");
    assert.equal(m.onPush(a, frame("MIGRATING", 1, 10, ["1"])), true);
    assert.ok(fa.policy !== undefined, "relaxed");
    assert.equal(fa.policy!(1000, false), 10_000);
    m.onPush(a, frame("MIGRATED", 2, ["1"]));
    assert.equal(fa.policy, undefined, "restored");
    m.close();
  });

  it("on MOVING hands off the shared connection of that endpoint and retires its exclusive ones", async () => {
    const { m, events } = setup();
    const retired: Fake[] = [];
    const fa = fakeConnection(A);
    const fx = fakeConnection(A);
    const fb = fakeConnection(B);
    const a = optIn(m, fa, "A shared", "shared");
    optIn(m, fx, "A exclusive#1", "exclusive", retired);
    optIn(m, fb, "B shared", "shared");
    m.onPush(a, frame("MOVING", 3, 2, "127.0.0.2:7000"));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(fa.handoffs, 1);
    assert.deepEqual(retired, [fx]);
    assert.equal(fb.handoffs, 0, "another endpoint's connection stays");
    assert.deepEqual(m.movingTarget(A), { host: "127.0.0.2", port: 7000 });
    assert.equal(m.movingTarget(B), undefined);
    assert.ok(events.some(([n]) => n === "handoff"));
    const moving = events.find(([n, d]) => n === "maintenance" && d.type === "handoff");
    assert.deepEqual(moving?.[1].retire, ["A shared", "A exclusive#1"]);
    assert.ok(m.connectTimeout(1000, A) >= 10_000, "relaxed connect inside the window");
    assert.equal(m.connectTimeout(1000, B), 1000);
    m.close();
  });

  it("a duplicate MOVING seq triggers one handoff", async () => {
    const { m } = setup();
    const fa = fakeConnection(A);
    const a = optIn(m, fa, "shared", "shared");
    m.onPush(a, frame("MOVING", 5, 2, "127.0.0.2:7000"));
    m.onPush(a, frame("MOVING", 5, 2, "127.0.0.2:7000"));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(fa.handoffs, 1);
    m.close();
  });

  it("an SMIGRATING on one connection relaxes every connection of the client, once per seq", () => {
    const { m, events } = setup();
    const fa = fakeConnection(A);
    const fb = fakeConnection(B);
    const a = optIn(m, fa, "shared", "shared");
    const b = optIn(m, fb, "exclusive#1", "exclusive");
    m.onPush(a, frame("SMIGRATING", 7, "0-99"));
    m.onPush(b, frame("SMIGRATING", 7, "0-99"));
    assert.equal(fa.policy!(1000, false), 10_000);
    assert.equal(fb.policy!(1000, false), 10_000, "relaxed by another connection's copy");
    assert.equal(m.connectTimeout(1000, B), 10_000, "new sockets too");
    const opened = events.filter(([, d]) => d.type === "window-opened");
    assert.equal(opened.length, 1, "one window per seq");
    assert.equal(opened[0]![1].connection, "shared");
    m.onPush(b, frame("SMIGRATED", 8, [["127.0.0.1:7000", "127.0.0.1:7001", "0-99"]]));
    m.onPush(a, frame("SMIGRATED", 8, [["127.0.0.1:7000", "127.0.0.1:7001", "0-99"]]));
    assert.equal(fa.policy, undefined, "restored");
    assert.equal(fb.policy, undefined, "restored");
    const deltas = events.filter(([, d]) => d.type === "slot-delta");
    assert.equal(deltas.length, 1);
    assert.equal(deltas[0]![1].connection, "exclusive#1");
    m.close();
  });

  it("leaves push frames that are not maintenance notifications alone", () => {
    const { m } = setup();
    const a = optIn(m, fakeConnection(A), "shared", "shared");
    assert.equal(m.onPush(a, frame("message", "ch", "hi")), false);
    m.close();
  });
});
