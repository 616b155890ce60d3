// Cluster redirections and retryable refusals in server error replies.
import { ReplyError } from "../errors.ts";
import { type Endpoint as HostPort, splitEndpoint } from "../endpoint.ts";

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
  // A server writes its own address with an empty host ("MOVED 1 :6380") and IPv6 unbracketed.
  const to = splitEndpoint(parts[2] ?? "", true);
  if (
    !Number.isInteger(slot) || slot < 0 || slot > 16383 || typeof to === "string" || !(to.port > 0)
  ) {
    return undefined;
  }
  return { ask, slot, to: { host: to.host === "" ? from.host : to.host, port: to.port } };
}

/** Refusals worth a retry after a pause: the command did not run. */
export function isRetryableRefusal(e: unknown): e is ReplyError {
  if (!(e instanceof ReplyError)) return false;
  const p = e.prefix;
  return p === "TRYAGAIN" || p === "CLUSTERDOWN" || p === "LOADING" || p === "MASTERDOWN";
}
