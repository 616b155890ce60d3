// MultiDbClient recovering without a switch, on a manual clock: a healthy database serves again
// although its breaker was open, blocking commands never hold the half-open trial, the attempt
// counter restarts after service came back in place, and a cache does not hide a dead server.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  PermanentlyUnavailableError,
  TemporarilyUnavailableError,
} from "../../../src/multi_db/mod.ts";
import { setup } from "./_fake_databases.ts";

const sensitive = { failureDetector: { minNumOfFailures: 2, failureRateThreshold: 10 } };

async function failure(p: Promise<unknown>): Promise<Error> {
  const e = await p.then(() => undefined, (x) => x);
  assert.ok(e instanceof Error, "expected the command to fail");
  return e;
}

describe("MultiDbClient recovery in place (manual clock)", () => {
  it("a database whose health check passes serves at once, although its breaker had opened", async () => {
    const { clock, a, b, client } = setup(sensitive);
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    b.up = false;
    await clock.advance(5000); // b unhealthy: nowhere to fail over to
    assert.equal(client.databases()[1]!.health, "unhealthy");
    a.up = false;
    for (let i = 0; i < 4; i++) await failure(client.get("k"));
    assert.equal(client.databases()[0]!.circuit, "open", "the failures opened a's breaker");
    a.up = true;
    await clock.advance(6000); // a's next check (11-12 s, 3 probes) passes
    assert.equal(client.databases()[0]!.health, "healthy");
    // Before: every command failed for the rest of the 60 s grace period, "no healthy database
    // ... "a" healthy, circuit open".
    assert.equal(await client.set("k", "v"), "OK");
    assert.equal(client.databases()[0]!.circuit, "closed");
    await client.close();
  });

  it("with another database serving, the grace period of the one failed away from stands", async () => {
    const { clock, a, client, seen } = setup(sensitive);
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    a.up = false;
    for (let i = 0; i < 4; i++) await client.get("k").catch(() => {});
    assert.equal(client.activeDatabase, "b");
    a.up = true;
    await clock.advance(5000);
    assert.equal(client.databases()[0]!.health, "healthy");
    assert.notEqual(client.databases()[0]!.circuit, "closed", "a stays held out");
    assert.equal(client.activeDatabase, "b");
    assert.deepEqual(seen.map((s) => s.reason), ["CIRCUIT_BREAKER"]);
    await client.close();
  });

  it("a blocking command is never the half-open trial: other commands still get through", async () => {
    const { clock, a, b, client } = setup({ ...sensitive, gracePeriod: 1000 });
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    b.up = false;
    await clock.advance(5000);
    a.up = false;
    for (let i = 0; i < 4; i++) await failure(client.get("k"));
    a.up = true;
    await clock.advance(1000); // open for the grace period, then half-open; no check yet
    assert.equal(client.databases()[0]!.circuit, "half-open");
    const popped = client.blpop("q", 0);
    await clock.advance(0);
    assert.equal(a.blocked.length, 1, "the BLPOP reached the server");
    // Before: the BLPOP held the only trial and every other command was refused.
    assert.equal(await client.set("k", "v"), "OK", "the trial goes to a plain command");
    assert.equal(client.databases()[0]!.circuit, "closed");
    a.blocked[0]!(["q", "x"]);
    assert.deepEqual(await popped, { key: "q", element: "x" });
    await client.close();
  });

  it("the failover-attempt count starts again after the database served again in place", async () => {
    const { clock, a, b, client } = setup({ maxNumFailoverAttempts: 2 });
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    a.up = false;
    b.up = false;
    await clock.advance(5000);
    assert.ok(await failure(client.get("k")) instanceof TemporarilyUnavailableError);
    await clock.advance(12_000);
    assert.ok(await failure(client.get("k")) instanceof TemporarilyUnavailableError);
    await clock.advance(12_000);
    assert.ok(await failure(client.get("k")) instanceof PermanentlyUnavailableError);
    a.up = true;
    await clock.advance(6000); // a healthy again (its check at 35 s), still active: no switch
    assert.equal(await client.set("k", "v"), "OK");
    a.up = false;
    await clock.advance(5000);
    const next = await failure(client.get("k"));
    // Before: the next outage began with PermanentlyUnavailableError.
    assert.ok(next instanceof TemporarilyUnavailableError, String(next));
    assert.match(next.message, /failover attempt 1 of 2/);
    await client.close();
  });

  it('checkActive: "idle" still checks a database whose reads come from its cache', async () => {
    const { clock, a, client, seen } = setup({
      databases: [
        { url: "redis://a:1", name: "a", weight: 2, healthCheck: { checkActive: "idle" } },
        { url: "redis://b:1", name: "b", weight: 1 },
      ],
    }, true);
    const connecting = client.connect();
    await clock.advance(1000);
    await connecting;
    await client.get("k"); // cached from now on
    a.up = false; // a silent path: cache hits never touch it
    for (let t = 0; t < 12_000; t += 500) {
      assert.equal(await client.get("k"), null);
      await clock.advance(500);
    }
    // Before: "served" hits skipped every check, and a stayed active, answering from memory.
    assert.deepEqual(seen.map((s) => [s.from, s.to, s.reason]), [["a", "b", "HEALTH_CHECK"]]);
    await client.close();
  });
});
