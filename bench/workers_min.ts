// The smallest worker of the Workers bench's cold start: `.` only (no cluster), a client per
// request doing one GET; `/ok` answers without Redis.
import { RedisClient } from "../mod.ts";

export default {
  async fetch(request: Request): Promise<Response> {
    const q = new URL(request.url).searchParams;
    const url = q.get("url");
    if (url === null) return new Response("ok");
    await using client = new RedisClient({ url });
    return Response.json({
      value: await client.get(q.get("key") ?? "w:bench"),
    });
  },
};
