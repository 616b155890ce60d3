// A TCP proxy on a free loopback port in front of a real server that records what each client
// socket sent, chunk by chunk, and how many chunks it sent before the first byte came back (the
// round trips a connect took).
import { connect, createServer, type Server, type Socket } from "node:net";

/** What one client socket sent through the proxy. */
export interface ProxiedSocket {
  /** The client's chunks, as text, in order. */
  readonly chunks: string[];
  /** Chunks the client sent before the server's first byte reached it. */
  beforeFirstReply: number;
}

export interface CountingProxy {
  port: number;
  url: string;
  /** Every client socket accepted, in order. */
  readonly sockets: ProxiedSocket[];
  close(): Promise<void>;
}

/**
 * Starts a proxy to `targetPort` on 127.0.0.1.
 *
 * @param targetPort The server's port.
 * @returns The proxy.
 */
export function startCountingProxy(targetPort: number): Promise<CountingProxy> {
  const open = new Set<Socket>();
  const sockets: ProxiedSocket[] = [];
  const server: Server = createServer((client) => {
    const rec: ProxiedSocket = { chunks: [], beforeFirstReply: -1 };
    sockets.push(rec);
    const upstream = connect(targetPort, "127.0.0.1");
    open.add(client);
    open.add(upstream);
    client.on("data", (c: Uint8Array) => {
      rec.chunks.push(new TextDecoder().decode(c));
      upstream.write(c);
    });
    upstream.on("data", (c: Uint8Array) => {
      if (rec.beforeFirstReply === -1) rec.beforeFirstReply = rec.chunks.length;
      client.write(c);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", () => open.delete(client));
    upstream.on("close", () => open.delete(upstream));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      const port = typeof a === "object" && a ? a.port : 0;
      resolve({
        port,
        url: `redis://127.0.0.1:${port}`,
        sockets,
        close: () =>
          new Promise<void>((r) => {
            for (const s of open) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}
