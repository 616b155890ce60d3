// Opening a socket of a Connection: dial within the connect timeout, run the handshake plan
// (written in one batch, every reply checked in order), and hand over a ready Link. Every
// failure is a "Cannot connect" error that never counts as written.
import type { Clock } from "../_clock.ts";
import { countSocket } from "../_resources.ts";
import { ClosedError, ConnectionError, ReplyError, TimeoutError } from "../errors.ts";
import type { CommandEncoder } from "../resp/command_encoder.ts";
import type { RespValue } from "../resp/types.ts";
import type { Connector, TlsOptions, Transport } from "../transport/types.ts";
import { type Endpoint, formatEndpoint } from "../endpoint.ts";
import { FLAG_EARLY, FLAG_SUBSCRIBE } from "../command_flags.ts";
import { commandsMayFollow, type HandshakeStep, refusedSocket } from "./_handshake.ts";
import { waitDrained } from "./_handoff.ts";
import { cannotConnect, nameOf, unwrittenError } from "./_admission.ts";
import { type Pending, rejectPending } from "./_pending.ts";
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

/**
 * The queued commands a Connection lets a new socket write behind its handshake (its own
 * connects only; a handoff's replacement takes none).
 */
export interface EarlyCommands {
  /**
   * Moves the first queued commands that may go with this handshake onto `link`, encoded
   * after it (see `SendQueue.takeEarly`), when the Connection allows it now.
   *
   * @returns How many were taken.
   */
  take(link: Link): number;
  /** Puts commands the server did not run back in front of the queue, in order. */
  giveBack(commands: Pending[]): void;
  /**
   * Whether commands are set aside for this attempt, not written yet (a superseded Workers
   * attempt keeps its own request's commands): it runs on like one that wrote commands.
   */
  reserved?(): boolean;
}

/** What opening a socket needs from its Connection (created once per Connection). */
export interface OpenSettings {
  clock: Clock;
  connector: Connector;
  tls: TlsOptions | undefined;
  /** The Connection's encoder: empty between synchronous sections. */
  encoder: CommandEncoder;
  /**
   * Attempts in progress: each entry aborts one (close). With `unlessWritten`, an attempt that
   * wrote commands behind its handshake, or has commands set aside to write there
   * (`EarlyCommands.reserved`), is not aborted: it runs to its end, its outcome the caller's to
   * ignore, so those commands get their replies (a superseded Workers attempt).
   */
  opening: Set<(e: Error, unlessWritten?: boolean) => void>;
  events: LinkEvents;
  /** The socket is open; its handshake is about to be written. */
  onConnect?(endpoint: Endpoint): void;
  /** The handshake plan for a new socket (may throw). */
  plan(link: Link): HandshakeStep[];
}

/**
 * Opens a socket to `endpoint` and runs the handshake on it.
 *
 * @param endpoint Where to dial.
 * @param connectTimeout Milliseconds for the socket and its handshake; 0 = none.
 * @param s The Connection's settings.
 * @param signal Gives up the attempt (the dial included) when aborted.
 * @param early The queued commands that may be written behind the handshake. On success the
 *   link's `notRun` holds those to queue again; on failure they are queued again before the
 *   rejection, and those that may have run were answered or rejected as written.
 * @param adopt Called with the ready link synchronously with the handshake's last reply, before
 *   any reply behind it is read (must not throw).
 * @returns The ready link.
 */
export function openLink(
  endpoint: Endpoint,
  connectTimeout: number,
  s: OpenSettings,
  signal?: AbortSignal,
  early?: EarlyCommands,
  adopt?: (link: Link) => void,
): Promise<Link> {
  const name = formatEndpoint(endpoint);
  return new Promise<Link>((resolve, reject) => {
    let settled = false;
    let link: Link | undefined;
    /** The handshake's error, while the commands behind it are answered. */
    let failure: Error | undefined;
    // Stops the dial itself on a timeout, a close or the caller's signal.
    const dial = new AbortController();
    const timer = connectTimeout > 0
      ? s.clock.setTimer(() => {
        if (settled) return;
        // Still dialling over TLS: the handshake is what has not completed.
        fail(
          new TimeoutError(
            `Cannot connect to "${name}": ${
              describeConnectTimeout(connectTimeout, link === undefined && s.tls ? name : undefined)
            }`,
            { written: false },
          ),
        );
      }, connectTimeout)
      : undefined;
    const fail = (e: Error, unlessWritten?: boolean): void => {
      if (settled) return;
      if (
        unlessWritten === true &&
        ((link !== undefined && link.early > 0) || early?.reserved?.() === true)
      ) return;
      settled = true;
      s.opening.delete(fail);
      s.clock.clearTimer(timer);
      signal?.removeEventListener("abort", onAbort);
      if (link === undefined) dial.abort(e);
      else {
        if (!link.closed) {
          link.closed = true;
          link.transport.close();
        }
        if (link.early > 0) {
          settleEarly(link, e, early);
          link.wakeDrained();
        }
      }
      reject(e);
    };
    const onAbort = (): void =>
      fail(
        cannotConnect(name, "aborted", signal?.reason),
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
              // Closed while the commands behind a failed handshake were being answered: the
              // handshake's error is the attempt's.
              fail(failure ?? closedDuringHandshake(name, err));
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
        // Synchronous with the handshake's last reply: `adopt` installs the socket before the
        // replies behind the handshake (same chunk) reach their callers.
        const succeed = (): void => {
          if (settled) return;
          if (l.closed) {
            // A fault right after the handshake's replies (in the same chunk) closed it.
            fail(cannotConnect(name, "the connection was reset"));
            return;
          }
          settled = true;
          s.opening.delete(fail);
          s.clock.clearTimer(timer);
          signal?.removeEventListener("abort", onAbort);
          l.ready = true;
          adopt?.(l);
          resolve(l);
        };
        runHandshake(l, steps, s.encoder, early, succeed).then(() => {
          // A success is settled by `succeed`; a fault that closed the socket first, here.
          if (!settled) succeed();
        }, (e: Error) => {
          if (settled || l.early === 0 || l.closed || refusedSocket(e)) {
            fail(e);
            return;
          }
          failure = e;
          // The commands behind the failed handshake get their replies first (each is the
          // command's own, or says it did not run), within their longest timeout.
          waitDrained(l, earlyCap(l), s.clock).then(() => fail(e));
        });
      },
      (e: Error) =>
        fail(
          cannotConnect(name, describeTransportError(e, s.tls ? name : undefined), e),
        ),
    );
  });
}

