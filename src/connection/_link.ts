// One socket of a Connection: the transport, its decoder, and the commands written to it, in
// the order their replies will arrive.
import { RespDecoder } from "../resp/decoder.ts";
import type { RespValue } from "../resp/types.ts";
import type { Transport } from "../transport/types.ts";
import { Deque } from "./_deque.ts";
import type { Endpoint } from "../endpoint.ts";
import type { Pending } from "./_pending.ts";

/** One socket with its decoder and the commands written to it, in order. */
export class Link {
  readonly inflight: Deque<Pending> = new Deque<Pending>(256);
  readonly decoder: RespDecoder;
  closed = false;
  ready = false;
  /**
   * When the last timely reply to a command arrived, or the socket opened. Pushes and late
   * replies (to commands that already timed out) do not count.
   */
  lastReplyAt = 0;
  /** Timely replies to commands so far. */
  replies = 0;
  /** When bytes were last written or read (kept only with a ping interval). */
  lastIoAt = 0;
  /** Commands with different timeouts were written: deadlines are not in order. */
  mixed = false;
  /** The token of the in-step check written after a timeout, while its reply is awaited. */
  probe: string | undefined;
  /**
   * Commands written behind the handshake (`FLAG_EARLY`), counted when written; 0 when none went
   * with it.
   */
  early = 0;
  /** A step of the handshake failed: later replies come from a socket that is not set up. */
  setupFailed = false;
  /**
   * Commands written behind the handshake that the server did not run (NOAUTH after a failed
   * AUTH, LOADING), in order, answered before the socket was ready: they go back to the queue.
   */
  notRun: Pending[] | undefined;
  /** Resolvers waiting for the in-flight queue to empty (a handoff's drain). */
  drained: (() => void)[] | undefined;
  readonly transport: Transport;
  readonly endpoint: Endpoint;
  constructor(
    transport: Transport,
    endpoint: Endpoint,
    onReply: (link: Link, value: RespValue) => void,
    onPush: (link: Link, frame: RespValue[]) => void,
  ) {
    this.transport = transport;
    this.endpoint = endpoint;
    this.decoder = new RespDecoder({
      onReply: (value) => onReply(this, value),
      onPush: (frame) => onPush(this, frame),
    });
  }

  /** Wakes whoever waits for the in-flight queue to empty (or for the socket to go). */
  wakeDrained(): void {
    const w = this.drained;
    if (w === undefined) return;
    this.drained = undefined;
    for (const f of w) f();
  }
}
