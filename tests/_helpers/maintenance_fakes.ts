// Stand-ins for the maintenance support's unit tests: connections that record their timeout
// policy and handoffs, a transport to opt in on, and the opt-in itself.
import assert from "node:assert/strict";
import type { MaintenanceSupport } from "../../src/client/maintenance_support.ts";
import type { Connection, Endpoint, TimeoutPolicy } from "../../src/connection/connection.ts";
import type { RespValue } from "../../src/resp/types.ts";
import type { Transport } from "../../src/transport/types.ts";

/** A connection stand-in. */
export interface Fake {
  configuredEndpoint: Endpoint;
  closed: boolean;
  policy: TimeoutPolicy | undefined;
  handoffs: number;
  setTimeoutPolicy(p: TimeoutPolicy | undefined): void;
  handoff(cap: number): Promise<unknown>;
}

export function fakeConnection(endpoint: Endpoint): Fake {
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

export const transport = (host: string, port: number): Transport => ({
  remoteAddress: host,
  remotePort: port,
  secure: false,
  setHandlers() {},
  write: () => true,
  close() {},
});

export const A = { host: "127.0.0.1", port: 7000 };
export const B = { host: "127.0.0.1", port: 7001 };

/** Registers a connection and completes its opt-in. */
export function optIn(
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

export const frame = (...parts: RespValue[]): RespValue[] => parts;
