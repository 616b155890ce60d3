/**
 * A mock of the Redis Software management REST API, for lag-aware health checks.
 *
 * @module
 */

/**
 * One scripted answer of the availability endpoint.
 *
 * @example
 * ```ts
 * import type { RestAnswer } from "@edge/redis/testing";
 * const slow: RestAnswer = { status: 200, delayMs: 3_000 };
 * ```
 */
export interface RestAnswer {
  /**
   * HTTP status to answer with: `200` healthy, `503` unavailable (lagging), `401` to refuse the
   * credentials, anything else as given.
   */
  status: number;
  /** Delay before answering, in ms (a slow API). @default 0 */
  delayMs?: number;
  /** JSON body to send instead of the default one. */
  body?: unknown;
}

/**
 * A request the mock received.
 *
 * @example
 * ```ts
 * import type { RestRequestRecord } from "@edge/redis/testing";
 * const refused = (r: RestRequestRecord) => !r.authorized;
 * ```
 */
export interface RestRequestRecord {
  /** HTTP method. */
  method: string;
  /** Path and query string. */
  url: string;
  /** Whether the Basic credentials matched. */
  authorized: boolean;
  /** The scripted status answered (401 when the credentials did not match). */
  status: number;
  /** When it arrived, ms since the epoch. */
  at: number;
}

/**
 * Options of {@linkcode RestMock}.
 *
 * @example
 * ```ts
 * import type { RestMockOptions } from "@edge/redis/testing";
 * const rest: RestMockOptions = { username: "ops", password: "pw", uid: 7 };
 * ```
 */
export interface RestMockOptions {
  /** Basic auth user. @default "admin@example.com" */
  username?: string;
  /** Basic auth password. @default "secret" */
  password?: string;
  /** The database uid listed by `GET /v1/bdbs`. @default 1 */
  uid?: number;
  /** Database name. @default "db1" */
  name?: string;
}

/**
 * Where the database listed by the mock is reachable.
 *
 * @example
 * ```ts
 * import type { RestEndpoint } from "@edge/redis/testing";
 * const e: RestEndpoint = { host: "127.0.0.1", port: 16379 };
 * ```
 */
export interface RestEndpoint {
  /** IP address of the endpoint. */
  host: string;
  /** TCP port. */
  port: number;
}

/**
 * A request as the mock sees it.
 *
 * @example
 * ```ts
 * import type { RestMockRequest } from "@edge/redis/testing";
 * const req: RestMockRequest = {
 *   method: "GET",
 *   path: "/v1/bdbs",
 *   query: new URLSearchParams("fields=uid,endpoints"),
 *   authorization: undefined,
 * };
 * ```
 */
export interface RestMockRequest {
  /** HTTP method. */
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query parameters. */
  query: URLSearchParams;
  /** The `Authorization` header, if any. */
  authorization: string | undefined;
}

/**
 * A response of the mock.
 *
 * @example
 * ```ts
 * import type { RestMockResponse } from "@edge/redis/testing";
 * const ok: RestMockResponse = { status: 200, body: {}, delayMs: 0 };
 * ```
 */
export interface RestMockResponse {
  /** HTTP status. */
  status: number;
  /** JSON body. */
  body: unknown;
  /** How long to wait before answering, in ms. */
  delayMs: number;
}

/**
 * Answers `GET /v1/bdbs` and `GET /v1/bdbs/{uid}/availability` like the Redis Software
 * management API, with Basic auth and scripted answers. Served by the simulator's HTTP server.
 *
 * Without a script every availability check answers 200. {@linkcode RestMock.script} sets a
 * standing answer, or a list of answers used once each before the standing one returns.
 *
 * @example Make the next two checks fail, then recover
 * ```ts ignore
 * import { MaintenanceSimulator } from "@edge/redis/testing";
 * const sim = await MaintenanceSimulator.start({ upstream: "127.0.0.1:6379", http: "127.0.0.1:0" });
 * sim.rest.script([{ status: 503 }, { status: 503 }]);
 * // GET http://<sim.http>/v1/bdbs/1/availability?extend_check=lag -> 503, 503, 200, ...
 * await sim.close();
 * ```
 */
export class RestMock {
  /** Basic auth user. */
  readonly username: string;
  /** Basic auth password. */
  readonly password: string;
  /** The database uid. */
  readonly uid: number;
  /** The database name. */
  readonly name: string;
  #standing: RestAnswer = { status: 200 };
  #queue: RestAnswer[] = [];
  #requests: RestRequestRecord[] = [];
  #endpoints: () => RestEndpoint[];

