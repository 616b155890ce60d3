/**
 * The standalone client.
 *
 * @module
 */

import type { ClientMaintenanceState } from "./maintenance_support.ts";
import { ClientEvents, ClientShell } from "./client_shell.ts";
import { ExecutorCore } from "./executor_core.ts";
import { clientOptions, type RedisClientOptions } from "./options.ts";
import type { RedisClientEventMap } from "./events.ts";
import { WatchSession } from "./watch_session.ts";

export { WatchSession };
export type { ScanIteratorOptions, SendCommandOptions } from "./client_shell.ts";

/** Names of the client's events (the keys of {@linkcode RedisClientEventMap}). */
export type RedisClientEventName = keyof RedisClientEventMap;

/**
 * A Redis client for one standalone server (or one proxy endpoint). All typed command
 * methods share one multiplexed connection with automatic pipelining; blocking commands and
 * `WATCH` sessions use a small pool of exclusive connections.
 *
 * Events (`addEventListener`): `connect`, `ready`, `reconnecting`, `error`, `close`, and with
 * maintenance notifications `maintenance` and `handoff`; each a `CustomEvent` with a `detail`,
 * typed by {@linkcode RedisClientEventMap}.
 *
 * @typeParam Events The event map: {@linkcode RedisClientEventMap}, or the extension of it of a
 *   client kind built on this one.
 *
 * @example
 * ```ts ignore
 * import { RedisClient } from "@edge/redis";
 * await using client = new RedisClient({ url: "redis://127.0.0.1:6379" });
 * await client.set("greeting", "hello", { ex: 60 });
 * console.log(await client.get("greeting")); // "hello"
 * const [a, b] = await client.pipeline().incr("n").incr("n").exec();
 * ```
 */
export class RedisClient<Events extends RedisClientEventMap = RedisClientEventMap>
  extends ClientShell<Events> {
  readonly #core: ExecutorCore;

  /**
   * Creates a client. It connects lazily on the first command, or on `connect()`.
   *
   * @param url `redis://...`, `rediss://...` or `host:port`: the same as the `url` option.
   * @param options The other options (fields given here override the URL's).
   *
   * @example
   * ```ts ignore
   * const client = new RedisClient("redis://127.0.0.1:6380/1", { commandTimeout: 2000 });
   * ```
   */
  constructor(url: string, options?: Omit<RedisClientOptions, "url">);
  /**
   * Creates a client. It connects lazily on the first command, or on `connect()`.
   *
   * @param options The options; defaults connect to `redis://127.0.0.1:6379`.
   */
  constructor(options?: RedisClientOptions);
  constructor(
    urlOrOptions: string | RedisClientOptions = {},
    options?: Omit<RedisClientOptions, "url">,
  ) {
    const resolved = clientOptions(urlOrOptions, options);
    const events = new ClientEvents(resolved);
    const core = new ExecutorCore(resolved, events, { countErrors: true });
    super(core, events, core.cache);
    this.#core = core;
  }

  /**
   * The maintenance state: open windows, relaxed connections and their effective timeouts.
   *
   * @returns A snapshot, or `undefined` when maintenance notifications are disabled.
   *
   * @example
   * ```ts ignore
   * const state = client.maintenanceState();
   * console.log(state?.endpoints); // open MOVING windows
   * ```
   */
  maintenanceState(): ClientMaintenanceState | undefined {
    return this.#core.maintenanceState();
  }
}
