/**
 * The lag-aware health check (Redis Software): asks the management REST API whether the
 * database is available and its Active-Active replication lag within a tolerance.
 *
 * @module
 */

import { type TlsFetch, tlsFetch } from "../transport/fetch_tls.ts";
import type { Logger } from "../logger.ts";
import type { HealthCheckStrategy, HealthCheckTarget } from "./health_check.ts";

/**
 * Options of {@linkcode lagAwareHealthCheck}.
 *
 * @example
 * ```ts
 * import type { LagAwareHealthCheckOptions } from "@edge/redis/multi-db";
 * const options: LagAwareHealthCheckOptions = {
 *   restUrl: "https://cluster.example.com:9443",
 *   username: "admin@example.com",
 *   password: "secret",
 * };
 * ```
 */
export interface LagAwareHealthCheckOptions {
  /** Base URL of the REST API, e.g. `https://cluster.example.com:9443` (usual port 9443). */
  restUrl: string;
  /** Basic auth user. */
  username: string;
  /** Basic auth password. Never logged nor put in an error message. */
  password: string;
  /**
   * Largest acceptable replication lag, in ms (`availability_lag_tolerance_ms`).
   * @default {5000}
   */
  lagTolerance?: number;
  /** PEM certificate(s) of a private CA for the API's HTTPS certificate. */
  ca?: string;
  /**
   * The host name or address to look up in the database list (matched on `dns_name`, then on
   * `addr[]`). Defaults to the database's own host.
   */
  host?: string;
  /**
   * The database uid, when known: skips the database list.
   */
  uid?: number;
  /**
   * The `fetch` to use (e.g. one with its own TLS settings).
   * @default {globalThis.fetch, with `ca` applied}
   */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
  /** Where to log why a check failed. @default {silent} */
  logger?: Logger;
  /**
   * Largest database list (`GET /v1/bdbs`) read, in bytes: a larger one fails the check
   * instead of being read whole (parsing a huge body would block the event loop past the
   * probe's timeout).
   * @default {1048576}
   */
  maxBodyBytes?: number;
}

