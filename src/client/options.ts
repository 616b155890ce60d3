/**
 * Options of {@linkcode RedisClient} and their parsing (URL, defaults, validation).
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type { Logger } from "../logger.ts";
import type { MetricsPart, TracingPart } from "../observability/part.ts";
import type { BackoffOptions } from "../resilience/backoff.ts";
import type { Connector, TlsOptions } from "../transport/types.ts";
import type { ClientSideCachePart } from "../cache/part.ts";
import { splitEndpoint } from "../endpoint.ts";
import { checkKeys, type KeyTable, received } from "../_validate.ts";

/**
 * Settings of the maintenance notifications (smart client handoffs).
 *
 * Notifications are acted on only on connections where the server accepted the opt-in. A MOVING
 * target is dialled with the same `tls` settings as the configured endpoint: with TLS, the
 * target's certificate is verified for the target's host name, or for `tls.serverName` when set
 * (an IP target needs a certificate valid for that IP, or `endpointType: "external-fqdn"` /
 * `"internal-fqdn"`), and the credentials are sent only once that verification passed. Without TLS the credentials go to the target in
 * clear, like to the configured endpoint.
 */
export interface ClientMaintenanceOptions {
  /**
   * `"auto"`: ask for notifications on RESP3, run without them when the server refuses;
   * `"enabled"`: fail the connection setup when they are not available; `"disabled"`: never ask.
   * @default {"auto"}
   */
  mode?: "auto" | "enabled" | "disabled";
  /**
   * Command timeout during a maintenance window, in ms.
   * @default {10000}
   */
  relaxedTimeout?: number;
  /**
   * Timeout of blocking commands during a window, in ms; 0 = infinite.
   * @default {0}
   */
  relaxedBlockingTimeout?: number;
  /**
   * Longest a MIGRATING / FAILING_OVER window stays open without its end notification, in ms.
   * @default {60000}
   */
  relaxedWindowMaxDuration?: number;
  /**
   * The kind of address the server should announce in MOVING.
   * @default {"auto"}
   */
  endpointType?:
    | "auto"
    | "internal-ip"
    | "internal-fqdn"
    | "external-ip"
    | "external-fqdn"
    | "none";
}

/**
 * Options of a {@linkcode RedisClient}.
 *
 * @example
 * ```ts
 * import type { RedisClientOptions } from "@edge/redis";
 * const options: RedisClientOptions = { url: "redis://127.0.0.1:6379/0", commandTimeout: 2000 };
 * ```
 */
