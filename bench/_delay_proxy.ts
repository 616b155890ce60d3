// A TCP proxy on a free loopback port that forwards every chunk `ms` later, in order, each way:
// a network round trip of 2 x ms in front of a loopback server, where round trips show.
import { connect, createServer, type Socket } from "node:net";

/** A proxy that forwards every chunk `delay` ms later, in order, each way. */
export function delayProxy(
  target: number,
  ms: number,
): Promise<{ port: number; close(): void }> {
  const open = new Set<Socket>();
  const server = createServer((c) => {
    const u = connect(target, "127.0.0.1");
    open.add(c);
    open.add(u);
    const pipe = (from: Socket, to: Socket) =>
      from.on("data", (d) => setTimeout(() => to.destroyed || to.write(d), ms));
    pipe(c, u);
    pipe(u, c);
    const end = () => {
      setTimeout(() => {
        c.destroy();
        u.destroy();
        open.delete(c);
        open.delete(u);
      }, ms);
    };
    c.on("close", end).on("error", end);
    u.on("close", end).on("error", end);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      resolve({
        port: typeof a === "object" && a ? a.port : 0,
        close: () => {
          for (const s of open) s.destroy();
          server.close();
        },
      });
    })
  );
}
