/**
 * Options of the multi-database client, their defaults and their validation.
 *
 * @module
 */

import { type Endpoint, endpointKey, formatEndpoint } from "../endpoint.ts";
import type { RedisClientOptions } from "../client/options.ts";
import { type Clock, systemClock } from "../_clock.ts";
import { checkClientOptionKeys, CLIENT_OPTION_KEYS, parseRedisUrl } from "../client/options.ts";
import { checkKeys, type KeyTable } from "../_validate.ts";
import type { DatabaseClientFactory, DatabaseClientOptions } from "./database_client.ts";
import {
  type HealthCheckPolicy,
  type HealthCheckStrategy,
  pingHealthCheck,
} from "./health_check.ts";

/**
 * Why the active database changed.
 *
 * @example
 * ```ts
 * import type { SwitchReason } from "@edge/redis/multi-db";
 * const planned = (r: SwitchReason) => r === "FAILBACK" || r === "FORCED";
 * ```
 */
export type SwitchReason = "HEALTH_CHECK" | "CIRCUIT_BREAKER" | "FAILBACK" | "FORCED";

/**
 * How many databases must pass their first health check before the client serves commands.
 * `"all-available"`: every one; `"majority-available"`: more than half; `"one-available"`: one.
 *
 * @example
 * ```ts
 * import type { InitializationPolicy } from "@edge/redis/multi-db";
 * const strict: InitializationPolicy = "all-available";
 * ```
 */
export type InitializationPolicy = "all-available" | "majority-available" | "one-available";

/**
 * Settings of the periodic health checks.
 *
 * @example
 * ```ts
 * import type { HealthCheckOptions } from "@edge/redis/multi-db";
 * const fast: HealthCheckOptions = { interval: 1000, timeout: 200, probes: 2, policy: "any" };
 * ```
 */
export interface HealthCheckOptions {
  /**
   * Time between two checks of a database, in ms.
   * @default {5000}
   */
  interval?: number;
  /**
   * Time limit of one probe, in ms.
   * @default {1000}
   */
  timeout?: number;
  /**
   * Probes per check.
   * @default {3}
   */
  probes?: number;
  /**
   * Delay between the probes of one check, in ms.
   * @default {500}
   */
  probeDelay?: number;
  /**
   * How the probes are judged: every one must pass (`all`), one (`any`), more than half
   * (`majority`).
   * @default {"all"}
   */
  policy?: HealthCheckPolicy;
  /**
   * When the active database is checked: `"always"`, or `"idle"` (only when it answered no
   * command during the last interval; the failure detector watches it otherwise). With the
   * client-side cache on, `"idle"` checks on every interval too: a read answered from memory
   * says nothing about the server.
   * @default {"always"}
   */
  checkActive?: "always" | "idle";
}

/**
 * A database's health check: a strategy (the PING check, `lagAwareHealthCheck(...)`, or your
 * own function), the settings with an optional strategy, or `false` for none (the database is
 * then always considered healthy).
 *
 * @example
 * ```ts
 * import { type DatabaseHealthCheck, pingHealthCheck } from "@edge/redis/multi-db";
 * const checks: DatabaseHealthCheck[] = [false, pingHealthCheck, { probes: 1, interval: 1000 }];
 * ```
 */
export type DatabaseHealthCheck =
  | false
  | HealthCheckStrategy
  | (HealthCheckOptions & { strategy?: HealthCheckStrategy });

/**
 * One database of a {@linkcode MultiDbClientOptions}: where it is (`url`, or `host`/`port`,
 * or `nodes` for a cluster), its weight, its health check, and client options that override
 * the top-level ones.
 *
 * @example
 * ```ts
 * import type { DatabaseConfig } from "@edge/redis/multi-db";
 * const east: DatabaseConfig = { url: "redis://east.example.com:6379", weight: 1 };
 * const west: DatabaseConfig = { url: "redis://west.example.com:6379", weight: 0.5, commandTimeout: 2000 };
 * ```
 */
