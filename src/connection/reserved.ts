// Commands a raw `sendCommand` must not send on a shared connection: they change its state for
// every caller, or answer out of band. Checked for every raw path (client, pipeline,
// transaction) by the connection layer.
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
};

const decoder = new TextDecoder();

function upper(a: RedisArgument | undefined): string {
  if (a === undefined) return "";
  if (typeof a === "string") return a.toUpperCase();
  if (typeof a === "number") return String(a);
  return a.length <= 32 ? decoder.decode(a).toUpperCase() : "";
}

/**
 * The error for a raw command that must not be sent, if it must not.
 *
 * @param args The command.
 * @returns A `TypeError` naming the API to use instead, or `undefined`.
 */
export function reservedCommandError(args: RedisArgument[]): TypeError | undefined {
  const name = upper(args[0]);
  let instead = RESERVED[name];
  if (instead === undefined && name === "CLIENT" && upper(args[1]) === "REPLY") {
    instead = "a pipeline() (replies are never skipped on a shared connection)";
  }
  if (instead === undefined) return undefined;
  return new TypeError(`Cannot send "${name}" with sendCommand: use ${instead}`);
}
