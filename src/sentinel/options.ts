/**
 * Options of {@linkcode RedisSentinelClient} and their validation.
 *
 * @module
 */

import type { RedisClientOptions } from "../client/options.ts";
import { checkClientOptionKeys, CLIENT_OPTION_KEYS } from "../client/options.ts";
import { type KeyTable, received } from "../_validate.ts";
import type { Endpoint } from "../endpoint.ts";
import type { TlsOptions } from "../transport/types.ts";
import { parseSentinelAddress } from "./_replies.ts";

/**
 * Options of a {@linkcode RedisSentinelClient}: where the sentinels are, which master to
 * follow, and the standalone options (credentials, TLS, timeouts, ...) for the data
 * connections. The data node's address comes from the sentinels, so `url`, `host` and `port`
 * are not taken.
 *
 * @example
 * ```ts
 * import type { RedisSentinelClientOptions } from "@edge/redis/sentinel";
 * const options: RedisSentinelClientOptions = {
 *   masterName: "mymaster",
 *   sentinels: ["redis://127.0.0.1:26379", "redis://127.0.0.1:26380"],
 *   password: "data-secret",
 *   sentinelPassword: "sentinel-secret",
 * };
 * ```
 */
export interface RedisSentinelClientOptions
  extends Omit<RedisClientOptions, "url" | "host" | "port"> {
  /** The name the sentinels monitor the master under (`sentinel monitor <name> ...`). */
  masterName: string;
  /**
   * The sentinels to ask: `redis://host:port`, `host:port` or `{ host, port }` (port 26379
   * when absent); a single one may be given without the list. Sentinels learnt from the ones
   * given are added.
   */
  sentinels: (string | Endpoint)[] | string | Endpoint;
  /**
   * `"master"`: every command goes to the master. `"replica"`: to one healthy replica (reads;
   * writes get the replica's `READONLY` error), moving to another when it goes down.
   * @default {"master"}
   */
  role?: "master" | "replica";
  /** ACL user name of the sentinels. */
  sentinelUsername?: string;
  /** Password of the sentinels. Never logged nor put in an error message. */
  sentinelPassword?: string;
  /**
   * TLS to the sentinels: `true` for the defaults, or settings. `rediss://` sentinel addresses
   * imply `true`.
   * @default {false}
   */
  sentinelTls?: boolean | TlsOptions;
  /**
   * Milliseconds each question to a sentinel (and each `ROLE` check of a node) may take,
   * connecting included.
   * @default {2000}
   */
  sentinelTimeout?: number;
  /**
   * Milliseconds between checks of the sentinels' answer, which catch a switch whose event was
   * lost.
   * @default {2000}
   */
  sentinelCheckInterval?: number;
  /**
   * How long a write refused during a failover waits for the sentinels to name a new master,
   * in ms. A `READONLY` reply (the master was demoted) or a `NOREPLICAS` reply (it lost the
   * replicas it needs) means the write was not executed: once a new master is confirmed, it is
   * sent there; past this wait the caller gets the refusal. 0 returns it at once.
   * @default {10000}
   */
  failoverWait?: number;
}

/** Internal: Options with defaults applied. */
export interface ResolvedSentinelOptions {
  masterName: string;
  sentinels: Endpoint[];
  role: "master" | "replica";
  sentinelUsername: string | undefined;
  sentinelPassword: string | undefined;
  sentinelTls: boolean | TlsOptions;
  sentinelTimeout: number;
  sentinelCheckInterval: number;
  failoverWait: number;
}

function positive(name: string, v: number | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min) {
    throw new RangeError(`Cannot use ${name} ${String(v)}: expected a number of at least ${min}`);
  }
  return v;
}

const { url: _u, host: _h, port: _p, ...DATA_OPTION_KEYS } = CLIENT_OPTION_KEYS;

/** Internal: The keys of {@linkcode RedisSentinelClientOptions}. */
export const SENTINEL_OPTION_KEYS: KeyTable<RedisSentinelClientOptions> = {
  ...DATA_OPTION_KEYS,
  masterName: true,
  sentinels: true,
  role: true,
  sentinelUsername: true,
  sentinelPassword: true,
  sentinelTls: true,
  sentinelTimeout: true,
  sentinelCheckInterval: true,
  failoverWait: true,
};

const FROM_SENTINELS = "url, host and port come from the sentinels (use sentinels)";

/** Internal: Validates the sentinel-specific options and applies their defaults. */
export function resolveSentinelOptions(o: RedisSentinelClientOptions): ResolvedSentinelOptions {
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new TypeError(
      `Cannot create the sentinel client from ${
        typeof o === "string" ? "a string" : received(o)
      }: expected an options object, e.g. { masterName: "mymaster", sentinels: ["127.0.0.1:26379"] }`,
    );
  }
  checkClientOptionKeys(o, SENTINEL_OPTION_KEYS, "the sentinel client", {
    url: FROM_SENTINELS,
    host: FROM_SENTINELS,
    port: FROM_SENTINELS,
  });
  if (typeof o.masterName !== "string" || o.masterName === "") {
    throw new TypeError("Cannot create the sentinel client: masterName must be a non-empty string");
  }
  const sentinels = typeof o.sentinels === "string" ||
      (typeof o.sentinels === "object" && o.sentinels !== null && !Array.isArray(o.sentinels))
    ? [o.sentinels]
    : o.sentinels;
  if (!Array.isArray(sentinels) || sentinels.length === 0) {
    throw new TypeError(
      `Cannot create the sentinel client: sentinels must list at least one, e.g. ` +
        `sentinels: ["127.0.0.1:26379"] (got ${
          Array.isArray(sentinels) ? "an empty list" : received(sentinels)
        })`,
    );
  }
  const extra = o as { url?: unknown; host?: unknown; port?: unknown };
  if (extra.url !== undefined || extra.host !== undefined || extra.port !== undefined) {
    throw new TypeError(
      "Cannot create the sentinel client: url, host and port come from the sentinels (use sentinels)",
    );
  }
  const role = o.role ?? "master";
  if (role !== "master" && role !== "replica") {
    throw new RangeError(
      `Cannot use role "${String(role)}": expected "master" or "replica"`,
    );
  }
  const schemes = new Set(
    sentinels.map((a) => typeof a === "string" && /^rediss:\/\//i.test(a) ? "rediss" : "redis"),
  );
  if (schemes.size > 1) {
    throw new TypeError(
      "Cannot mix redis:// and rediss:// sentinel addresses: every sentinel is asked the same way",
    );
  }
  const tlsFromUrls = schemes.has("rediss");
  if (tlsFromUrls && o.sentinelTls === false) {
    throw new TypeError("Cannot use rediss:// sentinel addresses with sentinelTls: false");
  }
  return {
    masterName: o.masterName,
    sentinels: sentinels.map(parseSentinelAddress),
    role,
    sentinelUsername: o.sentinelUsername,
    sentinelPassword: o.sentinelPassword,
    sentinelTls: o.sentinelTls ?? tlsFromUrls,
    sentinelTimeout: positive("sentinelTimeout", o.sentinelTimeout, 2000, 1),
    sentinelCheckInterval: positive("sentinelCheckInterval", o.sentinelCheckInterval, 2000, 10),
    failoverWait: positive("failoverWait", o.failoverWait, 10_000, 0),
  };
}
