// Internal: the MOVING windows of the maintenance simulator: which connections a rebind moves,
// the target each one is told (by the endpoint type it opted in with), and what a connection
// opting in during a window is told again.
import { hostPort } from "./_notifications.ts";
import type { ProxyConnection as Conn } from "./_proxy_connection.ts";
import type { Endpoint } from "./types.ts";

/** An announced MOVING: until when, where to, which endpoints' connections move. */
export interface MovingWindow {
  seq: number;
  endAt: number;
  target: Endpoint;
  /** Endpoint keys whose connections are moving. */
  from: Set<string>;
  /** Connections accepted on `from` from this time on count as the new place's (DNS followed). */
  dnsAt: number;
}

/** Whether `c` is an old-endpoint connection of window `w`. */
export function moving(w: MovingWindow, c: Conn): boolean {
  return w.from.has(hostPort(c.endpoint.host, c.endpoint.port)) && c.createdAt < w.dnsAt;
}

/**
 * The target a MOVING names for `conn`: `null` for endpoint type `none` (or no type); for an
 * `-fqdn` type, the host's name from `hostNames` (`localhost` for loopback).
 */
export function movingTarget(
  conn: Conn,
  target: Endpoint,
  hostNames: Record<string, string> = {},
): string | null {
  const type = conn.endpointType;
  if (type === null || type === "none") return null;
  if (type.endsWith("-fqdn")) {
    const name = hostNames[target.host] ??
      (target.host === "127.0.0.1" || target.host === "::1" ? "localhost" : target.host);
    return hostPort(name, target.port);
  }
  return hostPort(target.host, target.port);
}

/** The MOVING notifications still running at `now` for a connection opting in then. */
export function movingReplay(
  windows: readonly MovingWindow[],
  conn: Conn,
  now: number,
  hostNames?: Record<string, string>,
): { seq: number; remaining: number; target: string | null }[] {
  const out: { seq: number; remaining: number; target: string | null }[] = [];
  for (const w of windows) {
    if (!moving(w, conn) || w.endAt <= now) continue;
    const remaining = Math.max(1, Math.ceil((w.endAt - now) / 1000));
    out.push({ seq: w.seq, remaining, target: movingTarget(conn, w.target, hostNames) });
  }
  return out;
}
