// A tiny HTTP/1.1 server over the runtime's listener: JSON bodies with Content-Length, one
// request per connection (`Connection: close`). Enough for the control API and the REST mock.
import { defaultListen, type Listener, type ServerTransport } from "../transport/listen.ts";

/** A parsed request. */
export interface HttpRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Header names in lower case. */
  headers: Map<string, string>;
  body: string;
}

/** A response. `body` is sent as JSON unless it is a string. */
export interface HttpResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Payload Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const MAX_REQUEST = 1 << 20;
const enc = new TextEncoder();
const dec = new TextDecoder();

function indexOfCrlfCrlf(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

function respond(t: ServerTransport, res: HttpResponse): void {
  const isText = typeof res.body === "string";
  const payload = res.body === undefined
    ? ""
    : isText
    ? res.body as string
    : JSON.stringify(res.body);
  const body = enc.encode(payload);
  const headers: Record<string, string> = {
    "content-type": isText ? "text/plain; charset=utf-8" : "application/json",
    "content-length": String(body.length),
    "connection": "close",
    ...res.headers,
  };
  let head = `HTTP/1.1 ${res.status} ${REASONS[res.status] ?? "Status"}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  head += "\r\n";
  const h = enc.encode(head);
  const out = new Uint8Array(h.length + body.length);
  out.set(h);
  out.set(body, h.length);
  t.write(out);
  t.close();
}

/** A running HTTP server. */
export interface HttpServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `handler` on `host:port`. */
export async function serveHttp(
  host: string,
  port: number,
  handler: (req: HttpRequest) => Promise<HttpResponse> | HttpResponse,
): Promise<HttpServer> {
  const open = new Set<ServerTransport>();
  const listener: Listener = await defaultListen({ host, port }, (t) => {
    open.add(t);
    let buf = new Uint8Array(0);
    let handled = false;
    t.setHandlers({
      onData(chunk) {
        if (handled) return;
        const next = new Uint8Array(buf.length + chunk.length);
        next.set(buf);
        next.set(chunk, buf.length);
        buf = next;
        if (buf.length > MAX_REQUEST) {
          handled = true;
          respond(t, { status: 413, body: { error: "Request too large" } });
          return;
        }
        const end = indexOfCrlfCrlf(buf);
        if (end < 0) return;
        const lines = dec.decode(buf.subarray(0, end)).split("\r\n");
        const [method = "", target = "/"] = (lines[0] ?? "").split(" ");
        const headers = new Map<string, string>();
        for (const line of lines.slice(1)) {
          const i = line.indexOf(":");
          if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
        }
        const length = Number(headers.get("content-length") ?? "0");
        if (buf.length < end + 4 + length) return;
        handled = true;
        const url = new URL(target, "http://localhost");
        const req: HttpRequest = {
          method: method.toUpperCase(),
          path: url.pathname,
          query: url.searchParams,
          headers,
          body: dec.decode(buf.subarray(end + 4, end + 4 + length)),
        };
        Promise.resolve()
          .then(() => handler(req))
          .then(
            (res) => respond(t, res),
            (e: unknown) =>
              respond(t, { status: 500, body: { error: String((e as Error)?.message ?? e) } }),
          );
      },
      onDrain() {},
      onClose() {
        open.delete(t);
      },
    });
  });
  return {
    host,
    port: listener.port,
    async close(): Promise<void> {
      await listener.close();
      for (const t of open) t.destroy();
    },
  };
}