/** Reads a response body as text, at most `max` bytes; past that it is cancelled. */
async function cappedText(res: Response, max: number, signal: AbortSignal): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > max) {
    await res.body?.cancel();
    throw new Error(`the database list is ${declared} bytes, more than maxBodyBytes (${max})`);
  }
  const reader = res.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    if (signal.aborted) {
      await reader.cancel();
      throw signal.reason;
    }
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new Error(`the database list is more than maxBodyBytes (${max}) bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

interface BdbEndpoint {
  dns_name?: unknown;
  addr?: unknown;
  port?: unknown;
}

/** Finds the uid of the database served at `host` (`port` breaks ties). */
function findUid(list: unknown, host: string, port: number | undefined): number | undefined {
  if (!Array.isArray(list)) return undefined;
  const matches: { uid: number; portMatch: boolean; byName: boolean }[] = [];
  for (const bdb of list) {
    if (bdb === null || typeof bdb !== "object") continue;
    const uid = (bdb as { uid?: unknown }).uid;
    const endpoints = (bdb as { endpoints?: unknown }).endpoints;
    if (typeof uid !== "number" || !Array.isArray(endpoints)) continue;
    for (const ep of endpoints as BdbEndpoint[]) {
      if (ep === null || typeof ep !== "object") continue;
      const byName = ep.dns_name === host;
      const byAddr = Array.isArray(ep.addr) && ep.addr.includes(host);
      if (byName || byAddr) {
        matches.push({ uid, portMatch: port !== undefined && ep.port === port, byName });
      }
    }
  }
  // dns_name first, then addr[]; an endpoint on the same port before another.
  matches.sort((a, b) =>
    Number(b.byName) - Number(a.byName) || Number(b.portMatch) - Number(a.portMatch)
  );
  return matches[0]?.uid;
}

/**
 * Creates a lag-aware health check: `GET /v1/bdbs?fields=uid,endpoints` finds the database's
 * uid (matched on `dns_name`, then on `addr[]`; cached), then
 * `GET /v1/bdbs/{uid}/availability?extend_check=lag&availability_lag_tolerance_ms=N` must
 * answer 200. Any other status (503 lagging, 401 refused credentials), a network error or no
 * answer within the probe's timeout is a failed probe. Basic auth; the password is never
 * logged.
 *
 * @param options The API, credentials, tolerance and TLS settings.
 * @returns The health check strategy; its `close()` releases the HTTP client it made for `ca`
 *   (the multi-database client calls it when it closes).
 *
 * @example
 * ```ts ignore
 * import { lagAwareHealthCheck, MultiDbClient } from "@edge/redis/multi-db";
 * const healthCheck = lagAwareHealthCheck({
 *   restUrl: "https://cluster-east.example.com:9443",
 *   username: "admin@example.com",
 *   password: Deno.env.get("RS_PASSWORD")!,
 *   ca: await Deno.readTextFile("ca.pem"),
 * });
 * const client = new MultiDbClient({
 *   databases: [{ url: "redis://east.example.com:12000", weight: 1, healthCheck }],
 * });
 * ```
 */
export function lagAwareHealthCheck(
  options: LagAwareHealthCheckOptions,
): HealthCheckStrategy & { close(): void } {
  if (options === null || typeof options !== "object") {
    throw new TypeError("Cannot create the lag-aware health check: expected an options object");
  }
  let base: URL;
  try {
    base = new URL(options.restUrl);
  } catch {
    throw new TypeError(
      "Cannot create the lag-aware health check: restUrl is not a URL (expected https://host:9443)",
    );
  }
  if (base.protocol !== "https:" && base.protocol !== "http:") {
    throw new TypeError(
      `Cannot create the lag-aware health check: restUrl has the scheme "${base.protocol}", expected "https:"`,
    );
  }
  if (typeof options.username !== "string" || typeof options.password !== "string") {
    throw new TypeError(
      "Cannot create the lag-aware health check: username and password must be strings",
    );
  }
  const tolerance = options.lagTolerance ?? 5000;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError(
      `Cannot use lagTolerance ${tolerance}: expected a non-negative number of ms`,
    );
  }
  const root = base.href.replace(/\/+$/, "");
  const auth = `Basic ${btoa(`${options.username}:${options.password}`)}`;
  let cachedUid = options.uid;
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  if (!(Number.isInteger(maxBody) && maxBody > 0)) {
    throw new RangeError(
      `Cannot use maxBodyBytes ${String(options.maxBodyBytes)}: expected a positive integer`,
    );
  }
  let fetcher = options.fetch;
  let owned: TlsFetch | undefined;
  const logger = options.logger;

  const get = async (path: string, signal: AbortSignal): Promise<Response> => {
    if (fetcher === undefined) {
      owned = tlsFetch(options.ca);
      fetcher = owned.fetch;
    }
    return await fetcher(`${root}${path}`, {
      headers: { authorization: auth, accept: "application/json" },
      signal,
    });
  };

  const check = async (target: HealthCheckTarget): Promise<boolean> => {
    const host = options.host ?? target.endpoint?.host;
    const where = `the REST API at ${base.origin}`;
    try {
      if (cachedUid === undefined) {
        if (host === undefined) {
          throw new Error(`the database "${target.database}" has no host to look up`);
        }
        const res = await get("/v1/bdbs?fields=uid,endpoints", target.signal);
        if (res.status !== 200) {
          await res.body?.cancel();
          throw new Error(`listing the databases answered HTTP ${res.status}`);
        }
        const text = await cappedText(res, maxBody, target.signal);
        let list: unknown;
        try {
          list = JSON.parse(text);
        } catch {
          throw new Error("the database list is not JSON");
        }
        cachedUid = findUid(list, host, target.endpoint?.port);
        if (cachedUid === undefined) {
          throw new Error(`no database with the endpoint "${host}" is listed`);
        }
      }
      const res = await get(
        `/v1/bdbs/${cachedUid}/availability?extend_check=lag&availability_lag_tolerance_ms=${tolerance}`,
        target.signal,
      );
      await res.body?.cancel();
      if (res.status === 404 && options.uid === undefined) cachedUid = undefined;
      if (res.status === 200) return true;
      throw new Error(
        res.status === 401
          ? "the credentials were refused (HTTP 401)"
          : `availability answered HTTP ${res.status}`,
      );
    } catch (e) {
      const why = target.signal.aborted
        ? `no answer within ${target.timeout} ms`
        : e instanceof Error
        ? e.message
        : String(e);
      logger?.debug(`Lag-aware health check of "${target.database}" via ${where} failed: ${why}`);
      throw new Error(`Cannot check "${target.database}" via ${where}: ${why}`);
    }
  };
  // The HTTP client holding the CA is released by close() (the client calls it when it closes);
  // a later check makes a new one.
  return Object.assign(check, {
    close(): void {
      owned?.close();
      owned = undefined;
      if (options.fetch === undefined) fetcher = undefined;
    },
  });
}
