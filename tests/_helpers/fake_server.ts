// A fake TCP server on a free loopback port that answers every chunk it receives with
// whatever the test decides (garbage, nothing, a canned reply).
import { createServer, type Server, type Socket } from "node:net";

export interface FakeServer {
  port: number;
  host: string;
  url: string;
  /** Sockets accepted so far. */
  accepted: number;
  /** Sockets currently open. */
  open(): number;
  close(): Promise<void>;
}

export function startFakeServer(
  onData: (socket: Socket, chunk: Uint8Array, index: number) => void,
  host = "127.0.0.1",
): Promise<FakeServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((s) => {
    sockets.add(s);
    const index = accepted++;
    s.on("data", (c) => onData(s, c, index));
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(0, host, () => {
      const a = server.address();
      const port = typeof a === "object" && a ? a.port : 0;
      resolve({
        port,
        host,
        url: `redis://${host}:${port}`,
        get accepted() {
          return accepted;
        },
        open: () => sockets.size,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}
