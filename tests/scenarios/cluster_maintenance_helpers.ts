// Helpers of the cluster maintenance scenarios: a cluster client on the simulator recording its
// maintenance events, the slots of the load's keys, numbered shard channel traffic.
import assert from "node:assert/strict";
import { keySlot, RedisClusterClient } from "../../src/cluster/mod.ts";
import { after, before, beforeEach } from "node:test";
import {
  ClusterMaintenanceSimulator,
  type ClusterSimulatorOptions,
} from "../../src/testing/mod.ts";
import type { Logger } from "../../src/logger.ts";
import { waitFor } from "../_helpers/load.ts";
import { markLeakBaseline, sleep } from "../_helpers/leaks.ts";

/** Every slot of "1-3,7" style text. */
export function slotsOf(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(",").filter(Boolean)) {
    const [a, b] = part.split("-").map(Number);
    for (let s = a!; s <= (b ?? a)!; s++) out.push(s);
  }
  return out;
}

/** The slots the load's keys hash to (see tests/_helpers/load.ts). */
export function loadSlots(prefix: string, workers: number): number[] {
  const out = new Set<number>();
  for (let w = 0; w < workers; w++) {
    for (const k of [`${prefix}:ctr:${w}`, `${prefix}:k:${w}`, `${prefix}:h:${w}`]) {
      out.add(keySlot(k));
    }
  }
  return [...out];
}

export interface Observed {
  warnings: string[];
  applied: { seq: number; at: number }[];
  closedWindows: { seq: number; reason: string }[];
}

/** A cluster client on the simulator, recording its maintenance events and warnings. */
export function clusterClient(
  sim: ClusterMaintenanceSimulator,
  extra: Partial<ConstructorParameters<typeof RedisClusterClient>[0]> = {},
): { client: RedisClusterClient; seen: Observed } {
  const seen: Observed = { warnings: [], applied: [], closedWindows: [] };
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (m: string) => seen.warnings.push(m),
    error: (m: string) => seen.warnings.push(m),
  };
  const client = new RedisClusterClient({
    nodes: sim.seeds,
    commandTimeout: 2000,
    logger,
    ...extra,
  });
  client.addEventListener("maintenance", (e) => {
    const d = e.detail;
    if (d.type === "slot-delta" && d.phase === "applied") {
      seen.applied.push({ seq: d.seq!, at: Date.now() });
    }
    if (d.type === "window-closed") {
      seen.closedWindows.push({ seq: d.seq!, reason: String(d.reason) });
    }
  });
  return { client, seen };
}

/**
 * Numbered messages on a shard channel: `client` subscribes, `publisher` (the same client by
 * default) publishes.
 */
export async function shardTraffic(
  client: RedisClusterClient,
  channel: string,
  publisher: RedisClusterClient = client,
) {
  const received: number[] = [];
  const sub = await client.ssubscribe(channel, (m) => received.push(Number(m)));
  let sent = 0;
  let stop = false;
  const errors: string[] = [];
  const loop = (async () => {
    while (!stop) {
      try {
        await publisher.spublish(channel, String(sent));
        sent++;
      } catch (e) {
        errors.push(String(e));
      }
      if (sent % 10 === 0) await sleep(1);
    }
  })();
  return {
    async stop() {
      stop = true;
      await loop;
      await waitFor(() => received.length >= sent, 3000, `${sent} messages on ${channel}`);
      await sub.unsubscribe();
      return { received, sent, errors };
    },
  };
}

export function assertInOrder(r: { received: number[]; sent: number; errors: string[] }): void {
  assert.deepEqual(r.errors, []);
  assert.ok(r.sent > 0, "nothing was published");
  assert.deepEqual(
    r.received,
    Array.from({ length: r.sent }, (_, i) => i),
    "every message once, in order",
  );
}

/**
 * One simulator for the enclosing `describe`: started before its first test, closed after its
 * last, with the leak baseline marked before each test. The returned object stands for it.
 */
export function simulatorPerSuite(
  options: ClusterSimulatorOptions = { primaries: 3 },
): ClusterMaintenanceSimulator {
  let current: ClusterMaintenanceSimulator | undefined;
  beforeEach(markLeakBaseline);
  before(async () => {
    current = await ClusterMaintenanceSimulator.start(options);
  });
  after(async () => {
    await current?.close();
  });
  return new Proxy({} as ClusterMaintenanceSimulator, {
    get(_, key) {
      if (current === undefined) throw new Error("The simulator is not started yet");
      const v = Reflect.get(current, key, current);
      return typeof v === "function" ? v.bind(current) : v;
    },
  });
}
