// The cluster client's own instruments: redirections, topology refreshes and changes, SMIGRATED
// applied, shard-subscription moves and takeovers (defined here, so only the cluster entry carries
// them).
import { type ClientMetrics, defineInstruments } from "../observability/metrics.ts";
import type { ClusterStats } from "./cluster_client.ts";

defineInstruments({
  "redis.client.cluster.redirections": {
    kind: "ocounter",
    unit: "{redirection}",
    description: "MOVED and ASK replies followed, TRYAGAIN/CLUSTERDOWN retried",
  },
  "redis.client.cluster.topology.refreshes": {
    kind: "ocounter",
    unit: "{refresh}",
    description: "Topology refreshes completed",
  },
  "redis.client.cluster.topology.changes": {
    kind: "counter",
    unit: "{change}",
    description: "Views adopted that changed something, by cause",
  },
  "redis.client.cluster.slots_moved": {
    kind: "counter",
    unit: "{slot}",
    description: "Slots that changed owner in adopted views, by cause",
  },
  "redis.client.cluster.smigrated.duration": {
    kind: "histogram",
    unit: "s",
    description: "Time to apply an SMIGRATED notification to the slot table",
  },
  "redis.client.pubsub.shard_moves": {
    kind: "ocounter",
    unit: "{subscription}",
    description: "Shard subscriptions opened ahead on the node importing their slot",
  },
  "redis.client.pubsub.takeovers": {
    kind: "ocounter",
    unit: "{subscription}",
    description: "Shard subscriptions taken over by their copy on a replica",
  },
});

/** Wires a cluster client's own instruments: its events and its counters. */
export function clusterMetrics(m: ClientMetrics, stats: () => ClusterStats): void {
  if (m.resiliency) {
    m.on<{ reason: string; slotsMoved: number }>("topology", (d) => {
      const a = { "redis.client.cluster.topology.reason": d.reason };
      m.add("redis.client.cluster.topology.changes", 1, a);
      if (d.slotsMoved > 0) m.add("redis.client.cluster.slots_moved", d.slotsMoved, a);
    });
    m.observe("redis.client.cluster.redirections", (r) => {
      const s = stats();
      r.observe(s.moved, m.attributes({ "redis.client.redirection.kind": "moved" }));
      r.observe(s.ask, m.attributes({ "redis.client.redirection.kind": "ask" }));
      r.observe(s.refused, m.attributes({ "redis.client.redirection.kind": "retry" }));
    });
    m.observe("redis.client.cluster.topology.refreshes", (r) => {
      r.observe(stats().refreshes, m.attributes({}));
    });
  }
  if (m.pubsub) {
    m.observe("redis.client.pubsub.shard_moves", (r) => {
      r.observe(stats().subscribedAhead, m.attributes({}));
    });
    m.observe("redis.client.pubsub.takeovers", (r) => {
      r.observe(stats().shadowTakeovers, m.attributes({}));
    });
  }
}

/** An SMIGRATED notification applied: `slots` moved, in `ms`. */
export function smigratedApplied(m: ClientMetrics, slots: number, ms: number): void {
  m.record("redis.client.cluster.smigrated.duration", ms, { "redis.client.cluster.slots": slots });
}
