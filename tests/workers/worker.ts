// The worker the workerd tests and the benchmark drive over HTTP: built from the project's own
// entries by esbuild into one ESM file (tests/workers/_workerd.ts), `cloudflare:sockets` left to
// the runtime. `__SHARED_URL__` is replaced by the harness with the redis-server's URL, so the
// module-scope client is created at global scope, as a user's worker would create it.
import { RedisClient } from "../../mod.ts";
import { RedisClusterClient } from "../../src/cluster/mod.ts";
import { ioContextProbe } from "../../src/transport/io_context.ts";

const SHARED_URL = "__SHARED_URL__";
/** The pattern every user tries first: one client at module scope, used by every request. */
const shared = new RedisClient({ url: SHARED_URL });
/** A module-scope client whose handshake (SELECT) no command may follow. */
const sharedDb1 = new RedisClient({ url: SHARED_URL, db: 1 });
let sharedCluster: RedisClusterClient | undefined;

type Ctx = { waitUntil(p: Promise<unknown>): void };
type Env = {
  HOLDER?: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
};

function json(value: unknown, status = 200): Response {
  return Response.json(value, { status });
}

function errorJson(e: unknown): Response {
  const err = e as Error;
  return json({ error: err?.message ?? String(e), name: err?.name }, 500);
}

async function perRequest(url: string, ctx: Ctx): Promise<Response> {
  // The per-request pattern without `await using`: close after the response is sent.
  const client = new RedisClient({ url });
  try {
    const key = `w:${crypto.randomUUID()}`;
    await client.set(key, "v1");
    const got = await client.get(key);
    const n1 = await client.incr(`${key}:n`);
    const piped = await client.pipeline().incr(`${key}:n`).get(key).exec();
    const multi = await client.multi().incr(`${key}:n`).get(`${key}:n`).exec();
    return json({ got, n1, piped, multi });
  } finally {
    ctx.waitUntil(client.close());
  }
}

/**
 * A Durable Object holding one long-lived client: every request to the object runs in the
 * object's I/O context, so its socket serves them all (and survives a server restart).
 */
export class Holder {
  #client: RedisClient | undefined;

