// MultiDbClient's timing rules with the reference defaults, on a manual clock and in-memory
// database clients: health-check failover, grace period, failback interval, failover attempts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  PermanentlyUnavailableError,
  TemporarilyUnavailableError,
} from "../../../src/multi_db/mod.ts";
import { ConnectionError } from "../../../src/errors.ts";
import { setup } from "./_fake_databases.ts";

describe("MultiDbClient timing with the reference defaults (manual clock)", () => {
  it("health check every 5 s, failover on its failure, failback at the 120 s check after the 60 s grace", async () => {
    const { clock, a, client, seen } = setup();
    await client.connect(); // the first check's first passing probe is enough: at once
    assert.equal(clock.now(), 0);
    assert.equal(client.activeDatabase, "a");
    await clock.advance(2000);
    a.up = false;
    await clock.advance(2999);
    assert.equal(seen.length, 0, "no check before 5 s after the last");
    await clock.advance(1); // the check at 5 s fails at its first probe
    assert.deepEqual(seen.map((s) => [s.from, s.to, s.reason, s.at]), [
      ["a", "b", "HEALTH_CHECK", 5000],
    ]);
    assert.equal(await client.incr("n"), 1, "b serves");
    a.up = true;
    await clock.advance(10_000); // a healthy again, but held until 65 s
    assert.equal(client.databases()[0]!.health, "healthy");
    assert.equal(client.databases()[0]!.graceUntil, 65_000);
    assert.equal(client.databases()[0]!.circuit, "forced-open");
    await clock.advance(100_000); // 115 s: the first failback check is at 120 s
    assert.equal(seen.length, 1);
    await clock.advance(5_000);
    assert.deepEqual(seen.map((s) => [s.to, s.reason, s.at]), [
      ["b", "HEALTH_CHECK", 5000],
      ["a", "FAILBACK", 120_000],
    ]);
    await client.close();
  });

  it("no healthy database: 10 attempts 12 s apart fail temporarily, then permanently; recovers", async () => {
    const { clock, a, b, client, seen } = setup();
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    a.up = false;
    b.up = false;
    await clock.advance(5000);
    assert.ok(client.databases().every((d) => d.health === "unhealthy"));
    const attempt = async () => {
      const e = await client.get("k").then(() => undefined, (x) => x);
      assert.ok(e instanceof ConnectionError, String(e));
      return e;
    };
    const messages: string[] = [];
    for (let i = 1; i <= 10; i++) {
      const e = await attempt();
      assert.ok(e instanceof TemporarilyUnavailableError, `attempt ${i}: ${e}`);
      messages.push(e.message.replace(/ \(.*$/, ""));
      // Within the delay, the same attempt is reported again.
      const again = await attempt();
      assert.match(again.message, new RegExp(`failover attempt ${i} of 10`));
      await clock.advance(12_000);
    }
    assert.equal(
      messages[0],
      "Cannot send the command: no healthy database, failover attempt 1 of 10",
    );
    assert.equal(
      messages[9],
      "Cannot send the command: no healthy database, failover attempt 10 of 10",
    );
    const perm = await attempt();
    assert.ok(perm instanceof PermanentlyUnavailableError, String(perm));
    assert.match(perm.message, /no healthy database after 10 failover attempts/);
    b.up = true;
    await clock.advance(6000); // b's next check passes: it takes over
    // Whether a or b failed its check first, b took over once, for a health check.
    assert.deepEqual(seen.map((s) => [s.from, s.to, s.reason]), [["a", "b", "HEALTH_CHECK"]]);
    assert.equal(client.activeDatabase, "b");
    assert.equal(await client.set("k", "v"), "OK");
    await client.close();
  });

  it("the breaker opens on the 1000th failure at a 10 % rate within 2 s, not before", async () => {
    const { clock, a, client, seen } = setup({
      healthCheck: { interval: 3_600_000 },
      commandRetry: { maxAttempts: 1 },
    });
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    for (let i = 0; i < 9000; i++) await client.incr("n");
    a.up = false;
    for (let i = 0; i < 999; i++) {
      await assert.rejects(client.incr("n"), ConnectionError);
    }
    assert.equal(seen.length, 0, "999 failures are not enough");
    assert.equal(client.databases()[0]!.circuit, "closed");
    await assert.rejects(client.incr("n"), ConnectionError); // 1000 of 10 000: 10 %
    assert.deepEqual(seen.map((s) => [s.from, s.to, s.reason]), [["a", "b", "CIRCUIT_BREAKER"]]);
    assert.equal(client.databases()[0]!.circuit, "forced-open");
    assert.equal(await client.incr("n"), 1, "b serves");
    await client.close();
  });

  it("failures older than the 2 s window do not count", async () => {
    const { clock, a, client, seen } = setup({
      healthCheck: { interval: 3_600_000 },
      commandRetry: { maxAttempts: 1 },
    });
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    a.up = false;
    for (let i = 0; i < 999; i++) await assert.rejects(client.incr("n"), ConnectionError);
    await clock.advance(2000);
    await assert.rejects(client.incr("n"), ConnectionError);
    assert.equal(seen.length, 0);
    assert.equal(client.databases()[0]!.circuit, "closed");
    await client.close();
  });

  it("two databases, one down at start: the other serves after its first passing probe", async () => {
    for (const down of ["a", "b"] as const) {
      const { clock, a, b, client } = setup();
      (down === "a" ? a : b).up = false;
      await client.connect();
      assert.equal(clock.now(), 0, "no probe delay waited");
      assert.equal(client.activeDatabase, down === "a" ? "b" : "a");
      assert.equal(await client.incr("n"), 1);
      await client.close();
    }
  });

  it("a refusal at start counts the healthy databases as its checks found them", async () => {
    const { b, client } = setup({ initializationPolicy: "all-available" });
    b.up = false;
    await assert.rejects(client.connect(), (e: unknown) => {
      assert.ok(e instanceof ConnectionError);
      assert.match(
        e.message,
        /^Cannot connect: the initialization policy "all-available" needs 2 of 2 databases healthy, and 1 is not \(1 healthy; "b": /,
      );
      return true;
    });
    await client.close();
  });
});
