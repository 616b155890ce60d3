/**
 * The sentinel client: the client shell over one executor that dials the node the sentinels
 * name, and moves when they name another.
 *
 * @module
 */

import { ClientEvents, ClientShell } from "../client/client_shell.ts";
import type { ClientMaintenanceState } from "../client/maintenance_support.ts";
import type { RedisClientEventMap } from "../client/events.ts";
import type { HostPort } from "../maintenance/endpoint.ts";
import { type RedisSentinelClientOptions, resolveSentinelOptions } from "./options.ts";
import { SentinelCore, type SentinelSwitchDetail } from "./_sentinel_core.ts";

export type { SentinelSwitchDetail };

/**
 * The events of a `RedisSentinelClient`: the standalone client's and its own.
 *
 * @example
 * ```ts ignore
 * import type { RedisSentinelClientEventMap } from "@edge/redis/sentinel";
 * const onSwitch = (e: RedisSentinelClientEventMap["switch"]) => console.log(e.detail.to);
 * ```
 */
export interface RedisSentinelClientEventMap extends RedisClientEventMap {
  /** The data connections moved to another node. */
  switch: CustomEvent<SentinelSwitchDetail>;
  /** A sentinel was learnt from the others. */
  "sentinel-added": CustomEvent<HostPort>;
}

/** Names of the sentinel client's events: the standalone ones and its own. */
export type RedisSentinelClientEventName = keyof RedisSentinelClientEventMap;

/**
 * A Redis client that finds its master (or a replica) through Redis Sentinel and follows
 * failovers: it asks the sentinels in turn, checks the node they name with `ROLE`, listens to
 * one sentinel's events (moving to another if it goes away) and checks periodically. On a
 * switch the data connections move like a maintenance handoff: work not yet written waits and
 * goes to the new master, work written to the old one fails with `ConnectionError` if it stays
 * unanswered; nothing is sent twice. A write refused by a demoted master (`READONLY`) starts a
 * rediscovery and is sent to the new master once confirmed, never silently to a replica.
 *
 * It has the standalone client's typed commands, `sendCommand`, `pipeline()`, `multi()`,
 * `watch()` and the subscribe family; subscriptions follow the master.
 *
 * Events (`addEventListener`): the standalone ones, `switch` ({@linkcode SentinelSwitchDetail}),
 * `sentinel-added` (`{ host, port }`), and `error` for failures no caller sees.
 *
 * @example
 * ```ts ignore
 * import { RedisSentinelClient } from "@edge/redis/sentinel";
 * await using client = new RedisSentinelClient({
 *   masterName: "mymaster",
 *   sentinels: ["redis://127.0.0.1:26379", "redis://127.0.0.1:26380"],
 * });
 * client.addEventListener("switch", (e) => console.log("now on", e.detail.to));
 * await client.set("k", "v");
 * ```
 */
export class RedisSentinelClient extends ClientShell<RedisSentinelClientEventMap> {
  readonly #core: SentinelCore;
  readonly #role: "master" | "replica";

  /**
   * Creates a client. It asks the sentinels on the first command, or on `connect()`.
   *
   * @param options The master's name, the sentinels, and the data connections' options.
   */
  constructor(options: RedisSentinelClientOptions) {
    const s = resolveSentinelOptions(options);
    const events = new ClientEvents(options, "sentinel");
    const core = new SentinelCore(s, options, events);
    super(core, events, core.cache);
    this.#core = core;
    this.#role = s.role;
  }

  /** Whether this client reads from a replica (`role: "replica"`) or uses the master. */
  get role(): "master" | "replica" {
    return this.#role;
  }

  /** The node the data connections go to; `undefined` before the first discovery. */
  get endpoint(): HostPort | undefined {
    const t = this.#core.target;
    return t ? { host: t.host, port: t.port } : undefined;
  }

  /** The sentinels known so far: the configured ones and the ones learnt. */
  get sentinels(): HostPort[] {
    return this.#core.sentinels;
  }

  /**
   * The maintenance state of the data connections.
   *
   * @returns A snapshot, or `undefined` when maintenance notifications are disabled.
   *
   * @example
   * ```ts ignore
   * console.log(client.maintenanceState()?.endpoints);
   * ```
   */
  maintenanceState(): ClientMaintenanceState | undefined {
    return this.#core.maintenanceState();
  }
}
