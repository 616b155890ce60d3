// A line a second on stderr while a demo runs (its phase, the commands completed and failed so
// far), so that a run of several seconds is visibly working. stdout keeps only the report.

/** What a progress line reports. */
export interface ProgressCounts {
  completed: number;
  failed: number;
}

/** A running progress reporter: set its phase as the demo advances, stop it at the end. */
export interface Progress {
  phase: string;
  stop(): void;
}

/** Prints `[label] +Ns  phase  N completed (+N/s), N failed` every `everyMs` on stderr. */
export function progress(label: string, counts: () => ProgressCounts, everyMs = 1000): Progress {
  const t0 = Date.now();
  let last = counts().completed;
  const p: Progress = {
    phase: "starting",
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => {
    const { completed, failed } = counts();
    const rate = Math.round((completed - last) * 1000 / everyMs);
    last = completed;
    const at = `+${Math.round((Date.now() - t0) / 1000)}s`;
    console.error(
      `  [${label}] ${at.padEnd(4)} ${
        p.phase.padEnd(28)
      } ${completed} completed (+${rate}/s), ${failed} failed`,
    );
  }, everyMs);
  return p;
}
