// Which request a socket belongs to, on Cloudflare Workers. workerd binds every I/O object to the
// request (I/O context) that created it: a socket opened in one request refuses reads and writes
// from another ("Cannot perform I/O on behalf of a different request"), but only asynchronously,
// after the bytes were handed over. A WebSocketPair is bound the same way and its `readyState`
// getter throws that refusal synchronously and has no effect (measured under workerd 1.20261117,
// while the creating request runs and after it ended); a Connection takes one at each attempt
// to tell, before it writes, that the current request is not the one its socket belongs to.
// Other runtimes have no WebSocketPair: there is no probe and nothing is checked.

/** The part of a `WebSocketPair` end the probe reads. */
interface PairEnd {
  readonly readyState: number;
}

const Pair = (globalThis as { WebSocketPair?: new () => { 0: PairEnd; 1: PairEnd } })
  .WebSocketPair;

/**
 * A probe bound to the current I/O context: it returns whether the code that calls it runs in
 * that same context. `undefined` off Workers (every context is one).
 */
export function ioContextProbe(): (() => boolean) | undefined {
  if (Pair === undefined) return undefined;
  let end: PairEnd;
  try {
    end = new Pair()[0];
  } catch {
    return undefined;
  }
  return () => {
    try {
      return end.readyState >= 0;
    } catch {
      return false;
    }
  };
}
