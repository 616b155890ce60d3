import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ConnectionError, RedisClient } from "../../mod.ts";
import { startTlsRedis, type TlsRedis } from "../_helpers/tls.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("RedisClient over TLS (rediss://)", () => {
  beforeEach(markLeakBaseline);
  let tls: TlsRedis;
  before(async () => {
    tls = await startTlsRedis();
  });
  after(async () => {
    await tls.stop();
  });

  it("runs commands over TLS with the test CA trusted", async () => {
    const client = new RedisClient({
      url: `rediss://127.0.0.1:${tls.tlsPort}`,
      tls: { caCerts: [tls.caPem] },
    });
    await client.set("tls:k", "secure");
    assert.equal(await client.get("tls:k"), "secure");
    const big = "z".repeat(512 * 1024);
    const many = await Promise.all(
      Array.from({ length: 200 }, (_, i) => client.set(`tls:${i}`, big)),
    );
    assert.equal(many.length, 200);
    assert.equal((await client.get("tls:199"))?.length, big.length);
    // The connection really is TLS: the server sees it on the TLS port.
    const info = await client.clientInfo();
    assert.equal(info.laddr, `127.0.0.1:${tls.tlsPort}`);
    await client.close();
    await assertNoLeaks();
  });

  it("rejects a certificate it does not trust with a clear error", async () => {
    const client = new RedisClient({
      url: `rediss://127.0.0.1:${tls.tlsPort}`,
      connectTimeout: 2000,
    });
    await assert.rejects(client.get("k"), (e: unknown) => {
      assert.ok(e instanceof ConnectionError, String(e));
      assert.match(
        (e as Error).message,
        new RegExp(`Cannot connect to "127\\.0\\.0\\.1:${tls.tlsPort}"`),
      );
      return true;
    });
    await client.close();
    await assertNoLeaks();
  });
});
