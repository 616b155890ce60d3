// Counts of the timers and sockets the client holds open, so tests can assert that closing a
// client releases everything (Deno's leak sanitizers are off under node:test).
const counts = { timers: 0, sockets: 0 };

/** A `setTimeout` that is counted until it fires or is cleared. */
export function startTimer(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
  counts.timers++;
  const id = setTimeout(() => {
    if (live.delete(id)) counts.timers--;
    fn();
  }, ms);
  live.add(id);
  return id;
}

const live = new Set<ReturnType<typeof setTimeout>>();

/** Clears a timer from {@linkcode startTimer}; ignores `undefined` and fired timers. */
export function stopTimer(id: ReturnType<typeof setTimeout> | undefined): void {
  if (id === undefined) return;
  clearTimeout(id);
  if (live.delete(id)) counts.timers--;
}

/** Marks a socket opened (+1) or closed (-1). */
export function countSocket(delta: 1 | -1): void {
  counts.sockets += delta;
}

/** The number of live timers and sockets of every client in this process. */
export function openResources(): { timers: number; sockets: number } {
  return { ...counts };
}
