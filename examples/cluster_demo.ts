// Smart client handoffs on Redis Cluster, live: a real 3-primary redis cluster behind the
// ClusterMaintenanceSimulator, 16 workers under load, and a slot move (every slot of one primary
// to a node that joins: "remove-add") while the workers use the other primaries, then a read in
// every moved slot; run twice: with maintenance notifications on (SMIGRATING /
// SMIGRATED applied in place), and off (MOVED, ASK and topology refreshes only). Prints one
// table side by side (stdout), and a progress line a second while it runs (stderr).
//
//   deno task demo:cluster          (needs redis-server on the PATH)
import { RedisClusterClient } from "../src/cluster/mod.ts";
import { ClusterMaintenanceSimulator } from "../src/testing/mod.ts";
import { progress, type ProgressCounts } from "./_progress.ts";

const WORKERS = 16;
const COMMAND_TIMEOUT = 1000;
const PREFILL = 3000;

interface Run {
  label: string;
  slots: number;
  keysMoved: number;
  completed: number;
  failed: number;
  errors: Map<string, number>;
  before: { moved: number; ask: number };
  after: { moved: number; ask: number };
  /** ms the read in every moved slot took. */
  probeMs: number;
  /** Connections still open to the emptied node at the end. */
  emptiedOpen: number;
  /** ms from SMIGRATED until the client's table routed every moved slot to its new owner. */
  toNewOwner: number | undefined;
  refreshes: number;
  migrationMs: number;
}

function slotsOf(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(",").filter(Boolean)) {
    const [a, b] = part.split("-").map(Number);
    for (let s = a!; s <= (b ?? a)!; s++) out.push(s);
  }
  return out;
}

function count(list: { kind: string }[]): { moved: number; ask: number } {
  return {
    moved: list.filter((r) => r.kind === "MOVED").length,
    ask: list.filter((r) => r.kind === "ASK").length,
  };
}

async function scenario(on: boolean): Promise<Run> {
  let counts: ProgressCounts = { completed: 0, failed: 0 };
  const ticker = progress(on ? "notifications on" : "notifications off", () => counts);
  ticker.phase = "starting the cluster";
  const sim = await ClusterMaintenanceSimulator.start({ primaries: 3 }).catch((e) => {
    ticker.stop();
    throw e;
  });
  const client = new RedisClusterClient({
    nodes: sim.seeds,
    commandTimeout: COMMAND_TIMEOUT,
    maintenanceNotifications: { mode: on ? "auto" : "disabled" },
  });
  const run: Run = {
    label: on ? "notifications on" : "notifications off",
    slots: 0,
    keysMoved: 0,
    completed: 0,
    failed: 0,
    errors: new Map(),
    before: { moved: 0, ask: 0 },
    after: { moved: 0, ask: 0 },
    probeMs: 0,
    emptiedOpen: 0,
    toNewOwner: undefined,
    refreshes: 0,
    migrationMs: 0,
  };
  counts = run;
  try {
    ticker.phase = "connecting, prefill";
    await client.connect();
    // Data to migrate, so the move takes a while (ASK replies meanwhile).
    const fill = client.pipeline();
    for (let i = 0; i < PREFILL; i++) fill.set(`demo:fill:${i}`, "x");
    await fill.exec();
    ticker.phase = "load";
    const victim = sim.nodes().filter((n) => n.slots !== "").at(-1)!;
    const moving = slotsOf(victim.slots);
    run.slots = moving.length;
    // The workers' keys live on the primaries that stay: nothing tells the client about the
    // move but the notifications (a read in every moved slot follows it).
    const stay = sim.nodes().filter((n) => n.slots !== "" && n.index !== victim.index).flatMap((
      n,
    ) => slotsOf(n.slots));
    let stop = false;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      const tag = `{${tagFor(stay[(w * 977) % stay.length]!)}}`;
      let i = 0;
      while (!stop) {
        i++;
        try {
          if (i % 3 === 0) await client.incr(`${tag}demo:ctr:${w}`);
          else if (i % 3 === 1) await client.set(`${tag}demo:k:${w}`, String(i));
          else await client.get(`${tag}demo:k:${w}`);
          run.completed++;
        } catch (e) {
          run.failed++;
          const name = (e as Error).name;
          run.errors.set(name, (run.errors.get(name) ?? 0) + 1);
        }
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    // Poll the client's table: when does every moved slot route to the new owner?
    let routedAt: number | undefined;
    let target: string | undefined = undefined;
    const poll = setInterval(() => {
      if (routedAt !== undefined || target === undefined) return;
      if (moving.every((s) => client.nodeForSlot(s) === target)) routedAt = Date.now();
    }, 2);
    ticker.phase = "slot migration (remove-add)";
    const started = Date.now();
    const migration = sim.slotMigrate({
      effect: "remove-add",
      keysPerBatch: 20,
      pauseBetweenKeysMs: 2,
    });
    const smigrating = await sim.waitForEvent("SMIGRATING");
    const r = await migration;
    run.migrationMs = Date.now() - started;
    target = r.added ?? undefined;
    run.keysMoved = r.keys;
    const smigratedAt = sim.events().find((e) => e.seq === r.smigratedSeq)!.at;
    await new Promise((res) => setTimeout(res, 500));
    run.before = count(
      sim.redirects({ since: smigrating.at, slots: moving }).filter((x) => x.at < smigratedAt),
    );
    // Then a read in every moved slot.
    ticker.phase = "a read in every moved slot";
    const probeFrom = Date.now();
    await Promise.all(moving.map((s) => client.get(`{${tagFor(s)}}probe`)));
    run.probeMs = Date.now() - probeFrom;
    run.after = count(sim.redirects({ since: smigratedAt, slots: moving }));
    if (routedAt === undefined && moving.every((s) => client.nodeForSlot(s) === target)) {
      routedAt = Date.now();
    }
    clearInterval(poll);
    run.toNewOwner = routedAt === undefined ? undefined : Math.max(0, routedAt - smigratedAt);
    // (The proxies see a closed connection go within about 2 s.)
    ticker.phase = "closing moved connections";
    await new Promise((res) => setTimeout(res, 2500));
    run.emptiedOpen = sim.connections().filter((c) => r.emptied.includes(c.endpoint)).length;
    stop = true;
    await Promise.all(workers);
    run.refreshes = client.stats().refreshes;
  } finally {
    ticker.stop();
    await client.close();
    await sim.close();
  }
  return run;
}

// A hash tag per slot (the shortest decimal string hashing to it), for the probe.
const TAGS: string[] = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    table[i] = c;
  }
  const crc = (s: string) => {
    let c = 0;
    for (let i = 0; i < s.length; i++) {
      c = ((c << 8) ^ table[((c >> 8) ^ s.charCodeAt(i)) & 0xff]!) & 0xffff;
    }
    return c;
  };
  const out = new Array<string>(16384);
  let left = 16384;
  for (let i = 0; left > 0; i++) {
    const s = crc(String(i)) % 16384;
    if (out[s] === undefined) {
      out[s] = String(i);
      left--;
    }
  }
  return out;
})();

