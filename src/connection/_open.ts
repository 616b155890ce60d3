// Opening a socket of a Connection: dial within the connect timeout, run the handshake plan
// (written in one batch, every reply checked in order), and hand over a ready Link. Every
// failure is a "Cannot connect" error that never counts as written.
import type { Clock } from "../_clock.ts";
import { countSocket } from "../_resources.ts";
import { ConnectionError, ReplyError, TimeoutError } from "../errors.ts";
import type { RespEncoder } from "../resp/encoder.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { Connector, TlsOptions, Transport } from "../transport/types.ts";
import { type Endpoint, formatEndpoint } from "../endpoint.ts";
import { FLAG_SUBSCRIBE } from "../command_flags.ts";
import type { HandshakeStep } from "./_handshake.ts";
import { Link } from "./_link.ts";
import { describeConnectTimeout, describeTransportError } from "./_transport_errors.ts";

/** What a socket reports to its Connection. */
export interface LinkEvents {
  onReply(link: Link, value: RespValue): void;
  onPush(link: Link, frame: RespValue[]): void;
  onData(link: Link, chunk: Uint8Array): void;
  onDrain(link: Link): void;
  /** The socket closed after its handshake. */
  onClose(link: Link, error?: Error): void;
}

/** What opening a socket needs from its Connection (created once per Connection). */
export interface OpenSettings {
  clock: Clock;
  connector: Connector;
  tls: TlsOptions | undefined;
  /** The Connection's encoder: empty between synchronous sections. */
  encoder: RespEncoder;
  /** Attempts in progress: each entry aborts one (close). */
  opening: Set<(e: Error) => void>;
  events: LinkEvents;
  /** The socket is open; its handshake is about to be written. */
  onConnect?(endpoint: Endpoint): void;
  /** The handshake plan for a new socket (may throw). */
  plan(link: Link): HandshakeStep[];
}

function commandName(args: RedisArgument[]): string {
  const a = args[0];
  return typeof a === "string" ? a.toUpperCase() : typeof a === "number" ? String(a) : "?";
}

/**
 * Opens a socket to `endpoint` and runs the handshake on it.
 *
 * @param endpoint Where to dial.
 * @param connectTimeout Milliseconds for the socket and its handshake; 0 = none.
 * @param s The Connection's settings.
 * @param signal Gives up the attempt (the dial included) when aborted.
 * @returns The ready link.
 */
