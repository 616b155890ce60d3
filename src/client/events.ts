/**
 * The events of the clients, typed: each client kind has an event map (event name -> the
 * `CustomEvent` it dispatches), so a listener's `detail` needs no cast and a misspelt event
 * name does not compile.
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";

/**
 * The `detail` of a `reconnecting` event: the connection was lost and the next attempt is
 * scheduled.
 *
 * @example
 * ```ts ignore
 * client.addEventListener("reconnecting", (e) => {
 *   console.log(`attempt ${e.detail.attempt} in ${e.detail.delay} ms`, e.detail.error?.message);
 * });
 * ```
 */
export interface ReconnectingDetail {
  /** Milliseconds until the next attempt. */
  delay: number;
  /** The number of the next attempt, from 1. */
  attempt: number;
  /** Why the connection was lost, if known. */
  error: Error | undefined;
}

/**
 * The `detail` of a `handoff` event: a connection moved to another endpoint during
 * maintenance (MOVING), without failing a command.
 *
 * @example
 * ```ts ignore
 * client.addEventListener("handoff", (e) => {
 *   console.log(`${e.detail.from.host} -> ${e.detail.to.host}, ${e.detail.held} commands held`);
 * });
 * ```
 */
export interface HandoffDetail {
  /** The endpoint left. */
  from: Endpoint;
  /** The endpoint of the replacement. */
  to: Endpoint;
  /** Milliseconds spent waiting for written commands to be answered. */
  drainMs: number;
  /** Commands held in the backlog while draining, then flushed to the replacement. */
  held: number;
  /** Whether the socket was replaced (always `true` in an event). */
  replaced: boolean;
  /** What caused it, e.g. `MOVING 12`. */
  reason: string;
}

/**
 * The `detail` of a `maintenance` event: a decision of the maintenance controller, with
 * connections named by their labels (the full shapes are `MaintenanceDecision` in
 * `@edge/redis/maintenance`). Relax and unrelax decisions are not reported.
 *
 * @example
 * ```ts ignore
 * client.addEventListener("maintenance", (e) => {
 *   if (e.detail.type === "handoff") console.log(`MOVING ${e.detail.seq} to`, e.detail.target);
 * });
 * ```
 */
export interface MaintenanceEventDetail {
  /** What was decided. */
  type:
    | "window-opened"
    | "window-closed"
    | "handoff"
    | "handoff-retarget"
    | "reconnect-configured"
    | "slot-delta"
    | "malformed";
  /** Sequence number of the notification, where it has one. */
  seq?: number;
  /** The endpoint that moves (`handoff`, `handoff-retarget`, `reconnect-configured`). */
  endpoint?: string;
  /** Where it moves (`handoff`, `handoff-retarget`). */
  target?: Endpoint;
  /** The label of the connection concerned (`slot-delta`, `malformed`). */
  connection?: string;
  /** The labels of the connections retired (`handoff`, `handoff-retarget`, `reconnect-configured`). */
  retire?: string[];
  /** Why a notification was dropped (`malformed`). */
  reason?: string;
  /** The other fields of the decision. */
  [field: string]: unknown;
}

/**
 * The events of a `RedisClient`, by name.
 *
 * @example
 * ```ts ignore
 * import type { RedisClientEventMap } from "@edge/redis";
 * const onReady = (e: RedisClientEventMap["ready"]) => console.log("ready on", e.detail.host);
 * client.addEventListener("ready", onReady);
 * ```
 */
export interface RedisClientEventMap {
  /** A socket of the shared connection opened; its handshake follows. */
  connect: CustomEvent<Endpoint>;
  /** The shared connection is ready (handshake done, session restored). */
  ready: CustomEvent<Endpoint>;
  /** The shared connection was lost; the next attempt is scheduled. */
  reconnecting: CustomEvent<ReconnectingDetail>;
  /** A connection error, or an exception of a subscription listener. */
  error: CustomEvent<Error>;
  /** The client closed (every socket and timer released). */
  close: CustomEvent<undefined>;
  /** A maintenance notification was acted on (maintenance notifications on). */
  maintenance: CustomEvent<MaintenanceEventDetail>;
  /** A connection moved to another endpoint (MOVING). */
  handoff: CustomEvent<HandoffDetail>;
}

/**
 * A listener for the event `E`: a function or an object with `handleEvent`, as for any
 * `EventTarget`.
 *
 * @example
 * ```ts ignore
 * import type { RedisClientEventMap, TypedEventListener } from "@edge/redis";
 * const log: TypedEventListener<RedisClientEventMap["error"]> = (e) => console.error(e.detail);
 * ```
 */
export type TypedEventListener<E extends Event> =
  | ((event: E) => void)
  | { handleEvent(event: E): void };

/**
 * The options of `removeEventListener`, as for any `EventTarget`. Declared here, not taken from
 * the DOM library, so that the declarations compile with `lib: ["esnext"]` and `@types/node`.
 *
 * @example
 * ```ts ignore
 * import type { ListenerOptions } from "@edge/redis";
 * const options: ListenerOptions = { capture: false };
 * client.removeEventListener("error", onError, options);
 * ```
 */
export interface ListenerOptions {
  /** Whether the listener was added for the capture phase. @default {false} */
  capture?: boolean;
}

/**
 * The options of `addEventListener`, as for any `EventTarget`: `once`, `passive`, and a `signal`
 * that removes the listener when it aborts.
 *
 * @example
 * ```ts ignore
 * import type { AddListenerOptions } from "@edge/redis";
 * const stop = new AbortController();
 * const options: AddListenerOptions = { once: true, signal: stop.signal };
 * client.addEventListener("ready", () => console.log("ready"), options);
 * ```
 */
export interface AddListenerOptions extends ListenerOptions {
  /** Removes the listener after its first call. @default {false} */
  once?: boolean;
  /** Promises not to call `preventDefault()`. @default {false} */
  passive?: boolean;
  /** Removes the listener when this signal aborts. */
  signal?: AbortSignal;
}