function closedDuringHandshake(name: string, err: Error | undefined): ConnectionError {
  return cannotConnect(
    name,
    `the connection closed during the handshake${err ? `: ${describeTransportError(err)}` : ""}`,
    err,
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
 * @param early The queued commands that may follow the steps in their write.
 * @param onSuccess Called synchronously with the last step's reply, when every step succeeded.
 * @returns Resolves once every step succeeded.
 */
export function runHandshake(
  link: Link,
  steps: HandshakeStep[],
  enc: CommandEncoder,
  early?: EarlyCommands,
  onSuccess?: () => void,
): Promise<void> {
  const name = formatEndpoint(link.endpoint);
  return new Promise<void>((resolved, reject) => {
    const resolve = (): void => {
      onSuccess?.();
      resolved();
    };
    let left = steps.length;
    let failed = false;
    const fails = (e: unknown): void => {
      failed = true;
      // Set before the replies behind it are read (they may be in the same chunk).
      link.setupFailed = true;
      reject(e);
    };
    if (left === 0 && (early === undefined || !early.take(link))) {
      resolve();
      return;
    }
    if (left === 0) {
      link.early = link.inflight.length;
      link.transport.write(enc.take());
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
          fails(e);
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
          fails(
            e instanceof ReplyError
              ? unwrittenError(
                `Cannot set up the connection to "${name}": ${
                  nameOf(step.args[0])
                } failed: ${e.message}`,
                e,
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
    if (early !== undefined && commandsMayFollow(steps)) link.early = early.take(link);
    link.transport.write(enc.take());
  });
}

/** The longest timeout of the commands still in flight behind a handshake (0 = none: no cap). */
function earlyCap(link: Link): number {
  let cap = 0;
  const q = link.inflight;
  for (let i = 0; i < q.length; i++) {
    const p = q.at(i)!;
    if ((p.flags & FLAG_EARLY) === 0 || p.done) continue;
    if (p.timeout === 0) return 2 ** 31 - 1;
    if (p.timeout > cap) cap = p.timeout;
  }
  return cap;
}

/**
 * The attempt of `link` failed (or was given up) with `e` and the socket is closed: every
 * command written behind its handshake is settled. Those the server answered as not run (and,
 * when it refused the whole socket, those it never read) are queued again; the others may have
 * run: they fail as written, never to be sent twice.
 */
function settleEarly(link: Link, e: Error, early: EarlyCommands | undefined): void {
  const refused = refusedSocket(e);
  const notRun = link.notRun ?? [];
  link.notRun = undefined;
  const q = link.inflight;
  let p: Pending | undefined;
  while ((p = q.shift()) !== undefined) {
    if ((p.flags & FLAG_EARLY) === 0 || p.done) continue;
    if (refused) {
      notRun.push(p);
      continue;
    }
    p.done = true;
    const why = `Cannot get the reply to "${
      nameOf(p.cmd)
    }": it was written with the handshake of a connection to "${
      formatEndpoint(link.endpoint)
    }" that closed before the reply: ${e.message}`;
    // A connect timeout is the command's timeout too, a close the client's; written either way.
    rejectPending(
      p,
      e instanceof TimeoutError
        ? new TimeoutError(why, { cause: e })
        : e instanceof ClosedError
        ? new ClosedError(why, { cause: e })
        : new ConnectionError(why, { cause: e }),
    );
  }
  if (notRun.length > 0) early?.giveBack(notRun);
}