export interface DatabaseConfig extends DatabaseClientOptions {
  /**
   * Its name in `databases()`, events and errors, and for `setActiveDatabase`.
   * @default {its endpoint, "host:port"}
   */
  name?: string;
  /**
   * Priority: the healthy database of highest weight is used. A finite number above 0.
   * @default {1}
   */
  weight?: number;
  /**
   * Its health check.
   * @default {the PING check with the top-level healthCheck settings}
   */
  healthCheck?: DatabaseHealthCheck;
}

/**
 * When failures open a database's circuit breaker. See `@edge/redis/circuit-breaker`.
 *
 * @example
 * ```ts
 * import type { FailureDetectorOptions } from "@edge/redis/multi-db";
 * const sensitive: FailureDetectorOptions = { minNumOfFailures: 10, failureRateThreshold: 20 };
 * ```
 */
export interface FailureDetectorOptions {
  /**
   * Length of the sliding window, in ms.
   * @default {2000}
   */
  slidingWindowMs?: number;
  /**
   * Buckets of the window.
   * @default {10}
   */
  windowBuckets?: number;
  /**
   * Failures in the window needed to fail over; 0 disables this condition.
   * @default {1000}
   */
  minNumOfFailures?: number;
  /**
   * Failure rate in the window, in percent, needed to fail over; 0 disables this condition.
   * @default {10}
   */
  failureRateThreshold?: number;
  /**
   * Which errors count as failures (a `ReplyError` never does).
   * @default {ConnectionError and TimeoutError}
   */
  isFailure?: (error: unknown) => boolean;
}

/**
 * Retries of a command that failed before it was written (it cannot have run), on the same
 * database. Commands that may have run are never retried.
 *
 * @example
 * ```ts
 * import type { CommandRetryOptions } from "@edge/redis/multi-db";
 * const retry: CommandRetryOptions = { maxAttempts: 5, initialDelay: 100 };
 * ```
 */
export interface CommandRetryOptions {
  /**
   * Attempts in all, the first one included.
   * @default {3}
   */
  maxAttempts?: number;
  /**
   * Delay before the first retry, in ms.
   * @default {500}
   */
  initialDelay?: number;
  /**
   * Factor between two delays.
   * @default {2}
   */
  backoffMultiplier?: number;
}

/**
 * Options of a {@linkcode MultiDbClient}. Client options given here (`commandTimeout`,
 * `password`, `tls`, `maintenanceNotifications`, ...) apply to every database; a database's
 * own override them.
 *
 * @example
 * ```ts
 * import type { MultiDbClientOptions } from "@edge/redis/multi-db";
 * const options: MultiDbClientOptions = {
 *   databases: [
 *     { url: "redis://east.example.com:6379", weight: 1 },
 *     { url: "redis://west.example.com:6379", weight: 0.5 },
 *   ],
 *   commandTimeout: 2000,
 *   gracePeriod: 30_000,
 * };
 * ```
 */
export interface MultiDbClientOptions extends Omit<RedisClientOptions, "url" | "host" | "port"> {
  /** The databases, at least one. */
  databases: DatabaseConfig[];
  /** When failures fail over. */
  failureDetector?: FailureDetectorOptions;
  /** Retries of commands that were not written. */
  commandRetry?: CommandRetryOptions;
  /** Health check settings of every database. */
  healthCheck?: HealthCheckOptions;
  /**
   * Whether to switch back to a healthy database of higher weight.
   * @default {true}
   */
  failbackSupported?: boolean;
  /**
   * Time between two failback checks, in ms.
   * @default {120000}
   */
  failbackCheckInterval?: number;
  /**
   * How long a database failed away from is not used again, in ms (its breaker is held open).
   * @default {60000}
   */
  gracePeriod?: number;
  /**
   * With no healthy database, how many failover attempts are made before commands fail with
   * `PermanentlyUnavailableError` instead of `TemporarilyUnavailableError`.
   * @default {10}
   */
  maxNumFailoverAttempts?: number;
  /**
   * Time between two failover attempts with no healthy database, in ms.
   * @default {12000}
   */
  delayInBetweenFailoverAttempts?: number;
  /**
   * How many databases must be healthy at start. A database counts as healthy at start on its
   * first passing probe (the configured probe policy judges the later checks), so the client
   * serves as soon as the best database answered one PING.
   * @default {"one-available"}
   */
  initializationPolicy?: InitializationPolicy;
  /**
   * Whether a command that failed before being written is retried at once on the database
   * failed over to.
   * @default {true}
   */
  retryOnFailover?: boolean;
  /**
   * Creates each database's client.
   * @default {createDatabaseClient: a RedisClient}
   */
  createClient?: DatabaseClientFactory;
  /**
   * Time source and timers of the failover logic (breakers, health checks, grace periods,
   * failback); tests drive it by hand.
   * @default {the system clock}
   */
  clock?: Clock;
}

