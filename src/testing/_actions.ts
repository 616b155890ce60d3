// Internal: what both simulators' action runners share: reading the parameters of a fault
// injector action (`POST /action`, snake_case or camelCase), and the actions that need nothing of
// a simulator but its timers (`sleep`, `sequence_of_actions`).
import { closedError, sleepOrClosed } from "./_action_queue.ts";

/** The parameters of an action, as the fault injector's API sends them. */
export type ActionParameters = Record<string, unknown>;

/** The work of one started action. */
export type ActionRun = () => Promise<unknown>;

/** Makes the run of an action; throws a TypeError for an unknown type or a bad parameter. */
export type ActionRunner = (type: string, parameters: ActionParameters) => ActionRun;

/**
 * The first of `names` set in `p`, as a number (`undefined` when none is set).
 * Throws a TypeError naming action `type` when the value is not a number.
 */
export function numberParam(
  type: string,
  p: ActionParameters,
  ...names: string[]
): number | undefined {
  for (const n of names) {
    const v = p[n];
    if (v !== undefined && v !== null && v !== "") {
      const x = Number(v);
      if (!Number.isFinite(x)) throw new TypeError(`Cannot run "${type}": "${n}" is not a number`);
      return x;
    }
  }
  return undefined;
}

/** An action's duration in ms: `duration_ms`, else `duration` in seconds (1 s by default). */
export function durationParam(type: string, p: ActionParameters): number {
  return numberParam(type, p, "duration_ms", "durationMs") ??
    (numberParam(type, p, "duration") ?? 1) * 1000;
}

/**
 * The run of a `sleep` or `sequence_of_actions` action (its steps made by `runner`), or
 * `undefined` for another type. A sleep ends early, failing, when the simulator closes.
 */
export function commonAction(
  type: string,
  p: ActionParameters,
  timers: Set<() => void>,
  runner: ActionRunner,
): ActionRun | undefined {
  if (type === "sleep") {
    const ms = durationParam(type, p);
    return async () => {
      if (!await sleepOrClosed(ms, timers)) throw closedError();
      return { slept: ms };
    };
  }
  if (type === "sequence_of_actions") {
    const list = p.actions;
    if (!Array.isArray(list)) {
      throw new TypeError(`Cannot run "sequence_of_actions": "actions" must be an array`);
    }
    const steps = list.map((a: { type?: unknown; parameters?: unknown }) =>
      runner(String(a?.type), (a?.parameters ?? {}) as ActionParameters)
    );
    return async () => {
      const out: unknown[] = [];
      for (const s of steps) out.push(await s());
      return out;
    };
  }
  return undefined;
}
