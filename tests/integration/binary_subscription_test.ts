// Subscriptions through the binary view: messages are the exact bytes published, next to text
// subscriptions and invalidations on the same connection.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../mod.ts";
import { MaintenanceSimulator } from "../../src/testing/mod.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline, sleep } from "../_helpers/leaks.ts";

async function until(pred: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await sleep(5);
}

// Not valid UTF-8: a text decoder would turn these into U+FFFD.
const RAW = new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x41]);

describe("binary subscriptions", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  for (const protocol of [3, 2] as const) {
    it(`deliver the exact bytes, while text subscriptions still get text (RESP${protocol})`, async () => {
      const client = new RedisClient({ url: server.url, protocol });
      const publisher = new RedisClient({ url: server.url });
      const bytes: Uint8Array[] = [];
      const texts: string[] = [];
      const patterned: [Uint8Array, string, string | undefined][] = [];
      await client.binary().subscribe("bin", (m) => bytes.push(m));
      await client.subscribe("bin", (m) => texts.push(m));
      await client.binary().psubscribe("bi*", (m, ch, p) => patterned.push([m, ch, p]));
      await publisher.publish("bin", RAW);
      await publisher.publish("bin", "plain");
      await until(() => bytes.length === 2 && texts.length === 2 && patterned.length === 2);
      assert.deepEqual(bytes[0], RAW);
      assert.deepEqual(new TextDecoder().decode(bytes[1]), "plain");
      assert.equal(texts[1], "plain");
      assert.equal(typeof texts[0], "string");
      assert.deepEqual(patterned[0]![0], RAW);
      assert.equal(patterned[0]![1], "bin");
      assert.equal(patterned[0]![2], "bi*");
      // Commands on the same client still reply text.
      await client.set("bin:k", "v");
      assert.equal(await client.get("bin:k"), "v");
      await Promise.all([client.close(), publisher.close()]);
      await assertNoLeaks();
    });
  }

  it("an iterated binary subscription yields Uint8Array messages; text again once it ends", async () => {
    const client = new RedisClient({ url: server.url });
    const publisher = new RedisClient({ url: server.url });
    const sub = await client.binary().subscribe("bin:it");
    await publisher.publish("bin:it", RAW);
    const first = await sub[Symbol.asyncIterator]().next();
    assert.deepEqual(first.value?.message, RAW);
    assert.equal(first.value?.channel, "bin:it");
    await sub.unsubscribe();
    const texts: unknown[] = [];
    await client.subscribe("txt", (m) => texts.push(m));
    await publisher.publish("txt", "hello");
    await until(() => texts.length === 1);
    assert.deepEqual(texts, ["hello"]);
    await Promise.all([client.close(), publisher.close()]);
    await assertNoLeaks();
  });

  it("maintenance notifications and cache invalidations are still read while pushes carry bytes", async () => {
    await using sim = await MaintenanceSimulator.start({
      upstream: `${server.host}:${server.port}`,
    });
    const client = new RedisClient({
      host: sim.endpoint.host,
      port: sim.endpoint.port,
      maintenanceNotifications: { mode: "enabled" },
      clientSideCache: clientSideCache(),
    });
    const writer = new RedisClient({ url: server.url });
    const handoffs: unknown[] = [];
    client.addEventListener("handoff", (e) => handoffs.push(e.detail));
    const bytes: Uint8Array[] = [];
    await client.binary().subscribe("bin:m", (m) => bytes.push(m));
    await writer.set("bin:cached", "1");
    assert.equal(await client.get("bin:cached"), "1");
    assert.equal(await client.get("bin:cached"), "1");
    await writer.set("bin:cached", "2");
    await until(() => (client.cacheStats()?.invalidations ?? 0) > 0);
    assert.equal(await client.get("bin:cached"), "2", "the invalidation was understood");
    const moving = sim.bind({ time: 1 });
    await until(() => handoffs.length === 1, 3000);
    assert.equal(handoffs.length, 1, "MOVING was understood and handed off");
    await writer.publish("bin:m", RAW);
    await until(() => bytes.length === 1);
    assert.deepEqual(bytes[0], RAW);
    await moving;
    await Promise.all([client.close(), writer.close()]);
  });
});
