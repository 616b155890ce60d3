// Commands a raw `sendCommand` must not send on a shared connection: they change its state for
// every caller, or answer out of band. The connection checks every command flagged FLAG_RAW
// (every raw path: client, pipeline, transaction).
import type { RedisArgument } from "../resp/types.ts";

/** Commands that would break the shared connection, and what to use instead. */
const RESERVED: Record<string, string> = {
  SUBSCRIBE: "subscribe()",
  PSUBSCRIBE: "psubscribe()",
  SSUBSCRIBE: "ssubscribe()",
  UNSUBSCRIBE: "the subscription's unsubscribe()",
  PUNSUBSCRIBE: "the subscription's unsubscribe()",
  SUNSUBSCRIBE: "the subscription's unsubscribe()",
  MULTI: "multi()",
  EXEC: "multi().exec()",
  DISCARD: "multi().discard()",
  WATCH: "watch()",
  UNWATCH: "watch() and release()",
  SELECT: "the db option (one client per database)",
  HELLO: "the protocol option",
  AUTH: "the username and password options",
  RESET: "close() and a new client",
  QUIT: "close()",
  MONITOR: "redis-cli monitor",
  SYNC: "a replica (replicaof) or redis-cli --rdb",
  PSYNC: "a replica (replicaof) or redis-cli --rdb",
};

const decoder = new TextDecoder();

function upper(a: RedisArgument | undefined): string {
  if (a === undefined) return "";
  if (typeof a === "string") return a.toUpperCase();
  if (typeof a === "number") return String(a);
  return a.length <= 32 ? decoder.decode(a).toUpperCase() : "";
}

/**
 * `CLIENT` sub-commands that change the state of the connection they run on, and what to use
 * instead.
 */
const RESERVED_CLIENT: Record<string, string> = {
  REPLY:
    "a pipeline() and ignore the results you do not need (a shared connection must read every reply)",
  TRACKING:
    "a dedicated client for client-side caching (tracking changes the connection for every caller)",
  CACHING:
    "a dedicated client for client-side caching (tracking changes the connection for every caller)",
  SETNAME: "the clientName option",
  "NO-EVICT": "a dedicated client (the flag changes the connection for every caller)",
  "NO-TOUCH": "a dedicated client (the flag changes the connection for every caller)",
};

/**
 * The error for a raw command that must not be sent on a shared connection, if it must not:
 * the command name (a string or UTF-8 bytes, any case) and, for `CLIENT`, its sub-command.
 *
 * @param args The command.
 * @returns A `TypeError` naming the API to use instead, or `undefined`.
 *
 * @example
 * ```ts ignore
 * reservedCommandError(["select", 1])?.message;
 * // 'Cannot send "SELECT" with sendCommand: use the db option (one client per database)'
 * ```
 */
export function reservedCommandError(args: RedisArgument[]): TypeError | undefined {
  const name = upper(args[0]);
  let instead = RESERVED[name];
  let shown = name;
  if (instead === undefined && name === "CLIENT") {
    const sub = upper(args[1]);
    instead = RESERVED_CLIENT[sub];
    shown = `CLIENT ${sub}`;
  }
  if (instead === undefined) return undefined;
  return new TypeError(`Cannot send "${shown}" with sendCommand: use ${instead}`);
}
