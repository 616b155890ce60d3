// Internal: the network faults of the maintenance simulator's proxy (latency, blackhole, pause,
// close-all) as switches its connections read (through their `ProxyHost`) on every reply.
import type { ProxyConnection } from "./_proxy_connection.ts";
import type { BlackholeOptions, FaultState, SimulatorFaults } from "./simulator_faults.ts";

/** The faults, applied to every connection of `conns` (the simulator's live set). */
export class FaultSwitches implements SimulatorFaults {
  /** Added delay of every reply, in ms. */
  latencyMs = 0;
  /** Whether requests are dropped and nothing is answered. */
  blackholed = false;
  /** Whether reading requests and delivering replies is held. */
  paused = false;
  readonly #conns: Set<ProxyConnection>;
  #blackholeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(conns: Set<ProxyConnection>) {
    this.#conns = conns;
  }

  latency(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`Cannot set latency: ${ms} is not a duration in ms`);
    this.latencyMs = ms;
    this.kickAll();
  }

  blackhole(options: BlackholeOptions = {}): void {
    this.blackholed = true;
    this.#stopTimer();
    if (options.durationMs !== undefined) {
      this.#blackholeTimer = setTimeout(() => this.endBlackhole(), options.durationMs);
    }
  }

  /** Ends a blackhole: every connection that lost something in it is closed. */
  endBlackhole(): void {
    this.#stopTimer();
    if (!this.blackholed) return;
    this.blackholed = false;
    for (const c of [...this.#conns]) if (c.poisoned) c.close();
  }

  closeAll(): number {
    const all = [...this.#conns].filter((c) => !c.isClosing);
    for (const c of all) c.close();
    return all.length;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.kickAll();
  }

  clear(): void {
    this.latencyMs = 0;
    this.endBlackhole();
    this.paused = false;
    this.kickAll();
  }

  state(): FaultState {
    return { latencyMs: this.latencyMs, blackhole: this.blackholed, paused: this.paused };
  }

  /** Lets every connection re-check what it holds (a fault changed). */
  kickAll(): void {
    for (const c of this.#conns) c.kick();
  }

  /** Cancels a timed blackhole's end (the simulator closes). */
  dispose(): void {
    this.#stopTimer();
  }

  #stopTimer(): void {
    if (this.#blackholeTimer !== undefined) clearTimeout(this.#blackholeTimer);
    this.#blackholeTimer = undefined;
  }
}
