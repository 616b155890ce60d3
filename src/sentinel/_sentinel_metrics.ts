// The sentinel client's own instrument and attributes: switches, and the endpoint measurements
// name (the node the sentinels chose), defined here so only the sentinel entry carries them.
import { type ClientMetrics, defineInstruments } from "../observability/metrics.ts";
import type { Endpoint } from "../endpoint.ts";

defineInstruments({
  "redis.client.sentinel.switches": {
    kind: "counter",
    unit: "{switch}",
    description: "Moves of the data connections to another node named by the sentinels",
  },
});

/** Follows the sentinel client's `switch` events: the endpoint measured, and the switches. */
export function sentinelMetrics(m: ClientMetrics): void {
  m.on<{ from?: Endpoint; to: Endpoint; role: string; reason: string }>("switch", (d) => {
    m.setEndpoint(d.to, m.db);
    // The first node found is no switch.
    if (d.from === undefined || !m.resiliency) return;
    m.add("redis.client.sentinel.switches", 1, {
      "redis.client.sentinel.from": `${d.from.host}:${d.from.port}`,
      "redis.client.sentinel.to": `${d.to.host}:${d.to.port}`,
      "redis.client.sentinel.role": d.role,
      "redis.client.sentinel.reason": d.reason,
    });
  });
}
