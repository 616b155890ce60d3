// Concurrent workers issuing mixed commands back to back, for the maintenance scenarios.
// Every worker owns its keys, so the server-side counter must equal the INCRs acknowledged.
import assert from "node:assert/strict";
import type { ClientShell } from "../../mod.ts";

type RedisClient = ClientShell<object>;

export interface LoadStats {
  ok: number;
  failed: number;
  errors: string[];
  /** Acknowledged INCRs per worker. */
  incrs: number[];
  /** Completed commands per 100 ms bucket since start. */
  timeline: number[];
  startedAt: number;
}

export interface Load {
  stats: LoadStats;
  /** Stops the workers and waits for them. */
  stop(): Promise<LoadStats>;
}

/** Starts `workers` loops of INCR, SET/GET, HSET and small pipelines on `client`. */
export function startLoad(client: RedisClient, workers: number, prefix = "load"): Load {
  const stats: LoadStats = {
    ok: 0,
    failed: 0,
    errors: [],
    incrs: new Array(workers).fill(0),
    timeline: [],
    startedAt: Date.now(),
  };
  let stopped = false;
  const tick = (n: number) => {
    stats.ok += n;
    const b = Math.floor((Date.now() - stats.startedAt) / 100);
    stats.timeline[b] = (stats.timeline[b] ?? 0) + n;
  };
  const fail = (e: unknown) => {
    stats.failed++;
    if (stats.errors.length < 20) stats.errors.push(String(e));
  };
  const loops = Array.from({ length: workers }, async (_, w) => {
    const ctr = `${prefix}:ctr:${w}`;
    const key = `${prefix}:k:${w}`;
    const hash = `${prefix}:h:${w}`;
    let i = 0;
    while (!stopped) {
      i++;
      try {
        switch (i % 4) {
          case 0:
            await client.incr(ctr);
            stats.incrs[w]!++;
            tick(1);
            break;
          case 1: {
            await client.set(key, String(i));
            const v = await client.get(key);
            assert.equal(v, String(i), "a GET returned another command's reply");
            tick(2);
            break;
          }
          case 2:
            await client.hset(hash, { f: String(i) });
            tick(1);
            break;
          case 3: {
            const r = await client.pipeline().incr(ctr).get(key).exec();
            if (r[0] instanceof Error) throw r[0];
            if (r[1] instanceof Error) throw r[1];
            stats.incrs[w]!++;
            tick(2);
            break;
          }
        }
      } catch (e) {
        fail(e);
      }
    }
  });
  return {
    stats,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return stats;
    },
  };
}

/** Asserts that every counter equals the INCRs its worker saw acknowledged. */
export async function assertCounters(
  client: RedisClient,
  stats: LoadStats,
  prefix = "load",
): Promise<void> {
  const keys = stats.incrs.map((_, w) => `${prefix}:ctr:${w}`);
  const values = await client.mget(...keys);
  const counters = values.map((v) => Number(v ?? 0));
  assert.deepEqual(counters, stats.incrs, "a counter differs from its acknowledged INCRs");
}

/** Waits until `pred()` holds, polling every 10 ms, or fails after `ms`. */
export async function waitFor(pred: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits for the first health check of every database of a multi-db client. Until the others are
 * known healthy, a lost connection of the active one has it checked at once, and that check can
 * switch before its breaker does: a test of the breaker waits for this first.
 */
export function allHealthy(
  client: { databases(): readonly { health: string }[] },
  ms = 3000,
): Promise<void> {
  return waitFor(
    () => client.databases().every((d) => d.health === "healthy"),
    ms,
    "every database's first health check",
  );
}
