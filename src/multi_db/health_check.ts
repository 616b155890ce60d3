/**
 * Health checks of the multi-database client: the strategy type, the PING strategy, and how
 * probes are run and judged (`all`, `any`, `majority`).
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";
import { type Clock, systemClock } from "../_clock.ts";
import type { DatabaseClient } from "./database_client.ts";

/**
 * How the probes of one health check are judged.
 *
 * @example
 * ```ts
 * import type { HealthCheckPolicy } from "@edge/redis/multi-db";
 * const lenient: HealthCheckPolicy = "majority";
 * ```
 */
export type HealthCheckPolicy = "all" | "any" | "majority";

/**
 * What a health check strategy is given for one probe.
 *
 * @example
 * ```ts
 * import type { HealthCheckTarget } from "@edge/redis/multi-db";
 * const describe = (t: HealthCheckTarget) => `${t.database} within ${t.timeout} ms`;
 * ```
 */
export interface HealthCheckTarget {
  /** The database's name (its endpoint unless named). */
  database: string;
  /** Host and port of the database, when it has one endpoint. */
  endpoint: Endpoint | undefined;
  /** The database's client. */
  client: DatabaseClient;
  /** The probe's time limit, in ms; the probe fails when it passes. */
  timeout: number;
  /** Aborted when the time limit passes or the client closes. */
  signal: AbortSignal;
}

/**
 * A health check: resolves `true` when the database is healthy. A rejection, `false`, or no
 * answer within the timeout is a failed probe.
 *
 * @example A custom check
 * ```ts
 * import type { HealthCheckStrategy } from "@edge/redis/multi-db";
 * const check: HealthCheckStrategy = async ({ client }) =>
 *   (await client.sendCommand(["DBSIZE"])) !== null;
 * ```
 */
export type HealthCheckStrategy = (target: HealthCheckTarget) => Promise<boolean>;

/**
 * The default health check: `PING` answered `PONG`. A server still loading its data answers
 * `LOADING`: unhealthy.
 *
 * @param target The database.
 * @returns Whether it answered `PONG`.
 *
 * @example
 * ```ts
 * import { MultiDbClient, pingHealthCheck } from "@edge/redis/multi-db";
 * const client = new MultiDbClient({
 *   databases: [{ url: "redis://127.0.0.1:6379", healthCheck: pingHealthCheck }],
 * });
 * await client.close();
 * ```
 */
export async function pingHealthCheck(target: HealthCheckTarget): Promise<boolean> {
  // A `LOADING` (or any other) error reply rejects: a failed probe, its message the reason.
  const reply = await target.client.sendCommand(["PING"], { timeout: target.timeout });
  return reply === "PONG";
}

/**
 * Whether the probes seen so far decide the check: `true` healthy, `false` unhealthy,
 * `undefined` undecided.
 *
 * @param policy `all` (every probe passes), `any` (one passes), `majority` (more than half pass).
 * @param probes The number of probes of the check.
 * @param passed Probes passed so far.
 * @param failed Probes failed so far.
 * @returns The decision, or `undefined` while it depends on the probes still to run.
 *
 * @example
 * ```ts
 * import { healthPolicyDecision } from "@edge/redis/multi-db";
 * console.log(healthPolicyDecision("majority", 3, 2, 0)); // true
 * console.log(healthPolicyDecision("all", 3, 2, 0)); // undefined
 * ```
 */
export function healthPolicyDecision(
  policy: HealthCheckPolicy,
  probes: number,
  passed: number,
  failed: number,
): boolean | undefined {
  switch (policy) {
    case "all":
      if (failed > 0) return false;
      return passed >= probes ? true : undefined;
    case "any":
      if (passed > 0) return true;
      return failed >= probes ? false : undefined;
    case "majority": {
      const need = Math.floor(probes / 2) + 1;
      if (passed >= need) return true;
      return failed > probes - need ? false : undefined;
    }
  }
}

/**
 * Settings of one health check run.
 *
 * @example
 * ```ts
 * import type { ProbeSettings } from "@edge/redis/multi-db";
 * const s: ProbeSettings = { probes: 3, probeDelay: 500, timeout: 1000, policy: "all" };
 * ```
 */
export interface ProbeSettings {
  /** Number of probes. */
  probes: number;
  /** Delay between probes, in ms. */
  probeDelay: number;
  /** Time limit of each probe, in ms. */
  timeout: number;
  /** How the probes are judged. */
  policy: HealthCheckPolicy;
}

/**
 * The result of one health check run.
 *
 * @example
 * ```ts
 * import type { HealthCheckResult } from "@edge/redis/multi-db";
 * const down: HealthCheckResult = { healthy: false, error: "no answer within 1000 ms" };
 * ```
 */
export interface HealthCheckResult {
  /** The verdict. */
  healthy: boolean;
  /** Why the last failed probe failed, when one did. */
  error: string | undefined;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Internal: Runs probes of `strategy` until the policy decides. `signal` aborts the run
 * (the client closed): it resolves unhealthy at once.
 */
export async function runHealthCheck(
  strategy: HealthCheckStrategy,
  target: Omit<HealthCheckTarget, "signal" | "timeout">,
  settings: ProbeSettings,
  signal: AbortSignal,
  clock: Pick<Clock, "setTimer" | "clearTimer"> = systemClock,
  firstPassDecides = false,
): Promise<HealthCheckResult> {
  let passed = 0;
  let failed = 0;
  let error: string | undefined;
  for (let i = 0; i < settings.probes; i++) {
    if (signal.aborted) return { healthy: false, error: "the client is closed" };
    if (i > 0 && settings.probeDelay > 0) await delay(settings.probeDelay, signal, clock);
    const r = await probe(strategy, target, settings.timeout, signal, clock);
    if (r === true) passed++;
    else {
      failed++;
      error = r === false ? "the check answered unhealthy" : r;
    }
    const d = firstPassDecides && r === true
      ? true
      : healthPolicyDecision(settings.policy, settings.probes, passed, failed);
    if (d !== undefined) return { healthy: d, error: d ? undefined : error };
  }
  return { healthy: false, error };
}

/** One probe: `true`, `false`, or the failure's description. */
function probe(
  strategy: HealthCheckStrategy,
  target: Omit<HealthCheckTarget, "signal" | "timeout">,
  timeout: number,
  outer: AbortSignal,
  clock: Pick<Clock, "setTimer" | "clearTimer">,
): Promise<boolean | string> {
  const ac = new AbortController();
  const onAbort = () => ac.abort(outer.reason);
  outer.addEventListener("abort", onAbort, { once: true });
  return new Promise<boolean | string>((resolve) => {
    let done = false;
    const finish = (v: boolean | string) => {
      if (done) return;
      done = true;
      clock.clearTimer(timer);
      outer.removeEventListener("abort", onAbort);
      if (!ac.signal.aborted) ac.abort();
      resolve(v);
    };
    const timer = timeout > 0
      ? clock.setTimer(() => finish(`no answer within ${timeout} ms`), timeout)
      : undefined;
    ac.signal.addEventListener("abort", () => finish("the check was aborted"), { once: true });
    let p: Promise<boolean>;
    try {
      p = Promise.resolve(strategy({ ...target, timeout, signal: ac.signal }));
    } catch (e) {
      finish(describe(e));
      return;
    }
    p.then((ok) => finish(ok === true), (e) => finish(describe(e)));
  });
}

function delay(
  ms: number,
  signal: AbortSignal,
  clock: Pick<Clock, "setTimer" | "clearTimer">,
): Promise<void> {
  return new Promise((resolve) => {
    const t = clock.setTimer(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clock.clearTimer(t);
      resolve();
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
