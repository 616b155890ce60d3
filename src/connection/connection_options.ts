/**
 * The settings and callbacks of a `Connection` (`./connection.ts`).
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type { Logger } from "../logger.ts";
import type { BackoffOptions } from "../resilience/backoff.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { Connector, TlsOptions, Transport } from "../transport/types.ts";
import type { HandshakeStep } from "./_handshake.ts";
import type { Endpoint } from "../endpoint.ts";

/** Callbacks from the connection to its owner. */
export interface ConnectionHooks {
  /** A socket is open and its handshake is about to be written. */
  onConnect?(endpoint: Endpoint): void;
  /** The handshake succeeded; queued work is about to be flushed. */
  onReady?(endpoint: Endpoint): void;
  /** The socket was lost; a reconnect is scheduled after `delay` ms. */
  onReconnecting?(delay: number, attempt: number, error: Error | undefined): void;
  /** An error not delivered to a caller (a failed reconnect, a protocol fault). */
  onError?(error: Error): void;
  /** The connection was closed for good. */
  onClose?(): void;
  /**
   * A push frame (RESP3 `>`, or a pub/sub array on a RESP2 subscriber connection), with the
   * socket it arrived on (during a handoff two sockets deliver).
   */
  onPush?(frame: RespValue[], transport: Transport): void;
  /**
   * Extra handshake steps, after HELLO/AUTH/SETNAME/SETINFO and before SELECT. Called for every
   * new socket with its transport (for its remote address and TLS).
   */
  handshake?(transport: Transport, protocol: 2 | 3): HandshakeStep[];
  /**
   * Session state to re-apply after SELECT (subscriptions, tracking): commands written with no
   * reply slot, or with one when `onReply` is given.
   */
  session?(): HandshakeStep[];
  /**
   * Where a new socket goes: the configured endpoint, or a maintenance target while a MOVING
   * window lasts.
   */
  resolveEndpoint?(configured: Endpoint): Endpoint;
  /**
   * The connect timeout for a new socket to `endpoint` (relaxed during a MOVING window; 0 = none,
   * except for a handoff's replacement, which is always bounded).
   */
  connectTimeout?(configured: number, endpoint: Endpoint): number;
  /**
   * Told of the error each command sent with `FLAG_COUNTED` is rejected with, once, before its
   * caller sees it (the error-count metric, without a promise reaction per command).
   */
  onCommandError?(error: Error, cmd: RedisArgument | undefined): void;
}

/**
 * Computes the effective send-to-reply timeout of a command (maintenance relaxation).
 *
 * @param configured The command's own timeout (0 = none).
 * @param blocking Whether the command blocks.
 * @returns The timeout to apply.
 */
export type TimeoutPolicy = (configured: number, blocking: boolean) => number;

/** Settings of a `Connection`. */
export interface ConnectionOptions {
  /** The endpoint to connect to. */
  endpoint: Endpoint;
  /** TLS settings; plain TCP when absent. */
  tls?: TlsOptions;
  /** Opens sockets. */
  connector: Connector;
  /** RESP version. */
  protocol: 2 | 3;
  /** ACL user name. */
  username?: string;
  /** Password (never logged). */
  password?: string;
  /** Database index. */
  db: number;
  /** `CLIENT SETNAME` value. */
  clientName?: string;
  /** Library name and version for `CLIENT SETINFO`; skipped when absent. */
  libName?: string;
  /** Library version for `CLIENT SETINFO`. */
  libVersion?: string;
  /** Milliseconds to open the socket and finish the handshake. */
  connectTimeout: number;
  /** Send-to-reply timeout in milliseconds; 0 = none. */
  commandTimeout: number;
  /** Backoff between reconnect attempts, or `false` to never reconnect. */
  reconnect: BackoffOptions | false;
  /** Most commands waiting to be written while not connected. */
  maxQueueLength: number;
  /** Most bytes (approximate) waiting to be written while not connected. */
  maxQueueBytes: number;
  /** A RESP2 connection dedicated to pub/sub: pub/sub arrays go to `onPush`. */
  subscriber?: boolean;
  /**
   * The first commands queued while a socket opens are written in the same write as its
   * handshake, when it is safe (one round trip per new socket, not two): see
   * `Connection` ("Commands behind the handshake"). Not for connections whose commands carry
   * a session (WATCH, blocking commands: the exclusive pool) or for a subscriber.
   * @default {false}
   */
  pipelineHandshake?: boolean;
  /**
   * Milliseconds `close()` waits for the replies still due, then rejects them with
   * `ClosedError` and destroys the socket; 0 = wait for each command's own timeout.
   * @default {3000}
   */
  closeTimeout?: number;
  /**
   * Let the process exit while the connection is open and idle: its sockets and timers do not
   * keep it alive, except a socket with commands in flight (a pending `await` still completes).
   * @default {false}
   */
  unref?: boolean;
  /**
   * Milliseconds of silence (nothing written, nothing read) after which a `PING` is written, so
   * a dead network path is noticed also on an idle or subscribed connection; 0 = never. The PING
   * times out like any command (after `commandTimeout`, or this interval when that is 0).
   * @default {0}
   */
  pingInterval?: number;
  /** Where to log. */
  logger: Logger;
  /** Callbacks. */
  hooks?: ConnectionHooks;
  /** Time source only (timers stay on the wall clock); prefer `clock`. */
  now?: () => number;
  /**
   * The time source and timers of every deadline of the connection (command, queue, connect,
   * reconnect, drain, close).
   * @default {systemClock}
   */
  clock?: Clock;
  /** A name used in log lines, e.g. "shared" or "pool#2". */
  label?: string;
}
