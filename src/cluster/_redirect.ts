// Cluster redirections and retryable refusals in server error replies.
import { ReplyError } from "../errors.ts";
import type { HostPort } from "../maintenance/endpoint.ts";

/** A `MOVED` or `ASK` redirection: the slot and the node to ask. */
export interface Redirect {
  /** `true` for `ASK` (one command, table unchanged), `false` for `MOVED`. */
  ask: boolean;
  slot: number;
  /** Where to go; an empty announced host means the node that replied. */
  to: HostPort;
}

/**
 * Reads `MOVED <slot> <host>:<port>` / `ASK <slot> <host>:<port>`.
 *
 * @param e The error reply.
 * @param from The node that replied (for an empty host).
 * @returns The redirection, or `undefined` for any other error.
 */
export function parseRedirect(e: ReplyError, from: HostPort): Redirect | undefined {
  const ask = e.prefix === "ASK";
  if (!ask && e.prefix !== "MOVED") return undefined;
  const parts = e.message.split(" ");
  const slot = Number(parts[1]);
  const address = parts[2] ?? "";
  const colon = address.lastIndexOf(":");
  const port = Number(address.slice(colon + 1));
  if (!Number.isInteger(slot) || slot < 0 || slot > 16383 || colon === -1 || !(port > 0)) {
    return undefined;
  }
  let host = address.slice(0, colon);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return { ask, slot, to: { host: host === "" ? from.host : host, port } };
}

/** Refusals worth a retry after a pause: the command did not run. */
export function isRetryableRefusal(e: unknown): e is ReplyError {
  if (!(e instanceof ReplyError)) return false;
  const p = e.prefix;
  return p === "TRYAGAIN" || p === "CLUSTERDOWN" || p === "LOADING" || p === "MASTERDOWN";
}