export function openLink(
  endpoint: Endpoint,
  connectTimeout: number,
  s: OpenSettings,
  signal?: AbortSignal,
): Promise<Link> {
  const name = formatEndpoint(endpoint);
  return new Promise<Link>((resolve, reject) => {
    let settled = false;
    let link: Link | undefined;
    // Stops the dial itself on a timeout, a close or the caller's signal.
    const dial = new AbortController();
    const timer = connectTimeout > 0
      ? s.clock.setTimer(() => {
        if (settled) return;
        settled = true;
        s.opening.delete(fail);
        signal?.removeEventListener("abort", onAbort);
        // Still dialling over TLS: the handshake is what has not completed.
        const e = new TimeoutError(
          `Cannot connect to "${name}": ${
            describeConnectTimeout(connectTimeout, link === undefined && s.tls ? name : undefined)
          }`,
          { written: false },
        );
        if (link) {
          link.closed = true;
          link.transport.close();
        } else dial.abort(e);
        reject(e);
      }, connectTimeout)
      : undefined;
    const fail = (e: Error): void => {
      if (settled) return;
      settled = true;
      s.opening.delete(fail);
      s.clock.clearTimer(timer);
      signal?.removeEventListener("abort", onAbort);
      if (link === undefined) dial.abort(e);
      else if (!link.closed) {
        link.closed = true;
        link.transport.close();
      }
      reject(e);
    };
    const onAbort = (): void =>
      fail(
        new ConnectionError(`Cannot connect to "${name}": aborted`, {
          cause: signal?.reason,
          written: false,
        }),
      );
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    s.opening.add(fail);
    s.connector({ host: endpoint.host, port: endpoint.port, tls: s.tls, signal: dial.signal }).then(
      (transport: Transport) => {
        if (settled) {
          transport.close();
          return;
        }
        const ev = s.events;
        const l = new Link(transport, endpoint, ev.onReply, ev.onPush);
        link = l;
        countSocket(1);
        transport.setHandlers({
          onData: (chunk) => ev.onData(l, chunk),
          onDrain: () => ev.onDrain(l),
          onClose: (err) => {
            countSocket(-1);
            if (!l.ready) {
              if (l.closed) {
                // Closed on our side for a reason (a protocol error fails the handshake's
                // replies): let that reason reach the caller first.
                s.clock.setTimer(() => fail(closedDuringHandshake(name, err)), 0);
                return;
              }
              l.closed = true;
              fail(closedDuringHandshake(name, err));
              return;
            }
            ev.onClose(l, err);
          },
        });
        s.onConnect?.(endpoint);
        let steps: HandshakeStep[];
        try {
          steps = s.plan(l);
        } catch (e) {
          fail(e as Error);
          return;
        }
        runHandshake(l, steps, s.encoder).then(() => {
          if (settled) return;
          if (l.closed) {
            // A fault right after the handshake's replies (in the same chunk) closed it.
            fail(
              new ConnectionError(`Cannot connect to "${name}": the connection was reset`, {
                written: false,
              }),
            );
            return;
          }
          settled = true;
          s.opening.delete(fail);
          s.clock.clearTimer(timer);
          signal?.removeEventListener("abort", onAbort);
          l.ready = true;
          resolve(l);
        }, fail);
      },
      (e: Error) =>
        fail(
          new ConnectionError(
            `Cannot connect to "${name}": ${describeTransportError(e, s.tls ? name : undefined)}`,
            {
              cause: e,
              written: false,
            },
          ),
        ),
    );
  });
}

function closedDuringHandshake(name: string, err: Error | undefined): ConnectionError {
  return new ConnectionError(
    `Cannot connect to "${name}": the connection closed during the handshake${
      err ? `: ${describeTransportError(err)}` : ""
    }`,
    { cause: err, written: false },
  );
}

/**
 * `p`, or a rejection with `aborted()` once `signal` aborts (the listener removed when either
 * settles): a caller joining a connect attempt stops waiting without stopping the attempt.
 *
 * @param p The attempt.
 * @param signal The caller's signal.
 * @param aborted The error for an abort.
 * @returns Settles like `p`, or rejects on abort.
 */
export function untilAborted(
  p: Promise<void>,
  signal: AbortSignal,
  aborted: () => Error,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Writes the whole handshake in one batch and checks every reply in order.
 *
 * @param link The new socket.
 * @param steps The plan.
 * @param enc An empty encoder.
 * @returns Resolves once every step succeeded.
 */
export function runHandshake(link: Link, steps: HandshakeStep[], enc: RespEncoder): Promise<void> {
  const name = formatEndpoint(link.endpoint);
  return new Promise<void>((resolve, reject) => {
    let left = steps.length;
    let failed = false;
    if (left === 0) {
      resolve();
      return;
    }
    for (const step of steps) {
      enc.writeCommand(step.args);
      const done = (v: unknown): void => {
        if (failed) return;
        try {
          step.onReply?.(v as RespValue);
        } catch (e) {
          failed = true;
          reject(e);
          return;
        }
        if (--left === 0) resolve();
      };
      link.inflight.push({
        args: step.args,
        cmd: step.args[0],
        // A step without onReply must succeed.
        resolve: done,
        reject: (e) => {
          if (e instanceof ReplyError && step.onReply) return done(e);
          if (failed) return;
          failed = true;
          reject(
            e instanceof ReplyError
              ? new ConnectionError(
                `Cannot set up the connection to "${name}": ${
                  commandName(step.args)
                } failed: ${e.message}`,
                { cause: e, written: false },
              )
              : e,
          );
        },
        transform: undefined,
        flags: step.pushes ? FLAG_SUBSCRIBE : 0,
        timeout: 0,
        deadline: 0,
        done: false,
        bytes: 0,
        pushes: step.pushes ?? 0,
        tap: undefined,
      });
    }
    link.transport.write(enc.take());
  });
}
