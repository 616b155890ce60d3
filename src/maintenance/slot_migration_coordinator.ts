/**
 * The one SMIGRATING / SMIGRATED state machine of every client kind: one set of windows for
 * the whole client (every connection, to every node, receives its own copy of each
 * notification), each seq handled once, each SMIGRATED closing one window, the timeouts relaxed
 * until the last window closed and its slot delta was applied, the backstop, and deltas held
 * back while a topology refresh runs. The `MaintenanceController` owns one and turns its
 * decisions into `MaintenanceDecision`s (a cluster client applies their slot deltas). Pure: it reads time from the injected
 * clock only, opens no sockets and sets no timers (the caller arms one for
 * {@linkcode SlotMigrationCoordinator.nextDeadline}).
 *
 * @module
 */

import type { Clock } from "../_clock.ts";
import type { SlotMigration } from "./notification.ts";
import type { SlotRange } from "./slots.ts";

/** The number of hash slots. */
const SLOTS = 16384;
/** Most seqs remembered (bounds memory on a noisy server). */
const MAX_SEEN = 4096;
/** Most windows open at once; past it the oldest closes early. */
export const MAX_WINDOWS = 1024;

/** A decision of the coordinator, for its caller to carry out. */
export type SlotMigrationDecision =
  | {
    /** A window opened (an SMIGRATING with a new seq). */
    type: "window-opened";
    /** The SMIGRATING's seq. */
    seq: number;
    /** The slots it announces. */
    slots: SlotRange[];
    /** The backstop: the window closes by itself then. */
    until: number;
    /** Windows open now. */
    open: number;
  }
  | {
    /** A window closed: by an SMIGRATED (`end`), or by the backstop (`expired`). */
    type: "window-closed";
    /** The seq of the SMIGRATING that opened it. */
    seq: number;
    reason: "end" | "expired";
    /** The SMIGRATED that closed it (`end`). */
    endSeq?: number;
    /** Windows still open. */
    open: number;
  }
  | {
    /** An SMIGRATING whose SMIGRATED already came (reordered): no window. */
    type: "window-skipped";
    seq: number;
    endSeq: number;
  }
  | {
    /** Apply these entries to the slot table now, then call `applied(seq)`. */
    type: "apply";
    seq: number;
    entries: SlotMigration[];
    /** Slots left out: a newer SMIGRATED already moved them. */
    stale: number;
  }
  | {
    /** A delta held back until the running topology refresh ends. */
    type: "deferred";
    seq: number;
  }
  | {
    /** The slots moved but the delta cannot be read: re-read the topology. */
    type: "refresh";
    seq: number | undefined;
    reason: string;
  }
  | { /** Relax every connection of the client. */ type: "relax" }
  | { /** Back to the configured timeouts. */ type: "unrelax" };

/** An open window as {@linkcode SlotMigrationCoordinator.windows} lists it. */
export interface SlotMigrationWindow {
  /** Sequence number of its SMIGRATING. */
  seq: number;
  /** The slots announced as moving. */
  slots: SlotRange[];
  /** Clock time it opened. */
  openedAt: number;
  /** Clock time the backstop closes it. */
  deadline: number;
}

interface Pending {
  seq: number;
  entries: SlotMigration[];
  stale: number;
}

/**
 * Client-wide SMIGRATING / SMIGRATED state of one client (standalone or cluster).
 *
 * Rules:
 * - An SMIGRATING with a new seq opens a window (deadline: now + `relaxedWindowMaxDuration`).
 * - An SMIGRATED with a new seq closes the oldest open window; with entries, it gives one
 *   `apply` decision (or `deferred` while a refresh runs, `apply` when it ends). The client stays
 *   relaxed until no window is open and every delta given out was `applied`.
 * - Slots a newer SMIGRATED already moved are left out of an older one (reordered delivery).
 * - An SMIGRATED that closed no window is remembered: an SMIGRATING with a lower seq arriving
 *   later opens none (`window-skipped`).
 * - A malformed SMIGRATED with a readable seq closes a window once and asks for a `refresh`.
 *
 * @example
 * ```ts
 * import { SlotMigrationCoordinator } from "@edge/redis/maintenance";
 *
 * let now = 0;
 * const c = new SlotMigrationCoordinator(60_000, { now: () => now });
 * c.smigrating(10, [{ start: 0, end: 99 }]); // [window-opened, relax]
 * const to = { host: "10.0.0.2", port: 7000 };
 * c.smigrated(11, [{ source: null, destination: to, slots: [{ start: 0, end: 99 }] }]);
 * // [window-closed, apply]
 * c.applied(11); // [unrelax]
 * ```
 */