export interface RedisClientOptions {
  /**
   * `redis://[user[:password]@]host[:port][/db]`, `rediss://` for TLS, or `host:port`. Fields
   * given as separate options override the URL's. A bad URL is a `TypeError` naming the bad
   * part (never the credentials).
   * @default {"redis://127.0.0.1:6379"}
   */
  url?: string;
  /** Host name or IP address. @default {"127.0.0.1"} */
  host?: string;
  /** TCP port. @default {6379} */
  port?: number;
  /**
   * ACL user name. Without a password the client authenticates as this user with an empty
   * password (`AUTH user ""`), never as `default`.
   */
  username?: string;
  /** Password. Never logged nor put in an error message. */
  password?: string;
  /** Database index. @default {0} */
  db?: number;
  /** `CLIENT SETNAME` on every connection: printable ASCII without spaces. */
  clientName?: string;
  /** TLS: `true` for the defaults, or settings. `rediss://` implies `true`. */
  tls?: boolean | TlsOptions;
  /** RESP version. @default {3} */
  protocol?: 2 | 3;
  /** Milliseconds to open a connection and complete its handshake. @default {5000} */
  connectTimeout?: number;
  /** Milliseconds from sending a command to its reply; 0 = none. @default {5000} */
  commandTimeout?: number;
  /**
   * Backoff between reconnect attempts (delays in ms, positive), or `false` to never reconnect.
   * @default {{ baseDelay: 100, maxDelay: 5000 }}
   */
  reconnect?: BackoffOptions | false;
  /**
   * Milliseconds `close()` waits for the replies still due before it rejects them with
   * `ClosedError` and destroys the connections; 0 = wait for each command's own timeout.
   * @default {3000}
   */
  closeTimeout?: number;
  /**
   * Milliseconds of silence after which a connection writes a `PING`, so a dead network path
   * (a NAT or load balancer that dropped the flow) is noticed on idle and subscribed connections
   * too; 0 = never.
   * @default {0}
   */
  pingInterval?: number;
  /**
   * Let the process exit while the client is open and idle: its sockets and timers do not keep
   * it alive; a command in flight still does.
   * @default {false}
   */
  unref?: boolean;
  /**
   * Most commands waiting to be written while disconnected (or behind a full socket). A command
   * refused by this bound still starts the lazy connect. @default {100000}
   */
  maxQueueLength?: number;
  /**
   * Most bytes (RESP-encoded; non-ASCII strings counted at 3 bytes per character) waiting to be
   * written while disconnected (or behind a full socket). @default {67108864}
   */
  maxQueueBytes?: number;
  /** Most exclusive connections for blocking commands and WATCH. @default {8} */
  maxExclusiveConnections?: number;
  /** Milliseconds an idle exclusive connection is kept. @default {30000} */
  exclusiveIdleTimeout?: number;
  /**
   * Most messages an iterated subscription buffers for a reader that falls behind; past it the
   * oldest message is dropped and an `error` event reports it. @default {10000}
   */
  maxBufferedMessages?: number;
  /** Maintenance notifications (smart client handoffs). */
  maintenanceNotifications?: ClientMaintenanceOptions;
  /**
   * Client-side caching of read replies, kept true by server-assisted invalidation (RESP3
   * `CLIENT TRACKING`, or on RESP2 a connection subscribed to `__redis__:invalidate`): the part
   * `clientSideCache({ ... })` of `@edge/redis/cache` makes (this entry carries none of the
   * cache's code). Off by default; `false` is off too.
   * @default {undefined}
   */
  clientSideCache?: ClientSideCachePart | false;
  /** Opens sockets; detected from the runtime by default. */
  connector?: Connector;
  /** Where to log. @default {silent} */
  logger?: Logger;
  /**
   * OpenTelemetry metrics under the names the Redis clients share, recorded through the
   * `meterProvider` given (structurally typed: no dependency): the part
   * `otelMetrics({ meterProvider, ... })` of `@edge/redis/otel` makes (this entry carries none of
   * the recorder). Off by default; when off, nothing is recorded or allocated per command.
   * @default {undefined}
   */
  metrics?: MetricsPart;
  /**
   * OpenTelemetry traces: a span per command or batch (`db.operation.name`; `db.query.text`
   * only with `queryText`, never argument values): the part `otelTracing({ tracerProvider })` of
   * `@edge/redis/otel` makes.
   * @default {undefined}
   */
  tracing?: TracingPart;
  /**
   * Time and timers: command deadlines, keep-alive, reconnect backoff, the exclusive pool's idle
   * timeout. Tests inject a manual clock. @default {the system clock}
   */
  clock?: Clock;
}

/** Internal: Options with every default applied. */
export interface ResolvedClientOptions {
  host: string;
  port: number;
  username: string | undefined;
  password: string | undefined;
  db: number;
  clientName: string | undefined;
  tls: TlsOptions | undefined;
  protocol: 2 | 3;
  connectTimeout: number;
  commandTimeout: number;
  reconnect: BackoffOptions | false;
  closeTimeout: number;
  pingInterval: number;
  unref: boolean;
  maxQueueLength: number;
  maxQueueBytes: number;
  maxExclusiveConnections: number;
  exclusiveIdleTimeout: number;
  maxBufferedMessages: number;
  clientSideCache: ClientSideCachePart | undefined;
}

/** Internal: The keys of {@linkcode RedisClientOptions}: anything else is a slip. */
export const CLIENT_OPTION_KEYS: KeyTable<RedisClientOptions> = {
  url: true,
  host: true,
  port: true,
  username: true,
  password: true,
  db: true,
  clientName: true,
  tls: true,
  protocol: true,
  connectTimeout: true,
  commandTimeout: true,
  reconnect: true,
  closeTimeout: true,
  pingInterval: true,
  unref: true,
  maxQueueLength: true,
  maxQueueBytes: true,
  maxExclusiveConnections: true,
  exclusiveIdleTimeout: true,
  maxBufferedMessages: true,
  maintenanceNotifications: true,
  clientSideCache: true,
  connector: true,
  logger: true,
  clock: true,
  metrics: true,
  tracing: true,
};

