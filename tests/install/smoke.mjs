// Run from a project where @edge/redis was installed (npm or Bun: the packed tarball; Deno: a
// checkout with `deno link`): every entry loads, the argument checks a plain JavaScript caller
// meets hold, then SET/GET, a pipeline, a transaction and a subscription against REDIS_URL. Plain
// JavaScript, so that Node.js 20 runs it as is. Prints one JSON line and exits 0 on success.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { RedisClient } from "@edge/redis";

// The entries: SMOKE_ENTRIES (a JSON list, for Deno and its linked checkout), or the installed
// package.json's exports.
const entries = process.env.SMOKE_ENTRIES ? JSON.parse(process.env.SMOKE_ENTRIES) : Object.keys(
  JSON.parse(
    readFileSync(createRequire(import.meta.url).resolve("@edge/redis/package.json"), "utf8"),
  ).exports,
).filter((k) => k !== "./package.json");
for (const key of entries) {
  const name = key === "." ? "@edge/redis" : `@edge/redis/${key.slice(2)}`;
  const mod = await import(name);
  assert.ok(Object.keys(mod).length > 0, `${name} exports nothing`);
}

const url = process.env.REDIS_URL;
assert.ok(url, "REDIS_URL is not set");

// Plain JavaScript callers: what the type checker would refuse is refused at run time, never
// silently dropped. A URL string first is the server it names (not 127.0.0.1:6379).
const byUrl = new RedisClient(url);
try {
  const port = await byUrl.sendCommand(["CONFIG", "GET", "port"]);
  assert.equal(port instanceof Map ? port.get("port") : port[1], new URL(url).port);
  assert.throws(() => byUrl.set("install:ttl", "v", "EX", 60), TypeError); // ioredis form
  assert.throws(() => byUrl.set("install:ttl", "v", { EX: 60 }), /Did you mean `ex`\?/);
  assert.equal(await byUrl.exists("install:ttl"), 0);
  assert.throws(() => byUrl.zrange("install:z", 0, -1, { withScores: true }), /WithScores/);
  assert.throws(() => byUrl.eval("return 1", 0, "x"), /key count/);
  assert.throws(() => byUrl.get("install:k", () => {}), /get with 2 arguments/);
} finally {
  await byUrl.close();
}
assert.throws(
  () => new RedisClient({ url, comandTimeout: 100 }),
  /Did you mean `commandTimeout`\?/,
);
assert.throws(() => new RedisClient({ port: "6379" }), /got the string "6379"/);
const client = new RedisClient({ url });
const ready = [];
client.addEventListener("ready", () => ready.push(Date.now()));
try {
  assert.equal(await client.set("install:k", "v"), "OK");
  assert.equal(await client.get("install:k"), "v");

  const piped = await client.pipeline().set("install:n", "1").incr("install:n").get("install:n")
    .exec();
  assert.deepEqual(piped, ["OK", 2, "2"]);
  const tx = await client.multi().incr("install:n").get("install:n").exec();
  assert.deepEqual(tx, [3, "3"]);

  const received = new Promise((resolve) => {
    client.subscribe("install:ch", (message, channel) => resolve({ message, channel }))
      .then((sub) => subs.push(sub));
  });
  const subs = [];
  while (subs.length === 0) await new Promise((r) => setTimeout(r, 5));
  assert.equal(await client.publish("install:ch", "hello"), 1);
  assert.deepEqual(await received, { message: "hello", channel: "install:ch" });
  await subs[0].unsubscribe();

  const bytes = await client.binary().get("install:k");
  assert.ok(bytes instanceof Uint8Array);
  assert.deepEqual([...bytes], [0x76]);
  assert.ok(ready.length >= 1, "no ready event");
} finally {
  await client.close();
}
const runtime = typeof globalThis.Deno !== "undefined"
  ? `deno ${globalThis.Deno.version.deno}`
  : typeof globalThis.Bun !== "undefined"
  ? `bun ${globalThis.Bun.version}`
  : `node ${process.versions.node}`;
console.log(JSON.stringify({ ok: true, runtime, entries: entries.length }));
