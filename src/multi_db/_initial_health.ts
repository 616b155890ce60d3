// The multi-database client's start: the first health check of every database judged by the
// initialization policy; and two small rules of the client (idle checks, database identity).
import { endpointKey } from "../endpoint.ts";
import { ConnectionError } from "../errors.ts";
import type { DatabaseConfig, InitializationPolicy } from "./config.ts";
import { nodeKey } from "./config.ts";
import type { Database } from "./database.ts";
import type { HealthCheckResult } from "./health_check.ts";

/**
 * Runs the first health check of every database and resolves once enough are healthy for the
 * policy and none still being checked weighs more than the best healthy one; rejects with a
 * `ConnectionError` as soon as the policy can no longer be met.
 */
export function initialHealth(
  dbs: readonly Database[],
  policy: InitializationPolicy,
  check: (db: Database) => Promise<HealthCheckResult>,
): Promise<void> {
  const n = dbs.length;
  const need = policy === "all-available"
    ? n
    : policy === "majority-available"
    ? Math.floor(n / 2) + 1
    : 1;
  return new Promise<void>((resolve, reject) => {
    let healthy = 0;
    let unhealthy = 0;
    let done = false;
    const pending = new Set(dbs);
    const settle = () => {
      if (done) return;
      // Enough are healthy, and none still being checked weighs more than the best of them.
      const best = Math.max(...dbs.filter((d) => d.health === "healthy").map((d) => d.weight));
      if (healthy >= need && ![...pending].some((d) => d.weight > best)) {
        done = true;
        resolve();
      } else if (n - unhealthy < need) {
        done = true;
        const why = dbs.filter((d) => d.health === "unhealthy")
          .map((d) => `"${d.name}": ${d.healthError ?? "unhealthy"}`).join("; ");
        // Counted when the policy became impossible: others may still have been checked.
        const still = pending.size > 0 ? `, ${pending.size} not checked yet` : "";
        reject(
          new ConnectionError(
            `Cannot connect: the initialization policy "${policy}" needs ${need} of ${n} databases healthy, and ${unhealthy} ${
              unhealthy === 1 ? "is" : "are"
            } not (${healthy} healthy${still}; ${why})`,
          ),
        );
      }
    };
    for (const db of dbs) {
      check(db).then((r) => {
        pending.delete(db);
        if (r.healthy) healthy++;
        else unhealthy++;
        settle();
      });
    }
  });
}

/** Whether the periodic check of `db` is skipped: it is active, checked only when idle, busy. */
export function skipIdleCheck(
  db: Database,
  active: Database | undefined,
  interval: number,
  checkActive: "always" | "idle" | undefined,
): boolean {
  // With a client-side cache, a "served" read may have come from memory and proves nothing
  // about the server (a blackholed database would never be checked): check on every interval.
  return db === active && checkActive === "idle" &&
    db.clock.now() - db.lastSuccessAt < interval && db.client.cacheStats?.() === undefined;
}

/** What makes two databases the same: their endpoint (or cluster seed list). */
export function databaseKey(o: DatabaseConfig): string {
  if (o.nodes !== undefined) return `cluster(${[...o.nodes].map(nodeKey).sort().join(",")})`;
  let host = o.host;
  let port = o.port;
  if (o.url !== undefined) {
    try {
      const u = new URL(o.url);
      host ??= u.hostname.replace(/^\[|\]$/g, "") || undefined;
      port ??= u.port ? Number(u.port) : undefined;
    } catch {
      // resolveDatabaseConfig reports a bad URL.
    }
  }
  return `"${endpointKey({ host: host ?? "127.0.0.1", port: port ?? 6379 })}"`;
}