export class SlotMigrationCoordinator {
  readonly #maxWindow: number;
  readonly #clock: Pick<Clock, "now">;
  readonly #windows: SlotMigrationWindow[] = [];
  readonly #seen = new Set<number>();
  /** Seqs of SMIGRATEDs that found no window open. */
  readonly #unmatched: number[] = [];
  /** Deltas given out (or held) and not yet applied. */
  readonly #pending = new Map<number, Pending>();
  /** Per slot, the seq of the latest delta that moved it (-1: none). */
  readonly #slotSeq = new Float64Array(SLOTS).fill(-1);
  #refreshing = 0;
  #relaxed = false;

  /**
   * Creates the state of one client, with no window open.
   *
   * @param relaxedWindowMaxDuration The backstop of a window, ms.
   * @param clock The client's clock, of which only `now` is read.
   */
  constructor(relaxedWindowMaxDuration: number, clock: Pick<Clock, "now">) {
    this.#maxWindow = relaxedWindowMaxDuration;
    this.#clock = clock;
  }

  /** Whether the client's connections are relaxed now. */
  get relaxed(): boolean {
    return this.#relaxed;
  }

  /** The open windows, oldest first. */
  get windows(): readonly SlotMigrationWindow[] {
    return this.#windows;
  }

  /** Seqs of deltas given out or held and not yet applied. */
  get pending(): number[] {
    return [...this.#pending.keys()];
  }

  #remember(seq: number): boolean {
    if (this.#seen.has(seq)) return false;
    this.#seen.add(seq);
    if (this.#seen.size > MAX_SEEN) this.#seen.delete(this.#seen.values().next().value as number);
    return true;
  }

  /**
   * An SMIGRATING arrived (on any connection).
   *
   * @param seq Its sequence number.
   * @param slots The slots announced.
   * @returns The decisions; `[]` for a seq already handled.
   */
  smigrating(seq: number, slots: SlotRange[]): SlotMigrationDecision[] {
    const out = this.#expire();
    if (!this.#remember(seq)) return this.#settle(out);
    const late = this.#unmatched.findIndex((end) => end > seq);
    if (late !== -1) {
      const [endSeq] = this.#unmatched.splice(late, 1);
      out.push({ type: "window-skipped", seq, endSeq: endSeq! });
      return this.#settle(out);
    }
    const now = this.#clock.now();
    const w: SlotMigrationWindow = { seq, slots, openedAt: now, deadline: now + this.#maxWindow };
    if (this.#windows.length >= MAX_WINDOWS) {
      // A server (or a proxy) announcing migrations without end: the oldest window closes
      // early, as if its backstop had passed, so memory and the work per notification stay
      // bounded (the client stays relaxed while the others are open).
      const oldest = this.#windows.shift()!;
      out.push({
        type: "window-closed",
        seq: oldest.seq,
        reason: "expired",
        open: this.#windows.length,
      });
    }
    this.#windows.push(w);
    out.push({
      type: "window-opened",
      seq,
      slots,
      until: w.deadline,
      open: this.#windows.length,
    });
    return this.#settle(out);
  }

  /**
   * An SMIGRATED arrived (on any connection).
   *
   * @param seq Its sequence number.
   * @param entries Its slot moves (empty: it only closes a window).
   * @returns The decisions; `[]` for a seq already handled.
   */
  smigrated(seq: number, entries: SlotMigration[]): SlotMigrationDecision[] {
    const out = this.#expire();
    if (!this.#remember(seq)) return this.#settle(out);
    this.#closeOne(seq, out);
    if (entries.length > 0) {
      const { kept, stale } = this.#fresh(seq, entries);
      if (kept.length > 0) {
        const p: Pending = { seq, entries: kept, stale };
        this.#pending.set(seq, p);
        if (this.#refreshing > 0) out.push({ type: "deferred", seq });
        else out.push({ type: "apply", ...p });
      }
    }
    return this.#settle(out);
  }

  /**
   * An SMIGRATED that could not be parsed arrived.
   *
   * @param seq Its sequence number when readable.
   * @param reason What is wrong with it.
   * @returns A `refresh` decision (and a closed window) the first time a seq is seen; `[]` for
   *   a copy of one already handled.
   */
  malformedSmigrated(seq: number | undefined, reason: string): SlotMigrationDecision[] {
    const out = this.#expire();
    if (seq !== undefined) {
      if (!this.#remember(seq)) return this.#settle(out);
      this.#closeOne(seq, out);
    }
    out.push({ type: "refresh", seq, reason });
    return this.#settle(out);
  }

  /**
   * The delta of `seq` is in the slot table.
   *
   * @param seq The seq of an `apply` decision.
   * @returns `unrelax` when it was the last thing keeping the client relaxed.
   */
  applied(seq: number): SlotMigrationDecision[] {
    this.#pending.delete(seq);
    return this.#settle(this.#expire());
  }

  /** A topology refresh started: deltas arriving meanwhile are held back. */
  refreshStarted(): void {
    this.#refreshing++;
  }

  /**
   * A topology refresh ended (adopted or failed).
   *
   * @returns `apply` decisions for the deltas held back during it, oldest seq first.
   */
  refreshFinished(): SlotMigrationDecision[] {
    if (this.#refreshing > 0) this.#refreshing--;
    const out = this.#expire();
    if (this.#refreshing === 0) {
      for (const p of [...this.#pending.values()].sort((a, b) => a.seq - b.seq)) {
        out.push({ type: "apply", ...p });
      }
    }
    return this.#settle(out);
  }

  /**
   * Closes windows whose backstop passed.
   *
   * @returns The decisions that came due.
   */
  tick(): SlotMigrationDecision[] {
    return this.#settle(this.#expire());
  }

  /**
   * When {@linkcode SlotMigrationCoordinator.tick} should run next.
   *
   * @returns The earliest backstop, or `undefined` with no window open.
   */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const w of this.#windows) if (next === undefined || w.deadline < next) next = w.deadline;
    return next;
  }

  /**
   * Until when the client stays relaxed at the latest.
   *
   * @returns The latest backstop, `Infinity` while only a delta is pending, `undefined` when
   *   not relaxed.
   */
  relaxedUntil(): number | undefined {
    if (!this.#relaxed) return undefined;
    let until = this.#pending.size > 0 ? Infinity : -Infinity;
    for (const w of this.#windows) until = Math.max(until, w.deadline);
    return until;
  }

  #closeOne(endSeq: number, out: SlotMigrationDecision[]): void {
    // The oldest window whose SMIGRATING came before this end; any if the seqs say nothing.
    let i = this.#windows.findIndex((w) => w.seq < endSeq);
    if (i === -1) i = this.#windows.length > 0 ? 0 : -1;
    if (i === -1) {
      this.#unmatched.push(endSeq);
      if (this.#unmatched.length > 64) this.#unmatched.shift();
      return;
    }
    const [w] = this.#windows.splice(i, 1);
    out.push({
      type: "window-closed",
      seq: w!.seq,
      reason: "end",
      endSeq,
      open: this.#windows.length,
    });
  }

  /** The entries without the slots a newer delta already moved; marks the rest as moved by `seq`. */
  #fresh(seq: number, entries: SlotMigration[]): { kept: SlotMigration[]; stale: number } {
    const marks = this.#slotSeq;
    let stale = 0;
    const kept: SlotMigration[] = [];
    for (const e of entries) {
      const slots: SlotRange[] = [];
      let valid = true;
      for (const r of e.slots) {
        if (
          !Number.isInteger(r.start) || !Number.isInteger(r.end) || r.start < 0 ||
          r.end >= SLOTS || r.start > r.end
        ) {
          valid = false;
          break;
        }
      }
      if (!valid) {
        // Left to the applier, which reports it.
        kept.push(e);
        continue;
      }
      for (const r of e.slots) {
        let start = -1;
        for (let s = r.start; s <= r.end + 1; s++) {
          const fresh = s <= r.end && marks[s]! < seq;
          if (fresh && start === -1) start = s;
          if (!fresh && start !== -1) {
            slots.push({ start, end: s - 1 });
            start = -1;
          }
          if (s <= r.end && !fresh) stale++;
        }
      }
      if (slots.length === 0) continue;
      for (const r of slots) marks.fill(seq, r.start, r.end + 1);
      kept.push({ source: e.source, destination: e.destination, slots });
    }
    return { kept, stale };
  }

  #expire(): SlotMigrationDecision[] {
    const now = this.#clock.now();
    const out: SlotMigrationDecision[] = [];
    // Windows are kept in the order they opened, with one backstop length: their deadlines
    // never decrease, so the expired ones are at the front (the work is what expired, not all).
    const windows = this.#windows;
    let n = 0;
    while (n < windows.length && windows[n]!.deadline <= now) n++;
    if (n === 0) return out;
    for (const w of windows.splice(0, n)) {
      out.push({ type: "window-closed", seq: w.seq, reason: "expired", open: 0 });
    }
    // `open` as each close left it, as before.
    for (let i = 0; i < out.length; i++) {
      (out[i] as { open: number }).open = windows.length + out.length - 1 - i;
    }
    return out;
  }

  #settle(out: SlotMigrationDecision[]): SlotMigrationDecision[] {
    const relaxed = this.#windows.length > 0 || this.#pending.size > 0;
    if (relaxed !== this.#relaxed) {
      this.#relaxed = relaxed;
      out.push({ type: relaxed ? "relax" : "unrelax" });
    }
    return out;
  }
}