/**
 * The time source and one-shot timers of a {@linkcode MultiDbClient}: the client's one clock.
 *
 * @deprecated Use {@linkcode Clock}, the same type.
 *
 * @example
 * ```ts
 * import type { Clock } from "@edge/redis/multi-db";
 * const clock: Clock = {
 *   now: () => Date.now(),
 *   setTimer: (fn, ms) => setTimeout(fn, ms),
 *   clearTimer: (id) => clearTimeout(id as number),
 * };
 * ```
 */
export type MultiDbClock = Clock;

/** Internal: A database's settings with every default applied. */
export interface ResolvedDatabaseConfig {
  name: string;
  weight: number;
  endpoint: Endpoint | undefined;
  healthCheck: (Required<HealthCheckOptions> & { strategy: HealthCheckStrategy }) | undefined;
  clientOptions: DatabaseClientOptions;
}

/** Internal: The client's settings with every default applied. */
export interface ResolvedMultiDbOptions {
  failureDetector: Required<Omit<FailureDetectorOptions, "isFailure">> & {
    isFailure: ((error: unknown) => boolean) | undefined;
  };
  commandRetry: Required<CommandRetryOptions>;
  healthCheck: Required<HealthCheckOptions>;
  failbackSupported: boolean;
  failbackCheckInterval: number;
  gracePeriod: number;
  maxNumFailoverAttempts: number;
  delayInBetweenFailoverAttempts: number;
  initializationPolicy: InitializationPolicy;
  retryOnFailover: boolean;
  createClient: DatabaseClientFactory | undefined;
  clientOptions: RedisClientOptions;
  clock: Clock;
}

/**
 * The defaults (Jedis, redis-py, go-redis and node-redis agree on them).
 *
 * @example
 * ```ts
 * import { MULTI_DB_DEFAULTS } from "@edge/redis/multi-db";
 * console.log(MULTI_DB_DEFAULTS.gracePeriod); // 60000
 * ```
 */
export const MULTI_DB_DEFAULTS: {
  readonly weight: 1;
  readonly healthCheck: Readonly<Required<HealthCheckOptions>>;
  readonly failureDetector: Readonly<Required<Omit<FailureDetectorOptions, "isFailure">>>;
  readonly commandRetry: Readonly<Required<CommandRetryOptions>>;
  readonly failbackSupported: true;
  readonly failbackCheckInterval: 120000;
  readonly gracePeriod: 60000;
  readonly maxNumFailoverAttempts: 10;
  readonly delayInBetweenFailoverAttempts: 12000;
  readonly initializationPolicy: "one-available";
  readonly retryOnFailover: true;
} = {
  weight: 1,
  healthCheck: {
    interval: 5000,
    timeout: 1000,
    probes: 3,
    probeDelay: 500,
    policy: "all",
    checkActive: "always",
  },
  failureDetector: {
    slidingWindowMs: 2000,
    windowBuckets: 10,
    minNumOfFailures: 1000,
    failureRateThreshold: 10,
  },
  commandRetry: { maxAttempts: 3, initialDelay: 500, backoffMultiplier: 2 },
  failbackSupported: true,
  failbackCheckInterval: 120_000,
  gracePeriod: 60_000,
  maxNumFailoverAttempts: 10,
  delayInBetweenFailoverAttempts: 12_000,
  initializationPolicy: "one-available",
  retryOnFailover: true,
};

