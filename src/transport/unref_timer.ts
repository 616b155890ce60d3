/**
 * Timers that do not keep the process alive, on every runtime.
 *
 * @module
 */

/**
 * Lets the process exit while `timer` is pending: `Deno.unrefTimer` on Deno, the timer's own
 * `unref()` on Node.js and Bun. Does nothing where neither exists.
 *
 * @param timer What `setTimeout` or `setInterval` returned.
 */
export function unrefTimer(timer: ReturnType<typeof setTimeout>): void {
  const deno = (globalThis as { Deno?: { unrefTimer?(id: number): void } }).Deno;
  if (typeof timer === "number") {
    deno?.unrefTimer?.(timer);
    return;
  }
  (timer as { unref?(): void }).unref?.();
}