const MAINTENANCE_OPTION_KEYS: KeyTable<ClientMaintenanceOptions> = {
  mode: true,
  relaxedTimeout: true,
  relaxedBlockingTimeout: true,
  relaxedWindowMaxDuration: true,
  endpointType: true,
};

const NESTED_OPTION_KEYS: [string, Readonly<Record<string, true>>][] = [
  ["maintenanceNotifications", MAINTENANCE_OPTION_KEYS],
  ["reconnect", { baseDelay: true, maxDelay: true } satisfies KeyTable<BackoffOptions>],
  [
    "tls",
    { caCerts: true, serverName: true, cert: true, key: true } satisfies KeyTable<TlsOptions>,
  ],
];

/**
 * @internal Checks the client options every kind shares for unknown keys (a `TypeError` with a
 * "Did you mean" hint), those of `maintenanceNotifications`, `reconnect` and `tls` included (the
 * parts, `clientSideCache`, `metrics` and `tracing`, checked their own when they were made: here
 * they are only told from anything else, see {@linkcode resolveCachePart}).
 *
 * @param o The options.
 * @param known The keys of this kind's options.
 * @param what The kind, for the message: `the client`, `the cluster client`.
 */
export function checkClientOptionKeys(
  o: object,
  known: Readonly<Record<string, true>>,
  what: string,
  hints?: Readonly<Record<string, string>>,
): void {
  checkKeys(o, known, what, hints);
  const nested = o as Record<string, unknown>;
  for (const [name, keys] of NESTED_OPTION_KEYS) {
    const v = nested[name];
    if (typeof v === "object" && v !== null) checkKeys(v, keys, name);
  }
  // Every kind refuses a part given in the old form (an options object) the same way.
  resolveCachePart(nested.clientSideCache);
  resolveMetricsPart(nested.metrics);
  resolveTracingPart(nested.tracing);
}

/**
 * "Cannot use x 1.5: expected ..." for a number; for anything else, what it got in words:
 * "Cannot use x: expected ..., got the string "1"".
 */
function badValue(name: string, v: unknown, expected: string): string {
  return typeof v === "number"
    ? `Cannot use ${name} ${v}: expected ${expected}`
    : `Cannot use ${name}: expected ${expected}, got ${received(v)}`;
}

/**
 * `v` (`dflt` when undefined) if it is a number `ok` accepts; else a `RangeError` for a number
 * (for anything when `range`), a `TypeError` for anything else, saying what was `expected`.
 */
function checkNumber(
  name: string,
  v: unknown,
  dflt: number,
  ok: (n: number) => boolean,
  expected: string,
  range?: boolean,
): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !ok(v)) {
    throw new (range || typeof v === "number" ? RangeError : TypeError)(
      badValue(name, v, expected),
    );
  }
  return v;
}

function nonNegative(name: string, v: number | undefined, dflt: number): number {
  return checkNumber(name, v, dflt, (n) => Number.isFinite(n) && n >= 0, "a non-negative number");
}

/** Percent-decodes a user name or password of a URL; a stray `%` is a clear TypeError. */
function decodeUrlPart(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Never echo the part itself: it may be a password.
    throw new TypeError(
      `Cannot parse the URL: the ${what} has an invalid percent-encoding (write a literal "%" as "%25")`,
    );
  }
}

function positiveDelay(name: string, v: unknown, dflt: number): number {
  return checkNumber(
    `reconnect.${name}`,
    v,
    dflt,
    (n) => Number.isFinite(n) && n > 0,
    "a positive number of milliseconds",
    true,
  );
}

/** Validates the reconnect backoff: delays must be positive, finite numbers. */
function resolveReconnect(r: BackoffOptions | false | undefined): BackoffOptions | false {
  if (r === false) return false;
  if (r === undefined) return { baseDelay: 100, maxDelay: 5000 };
  if (typeof r !== "object" || r === null) {
    throw new TypeError(
      `Cannot use reconnect ${String(r)}: expected false or { baseDelay, maxDelay }`,
    );
  }
  const baseDelay = positiveDelay("baseDelay", r.baseDelay, 100);
  const maxDelay = positiveDelay("maxDelay", r.maxDelay, Math.max(5000, baseDelay));
  if (maxDelay < baseDelay) {
    throw new RangeError(
      `Cannot use reconnect.maxDelay ${maxDelay}: expected at least baseDelay (${baseDelay})`,
    );
  }
  return { ...r, baseDelay, maxDelay };
}