function num(
  name: string,
  v: unknown,
  dflt: number,
  min: number,
  opts: { max?: number; integer?: boolean; above?: boolean } = {},
): number {
  if (v === undefined) return dflt;
  const max = opts.max ?? Infinity;
  const bad = typeof v !== "number" || !Number.isFinite(v) || v > max ||
    (opts.above ? v <= min : v < min) || (opts.integer === true && !Number.isInteger(v));
  if (bad) {
    const what = opts.integer ? "an integer" : "a number";
    const range = opts.above
      ? `above ${min}`
      : max === Infinity
      ? `of at least ${min}`
      : `from ${min} to ${max}`;
    throw new RangeError(`Cannot use ${name} ${String(v)}: expected ${what} ${range}`);
  }
  return v as number;
}

function oneOf<T extends string>(name: string, v: unknown, dflt: T, values: readonly T[]): T {
  if (v === undefined) return dflt;
  if (typeof v !== "string" || !values.includes(v as T)) {
    throw new TypeError(
      `Cannot use ${name} ${JSON.stringify(v)}: expected ${values.map((x) => `"${x}"`).join(", ")}`,
    );
  }
  return v as T;
}

function resolveHealthCheckOptions(
  prefix: string,
  o: HealthCheckOptions | undefined,
  base: Required<HealthCheckOptions>,
): Required<HealthCheckOptions> {
  if (o === undefined) return base;
  if (o === null || typeof o !== "object") {
    throw new TypeError(`Cannot use ${prefix}: expected an options object`);
  }
  return {
    interval: num(`${prefix}.interval`, o.interval, base.interval, 1),
    timeout: num(`${prefix}.timeout`, o.timeout, base.timeout, 1),
    probes: num(`${prefix}.probes`, o.probes, base.probes, 1, { integer: true }),
    probeDelay: num(`${prefix}.probeDelay`, o.probeDelay, base.probeDelay, 0),
    policy: oneOf(`${prefix}.policy`, o.policy, base.policy, ["all", "any", "majority"]),
    checkActive: oneOf(`${prefix}.checkActive`, o.checkActive, base.checkActive, [
      "always",
      "idle",
    ]),
  };
}

const { url: _u, host: _h, port: _p, ...SHARED_OPTION_KEYS } = CLIENT_OPTION_KEYS;
const PER_DATABASE = "give it in each database (databases: [{ url: ... }])";

/** The keys of {@linkcode MultiDbClientOptions}. */
const MULTI_DB_OPTION_KEYS: KeyTable<MultiDbClientOptions> = {
  ...SHARED_OPTION_KEYS,
  databases: true,
  failureDetector: true,
  commandRetry: true,
  healthCheck: true,
  failbackSupported: true,
  failbackCheckInterval: true,
  gracePeriod: true,
  maxNumFailoverAttempts: true,
  delayInBetweenFailoverAttempts: true,
  initializationPolicy: true,
  retryOnFailover: true,
  createClient: true,
  clock: true,
};

const HEALTH_CHECK_KEYS: KeyTable<HealthCheckOptions> = {
  interval: true,
  timeout: true,
  probes: true,
  probeDelay: true,
  policy: true,
  checkActive: true,
};

const MULTI_DB_NESTED_KEYS: [string, Readonly<Record<string, true>>][] = [
  [
    "failureDetector",
    {
      slidingWindowMs: true,
      windowBuckets: true,
      minNumOfFailures: true,
      failureRateThreshold: true,
      isFailure: true,
    } satisfies KeyTable<FailureDetectorOptions>,
  ],
  [
    "commandRetry",
    {
      maxAttempts: true,
      initialDelay: true,
      backoffMultiplier: true,
    } satisfies KeyTable<CommandRetryOptions>,
  ],
  ["healthCheck", HEALTH_CHECK_KEYS],
];

/** The keys of {@linkcode DatabaseConfig}. */
const DATABASE_OPTION_KEYS: KeyTable<DatabaseConfig> = {
  ...CLIENT_OPTION_KEYS,
  nodes: true,
  name: true,
  weight: true,
  healthCheck: true,
};

