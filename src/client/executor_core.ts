/**
 * The core of a client kind with one endpoint at a time: one {@linkcode NodeExecutor} (with its
 * maintenance support and client-side cache tracking) behind the client shell. The standalone
 * client is the shell over this core; the sentinel client points the same core's executor at
 * the node the sentinels name.
 *
 * @module
 */

import type { Transform } from "../commands/command_runner.ts";
import { type Logger, silentLogger } from "../logger.ts";
import type { RedisArgument } from "../resp/types.ts";
import { defaultConnector } from "../transport/default.ts";
import type { ClientSideCache } from "../cache/client_side_cache.ts";
import type { TrackingSession } from "../cache/tracking_session.ts";
import type { Endpoint } from "../connection/connection.ts";
import type { ClientCore, ClientEvents, SendCommandOptions } from "./client_shell.ts";
import {
  type RedisClientOptions,
  resolveClientOptions,
  type ResolvedClientOptions,
} from "./options.ts";
import { type ClientMaintenanceState, MaintenanceSupport } from "./maintenance_support.ts";
import { type GroupCommand, type NodeEventName, NodeExecutor } from "./node_executor.ts";
import type { PubSubListener, SubscriptionKind } from "./subscription.ts";
import type { WatchSession } from "./watch_session.ts";

/** What a kind built on the executor core changes about it (the sentinel client). */
export interface ExecutorCoreHooks {
  /** The endpoint the executor starts with (the sentinel client: none dials before discovery). */
  endpoint?: Endpoint;
  /** Sees every event the executor and the maintenance support emit, before the client does. */
  onEvent?: (name: string, detail: unknown) => void;
  /**
   * Nothing above the executor retries or rejects a command (the standalone client): its
   * connection counts the errors its callers receive (see `ClientCore.countsErrors`).
   */
  countErrors?: boolean;
}

/**
 * One executor as a {@linkcode ClientCore}: every command, transaction, WATCH session and
 * subscription goes to its one endpoint.
 *
 * @example
 * ```ts ignore
 * const events = new ClientEvents();
 * const core = new ExecutorCore({ url: "redis://127.0.0.1:6379" }, events);
 * await core.run(["PING"], undefined, 0);
 * ```
 */
export class ExecutorCore implements ClientCore {
  /** The resolved options. */
  readonly options: ResolvedClientOptions;
  /** The executor. */
  readonly node: NodeExecutor;
  /** The client-side cache, when the `clientSideCache` option is on. */
  readonly cache: ClientSideCache | undefined;
  /** The connection counts the errors of commands sent with `FLAG_COUNTED`. */
  readonly countsErrors: boolean;
  readonly #maintenance: MaintenanceSupport | undefined;
  readonly #tracking: TrackingSession | undefined;

  /**
   * Builds the executor for `options`.
   *
   * @param options The client options.
   * @param events Where the executor's events go.
   * @param hooks Changes of a kind built on this core.
   * @throws {TypeError} Bad options, or maintenance notifications forced on RESP2.
   */
  constructor(options: RedisClientOptions, events: ClientEvents, hooks: ExecutorCoreHooks = {}) {
    const o = this.options = resolveClientOptions(options);
    const logger: Logger = options.logger ?? silentLogger;
    const onEvent = hooks.onEvent;
    const emit = onEvent === undefined
      ? (name: string, detail: unknown) => events.emit(name, detail)
      : (name: string, detail: unknown) => {
        onEvent(name, detail);
        events.emit(name, detail);
      };
    const mode = options.maintenanceNotifications?.mode ?? "auto";
    if (mode === "enabled" && o.protocol !== 3) {
      throw new TypeError(
        'Cannot enable maintenance notifications with protocol 2: they need RESP3 (set protocol: 3 or mode: "auto")',
      );
    }
    const metrics = events.metrics;
    this.#maintenance = mode !== "disabled" && o.protocol === 3
      ? new MaintenanceSupport(options.maintenanceNotifications ?? {}, { logger, emit, metrics })
      : undefined;
    this.cache = o.clientSideCache?._create({ logger, clock: options.clock });
    this.#tracking = this.cache?.tracking(o.protocol);
    this.countsErrors = hooks.countErrors === true && metrics?.resiliency === true;
    this.node = new NodeExecutor({
      endpoint: hooks.endpoint ?? { host: o.host, port: o.port },
      settings: o,
      connector: options.connector ?? defaultConnector,
      logger,
      clock: options.clock,
      maintenance: this.#maintenance,
      emit: emit as (name: NodeEventName, detail: unknown) => void,
      onListenerError: (error) => emit("error", error),
      ...this.#tracking?.executorHooks(undefined),
      metrics,
      onCommandError: this.countsErrors ? metrics!.commandError : undefined,
    });
    this.#tracking?.attach(this.node);
    if (metrics !== undefined) {
      metrics.setEndpoint(hooks.endpoint ?? { host: o.host, port: o.port }, o.db);
      metrics.source({ connections: () => this.node.closed ? [] : [this.node.sample()] });
    }
  }

  /**
   * The maintenance state: open windows, relaxed connections and their effective timeouts.
   *
   * @returns A snapshot, or `undefined` when maintenance notifications are disabled.
   */
  maintenanceState(): ClientMaintenanceState | undefined {
    return this.#maintenance?.snapshot(this.options.commandTimeout);
  }

  /** Runs one command on the executor. */
  run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    return this.node.run(args, transform, flags, blockMs);
  }

  /** Runs one raw command with its timeout and signal. */
  send(args: RedisArgument[], flags: number, options: SendCommandOptions): Promise<unknown> {
    const { blockMs, timeout, signal } = options;
    return blockMs !== undefined
      ? this.node.runExclusive(args, undefined, flags, blockMs, signal)
      : this.node.run(args, undefined, flags, undefined, timeout, signal);
  }

  /** Queues a transaction on the shared connection. */
  sendAll(commands: GroupCommand[]): Promise<unknown>[] {
    return this.node.sendAll(commands);
  }

  /** Borrows an exclusive connection and watches `keys` on it. */
  watch(keys: RedisArgument[]): Promise<WatchSession> {
    return this.node.watch(keys);
  }

  /** Subscribes on the executor. */
  subscribe(
    kind: SubscriptionKind,
    names: string[],
    listener: PubSubListener<string> | PubSubListener<Uint8Array> | undefined,
    binary: boolean,
  ): Promise<unknown> {
    return this.node.subscribe(
      kind,
      names,
      listener as PubSubListener<string>,
      this.options.maxBufferedMessages,
      binary,
    );
  }

  /** Connects the shared connection. */
  connect(options?: { signal?: AbortSignal }): Promise<void> {
    return this.node.connect(options);
  }

  /** Closes the executor, then the maintenance support. */
  async close(): Promise<void> {
    this.#maintenance?.close();
    this.#tracking?.close();
    await this.node.close();
    this.#maintenance?.close();
  }

  /** Rejects everything queued or in flight and closes every socket. */
  destroy(): void {
    this.node.destroy();
  }
}
