// Reading what sentinels say: addresses given by the user, the replies of SENTINEL
// GET-MASTER-ADDR-BY-NAME / REPLICAS / SENTINELS (flat arrays on RESP2, maps on RESP3), ROLE,
// and the messages of the sentinel event channels. Pure: no sockets, no timers.
import type { Endpoint } from "../endpoint.ts";
import type { RespValue } from "../resp/types.ts";

// The endpoint helpers under the names the sentinel files use: the one set, src/endpoint.ts.
export { formatEndpoint as endpointName, sameEndpoint } from "../endpoint.ts";

function checkPort(port: number, what: string): number {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new RangeError(`Cannot use the sentinel ${what}: the port must be 1 to 65535`);
  }
  return port;
}

/**
 * Parses one sentinel address: `redis://host:port`, `host:port`, `[v6]:port`, or an object.
 * The port defaults to 26379. Credentials in a URL are refused: sentinels take
 * `sentinelUsername` / `sentinelPassword`.
 */
export function parseSentinelAddress(a: string | Endpoint): Endpoint {
  if (typeof a === "object" && a !== null) {
    if (typeof a.host !== "string" || a.host === "") {
      throw new TypeError("Cannot use a sentinel address: host must be a non-empty string");
    }
    return { host: a.host, port: checkPort(a.port, `"${a.host}"`) };
  }
  if (typeof a !== "string" || a === "") {
    throw new TypeError("Cannot use a sentinel address: expected a string or { host, port }");
  }
  const text = a.includes("://") ? a : `redis://${a}`;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new TypeError(`Cannot parse the sentinel address "${a}": expected redis://host:port`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") {
    throw new TypeError(
      `Cannot use the sentinel address scheme "${u.protocol}": expected "redis:" or "rediss:"`,
    );
  }
  if (u.username !== "" || u.password !== "") {
    throw new TypeError(
      "Cannot use credentials in a sentinel address: set sentinelUsername and sentinelPassword",
    );
  }
  let host = u.hostname;
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host === "") throw new TypeError(`Cannot use the sentinel address "${a}": no host`);
  const port = u.port === "" ? 26379 : Number(u.port);
  return { host, port: checkPort(port, `"${a}"`) };
}

/** One entry of SENTINEL REPLICAS / SENTINELS as field -> value (both protocols). */
export function fieldsOf(entry: RespValue): Map<string, string> {
  const out = new Map<string, string>();
  if (entry instanceof Map) {
    for (const [k, v] of entry) out.set(String(k), String(v));
  } else if (Array.isArray(entry)) {
    for (let i = 0; i + 1 < entry.length; i += 2) out.set(String(entry[i]), String(entry[i + 1]));
  }
  return out;
}

/** The entries of a SENTINEL REPLICAS / SENTINELS reply. */
export function entriesOf(reply: RespValue): Map<string, string>[] {
  return Array.isArray(reply) ? reply.map(fieldsOf) : [];
}

/** The address of an entry (`ip` and `port` fields), if well formed. */
export function entryAddress(f: Map<string, string>): Endpoint | undefined {
  const host = f.get("ip");
  const port = Number(f.get("port"));
  if (!host || !Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
  return { host, port };
}

/** Flags that make a sentinel's view of an instance unusable. */
const BAD_FLAGS = ["s_down", "o_down", "disconnected"];

/** Whether an entry's flags say it is down or disconnected. */
export function entryIsDown(f: Map<string, string>): boolean {
  const flags = (f.get("flags") ?? "").split(",");
  return flags.some((x) => BAD_FLAGS.includes(x));
}

/** Whether a SENTINEL REPLICAS entry looks healthy: up, and its link to the master up. */
export function replicaEntryHealthy(f: Map<string, string>): boolean {
  if (entryIsDown(f)) return false;
  const link = f.get("master-link-status");
  return link === undefined || link === "ok";
}

/** The address in a GET-MASTER-ADDR-BY-NAME reply; `undefined` for null (unknown name). */
export function masterAddressOf(reply: RespValue): Endpoint | undefined {
  if (!Array.isArray(reply) || reply.length < 2) return undefined;
  const host = String(reply[0]);
  const port = Number(reply[1]);
  if (host === "" || !Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
  return { host, port };
}

/** What ROLE says about a node. */
export type RoleInfo =
  | { role: "master" }
  | { role: "replica"; master: Endpoint | undefined; connected: boolean }
  | { role: "other"; name: string };

/** Reads a ROLE reply. */
export function roleOf(reply: RespValue): RoleInfo {
  if (!Array.isArray(reply) || reply.length === 0) return { role: "other", name: String(reply) };
  const name = String(reply[0]);
  if (name === "master") return { role: "master" };
  if (name === "slave" || name === "replica") {
    const port = Number(reply[2]);
    const master = typeof reply[1] === "string" && Number.isInteger(port)
      ? { host: reply[1], port }
      : undefined;
    return { role: "replica", master, connected: String(reply[3]) === "connected" };
  }
  return { role: "other", name };
}

/** A message of a sentinel event channel about the monitored master. */
export type SentinelEvent =
  | { kind: "switch-master"; from: Endpoint; to: Endpoint }
  | {
    kind: "instance";
    /** The channel: `+sdown`, `-sdown`, `+odown`, `+failover-end`, `+reboot`, `+slave`, `+sentinel`, ... */
    channel: string;
    /** `master`, `slave` or `sentinel`. */
    type: string;
    address: Endpoint;
  };

/**
 * Parses a message of a sentinel event channel. Returns `undefined` for another master's
 * events and for messages it cannot read.
 *
 * `+switch-master`: `<name> <old-ip> <old-port> <new-ip> <new-port>`; instance events:
 * `<type> <instance-name> <ip> <port> @ <master-name> <master-ip> <master-port>` (a master's
 * own events end after `<port>`).
 */
export function parseSentinelEvent(
  channel: string,
  message: string,
  masterName: string,
): SentinelEvent | undefined {
  const w = message.split(" ");
  if (channel === "+switch-master") {
    if (w.length < 5 || w[0] !== masterName) return undefined;
    const from = { host: w[1]!, port: Number(w[2]) };
    const to = { host: w[3]!, port: Number(w[4]) };
    if (!Number.isInteger(from.port) || !Number.isInteger(to.port)) return undefined;
    return { kind: "switch-master", from, to };
  }
  if (w.length < 4) return undefined;
  const type = w[0]!;
  const address = { host: w[2]!, port: Number(w[3]) };
  if (!Number.isInteger(address.port)) return undefined;
  if (type === "master") {
    if (w[1] !== masterName) return undefined;
  } else {
    if (w[4] !== "@" || w[5] !== masterName) return undefined;
  }
  return { kind: "instance", channel, type, address };
}
