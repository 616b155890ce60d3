import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  isPrivateAddress,
  maintenanceHandshakeOutcome,
  maintNotificationsCommand,
  planMaintenanceHandshake,
  resolveEndpointType,
  resolveMaintenanceOptions,
} from "../../../src/maintenance/mod.ts";

describe("isPrivateAddress", () => {
  const cases: [string, boolean | undefined][] = [
    // IPv4: RFC 1918, loopback, link-local
    ["10.0.0.1", true],
    ["10.255.255.255", true],
    ["172.16.0.1", true],
    ["172.31.255.254", true],
    ["172.15.0.1", false],
    ["172.32.0.1", false],
    ["192.168.1.20", true],
    ["192.169.1.20", false],
    ["127.0.0.1", true],
    ["127.9.9.9", true],
    ["169.254.10.10", true],
    ["169.253.10.10", false],
    ["8.8.8.8", false],
    ["203.0.113.9", false],
    ["100.64.0.1", false],
    ["11.0.0.1", false],
    // IPv6: loopback, link-local fe80::/10, unique local fc00::/7
    ["::1", true],
    ["0:0:0:0:0:0:0:1", true],
    ["[::1]", true],
    ["::2", false],
    ["::", false],
    ["fe80::1", true],
    ["FE80::abcd:1", true],
    ["fe80::1%eth0", true],
    ["febf::1", true],
    ["fec0::1", false],
    ["fc00::1", true],
    ["fd12:3456:789a::1", true],
    ["fe00::1", false],
    ["2001:db8::1", false],
    ["2606:4700:4700::1111", false],
    // IPv4-mapped IPv6
    ["::ffff:10.0.0.1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:8.8.8.8", false],
    ["::ffff:7f00:1", true],
    ["::ffff:808:808", false],
    ["0:0:0:0:0:ffff:192.168.0.1", true],
    // not IP literals
    ["localhost", undefined],
    ["redis.example.com", undefined],
    ["/tmp/redis.sock", undefined],
    ["1.2.3", undefined],
    ["256.1.1.1", undefined],
    ["1.2.3.4.5", undefined],
    ["1:2:3:4:5:6:7:8:9", undefined],
    ["1:2:3:4:5:6:7", undefined],
    ["::1::2", undefined],
    ["gggg::1", undefined],
    ["::ffff:1.2.3", undefined],
    ["1::2:3:4:5:6:7:8", undefined],
  ];
  for (const [address, expected] of cases) {
    it(`${address} -> ${expected}`, () => {
      assert.equal(isPrivateAddress(address), expected);
    });
  }
});

describe("resolveEndpointType", () => {
  const auto: [string | undefined, boolean, string][] = [
    ["10.0.0.5", false, "internal-ip"],
    ["10.0.0.5", true, "internal-fqdn"],
    ["127.0.0.1", false, "internal-ip"],
    ["::1", true, "internal-fqdn"],
    ["fe80::1", false, "internal-ip"],
    ["169.254.0.1", true, "internal-fqdn"],
    ["fd00::5", false, "internal-ip"],
    ["::ffff:192.168.0.1", false, "internal-ip"],
    ["203.0.113.9", false, "external-ip"],
    ["203.0.113.9", true, "external-fqdn"],
    ["2001:db8::1", false, "external-ip"],
    ["2001:db8::1", true, "external-fqdn"],
    [undefined, false, "none"],
    [undefined, true, "none"],
    ["", false, "none"],
    ["/run/redis.sock", false, "none"],
  ];
  for (const [address, secure, expected] of auto) {
    it(`auto: ${address ?? "no address"}, ${secure ? "TLS" : "plain"} -> ${expected}`, () => {
      assert.equal(resolveEndpointType(address, secure, "auto"), expected);
    });
  }

  it("defaults the option to auto", () => {
    assert.equal(resolveEndpointType("10.0.0.5", false), "internal-ip");
  });

  it("returns a fixed option whatever the address", () => {
    for (
      const t of ["internal-ip", "internal-fqdn", "external-ip", "external-fqdn", "none"] as const
    ) {
      assert.equal(resolveEndpointType("8.8.8.8", true, t), t);
      assert.equal(resolveEndpointType(undefined, false, t), t);
    }
  });
});