/** Internal: Applies defaults to the client's own settings and validates them. */
export function resolveMultiDbOptions(o: MultiDbClientOptions): ResolvedMultiDbOptions {
  if (o === null || typeof o !== "object" || Array.isArray(o)) {
    throw new TypeError("Cannot create the client: expected an options object with databases");
  }
  checkClientOptionKeys(o, MULTI_DB_OPTION_KEYS, "the multi-database client", {
    url: PER_DATABASE,
    host: PER_DATABASE,
    port: PER_DATABASE,
  });
  for (const [name, keys] of MULTI_DB_NESTED_KEYS) {
    const v = (o as unknown as Record<string, unknown>)[name];
    if (typeof v === "object" && v !== null) checkKeys(v, keys, name);
  }
  const d = MULTI_DB_DEFAULTS;
  const fd = o.failureDetector ?? {};
  const cr = o.commandRetry ?? {};
  if (fd.isFailure !== undefined && typeof fd.isFailure !== "function") {
    throw new TypeError("Cannot use failureDetector.isFailure: expected a function");
  }
  if (o.createClient !== undefined && typeof o.createClient !== "function") {
    throw new TypeError("Cannot use createClient: expected a function");
  }
  const {
    databases: _databases,
    failureDetector: _fd,
    commandRetry: _cr,
    healthCheck: _hc,
    failbackSupported: _fs,
    failbackCheckInterval: _fci,
    gracePeriod: _gp,
    maxNumFailoverAttempts: _mnfa,
    delayInBetweenFailoverAttempts: _dbfa,
    initializationPolicy: _ip,
    retryOnFailover: _rof,
    createClient: _cc,
    clock: _clock,
    ...clientOptions
  } = o;
  const clock = o.clock ?? systemClock;
  if (
    typeof clock !== "object" || clock === null || typeof clock.now !== "function" ||
    typeof clock.setTimer !== "function" || typeof clock.clearTimer !== "function"
  ) {
    throw new TypeError("Cannot use clock: expected { now, setTimer, clearTimer }");
  }
  return {
    failureDetector: {
      slidingWindowMs: num(
        "failureDetector.slidingWindowMs",
        fd.slidingWindowMs,
        d.failureDetector.slidingWindowMs,
        0,
        { above: true },
      ),
      windowBuckets: num(
        "failureDetector.windowBuckets",
        fd.windowBuckets,
        d.failureDetector.windowBuckets,
        1,
        { integer: true, max: 1000 },
      ),
      minNumOfFailures: num(
        "failureDetector.minNumOfFailures",
        fd.minNumOfFailures,
        d.failureDetector.minNumOfFailures,
        0,
        { integer: true },
      ),
      failureRateThreshold: num(
        "failureDetector.failureRateThreshold",
        fd.failureRateThreshold,
        d.failureDetector.failureRateThreshold,
        0,
        { max: 100 },
      ),
      isFailure: fd.isFailure,
    },
    commandRetry: {
      maxAttempts: num("commandRetry.maxAttempts", cr.maxAttempts, d.commandRetry.maxAttempts, 1, {
        integer: true,
      }),
      initialDelay: num(
        "commandRetry.initialDelay",
        cr.initialDelay,
        d.commandRetry.initialDelay,
        0,
      ),
      backoffMultiplier: num(
        "commandRetry.backoffMultiplier",
        cr.backoffMultiplier,
        d.commandRetry.backoffMultiplier,
        1,
      ),
    },
    healthCheck: resolveHealthCheckOptions("healthCheck", o.healthCheck, d.healthCheck),
    failbackSupported: o.failbackSupported ?? d.failbackSupported,
    failbackCheckInterval: num(
      "failbackCheckInterval",
      o.failbackCheckInterval,
      d.failbackCheckInterval,
      1,
    ),
    gracePeriod: num("gracePeriod", o.gracePeriod, d.gracePeriod, 0),
    maxNumFailoverAttempts: num(
      "maxNumFailoverAttempts",
      o.maxNumFailoverAttempts,
      d.maxNumFailoverAttempts,
      1,
      { integer: true },
    ),
    delayInBetweenFailoverAttempts: num(
      "delayInBetweenFailoverAttempts",
      o.delayInBetweenFailoverAttempts,
      d.delayInBetweenFailoverAttempts,
      0,
    ),
    initializationPolicy: oneOf(
      "initializationPolicy",
      o.initializationPolicy,
      d.initializationPolicy,
      [
        "all-available",
        "majority-available",
        "one-available",
      ],
    ),
    retryOnFailover: o.retryOnFailover ?? d.retryOnFailover,
    createClient: o.createClient,
    clientOptions,
    clock,
  };
}

