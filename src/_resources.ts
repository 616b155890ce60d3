// Counts of the timers and sockets the client holds open, so tests can assert that closing a
// client releases everything (Deno's leak sanitizers are off under node:test). Off unless a test
// switches it on with trackResources(): in production startTimer is exactly setTimeout.
const counts = { timers: 0, sockets: 0 };
let on = false;
const live = new Set<ReturnType<typeof setTimeout>>();

/** Test switch: counts timers and sockets from now on (tests/_helpers/leaks.ts calls it). */
export function trackResources(): void {
  on = true;
}

/** A `setTimeout` that, while tracking, is counted until it fires or is cleared. */
export function startTimer(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
  if (!on) return setTimeout(fn, ms);
  counts.timers++;
  const id = setTimeout(() => {
    if (live.delete(id)) counts.timers--;
    fn();
  }, ms);
  live.add(id);
  return id;
}

/** Clears a timer from {@linkcode startTimer}; ignores `undefined` and fired timers. */
export function stopTimer(id: ReturnType<typeof setTimeout> | undefined): void {
  if (id === undefined) return;
  clearTimeout(id);
  if (live.delete(id)) counts.timers--;
}

/** Marks a socket opened (+1) or closed (-1), while tracking. */
export function countSocket(delta: 1 | -1): void {
  if (on) counts.sockets += delta;
}

/** The number of live timers and sockets of every client in this process (0 unless tracking). */
export function openResources(): { timers: number; sockets: number } {
  return { ...counts };
}