function resolveFlag(name: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== "boolean") {
    throw new TypeError(badValue(name, v, "true or false"));
  }
  return v;
}

/** A client name the server accepts: printable ASCII without spaces. */
function resolveClientName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== "string" || !/^[!-~]*$/.test(name)) {
    throw new TypeError(
      `Cannot use the clientName ${
        JSON.stringify(name)
      }: expected printable ASCII without spaces or newlines`,
    );
  }
  return name === "" ? undefined : name;
}

const EXPECTED_URL = "redis://[user[:password]@]host[:port][/db]";
const CREDENTIALS_CUT =
  'the user name or password has a "/", "?" or "#": percent-encode it (e.g. "/" as "%2F")';

/**
 * Says which part of a URL `new URL` refused, without echoing the user name or password.
 * `rest` is the text after `scheme://`.
 */
function badUrlPart(rest: string): string {
  // The credentials end at the last "@" (a "/", "#" or "?" in them cuts the URL short).
  const at = rest.lastIndexOf("@");
  const hostPart = at === -1 ? rest : rest.slice(at + 1);
  const end = hostPart.search(/[/?#]/);
  const hostPort = end === -1 ? hostPart : hostPart.slice(0, end);
  if (at !== -1 && /[/?#]/.test(rest.slice(0, at))) {
    return CREDENTIALS_CUT;
  }
  let host = hostPort;
  let port: string | undefined;
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (close === -1) return `the IPv6 host ${JSON.stringify(hostPort)} is missing "]"`;
    host = hostPort.slice(0, close + 1);
    const after = hostPort.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) {
      return `expected ":port" after the IPv6 host ${JSON.stringify(host)}`;
    }
    if (after !== "") port = after.slice(1);
  } else {
    const colon = hostPort.lastIndexOf(":");
    if (colon !== -1) {
      host = hostPort.slice(0, colon);
      port = hostPort.slice(colon + 1);
      if (host.includes(":")) {
        return `the IPv6 host needs brackets, e.g. redis://[::1]:6379`;
      }
    }
  }
  if (port !== undefined && !/^[0-9]*$/.test(port)) {
    return `the port ${JSON.stringify(port)} is not a number`;
  }
  if (port !== undefined && Number(port) > 65535) return `the port ${port} is above 65535`;
  if (host !== "" && !host.startsWith("[")) {
    return `the host ${JSON.stringify(host)} is not a valid host name`;
  }
  return `expected ${EXPECTED_URL}`;
}

/**
 * Parses a `redis://` or `rediss://` URL, or a bare `host:port` (`[v6]:port`).
 *
 * @param url The URL.
 * @returns Its parts; absent parts are `undefined`.
 * @throws {TypeError} Naming the part that is wrong (scheme, host, port, database), never the
 *   user name or password.
 *
 * @example
 * ```ts
 * import { parseRedisUrl } from "@edge/redis";
 * parseRedisUrl("rediss://app:secret@cache.example:6380/2");
 * // { host: "cache.example", port: 6380, username: "app", password: "secret", db: 2, tls: true }
 * parseRedisUrl("127.0.0.1:6380"); // { host: "127.0.0.1", port: 6380, ..., tls: false }
 * ```
 */
export function parseRedisUrl(url: string): {
  host: string | undefined;
  port: number | undefined;
  username: string | undefined;
  password: string | undefined;
  db: number | undefined;
  tls: boolean;
} {
  if (typeof url !== "string") {
    throw new TypeError(`Cannot use ${received(url)} as the URL: expected a string`);
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  if (scheme === null) {
    // `host:port`, as `nodes` and `sentinels` take it. No "@": no credentials to hide.
    const e = url.includes("@") ? "not an endpoint" : splitEndpoint(url);
    if (typeof e === "string") {
      const shown = url.includes("@") ? "" : ` ${JSON.stringify(url)}`;
      throw new TypeError(
        `Cannot parse the URL${shown}: missing the scheme (expected ${EXPECTED_URL} or host:port)`,
      );
    }
    if (e.port === 0) throw new TypeError(`Cannot parse the URL: the port is 0`);
    return {
      host: e.host,
      port: e.port,
      username: undefined,
      password: undefined,
      db: undefined,
      tls: false,
    };
  }
  const protocol = scheme[1]!.toLowerCase();
  if (protocol !== "redis" && protocol !== "rediss") {
    throw new TypeError(
      `Cannot use the URL scheme "${protocol}:": expected "redis:" or "rediss:"`,
    );
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TypeError(`Cannot parse the URL: ${badUrlPart(url.slice(scheme[0].length))}`);
  }
  let host: string | undefined = u.hostname || undefined;
  if (host?.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  const port = u.port ? Number(u.port) : undefined;
  const username = u.username ? decodeUrlPart(u.username, "user name") : undefined;
  const password = u.password ? decodeUrlPart(u.password, "password") : undefined;
  let db: number | undefined;
  const path = u.pathname.replace(/^\//, "");
  if (path) {
    db = Number(path);
    if (!/^[0-9]+$/.test(path) || !Number.isSafeInteger(db)) {
      if (path.includes("@")) throw new TypeError(`Cannot parse the URL: ${CREDENTIALS_CUT}`);
      throw new TypeError(
        `Cannot use the database ${
          JSON.stringify(path)
        } of the URL: expected a non-negative integer`,
      );
    }
  }
  const qdb = u.searchParams.get("db");
  if (qdb !== null) {
    db = Number(qdb);
    if (!/^[0-9]+$/.test(qdb) || !Number.isSafeInteger(db)) {
      throw new TypeError(
        `Cannot use the database ${
          qdb.includes("@") ? "" : `${JSON.stringify(qdb)} `
        }of the URL's "db" parameter: expected a non-negative integer`,
      );
    }
  }
  return { host, port, username, password, db, tls: protocol === "rediss" };
}

/**
 * Internal: The options of `new RedisClient(url, options)` / `new RedisClient(options)`: a URL
 * string first is the `url` option; a second argument after an options object is refused.
 */
export function clientOptions(
  first: string | RedisClientOptions | undefined,
  second: Omit<RedisClientOptions, "url"> | undefined,
): RedisClientOptions {
  if (typeof first === "string") {
    if (second === undefined) return { url: first };
    if (typeof second !== "object" || second === null || Array.isArray(second)) {
      throw new TypeError(
        `Cannot use ${received(second)} as the client's options: expected an options object ` +
          `after the URL, e.g. new RedisClient("redis://127.0.0.1:6379", { commandTimeout: 2000 })`,
      );
    }
    if ((second as RedisClientOptions).url !== undefined) {
      throw new TypeError(
        "Cannot give the client two URLs: drop the `url` option or the first argument",
      );
    }
    checkClientOptionKeys(second, CLIENT_OPTION_KEYS, "the client");
    return { ...second, url: first };
  }
  if (second !== undefined) {
    throw new TypeError(
      `Cannot create the client from ${received(first)} and a second argument: expected ` +
        `new RedisClient(url, options) or new RedisClient(options)`,
    );
  }
  if (first === undefined) return {};
  if (typeof first !== "object" || first === null || Array.isArray(first)) {
    throw new TypeError(
      `Cannot create the client from ${received(first)}: expected a URL string or an options ` +
        `object, e.g. new RedisClient("redis://127.0.0.1:6379") or new RedisClient({ port: 6380 })`,
    );
  }
  checkClientOptionKeys(first, CLIENT_OPTION_KEYS, "the client");
  return first;
}

/** Internal: Applies defaults and validates. */
export function resolveClientOptions(o: RedisClientOptions): ResolvedClientOptions {
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new TypeError(
      `Cannot create the client from ${
        typeof o === "string" ? "a string" : received(o)
      }: expected an options object, e.g. { url: "redis://127.0.0.1:6379" }`,
    );
  }
  const fromUrl = o.url !== undefined ? parseRedisUrl(o.url) : undefined;
  const host = o.host ?? fromUrl?.host ?? "127.0.0.1";
  if (typeof host !== "string" || host === "") {
    throw new TypeError(
      `Cannot use the host ${received(host)}: expected a host name or IP address`,
    );
  }
  const port = checkNumber(
    "the port",
    o.port ?? fromUrl?.port,
    6379,
    (n) => Number.isInteger(n) && n > 0 && n <= 65535,
    "an integer from 1 to 65535",
  );
  const db = checkNumber(
    "the database",
    o.db ?? fromUrl?.db,
    0,
    (n) => Number.isInteger(n) && n >= 0,
    "a non-negative integer",
  );
  const protocol = o.protocol ?? 3;
  if (protocol !== 2 && protocol !== 3) {
    throw new RangeError(`Cannot use protocol ${String(protocol)}: expected 2 or 3`);
  }
  let tls: TlsOptions | undefined;
  if (o.tls === true || (o.tls === undefined && fromUrl?.tls)) tls = {};
  else if (typeof o.tls === "object") tls = o.tls;
  return {
    host,
    port,
    username: o.username ?? fromUrl?.username,
    password: o.password ?? fromUrl?.password,
    db,
    clientName: resolveClientName(o.clientName),
    tls,
    protocol,
    connectTimeout: nonNegative("connectTimeout", o.connectTimeout, 5000),
    commandTimeout: nonNegative("commandTimeout", o.commandTimeout, 5000),
    reconnect: resolveReconnect(o.reconnect),
    closeTimeout: nonNegative("closeTimeout", o.closeTimeout, 3000),
    pingInterval: nonNegative("pingInterval", o.pingInterval, 0),
    unref: resolveFlag("unref", o.unref),
    maxQueueLength: nonNegative("maxQueueLength", o.maxQueueLength, 100_000),
    maxQueueBytes: nonNegative("maxQueueBytes", o.maxQueueBytes, 64 * 1024 * 1024),
    maxExclusiveConnections: Math.max(
      1,
      nonNegative("maxExclusiveConnections", o.maxExclusiveConnections, 8),
    ),
    exclusiveIdleTimeout: nonNegative("exclusiveIdleTimeout", o.exclusiveIdleTimeout, 30_000),
    maxBufferedMessages: checkNumber(
      "maxBufferedMessages",
      o.maxBufferedMessages,
      10_000,
      (n) => Number.isInteger(n) && n >= 1,
      "a positive integer",
    ),
    clientSideCache: resolveCachePart(o.clientSideCache),
  };
}

/**
 * Internal: The `clientSideCache` option: a part made by `clientSideCache()` of
 * `@edge/redis/cache`, or nothing. The cache's options used to be given here as a plain object:
 * that form is refused with what to import instead (this entry has no cache code to build one).
 *
 * @param v The option.
 * @returns The part, or `undefined` when the cache is off.
 * @throws {TypeError} Anything else.
 */
export function resolveCachePart(v: unknown): ClientSideCachePart | undefined {
  return partOf(v, "clientSideCache", "_create", "clientSideCache", "@edge/redis/cache");
}

/**
 * Internal: The `metrics` option: a part made by `otelMetrics()` of `@edge/redis/otel`, or
 * nothing; anything else (the plain options object of earlier versions) is refused with what to
 * import instead.
 *
 * @param v The option.
 * @returns The part, or `undefined` when metrics are off.
 * @throws {TypeError} Anything else.
 */
export function resolveMetricsPart(v: unknown): MetricsPart | undefined {
  return partOf(v, "metrics", "_recorder", "otelMetrics", "@edge/redis/otel");
}

/**
 * Internal: The `tracing` option: a part made by `otelTracing()` of `@edge/redis/otel`, or
 * nothing; anything else is refused with what to import instead.
 *
 * @param v The option.
 * @returns The part, or `undefined` when tracing is off.
 * @throws {TypeError} Anything else.
 */
export function resolveTracingPart(v: unknown): TracingPart | undefined {
  return partOf(v, "tracing", "_recorder", "otelTracing", "@edge/redis/otel");
}

/** A part named `part` (with its builder `member`), `undefined` for none, else the refusal. */
function partOf<T>(
  v: unknown,
  part: string,
  member: string,
  factory: string,
  entry: string,
): T | undefined {
  if (v === undefined || v === false) return undefined;
  if (
    typeof v === "object" && v !== null && (v as { part?: unknown }).part === part &&
    typeof (v as Record<string, unknown>)[member] === "function"
  ) {
    return v as T;
  }
  const what = typeof v === "object" && v !== null && !Array.isArray(v)
    ? "a plain options object"
    : received(v);
  throw new TypeError(
    `Cannot enable ${part} from ${what}: pass ${factory}({ ... }), imported from "${entry}"`,
  );
}