  async fetch(request: Request): Promise<Response> {
    const q = new URL(request.url).searchParams;
    this.#client ??= new RedisClient({ url: q.get("url")! });
    try {
      if (q.has("id")) return json({ id: await this.#client.sendCommand(["CLIENT", "ID"]) });
      return json({ n: await this.#client.incr(q.get("key") ?? "w:do") });
    } catch (e) {
      return errorJson(e);
    }
  }
}

async function subscription(url: string): Promise<Response> {
  await using client = new RedisClient({ url });
  const channel = `w:ch:${crypto.randomUUID()}`;
  const received = new Promise<string>((resolve) => {
    void client.subscribe(channel, (message) => resolve(String(message))).then(
      async (sub) => {
        await client.publish(channel, "hello from the worker");
        await received;
        await sub.unsubscribe();
      },
    );
  });
  return json({ message: await received });
}

async function blocking(url: string): Promise<Response> {
  await using client = new RedisClient({ url });
  const key = `w:list:${crypto.randomUUID()}`;
  const started = Date.now();
  const none = await client.blpop([key], 0.2);
  const waited = Date.now() - started;
  setTimeout(() => void client.rpush(key, "job"), 50);
  const job = await client.blpop([key], 2);
  return json({ none, waited, job });
}

async function cluster(nodes: string[]): Promise<Response> {
  await using c = new RedisClusterClient({ nodes });
  const keys = Array.from({ length: 20 }, (_, i) => `w:cluster:${i}`);
  await Promise.all(keys.map((k, i) => c.set(k, String(i))));
  const values = await c.mget(...keys);
  return json({ values });
}

async function tls(url: string, serverName: string | null): Promise<Response> {
  await using client = new RedisClient({
    url,
    tls: serverName ? { serverName } : undefined,
  });
  await client.set("w:tls", "secure");
  return json({ got: await client.get("w:tls") });
}

/** The floor: a hand-written RESP GET over `cloudflare:sockets`, connect to close. */
async function rawGet(
  host: string,
  port: number,
  key: string,
): Promise<string | null> {
  const spec = "cloudflare:sockets";
  const { connect } = await import(spec);
  const socket = connect({ hostname: host, port });
  const writer = socket.writable.getWriter();
  const reader = socket.readable.getReader();
  try {
    await writer.write(
      new TextEncoder().encode(
        `*2\r\n$3\r\nGET\r\n$${key.length}\r\n${key}\r\n`,
      ),
    );
    let text = "";
    const dec = new TextDecoder();
    for (;;) {
      const r = await reader.read();
      if (r.done) {
        throw new Error("Cannot read the reply: the connection closed");
      }
      text += dec.decode(r.value, { stream: true });
      if (text.startsWith("$-1\r\n")) return null;
      const head = text.indexOf("\r\n");
      if (head < 0 || text[0] !== "$") continue;
      const len = Number(text.slice(1, head));
      if (text.length >= head + 2 + len + 2) {
        return text.slice(head + 2, head + 2 + len);
      }
    }
  } finally {
    await socket.close();
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: Ctx): Promise<Response> {
    const u = new URL(request.url);
    const q = u.searchParams;
    const url = q.get("url") ?? SHARED_URL;
    try {
      switch (u.pathname) {
        case "/ok":
          return new Response("ok");
        case "/basic":
          return await perRequest(url, ctx);
        case "/sub":
          return await subscription(url);
        case "/blocking":
          return await blocking(url);
        case "/cluster":
          return await cluster(q.getAll("node"));
        case "/tls":
          return await tls(url, q.get("servername"));
        case "/shared/incr": {
          const key = q.get("key") ?? "w:shared";
          if (!q.has("retry")) return json({ n: await shared.incr(key) });
          try {
            return json({ n: await shared.incr(key) });
          } catch {
            return json({ n: await shared.incr(key) });
          }
        }
        case "/shared/pipe": {
          // A pipeline and a transaction on the module-scope client, with a plain command.
          const key = q.get("key") ?? "w:shared";
          const [piped, multi, n] = await Promise.all([
            shared.pipeline().incr(key).get(key).exec(),
            shared.multi().incr(key).get(key).exec(),
            shared.incr(key),
          ]);
          return json({ piped, multi, n });
        }
        case "/shared/slow": {
          // Holds its request open while its command waits on the server (BLPOP).
          const key = q.get("key") ?? "w:shared:list";
          return json({ popped: await shared.blpop([key], Number(q.get("wait") ?? 2)) });
        }
        case "/shared/push":
          return json({ n: await shared.rpush(q.get("key") ?? "w:shared:list", "x") });
        case "/shared/fire": {
          // Answers before its command does: the request ends while the command is in flight.
          void shared.incr(q.get("key") ?? "w:shared").catch(() => {});
          return json({ fired: true });
        }
        case "/shared/connect":
          await shared.connect();
          return json({ connected: true });
        case "/shared/sub": {
          // subscribe() within the request on the module-scope client, then unsubscribe.
          const channel = `w:shared:ch:${crypto.randomUUID()}`;
          let sub: { unsubscribe(): Promise<void> } | undefined;
          const message = await new Promise<string>((resolve, reject) => {
            shared.subscribe(channel, (m) => resolve(String(m))).then(async (s) => {
              sub = s;
              await shared.publish(channel, "hello");
            }).catch(reject);
          });
          await sub?.unsubscribe();
          return json({ message });
        }
        case "/shared/cluster": {
          // A cluster client kept at module scope (made by the first request that names nodes).
          sharedCluster ??= new RedisClusterClient({ nodes: q.getAll("node") });
          const k = `w:sc:${q.get("i") ?? 0}`;
          await sharedCluster.set(k, "v");
          return json({ value: await sharedCluster.get(k) });
        }
        case "/shared/id":
          return json({ id: await shared.sendCommand(["CLIENT", "ID"]) });
        case "/shared/get":
          return json({ value: await shared.get(q.get("key") ?? "w:shared") });
        case "/shared/here": {
          // Whether the code after the await still runs in this request (workerd runs a
          // continuation in the request whose I/O settled the promise, unless it defers it).
          const here = ioContextProbe();
          const client = q.get("db") === "1" ? sharedDb1 : shared;
          const value = await client.get(q.get("key") ?? "w:shared");
          return json({ value, here: here?.() ?? true });
        }
        case "/get": {
          await using client = new RedisClient({ url });
          return json({ value: await client.get(q.get("key") ?? "w:bench") });
        }
        case "/raw/get": {
          const target = new URL(url);
          const value = await rawGet(
            target.hostname,
            Number(target.port),
            q.get("key") ?? "w:bench",
          );
          return json({ value });
        }
        case "/do/incr":
          return await env.HOLDER!.get(env.HOLDER!.idFromName("one")).fetch(
            request,
          );
        case "/cost": {
          // Inside one request: n GETs each on a fresh client (connect, HELLO, GET, close) against
          // n GETs on one client. workerd's clock advances on I/O, so n of them are measurable.
          const n = Number(q.get("n") ?? 100);
          let t = Date.now();
          for (let i = 0; i < n; i++) {
            await using c = new RedisClient({ url });
            await c.get("w:bench");
          }
          const fresh = (Date.now() - t) / n;
          await using one = new RedisClient({ url });
          await one.get("w:bench");
          t = Date.now();
          for (let i = 0; i < n; i++) await one.get("w:bench");
          return json({ freshMs: fresh, reusedMs: (Date.now() - t) / n });
        }
        case "/runtime":
          return json({ userAgent: navigator.userAgent });
        default:
          return new Response("not found", { status: 404 });
      }
    } catch (e) {
      return errorJson(e);
    }
  },
};
