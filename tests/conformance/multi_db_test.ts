// The conformance suite on `MultiDbClient` over two standalone servers, and what only a
// multi-database client can get wrong: a scan that crosses a switch of the active database.
import { it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../src/client/redis_client.ts";
import { ConnectionError, RedisError } from "../../src/errors.ts";
import { conformance } from "./conformance.ts";
import { multiDb } from "./kinds.ts";

conformance(multiDb, ({ deployment, track, name }) => {
  it("a scan() across a switch of the active database fails with a RedisError, never short", async () => {
    const d = deployment();
    const prefix = `switch-scan:`;
    const written = Array.from({ length: 300 }, (_, i) => `${prefix}${i}`);
    // The same keys on both databases, as on equivalent (Active-Active) databases.
    for (const e of [d.databases.a, d.databases.b]) {
      const direct = track(new RedisClient({ host: e.host, port: e.port }));
      const p = direct.pipeline();
      for (const k of written) p.set(k, "1");
      await p.exec();
      await direct.close();
    }
    const c = track(d.multiDb({ clientName: name("multi-db") }));
    await c.connect();
    assert.equal(c.activeDatabase, "a");
    const seen: string[] = [];
    let outcome: unknown;
    try {
      for await (const k of c.scan({ match: `${prefix}*`, count: 10 })) {
        seen.push(k);
        if (seen.length === 1) await c.setActiveDatabase("b");
      }
    } catch (e) {
      outcome = e;
    }
    assert.equal(c.activeDatabase, "b");
    assert.ok(
      outcome !== undefined,
      `the scan completed across the switch with ${seen.length} keys, ${
        new Set(seen).size
      } distinct, of ${written.length}`,
    );
    assert.ok(outcome instanceof RedisError, `expected a RedisError, got ${outcome}`);
    assert.ok(outcome instanceof ConnectionError, `expected a ConnectionError, got ${outcome}`);
    assert.match(outcome.message, /active database/);
    await c.close();
  });
});