  /**
   * Creates the mock.
   *
   * @param options Credentials and database identity.
   * @param endpoints Lists the endpoints reported for the database.
   */
  constructor(options: RestMockOptions = {}, endpoints: () => RestEndpoint[] = () => []) {
    this.username = options.username ?? "admin@example.com";
    this.password = options.password ?? "secret";
    this.uid = options.uid ?? 1;
    this.name = options.name ?? "db1";
    this.#endpoints = endpoints;
  }

  /**
   * Scripts the availability answers.
   *
   * @param answer One answer to give from now on, or a list given once each (in order) before
   * the standing answer applies again.
   *
   * @example
   * ```ts
   * import { RestMock } from "@edge/redis/testing";
   * const rest = new RestMock();
   * rest.script({ status: 503 });            // unhealthy until told otherwise
   * rest.script([{ status: 200, delayMs: 3_000 }]); // one slow answer, then 503 again
   * ```
   */
  script(answer: RestAnswer | RestAnswer[]): void {
    if (Array.isArray(answer)) this.#queue.push(...answer);
    else {
      this.#standing = answer;
      this.#queue = [];
    }
  }

  /**
   * The requests received so far (newest last).
   *
   * @returns A copy of the log.
   *
   * @example
   * ```ts
   * import { RestMock } from "@edge/redis/testing";
   * console.log(new RestMock().requests().length); // 0
   * ```
   */
  requests(): RestRequestRecord[] {
    return [...this.#requests];
  }

  /**
   * Answers one request; `undefined` when the path is not part of the API.
   *
   * @param req The request.
   * @returns The response, or `undefined` for a path the mock does not serve.
   *
   * @example
   * ```ts
   * import { RestMock } from "@edge/redis/testing";
   * const rest = new RestMock({ username: "u", password: "p" });
   * const res = rest.handle({
   *   method: "GET",
   *   path: "/v1/bdbs/1/availability",
   *   query: new URLSearchParams("extend_check=lag"),
   *   authorization: "Basic " + btoa("u:p"),
   * });
   * console.log(res?.status); // 200
   * ```
   */
  handle(req: RestMockRequest): RestMockResponse | undefined {
    const m = /^\/v1\/bdbs(?:\/(\d+)(\/availability)?)?\/?$/.exec(req.path);
    if (m === null) return undefined;
    const url = req.path + (req.query.size > 0 ? `?${req.query}` : "");
    const authorized = req.authorization === `Basic ${btoa(`${this.username}:${this.password}`)}`;
    const record = (status: number): void => {
      this.#requests.push({ method: req.method, url, authorized, status, at: Date.now() });
    };
    if (!authorized) {
      record(401);
      return {
        status: 401,
        body: { error_code: "unauthorized", description: "Unauthorized" },
        delayMs: 0,
      };
    }
    if (req.method !== "GET") {
      record(405);
      return { status: 405, body: { error_code: "method_not_allowed" }, delayMs: 0 };
    }
    const uid = m[1] === undefined ? undefined : Number(m[1]);
    if (uid !== undefined && uid !== this.uid) {
      record(404);
      return {
        status: 404,
        body: { error_code: "db_not_exist", description: "Database not found" },
        delayMs: 0,
      };
    }
    if (m[2] === undefined) {
      record(200);
      const db = this.#database(req.query.get("fields"));
      return { status: 200, body: uid === undefined ? [db] : db, delayMs: 0 };
    }
    const answer = this.#queue.shift() ?? this.#standing;
    record(answer.status);
    const body = answer.body ??
      (answer.status === 200
        ? {}
        : answer.status === 401
        ? { error_code: "unauthorized", description: "Unauthorized" }
        : {
          error_code: "bdb_availability_lag",
          description: `Database replication lag exceeds the tolerance of ${
            req.query.get("availability_lag_tolerance_ms") ?? "?"
          } ms`,
        });
    return { status: answer.status, body, delayMs: answer.delayMs ?? 0 };
  }

  #database(fields: string | null): Record<string, unknown> {
    const eps = this.#endpoints();
    const full: Record<string, unknown> = {
      uid: this.uid,
      name: this.name,
      status: "active",
      endpoints: eps.map((e, i) => ({
        uid: `${this.uid}:${i + 1}`,
        dns_name: e.host === "127.0.0.1" || e.host === "::1" ? "localhost" : e.host,
        addr: [e.host],
        port: e.port,
        addr_type: "internal",
      })),
    };
    if (fields === null || fields === "") return full;
    const out: Record<string, unknown> = {};
    for (const f of fields.split(",")) if (f in full) out[f] = full[f];
    return out;
  }
}
