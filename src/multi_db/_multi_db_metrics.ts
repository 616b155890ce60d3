// The multi-database client's own instruments: failovers (the shared geofailover name), circuit
// breaker states, health checks (defined here, so only the multi-db entry carries them).
import { type ClientMetrics, defineInstruments } from "../observability/metrics.ts";

defineInstruments({
  "redis.client.geofailover.failovers": {
    kind: "counter",
    unit: "{failover}",
    description: "Active database switches of the multi-database client",
  },
  "redis.client.multidb.circuit_breaker.state": {
    kind: "gauge",
    unit: "1",
    description: "Circuit breaker of each database: 0 closed, 1 half-open, 2 open",
  },
  "redis.client.multidb.health_checks": {
    kind: "counter",
    unit: "{check}",
    description: "Health checks run, by result",
  },
  "redis.client.multidb.health_check.duration": {
    kind: "histogram",
    unit: "s",
    description: "Duration of health checks",
  },
});

/** Wires the multi-database client's own instruments: switches and breaker states. */
export function multiDbMetrics(
  m: ClientMetrics,
  breakers: () => { database: string; state: string }[],
): void {
  if (!m.resiliency) return;
  m.on<{ from: string | null; to: string; reason: string }>("switch", (d) => {
    m.add("redis.client.geofailover.failovers", 1, {
      "db.client.geofailover.fail_from": d.from ?? undefined,
      "db.client.geofailover.fail_to": d.to,
      "db.client.geofailover.reason": d.reason,
    });
  });
  m.observe("redis.client.multidb.circuit_breaker.state", (r) => {
    for (const b of breakers()) {
      r.observe(
        b.state === "open" ? 2 : b.state === "half-open" ? 1 : 0,
        m.attributes({ "redis.client.multidb.database": b.database }),
      );
    }
  });
}

/** A health check of `database` ended after `ms`. */
export function healthChecked(
  m: ClientMetrics,
  database: string,
  healthy: boolean,
  ms: number,
): void {
  const a = {
    "redis.client.multidb.database": database,
    "redis.client.multidb.health_check.result": healthy ? "healthy" : "unhealthy",
  };
  m.add("redis.client.multidb.health_checks", 1, a);
  m.record("redis.client.multidb.health_check.duration", ms, a);
}
