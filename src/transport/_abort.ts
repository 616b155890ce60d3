/**
 * Abortable connection attempts, shared by the runtime transports.
 *
 * @module
 */

/**
 * Runs one connection attempt that `signal` may abort. When the signal aborts first, the
 * returned promise rejects with `signal.reason`, the `inner` signal handed to `dial` aborts (so
 * a runtime that can cancel its dial does), and a value that `dial` still produces is handed to
 * `dispose`. An already aborted signal rejects without calling `dial`. Once the attempt
 * settled, the signal is let go of: aborting it later does nothing.
 *
 * @param signal The caller's signal, if any.
 * @param dial Opens the connection; `inner` aborts only while the attempt runs.
 * @param dispose Closes a connection that opened after the abort.
 * @returns The connection.
 */
export function dialAbortable<T>(
  signal: AbortSignal | undefined,
  dial: (inner: AbortSignal | undefined) => Promise<T>,
  dispose: (value: T) => void,
): Promise<T> {
  if (signal === undefined) return dial(undefined);
  if (signal.aborted) return Promise.reject(signal.reason);
  const inner = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      inner.abort(signal.reason);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    let attempt: Promise<T>;
    try {
      attempt = dial(inner.signal);
    } catch (e) {
      attempt = Promise.reject(e);
    }
    attempt.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (settled) return dispose(value);
        settled = true;
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        if (settled) return;
        settled = true;
        reject(error);
      },
    );
  });
}