/** The endpoint of a database's options, or `undefined` for a cluster. */
function endpointOf(c: DatabaseConfig): Endpoint | undefined {
  if (c.nodes !== undefined) {
    if (!Array.isArray(c.nodes) || c.nodes.length === 0) {
      throw new TypeError("Cannot add the database: nodes must be a non-empty list of URLs");
    }
    return undefined;
  }
  const u = c.url !== undefined ? parseRedisUrl(c.url) : undefined;
  return { host: c.host ?? u?.host ?? "127.0.0.1", port: c.port ?? u?.port ?? 6379 };
}

/** @internal `host:port` of a cluster seed given as a URL, `host:port` or `{ host, port }`. */
export function nodeKey(n: string | Endpoint): string {
  if (typeof n === "object" && n !== null) return endpointKey(n);
  const text = String(n);
  try {
    const u = parseRedisUrl(text.includes("://") ? text : `redis://${text}`);
    return endpointKey({ host: u.host ?? "127.0.0.1", port: u.port ?? 6379 });
  } catch {
    return text;
  }
}

/**
 * Internal: Applies defaults to one database's settings and validates them.
 *
 * @param c The database as given.
 * @param top The client's resolved settings (top-level client options and health checks).
 */
export function resolveDatabaseConfig(
  c: DatabaseConfig,
  top: ResolvedMultiDbOptions,
): ResolvedDatabaseConfig {
  if (c === null || typeof c !== "object") {
    throw new TypeError("Cannot add the database: expected an object with url, host or nodes");
  }
  checkClientOptionKeys(c, DATABASE_OPTION_KEYS, "a database");
  if (c.url === undefined && c.host === undefined && c.nodes === undefined) {
    throw new TypeError("Cannot add the database: give its url, host or nodes");
  }
  const endpoint = endpointOf(c);
  let name = c.name;
  if (name === undefined) {
    name = endpoint !== undefined ? formatEndpoint(endpoint) : `cluster(${nodeKey(c.nodes![0]!)})`;
  } else if (typeof name !== "string" || name.length === 0) {
    throw new TypeError("Cannot add the database: name must be a non-empty string");
  }
  const weight = c.weight === undefined ? MULTI_DB_DEFAULTS.weight : checkWeight(name, c.weight);
  let healthCheck: ResolvedDatabaseConfig["healthCheck"];
  const hc = c.healthCheck;
  if (hc === false) healthCheck = undefined;
  else if (hc === undefined) healthCheck = { ...top.healthCheck, strategy: pingHealthCheck };
  else if (typeof hc === "function") healthCheck = { ...top.healthCheck, strategy: hc };
  else if (typeof hc === "object" && hc !== null) {
    checkKeys(hc, { ...HEALTH_CHECK_KEYS, strategy: true }, `the healthCheck of "${name}"`);
    if (hc.strategy !== undefined && typeof hc.strategy !== "function") {
      throw new TypeError(`Cannot use the health check of "${name}": strategy must be a function`);
    }
    healthCheck = {
      ...resolveHealthCheckOptions(`the healthCheck of "${name}"`, hc, top.healthCheck),
      strategy: hc.strategy ?? pingHealthCheck,
    };
  } else {
    throw new TypeError(
      `Cannot use the health check of "${name}": expected false, a function or an options object`,
    );
  }
  const { name: _n, weight: _w, healthCheck: _h, ...own } = c;
  const clientOptions: DatabaseClientOptions = { ...top.clientOptions, ...own };
  if (top.clientOptions.maintenanceNotifications && own.maintenanceNotifications) {
    clientOptions.maintenanceNotifications = {
      ...top.clientOptions.maintenanceNotifications,
      ...own.maintenanceNotifications,
    };
  }
  return { name, weight, endpoint, healthCheck, clientOptions };
}

/** Internal: Validates a weight given to `setWeight`. */
export function checkWeight(name: string, weight: unknown): number {
  if (typeof weight !== "number" || !Number.isFinite(weight) || weight <= 0) {
    throw new RangeError(
      `Cannot use the weight ${String(weight)} for "${name}": expected a finite number above 0`,
    );
  }
  return weight;
}
