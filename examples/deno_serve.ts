// An edge HTTP server on Deno (the shape Deno Deploy runs): one client per process, shared by
// every request; it connects on the first command and reconnects by itself.
//
//   REDIS_URL=redis://127.0.0.1:6379 deno run --allow-net --allow-env examples/deno_serve.ts
//   curl -X PUT localhost:8000/kv/greeting -d hello; curl localhost:8000/kv/greeting
//
// Environment: REDIS_URL (default redis://127.0.0.1:6379), HOST (the address to listen on,
// default 127.0.0.1: this machine only; HOST=0.0.0.0 for every interface, as in a container),
// PORT (default 8000). Deno Deploy ignores both and serves on its own address.
//
// In an application, import from the package: `import { RedisClient } from "@edge/redis";`.
import { RedisClient } from "../mod.ts";

const client = new RedisClient({
  url: Deno.env.get("REDIS_URL") ?? "redis://127.0.0.1:6379",
  // Fail a request fast rather than hold it: edge platforms bill and time out by the request.
  commandTimeout: 2_000,
  connectTimeout: 2_000,
});

/** The key of a `/kv/<key>` path, or `undefined` when it is not valid percent-encoding. */
function decodeKey(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined; // URIError: `%ZZ`, a lone `%`, a broken UTF-8 sequence
  }
}

/** 400: the client's fault, not Redis's (a 503 would tell it to retry). */
function badKey(): Response {
  return new Response("Cannot read the key: the path is not valid percent-encoding\n", {
    status: 400,
  });
}

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const kv = /^\/kv\/([^/]+)$/.exec(url.pathname);
  if (kv) {
    const name = decodeKey(kv[1]!);
    if (name === undefined) return badKey();
    const key = `kv:${name}`;
    if (request.method === "PUT") {
      await client.set(key, await request.text(), { ex: 3600 });
      return new Response(null, { status: 204 });
    }
    const value = await client.get(key);
    return value === null ? new Response("not found\n", { status: 404 }) : new Response(value);
  }
  if (url.pathname === "/hits" && request.method === "POST") {
    // One transaction: the counter and its expiry are set together.
    const [hits, expiring] = await client.multi().incr("hits").expire("hits", 86_400).exec() ?? [];
    return Response.json({ hits, expiring });
  }
  if (url.pathname === "/health") return Response.json({ redis: await client.ping() });
  return new Response("not found\n", { status: 404 });
}

const server = Deno.serve({
  port: Number(Deno.env.get("PORT") ?? 8000),
  hostname: Deno.env.get("HOST") ?? "127.0.0.1",
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, async (request) => {
  try {
    return await handle(request);
  } catch (e) {
    console.error(e);
    return new Response(`${(e as Error).message}\n`, { status: 503 });
  }
});

// Stop taking requests, let the running ones finish, then close the client.
const stop = async () => {
  await server.shutdown();
  await client.close();
};
Deno.addSignalListener("SIGTERM", stop);
Deno.addSignalListener("SIGINT", stop);
