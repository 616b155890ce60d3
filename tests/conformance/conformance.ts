// The conformance suite: the same behaviour tests on every client kind, on real servers.
// `conformance(kind)` declares them; each kind's test file calls it once, so its servers start
// once per file. Keys one command or transaction uses together share the `{t}` hash tag.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient } from "../../src/client/redis_client.ts";
import { ClosedError, ReplyError } from "../../src/errors.ts";
import { waitFor } from "../_helpers/load.ts";
import type { ConformanceClient, Deployment, Endpoint, Kind, KindClientOptions } from "./kinds.ts";
import { ServerWatch } from "./_server_watch.ts";
import { clientSideCache } from "../../src/cache/mod.ts";
import { otelMetrics, otelTracing } from "../../src/observability/mod.ts";
import { metricsHarness } from "../_helpers/otel.ts";

/** How long a message, a reply or a server-side change may take to show. */
const DEADLINE = 5_000;

/** Resolves like `p`, or rejects once `ms` passed without it settling. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Polls `check` until it holds, or fails after `ms` with what it saw last. */
async function eventually<T>(
  read: () => Promise<T>,
  check: (v: T) => boolean,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) {
      throw new Error(`Timed out after ${ms} ms waiting for ${what}; last: ${JSON.stringify(v)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const BYTES = new Uint8Array([0, 255, 128, 10, 13, 0xc3, 0x28, 1, 2, 3]);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** What the suite gives the kind-specific tests of a test file. */
export interface SuiteContext<D extends Deployment> {
  /** The deployment (set once `before` ran). */
  deployment(): D;
  /** Registers a client to close in `after`; returns it. */
  track<C extends { close(): Promise<void> }>(client: C): C;
  /** A client name no other client of the file uses. */
  name(prefix: string): string;
}

/**
 * Declares the conformance tests for `kind`; `extra` declares tests of that kind only, inside
 * the same `describe` (same servers).
 */
export function conformance<D extends Deployment>(
  kind: Kind<D>,
  extra?: (ctx: SuiteContext<D>) => void,
): void {
  describe(`conformance: ${kind.name}`, () => {
    let d: D;
    let watch: ServerWatch;
    let seq = 0;
    const open = new Set<{ close(): Promise<void> }>();
    const name = (prefix: string) => `conf-${prefix}-${++seq}`;
    const track = <C extends { close(): Promise<void> }>(c: C): C => {
      open.add(c);
      return c;
    };
    /** A client of the kind under test, named so the servers can tell its connections. */
    const client = (options: KindClientOptions = {}, onStartup?: (line: string) => void) =>
      track(d.client({ clientName: name(kind.name), ...options }, onStartup));
    /** A plain standalone client of one server (publishing, checking from outside). */
    const direct = (e: Endpoint) => track(new RedisClient({ host: e.host, port: e.port }));
    const key = (what: string) => `{t}${what}:${++seq}`;

    before(async () => {
      d = await kind.start();
      watch = await ServerWatch.open(d.servers);
    });
    after(async () => {
      await Promise.allSettled([...open].map((c) => c.close()));
      await watch?.close();
      await d?.stop();
    });

    // ---- 1. typed commands, raw replies

    it("typed commands return typed replies", async () => {
      const c = client();
      const k = key("typed");
      const ok: "OK" | null = await c.set(`${k}:s`, "v");
      assert.equal(ok, "OK");
      const v: string | null = await c.get(`${k}:s`);
      assert.equal(v, "v");
      assert.equal(await c.get(`${k}:missing`), null);
      const n: number = await c.incr(`${k}:n`);
      assert.equal(n, 1);
      assert.equal(await c.incr(`${k}:n`), 2);
      assert.equal(await c.hset(`${k}:h`, { a: "1", b: "2" }), 2);
      const h: Record<string, string> = await c.hgetall(`${k}:h`);
      assert.deepEqual({ ...h }, { a: "1", b: "2" });
      assert.equal(
        await c.zadd(`${k}:z`, [{ score: 2.5, member: "two" }, { score: 1, member: "one" }]),
        2,
      );
      assert.deepEqual(await c.zrangeWithScores(`${k}:z`, 0, -1), [
        { member: "one", score: 1 },
        { member: "two", score: 2.5 },
      ]);
      assert.deepEqual(await c.zrange(`${k}:z`, 0, -1), ["one", "two"]);
      assert.equal(await c.exists(`${k}:s`, `${k}:n`, `${k}:missing`), 2);
      assert.equal(await c.del(`${k}:s`, `${k}:n`, `${k}:h`, `${k}:z`), 4);
      assert.equal(await c.exists(`${k}:s`), 0);
      await c.close();
    });

    it("sendCommand returns raw RESP3 values", async () => {
      const c = client();
      const k = key("raw");
      assert.equal(await c.sendCommand(["SET", `${k}:s`, "v"]), "OK");
      assert.equal(await c.sendCommand(["GET", `${k}:s`]), "v");
      assert.equal(await c.sendCommand(["GET", `${k}:missing`]), null);
      assert.equal(await c.sendCommand(["INCR", `${k}:n`]), 1);
      await c.sendCommand(["HSET", `${k}:h`, "f", "1"]);
      assert.deepEqual(await c.sendCommand(["HGETALL", `${k}:h`]), new Map([["f", "1"]]));
      await c.sendCommand(["SADD", `${k}:set`, "x"]);
      assert.deepEqual(await c.sendCommand(["SMEMBERS", `${k}:set`]), new Set(["x"]));
      await c.sendCommand(["ZADD", `${k}:z`, "1.5", "m"]);
      assert.equal(await c.sendCommand(["ZSCORE", `${k}:z`, "m"]), 1.5);
      assert.deepEqual(
        await c.sendCommand(["GET", `${k}:s`], { binary: true }),
        new TextEncoder().encode("v"),
      );
      await assert.rejects(
        c.sendCommand(["INCR", `${k}:h`]),
        (e) => e instanceof ReplyError && e.prefix === "WRONGTYPE",
      );
      await c.close();
    });

    // ---- 2. pipelines

    it("pipeline() returns a typed tuple, an error as a ReplyError value", async () => {
      const c = client();
      const k = key("pipe");
      const results: [
        "OK" | null | Error,
        string | null | Error,
        number | Error,
        number | Error,
        string | null | Error,
      ] = await c.pipeline().set(k, "1").get(k).incr(k).hset(k, "f", "v").get(`${k}:missing`)
        .exec();
      assert.equal(results.length, 5);
      const [set, get, incr, bad, missing] = results;
      assert.equal(set, "OK");
      assert.equal(get, "1");
      assert.equal(incr, 2);
      assert.ok(bad instanceof ReplyError, `expected a ReplyError value, got ${bad}`);
      assert.equal(bad.prefix, "WRONGTYPE");
      assert.equal(missing, null);
      await c.close();
    });

    // ---- 3. transactions and WATCH

    it("multi() returns the EXEC results", async () => {
      const c = client();
      const k = key("tx");
      const r = await c.multi().set(k, "1").incr(k).get(k).exec();
      assert.deepEqual(r, ["OK", 2, "2"]);
      await c.close();
    });

    it("multi() with a bad command: a ReplyError value, or EXECABORT when not queued", async () => {
      const c = client();
      const k = key("txbad");
      const r = await c.multi().set(k, "x").incr(k).get(k).exec();
      assert.ok(r !== null);
      assert.equal(r[0], "OK");
      assert.ok(r[1] instanceof ReplyError, `expected a ReplyError value, got ${r[1]}`);
      assert.equal(r[2], "x");
      await assert.rejects(
        c.multi().set(`${k}:2`, "y").sendCommand(["NOSUCHCOMMAND", `${k}:2`]).exec(),
        (e) => e instanceof ReplyError && e.prefix === "EXECABORT",
      );
      assert.equal(await c.get(`${k}:2`), null, "a transaction refused by EXECABORT ran");
      await c.close();
    });

    it("a command sent right after exec() of a batch runs after the batch", async () => {
      const c = client();
      const k = key("order");
      await c.set(k, "v1");
      const tx = c.multi().set(k, "v2").exec();
      const afterTx = c.get(k);
      const pipe = c.pipeline().set(`${k}:p`, "p2").exec();
      const afterPipe = c.get(`${k}:p`);
      await Promise.all([tx, pipe]);
      assert.deepEqual(
        { afterTx: await afterTx, afterPipe: await afterPipe },
        { afterTx: "v2", afterPipe: "p2" },
      );
      await c.close();
    });

    it("watch(): exec() is null when another client changed the key, commits otherwise", async () => {
      const c = client();
      const other = client();
      const k = key("watch");
      await c.set(k, "0");
      const aborted = await c.watch(k);
      assert.equal(await aborted.get(k), "0");
      await other.set(k, "changed");
      assert.equal(await aborted.multi().set(k, "mine").exec(), null);
      assert.equal(await c.get(k), "changed");
      const session = await c.watch(k);
      const current = await session.get(k);
      assert.deepEqual(await session.multi().set(k, `${current}+1`).exec(), ["OK"]);
      assert.equal(await other.get(k), "changed+1");
      await Promise.all([c.close(), other.close()]);
    });

    // ---- 4. pub/sub

    /**
     * The subscriptions of the connections named `n` on the data servers, by kind (a cluster
     * may hold a shard channel on a replica too: its failover copy).
     */
    const subscriptions = async (n: string) => {
      const rows = await watch.connections(n, d.dataServers);
      const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
      return { sub: sum((r) => r.sub), psub: sum((r) => r.psub), ssub: sum((r) => r.ssub) };
    };
    const NONE = { sub: 0, psub: 0, ssub: 0 };

    it("subscribe, psubscribe, ssubscribe with a listener; unsubscribe() stops delivery", async () => {
      const n = name(kind.name);
      const c = client({ clientName: n });
      const ch = key("ch");
      const sh = key("sh");
      const got: string[] = [];
      const a = await c.subscribe(ch, (m, channel) => got.push(`sub ${channel} ${m}`));
      const b = await c.psubscribe(
        `${ch}.*`,
        (m, channel, p) => got.push(`psub ${p} ${channel} ${m}`),
      );
      const s = await c.ssubscribe(sh, (m, channel) => got.push(`ssub ${channel} ${m}`));
      const held = await subscriptions(n);
      assert.ok(
        held.sub === 1 && held.psub === 1 && held.ssub >= 1,
        `expected the data servers to hold the subscriptions, got ${JSON.stringify(held)}`,
      );
      const pub = direct(d.dataNode(sh));
      await pub.publish(ch, "m1");
      await pub.publish(`${ch}.x`, "m2");
      await pub.spublish(sh, "m3");
      await waitFor(() => got.length >= 3, DEADLINE, "three messages");
      assert.deepEqual(got.sort(), [
        `psub ${ch}.* ${ch}.x m2`,
        `ssub ${sh} m3`,
        `sub ${ch} m1`,
      ]);
      await Promise.all([a.unsubscribe(), b.unsubscribe(), s.unsubscribe()]);
      assert.deepEqual(await subscriptions(n), NONE, "subscriptions left on the servers");
      assert.equal(a.active || b.active || s.active, false);
      await c.close();
    });

    it("subscribe, psubscribe, ssubscribe as async iterators; unsubscribe() ends them", async () => {
      const n = name(kind.name);
      const c = client({ clientName: n });
      const ch = key("ich");
      const sh = key("ish");
      const a = await c.subscribe(ch);
      const b = await c.psubscribe(`${ch}.*`);
      const s = await c.ssubscribe(sh);
      const [ia, ib, is] = [a, b, s].map((x) => x[Symbol.asyncIterator]());
      const pub = direct(d.dataNode(sh));
      await pub.publish(ch, "m1");
      await pub.publish(`${ch}.y`, "m2");
      await pub.spublish(sh, "m3");
      const ra = await within(ia!.next(), DEADLINE, "the channel message");
      const rb = await within(ib!.next(), DEADLINE, "the pattern message");
      const rs = await within(is!.next(), DEADLINE, "the shard message");
      assert.deepEqual({ ...ra.value }, { channel: ch, message: "m1" });
      assert.deepEqual({ ...rb.value }, { channel: `${ch}.y`, message: "m2", pattern: `${ch}.*` });
      assert.deepEqual({ ...rs.value }, { channel: sh, message: "m3" });
      await Promise.all([a.unsubscribe(), b.unsubscribe(), s.unsubscribe()]);
      for (const i of [ia, ib, is]) {
        assert.equal((await within(i!.next(), DEADLINE, "the end of the iteration")).done, true);
      }
      assert.deepEqual(await subscriptions(n), NONE, "subscriptions left on the servers");
      await c.close();
    });

    it("binary().subscribe() as the first call gets the exact bytes published on the data node", async () => {
      const n = name(kind.name);
      const c = client({ clientName: n });
      const ch = key("bin");
      const got: Uint8Array[] = [];
      const sub = await c.binary().subscribe(ch, (m) => got.push(m));
      const node = d.dataNode(ch);
      const data = d.dataServers.map((e) => `${e.host}:${e.port}`);
      // Data servers only: the sentinel client's own monitor subscribes on a sentinel. A data
      // subscription made on a sentinel instead never gets the message published below.
      const on = (await watch.connections(n)).filter((r) => r.sub > 0 && data.includes(r.server))
        .map((r) => r.server);
      // A cluster forwards a plain channel's messages to every node: any one data node will do.
      const expected = kind.name === "cluster" && on.length === 1
        ? on
        : [`${node.host}:${node.port}`];
      assert.deepEqual(
        on,
        expected,
        `the subscription is on ${
          on.join(", ") || "no data server"
        }, not on the data node ${node.host}:${node.port}`,
      );
      await direct(d.dataNode(ch)).publish(ch, BYTES);
      await waitFor(() => got.length >= 1, DEADLINE, "the binary message");
      assert.ok(got[0] instanceof Uint8Array);
      assert.deepEqual([...got[0]!], [...BYTES]);
      await sub.unsubscribe();
      assert.deepEqual(await subscriptions(n), NONE, "subscriptions left on the servers");
      await c.close();
    });

    it("binary() psubscribe and ssubscribe iterators get the exact bytes", async () => {
      const c = client();
      const ch = key("binp");
      const sh = key("bins");
      const p = await c.binary().psubscribe(`${ch}.*`);
      const s = await c.binary().ssubscribe(sh);
      const pub = direct(d.dataNode(sh));
      await pub.publish(`${ch}.z`, BYTES);
      await pub.spublish(sh, BYTES);
      const rp = await within(p[Symbol.asyncIterator]().next(), DEADLINE, "the pattern message");
      const rs = await within(s[Symbol.asyncIterator]().next(), DEADLINE, "the shard message");
      assert.deepEqual([...rp.value.message], [...BYTES]);
      assert.equal(rp.value.channel, `${ch}.z`);
      assert.deepEqual([...rs.value.message], [...BYTES]);
      await Promise.all([p.unsubscribe(), s.unsubscribe()]);
      await c.close();
    });

    // ---- 5. scan family

    it("scan() returns every key written, each once", async () => {
      const c = client();
      const prefix = `scan${++seq}:`;
      const written = Array.from({ length: 300 }, (_, i) => `${prefix}${i}`);
      const p = c.pipeline();
      for (const k of written) p.set(k, "1");
      assert.ok((await p.exec()).every((r) => r === "OK"));
      const seen: string[] = [];
      for await (const k of c.scan({ match: `${prefix}*`, count: 20 })) seen.push(k);
      assert.deepEqual(compareKeys(seen, written), [], "scan()");
      const bytes: string[] = [];
      for await (const k of c.binary().scan({ match: `${prefix}*`, count: 20 })) {
        assert.ok(k instanceof Uint8Array);
        bytes.push(decode(k));
      }
      assert.deepEqual(compareKeys(bytes, written), [], "binary().scan()");
      await c.close();
    });

    it("hscan, sscan, zscan return every member of a large key, each once", async () => {
      const c = client();
      const k = key("big");
      const fields = Array.from({ length: 500 }, (_, i) => `f${i}`);
      await c.hset(`${k}:h`, Object.fromEntries(fields.map((f, i) => [f, `v${i}`])));
      await c.sendCommand(["SADD", `${k}:s`, ...fields]);
      await c.zadd(`${k}:z`, fields.map((f, i) => ({ member: f, score: i })));
      const h: [string, string][] = [];
      for await (const e of c.hscan(`${k}:h`, { count: 20 })) h.push(e);
      assert.equal(h.length, 500, "hscan: a field missing or twice");
      assert.deepEqual(new Map(h), new Map(fields.map((f, i) => [f, `v${i}`])));
      const s: string[] = [];
      for await (const m of c.sscan(`${k}:s`, { count: 20 })) s.push(m);
      assert.equal(s.length, 500, "sscan: a member missing or twice");
      assert.deepEqual(s.sort(), [...fields].sort());
      const z: string[] = [];
      for await (const m of c.zscan(`${k}:z`, { count: 20 })) {
        assert.equal(m.score, Number(m.member.slice(1)));
        z.push(m.member);
      }
      assert.equal(z.length, 500, "zscan: a member missing or twice");
      assert.deepEqual(z.sort(), [...fields].sort());
      await c.close();
    });

    // ---- 6. client-side cache

    it("client-side cache: own writes in multi(), pipeline() and set() drop the cached value", async () => {
      const c = client({ clientSideCache: clientSideCache({ maxEntries: 1000 }) });
      const k = key("cache");
      const hits = () => c.cacheStats?.()?.hits;
      await c.set(k, "v1");
      assert.equal(await c.get(k), "v1");
      const before = hits();
      assert.equal(await c.get(k), "v1");
      if (before !== undefined) {
        assert.equal(hits(), before + 1, "the second GET is from the cache");
      }
      const writes: [string, string, () => Promise<unknown>][] = [
        ["multi().exec()", "v2", () => c.multi().set(k, "v2").exec()],
        ["pipeline().exec()", "v3", () => c.pipeline().set(k, "v3").exec()],
        ["set()", "v4", () => c.set(k, "v4")],
      ];
      const problems: string[] = [];
      for (const [what, value, write] of writes) {
        assert.equal(await c.get(k), await c.get(k), "the value is cached again");
        // A GET sent while the write is on its way must not be answered from the cache (a GET
        // that overtakes the write on the wire is the ordering test's business, not this one's).
        const h = hits();
        const written = write();
        const rightAfter = c.get(k);
        await written;
        const got = await rightAfter;
        if (h !== undefined ? hits() !== h : got !== value) {
          problems.push(`GET right after ${what} answered from the cache: ${JSON.stringify(got)}`);
        }
        const later = await c.get(k);
        if (later !== value) {
          problems.push(`GET after ${what} resolved: ${JSON.stringify(later)}, not "${value}"`);
        }
      }
      assert.deepEqual(problems, []);
      await c.close();
    });

    it("parts: the old form (a plain options object) is refused with what to import", async () => {
      const plain = "a plain options object";
      const cases: [KindClientOptions, string, string][] = [
        [{ clientSideCache: { maxEntries: 1000 } as never }, "clientSideCache", plain],
        [{ clientSideCache: true as never }, "clientSideCache", "true"],
        [{ metrics: { meterProvider: { getMeter() {} } } as never }, "metrics", plain],
        [{ tracing: { tracerProvider: { getTracer() {} } } as never }, "tracing", plain],
      ];
      const how: Record<string, string> = {
        clientSideCache: 'clientSideCache({ ... }), imported from "@edge/redis/cache"',
        metrics: 'otelMetrics({ ... }), imported from "@edge/redis/otel"',
        tracing: 'otelTracing({ ... }), imported from "@edge/redis/otel"',
      };
      for (const [options, option, what] of cases) {
        assert.throws(() => client(options), {
          name: "TypeError",
          message: `Cannot enable ${option} from ${what}: pass ${how[option]}`,
        });
      }
      // The parts themselves are taken by every kind (nothing is dialled before a command).
      const c = client({
        clientSideCache: clientSideCache(),
        metrics: otelMetrics({ meterProvider: { getMeter: () => ({}) as never } }),
        tracing: otelTracing({ tracerProvider: { getTracer: () => ({}) as never } }),
      });
      await c.close();
    });

    it("client-side cache: one part given to two clients makes a cache for each", async () => {
      const part = clientSideCache({ maxEntries: 1000 });
      const a = client({ clientSideCache: part });
      const b = client({ clientSideCache: part });
      const k = key("shared-part");
      await a.set(k, "v1");
      assert.equal(await a.get(k), "v1");
      assert.equal(await a.get(k), "v1");
      assert.equal(await b.get(k), "v1");
      const hitsA = a.cacheStats?.()?.hits;
      const hitsB = b.cacheStats?.()?.hits;
      if (hitsA !== undefined && hitsB !== undefined) {
        assert.equal(hitsA, 1, "the second GET of a is from its cache");
        assert.equal(hitsB, 0, "b's first GET is not from a's cache");
        assert.equal(b.cacheStats?.()?.misses, 1);
      }
      // Each tracks on its own connections: b's write reaches a's cache too.
      await b.set(k, "v2");
      const end = Date.now() + 5_000;
      let got = await a.get(k);
      while (got !== "v2" && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 10));
        got = await a.get(k);
      }
      assert.equal(got, "v2", "a's cache was told of b's write");
      assert.equal(await b.get(k), "v2");
      await a.close();
      await b.close();
    });

    // ---- 7. events

    it("the close event fires once on close()", async () => {
      const c = client();
      let closes = 0;
      c.addEventListener("close", () => closes++);
      await c.ping();
      await c.close();
      assert.equal(closes, 1);
      await c.close();
      assert.equal(closes, 1, "close fired again on the second close()");
    });

    it("the connect events the kind documents fire, with their typed details", async () => {
      const lines: string[] = [];
      const c = client({}, (line) => lines.push(line));
      await c.connect();
      await c.set(key("events"), "1");
      // A kind may serve before every startup event fired (the multi-database client serves
      // once its best database answered; the others' first checks report a moment later).
      for (const l of d.startupLines) {
        await eventually(() => Promise.resolve(lines), (ls) => ls.includes(l), 2_000, `"${l}"`);
      }
      await c.close();
    });

    // ---- 8. close semantics

    /** Calls every entry point of a closed client; returns what did not refuse with ClosedError. */
    const entryPointsAfterClose = async (c: ConformanceClient, k: string, ch: string) => {
      const entries: [string, () => unknown][] = [
        ["get()", () => c.get(k)],
        ["sendCommand()", () => c.sendCommand(["PING"])],
        ["pipeline().exec()", () => c.pipeline().set(k, "after-close").exec()],
        ["multi().exec()", () => c.multi().set(k, "after-close").exec()],
        ["watch()", () => c.watch(k)],
        ["subscribe()", () => c.subscribe(ch, () => {})],
        ["psubscribe()", () => c.psubscribe(`${ch}.*`, () => {})],
        ["ssubscribe()", () => c.ssubscribe(ch, () => {})],
        ["scan().next()", () => c.scan().next()],
        ["hscan().next()", () => c.hscan(k).next()],
        ["binary().get()", () => c.binary().get(k)],
        ["binary().subscribe()", () => c.binary().subscribe(ch, () => {})],
        ["connect()", () => c.connect()],
      ];
      const wrong: string[] = [];
      for (const [what, call] of entries) {
        try {
          const r = await within(Promise.resolve(call()), DEADLINE, what);
          wrong.push(`${what} resolved ${describeValue(r)}`);
          await cleanUp(r);
        } catch (e) {
          if (!(e instanceof ClosedError)) {
            wrong.push(`${what} rejected with ${(e as Error).name}: ${(e as Error).message}`);
          }
        }
      }
      return wrong;
    };

    it("after close(), every entry point refuses with ClosedError and nothing is written", async () => {
      const c = client();
      const k = key("closed");
      const ch = key("closedch");
      await c.set(k, "before");
      await c.close();
      const wrong = await entryPointsAfterClose(c, k, ch);
      assert.deepEqual(wrong, [], `entry points that did not refuse:\n${wrong.join("\n")}`);
      assert.equal(await direct(d.dataNode(k)).get(k), "before", "a write after close() ran");
    });

    it("after close(), no connection of the client remains and none is opened", async () => {
      const n = name(kind.name);
      const c = client({ clientName: n });
      const k = key("sockets");
      const ch = key("socketsch");
      await c.set(k, "1");
      const sub = await c.subscribe(ch, () => {});
      assert.ok(sub.active);
      assert.ok((await watch.connections(n)).length > 0, "the client has connections before");
      await c.close();
      const remaining = await eventually(
        () => watch.connections(n),
        (rows) => rows.length === 0,
        2_000,
        "the closed client's connections to go",
      ).catch(async () => await watch.connections(n));
      const before = await watch.connectionsReceived();
      await entryPointsAfterClose(c, k, ch);
      const opened = await watch.connectionsReceived() - before;
      const after = await watch.connections(n);
      const problems = [
        ...(remaining.length > 0
          ? [`${remaining.length} connection(s) remain: ${remaining.map((r) => r.server)}`]
          : []),
        ...(opened > 0 ? [`${opened} connection(s) opened after close()`] : []),
        ...(after.length > remaining.length
          ? [`${after.length} connection(s) named after the client after the calls`]
          : []),
      ];
      assert.deepEqual(problems, []);
    });

    it("close() twice returns the same resolved promise", async () => {
      const c = client();
      await c.ping();
      const first = c.close();
      let firstDone = false;
      first.then(() => firstDone = true);
      const second = c.close();
      await second;
      assert.ok(firstDone, "the second close() resolved before the first one finished");
      await first;
      assert.equal(second, first, "the second close() returned another promise");
      assert.equal(c.close(), first, "close() after the close returned another promise");
    });

    it("await using closes the client", async () => {
      const n = name(kind.name);
      let closes = 0;
      {
        await using c = client({ clientName: n });
        c.addEventListener("close", () => closes++);
        await c.ping();
        assert.ok((await watch.connections(n)).length > 0);
      }
      assert.equal(closes, 1);
      await eventually(
        () => watch.connections(n),
        (rows) => rows.length === 0,
        2_000,
        "the connections to go",
      );
    });

    // ---- 8. metrics

    it("metrics: each error a caller receives is one redis.client.errors, by command", async () => {
      const h = await metricsHarness();
      try {
        const c = client({
          metrics: otelMetrics({ meterProvider: h.meterProvider, groups: ["resiliency"] }),
        });
        const k = key("errors");
        await c.set(k, "v");
        await assert.rejects(c.hget(k, "f"), ReplyError); // an error reply, typed
        await assert.rejects(c.sendCommand(["LPUSH", k, "x"]), ReplyError); // and raw
        // A bad argument rejects with the same TypeError on every kind (a throw fails here).
        const bad = c.sendCommand(["GET", null as unknown as string]);
        await assert.rejects(bad, { name: "TypeError", message: /"GET": argument 1 is null/ });
        // A pipeline's error is its value: not counted as a command's.
        const [r] = await c.pipeline().hget(k, "f").exec();
        assert.ok(r instanceof ReplyError);
        const counted: Record<string, number> = {};
        for (const p of await h.points("redis.client.errors")) {
          if (p.attributes["redis.client.errors.internal"] !== false) continue;
          const op = String(p.attributes["db.operation.name"]);
          counted[op] = (counted[op] ?? 0) + p.value;
        }
        assert.deepEqual(counted, { GET: 1, HGET: 1, LPUSH: 1 });
        await c.close();
      } finally {
        await h.shutdown();
      }
    });

    extra?.({ deployment: () => d, track, name });
  });
}

/** What differs between the keys a scan returned and the keys written: none means none. */
function compareKeys(seen: string[], written: string[]): string[] {
  const want = new Set(written);
  const counts = new Map<string, number>();
  for (const k of seen) counts.set(k, (counts.get(k) ?? 0) + 1);
  const missing = written.filter((k) => !counts.has(k));
  const twice = [...counts].filter(([, n]) => n > 1).map(([k]) => k);
  const extra = [...counts.keys()].filter((k) => !want.has(k));
  const list = (l: string[]) => `${l.slice(0, 3).join(", ")}${l.length > 3 ? ", ..." : ""}`;
  return [
    ...(missing.length > 0
      ? [`${missing.length} of ${written.length} missing (${list(missing)})`]
      : []),
    ...(twice.length > 0 ? [`${twice.length} returned twice (${list(twice)})`] : []),
    ...(extra.length > 0 ? [`${extra.length} not written (${list(extra)})`] : []),
  ];
}

function describeValue(v: unknown): string {
  if (v === undefined) return "undefined";
  if (v !== null && typeof v === "object") {
    if ("value" in v && "done" in v) return `an iterator result ${JSON.stringify(v.value)}`;
    return `a ${v.constructor?.name ?? "value"}${Array.isArray(v) ? ` ${JSON.stringify(v)}` : ""}`;
  }
  return JSON.stringify(v);
}

/** Releases what an entry point wrongly handed out after close (a session, a subscription). */
async function cleanUp(v: unknown): Promise<void> {
  const o = v as { release?: () => Promise<void>; unsubscribe?: () => Promise<void> } | null;
  await o?.release?.().catch(() => {});
  await o?.unsubscribe?.().catch(() => {});
}