function tagFor(slot: number): string {
  return TAGS[slot]!;
}

console.log(
  `3-primary redis cluster behind proxies; ${WORKERS} workers; commandTimeout ${COMMAND_TIMEOUT} ms; ` +
    `${PREFILL} keys prefilled; remove-add: every slot of one primary to a node that joins ` +
    `(the workers use the other primaries), then a read in every moved slot\n`,
);
const runs: Run[] = [];
for (const on of [false, true]) {
  const run = await scenario(on);
  runs.push(run);
  console.log(`${run.label}: done (migration ${run.migrationMs} ms)`);
}
const [off, on] = runs as [Run, Run];
const ms = (v: number | undefined) => v === undefined ? "not before the reads' MOVED" : `${v} ms`;
const errs = (r: Run) =>
  r.errors.size === 0 ? "none" : [...r.errors].map(([k, v]) => `${v} ${k}`).join(", ");
const pair = (x: { moved: number; ask: number }) => `${x.moved} MOVED / ${x.ask} ASK`;
const rows: [string, string, string][] = [
  [
    "slots moved / keys migrated",
    `${off.slots} / ${off.keysMoved}`,
    `${on.slots} / ${on.keysMoved}`,
  ],
  ["redirects during the move (SMIGRATING to SMIGRATED)", pair(off.before), pair(on.before)],
  ["redirects after SMIGRATED (a read in every moved slot)", pair(off.after), pair(on.after)],
  [`time of those ${off.slots} reads`, `${off.probeMs} ms`, `${on.probeMs} ms`],
  [
    "SMIGRATED to every moved slot routed to the new owner (the reads start 500 ms after SMIGRATED)",
    ms(off.toNewOwner),
    ms(on.toNewOwner),
  ],
  ["connections to the emptied node at the end", `${off.emptiedOpen}`, `${on.emptiedOpen}`],
  ["topology refreshes", `${off.refreshes}`, `${on.refreshes}`],
  ["completed commands", `${off.completed}`, `${on.completed}`],
  ["failed commands", `${off.failed}`, `${on.failed}`],
  ["errors", errs(off), errs(on)],
];
console.log();
console.log("| | notifications off | notifications on |");
console.log("| --- | --- | --- |");
for (const [what, a, b] of rows) console.log(`| ${what} | ${a} | ${b} |`);
