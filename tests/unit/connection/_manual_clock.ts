// A clock driven by the test: time moves only on advance(), timers fire in deadline order.
import type { Clock, TimerId } from "../../../src/_clock.ts";

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, Timer>();

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): TimerId {
    const id = ++this.#seq;
    this.#timers.set(id, { id, at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimer(id: TimerId | undefined): void {
    if (typeof id === "number") this.#timers.delete(id);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order; after each one the microtask and
   * macrotask queues run, so promise chains and socket callbacks settle before the next.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      let next: Timer | undefined;
      for (const t of this.#timers.values()) {
        if (
          t.at <= end &&
          (next === undefined || t.at < next.at || t.at === next.at && t.id < next.id)
        ) next = t;
      }
      if (next === undefined) break;
      this.#timers.delete(next.id);
      if (next.at > this.#now) this.#now = next.at;
      next.fn();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets pending microtasks and zero-delay macrotasks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
}
