// A Cloudflare Worker on @edge/redis: a client per request (a socket belongs to the request that
// opened it), and a Durable Object holding one long-lived client for the work that needs it
// (a counter here; pub/sub and maintenance handoffs the same way). No `nodejs_compat` flag: the
// client finds `cloudflare:sockets` by itself.
//
// Deploy: `npx wrangler deploy` (wrangler.toml here; set REDIS_URL with `wrangler secret put`).
// Run locally with workerd alone:
//   npx -y esbuild@0.25.12 examples/workers/worker.ts --bundle --format=esm --platform=neutral \
//     --external:cloudflare:* --outfile=examples/workers/worker.js
//   npx -y workerd serve examples/workers/config.capnp     # REDIS_URL in config.capnp
//   curl -X PUT localhost:8787/kv/greeting -d hello; curl localhost:8787/kv/greeting
//   curl -X POST localhost:8787/hits
//
// In an application, import from the package: `import { RedisClient } from "@edge/redis";`.
import { RedisClient } from "../../mod.ts";

interface Env {
  REDIS_URL: string;
  COUNTER: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
}

/** Fail a request fast rather than hold it: Workers bill and time out by the request. */
function connect(url: string): RedisClient {
  return new RedisClient({ url, commandTimeout: 2_000, connectTimeout: 2_000 });
}

/** The key of a `/kv/<key>` path, or `undefined` when it is not valid percent-encoding. */
function decodeKey(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** One client for the life of the object: requests to it share its socket. */
export class Counter {
  #client: RedisClient;

  constructor(_state: unknown, env: Env) {
    this.#client = connect(env.REDIS_URL);
  }

  async fetch(_request: Request): Promise<Response> {
    return Response.json({ hits: await this.#client.incr("hits") });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/hits" && request.method === "POST") {
      return env.COUNTER.get(env.COUNTER.idFromName("hits")).fetch(request);
    }
    const kv = /^\/kv\/([^/]+)$/.exec(url.pathname);
    if (!kv) return new Response("not found\n", { status: 404 });
    const name = decodeKey(kv[1]!);
    if (name === undefined) {
      return new Response("Cannot read the key: the path is not valid percent-encoding\n", {
        status: 400,
      });
    }
    // Closed when the handler returns (or use `ctx.waitUntil(client.close())`).
    await using client = connect(env.REDIS_URL);
    const key = `kv:${name}`;
    if (request.method === "PUT") {
      await client.set(key, await request.text(), { ex: 3600 });
      return new Response(null, { status: 204 });
    }
    const value = await client.get(key);
    return value === null ? new Response("not found\n", { status: 404 }) : new Response(value);
  },
};
