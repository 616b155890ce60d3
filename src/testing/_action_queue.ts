// The fault injector's action queue, shared by both simulators: actions run one after another,
// each with an id whose status can be polled; and the sleep that a closing simulator cuts short.
import type { ActionStatus } from "./types.ts";

/** Runs actions in order and keeps their status by id. */
export class ActionQueue {
  readonly #actions = new Map<string, ActionStatus>();
  #busy: Promise<unknown> = Promise.resolve();

  /** Queues `run` behind the actions before it; returns its id. */
  start(run: () => Promise<unknown>): string {
    const id = crypto.randomUUID();
    const status: ActionStatus = { status: "pending", output: null, error: null };
    this.#actions.set(id, status);
    this.#busy = this.#busy.then(async () => {
      status.status = "running";
      try {
        status.output = await run();
        status.status = "success";
      } catch (e) {
        status.status = "failed";
        status.error = e instanceof Error ? e.message : String(e);
      }
    });
    return id;
  }

  /** A copy of the status of action `id`, or `undefined` for an unknown id. */
  status(id: string): ActionStatus | undefined {
    const s = this.#actions.get(id);
    return s === undefined ? undefined : { ...s };
  }

  /** Resolves once every queued action has settled. */
  idle(): Promise<void> {
    return this.#busy.then(() => {}, () => {});
  }
}

/**
 * Sleeps `ms`; resolves `false` early when the simulator closes (it calls every function left in
 * `timers`).
 */
export function sleepOrClosed(ms: number, timers: Set<() => void>): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      timers.delete(cancel);
      resolve(true);
    }, Math.max(0, ms));
    const cancel = () => {
      clearTimeout(t);
      resolve(false);
    };
    timers.add(cancel);
  });
}

/** The error of an action the simulator's close cut short. */
export function closedError(): Error {
  return new Error("Cannot finish the action: the simulator was closed");
}
