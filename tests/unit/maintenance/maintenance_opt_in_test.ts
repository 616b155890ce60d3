// Maintenance notifications are acted on only on connections whose opt-in the server accepted:
// a MOVING pushed on a connection that was refused (or never asked) moves nothing and sends no
// credentials anywhere.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MaintenanceSupport } from "../../../src/client/maintenance_support.ts";
import type { Connection, Endpoint, TimeoutPolicy } from "../../../src/connection/connection.ts";
import { ReplyError } from "../../../src/errors.ts";
import { silentLogger } from "../../../src/logger.ts";
import type { Transport } from "../../../src/transport/types.ts";

function standIn(endpoint: Endpoint) {
  const s = {
    configuredEndpoint: endpoint,
    closed: false,
    handoffs: 0,
    policy: undefined as TimeoutPolicy | undefined,
    setTimeoutPolicy(p: TimeoutPolicy | undefined) {
      s.policy = p;
    },
    handoff() {
      s.handoffs++;
      return Promise.resolve({ from: endpoint, to: endpoint, drainMs: 0, held: 0, replaced: true });
    },
  };
  return s;
}

const transport: Transport = {
  remoteAddress: "127.0.0.1",
  remotePort: 7000,
  secure: false,
  setHandlers() {},
  write: () => true,
  close() {},
};

const A = { host: "127.0.0.1", port: 7000 };

function setup(mode: "auto" | "enabled") {
  const events: string[] = [];
  const m = new MaintenanceSupport({ mode }, {
    logger: silentLogger,
    emit: (name) => events.push(name),
  });
  const s = standIn(A);
  const conn = s as unknown as Connection;
  m.register(conn, { label: "shared", role: "shared", endpoint: A });
  return { m, s, conn, events };
}

describe("MaintenanceSupport opt-in", () => {
  it("ignores MOVING and MIGRATING on a connection whose opt-in was refused", async () => {
    const { m, s, conn, events } = setup("auto");
    const [step] = m.handshake(conn, transport, 3);
    step!.onReply?.(new ReplyError("ERR unknown subcommand 'MAINT_NOTIFICATIONS'"));
    assert.equal(m.onPush(conn, ["MOVING", 1, 5, "203.0.113.7:6379"]), true, "taken, not routed");
    assert.equal(m.onPush(conn, ["MIGRATING", 2, 10, ["1"]]), true);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(s.handoffs, 0, "no handoff to the host the push names");
    assert.equal(s.policy, undefined, "no relaxed timeouts");
    assert.equal(m.movingTarget(A), undefined, "new sockets still dial the configured endpoint");
    assert.deepEqual(events, []);
    // Pushes that are not maintenance notifications still go to pub/sub.
    assert.equal(m.onPush(conn, ["message", "ch", "hi"]), false);
    m.close();
  });

  it("ignores them before the opt-in reply arrived, and acts once it was accepted", async () => {
    const { m, s, conn } = setup("auto");
    const [step] = m.handshake(conn, transport, 3);
    m.onPush(conn, ["MOVING", 1, 5, "203.0.113.7:6379"]);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(s.handoffs, 0);
    step!.onReply?.("OK");
    m.onPush(conn, ["MOVING", 2, 5, "127.0.0.2:7000"]);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(s.handoffs, 1);
    assert.deepEqual(m.movingTarget(A), { host: "127.0.0.2", port: 7000 });
    m.close();
  });

  it("judges each socket by its own opt-in when the socket is given", async () => {
    const { m, s, conn } = setup("auto");
    const oldSocket = { ...transport };
    const newSocket = { ...transport, remotePort: 7001 };
    m.handshake(conn, oldSocket, 3)[0]!.onReply?.("OK");
    // A replacement socket whose opt-in reply has not arrived yet.
    m.handshake(conn, newSocket, 3);
    assert.equal(m.onPush(conn, ["MOVING", 1, 5, "203.0.113.7:6379"], newSocket), true);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(s.handoffs, 0, "not acted on from the socket that did not opt in");
    m.onPush(conn, ["MOVING", 2, 5, "127.0.0.2:7000"], oldSocket);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(s.handoffs, 1, "acted on from the socket that did");
    m.close();
  });

  it("a relaxed timeout of 0 does not make the connect to a MOVING target unbounded", () => {
    const { m, conn } = setup("auto");
    const m0 = new MaintenanceSupport({ mode: "auto", relaxedTimeout: 0 }, {
      logger: silentLogger,
      emit: () => {},
    });
    m0.register(conn, { label: "shared", role: "shared", endpoint: A });
    const [step] = m0.handshake(conn, transport, 3);
    step!.onReply?.("OK");
    m0.onPush(conn, ["MOVING", 1, 5, "127.0.0.2:7000"]);
    assert.equal(m0.connectTimeout(2000, A), 2000);
    m0.close();
    m.close();
  });
});