describe("maintNotificationsCommand", () => {
  it("builds the opt-in with an endpoint type", () => {
    assert.deepEqual(maintNotificationsCommand("external-fqdn"), [
      "CLIENT",
      "MAINT_NOTIFICATIONS",
      "ON",
      "moving-endpoint-type",
      "external-fqdn",
    ]);
    assert.deepEqual(maintNotificationsCommand("none").slice(3), ["moving-endpoint-type", "none"]);
  });

  it("builds a bare ON without one", () => {
    assert.deepEqual(maintNotificationsCommand(), ["CLIENT", "MAINT_NOTIFICATIONS", "ON"]);
  });
});

describe("planMaintenanceHandshake", () => {
  const ctx = { protocol: 3 as const, remoteAddress: "127.0.0.1", secure: false };

  it("skips in mode disabled, whatever the protocol", () => {
    const o = resolveMaintenanceOptions({ mode: "disabled" });
    assert.deepEqual(planMaintenanceHandshake(o, ctx), { action: "skip", reason: "disabled" });
    assert.deepEqual(planMaintenanceHandshake(o, { ...ctx, protocol: 2 }), {
      action: "skip",
      reason: "disabled",
    });
  });

  it("skips quietly on RESP2 in mode auto", () => {
    const o = resolveMaintenanceOptions({ mode: "auto" });
    assert.deepEqual(planMaintenanceHandshake(o, { ...ctx, protocol: 2 }), {
      action: "skip",
      reason: "resp2",
    });
  });

  it("fails on RESP2 in mode enabled, naming the endpoint", () => {
    const o = resolveMaintenanceOptions({ mode: "enabled" });
    const plan = planMaintenanceHandshake(o, { ...ctx, protocol: 2, endpoint: "127.0.0.1:6379" });
    assert.equal(plan.action, "fail");
    assert.ok(plan.action === "fail");
    assert.match(
      plan.message,
      /^Cannot enable maintenance notifications on "127\.0\.0\.1:6379": the connection uses RESP2/,
    );
    const bare = planMaintenanceHandshake(o, { ...ctx, protocol: 2 });
    assert.ok(bare.action === "fail");
    assert.match(bare.message, /^Cannot enable maintenance notifications: /);
  });

  it("sends the opt-in on RESP3 with the endpoint type resolved from the socket", () => {
    for (const mode of ["auto", "enabled"] as const) {
      const o = resolveMaintenanceOptions({ mode });
      assert.deepEqual(planMaintenanceHandshake(o, ctx), {
        action: "send",
        endpointType: "internal-ip",
        command: ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "internal-ip"],
      });
    }
    const o = resolveMaintenanceOptions();
    const tlsPublic = planMaintenanceHandshake(o, {
      protocol: 3,
      remoteAddress: "203.0.113.9",
      secure: true,
    });
    assert.ok(tlsPublic.action === "send");
    assert.equal(tlsPublic.endpointType, "external-fqdn");
    const noAddress = planMaintenanceHandshake(o, {
      protocol: 3,
      remoteAddress: undefined,
      secure: false,
    });
    assert.ok(noAddress.action === "send");
    assert.equal(noAddress.endpointType, "none");
  });

  it("uses a fixed endpointType option", () => {
    const o = resolveMaintenanceOptions({ endpointType: "external-ip" });
    const plan = planMaintenanceHandshake(o, ctx);
    assert.ok(plan.action === "send");
    assert.equal(plan.endpointType, "external-ip");
    assert.equal(plan.command[4], "external-ip");
  });
});

describe("maintenanceHandshakeOutcome", () => {
  const cases: ["auto" | "enabled" | "disabled", boolean, string][] = [
    ["auto", true, "active"],
    ["auto", false, "inactive"],
    ["enabled", true, "active"],
    ["enabled", false, "fail"],
    ["disabled", true, "inactive"],
    ["disabled", false, "inactive"],
  ];
  for (const [mode, accepted, expected] of cases) {
    it(`${mode}, ${accepted ? "+OK" : "-ERR"} -> ${expected}`, () => {
      assert.equal(maintenanceHandshakeOutcome(mode, accepted), expected);
    });
  }
});
