// A small, bounded, lazy pool of exclusive connections for blocking commands and WATCH.
import { ClosedError, TimeoutError } from "../errors.ts";
import type { Connection } from "../connection/connection.ts";
import { type Clock, systemClock, type TimerId } from "../_clock.ts";

interface Idle {
  conn: Connection;
  since: number;
}

export class ExclusivePool {
  readonly #create: () => Connection;
  readonly #max: number;
  readonly #idleTimeout: number;
  readonly #idle: Idle[] = [];
  readonly #busy = new Set<Connection>();
  readonly #waiters: { resolve: (c: Connection) => void; reject: (e: Error) => void }[] = [];
  /** Connections to retire on release (maintenance). */
  readonly #retire = new WeakSet<Connection>();
  #sweep: TimerId | undefined;
  #closed = false;

  readonly #waitTimeout: number;
  readonly #clock: Clock;

  /**
   * @param waitTimeout Longest wait for a free connection when all are busy, ms; 0 = no bound.
   * @param clock Time and timers of the idle sweep and the wait bound.
   */
  constructor(
    create: () => Connection,
    max: number,
    idleTimeout: number,
    waitTimeout = 0,
    clock: Clock = systemClock,
  ) {
    this.#clock = clock;
    this.#create = create;
    this.#max = max;
    this.#idleTimeout = idleTimeout;
    this.#waitTimeout = waitTimeout;
  }

  get size(): number {
    return this.#idle.length + this.#busy.size;
  }

  get busy(): number {
    return this.#busy.size;
  }

  /** Every connection, idle or busy. */
  connections(): Connection[] {
    return [...this.#idle.map((i) => i.conn), ...this.#busy];
  }

  acquire(): Promise<Connection> {
    if (this.#closed) {
      return Promise.reject(new ClosedError("Cannot borrow a connection: the client is closed"));
    }
    let idle: Idle | undefined;
    while ((idle = this.#idle.pop()) !== undefined) {
      if (idle.conn.closed) continue;
      this.#busy.add(idle.conn);
      return Promise.resolve(idle.conn);
    }
    if (this.size < this.#max) {
      const conn = this.#create();
      this.#busy.add(conn);
      return Promise.resolve(conn);
    }
    return new Promise((resolve, reject) => {
      const w = { resolve, reject };
      if (this.#waitTimeout > 0) {
        const timer = this.#clock.setTimer(() => {
          const i = this.#waiters.indexOf(w);
          if (i === -1) return;
          this.#waiters.splice(i, 1);
          reject(
            new TimeoutError(
              `Cannot borrow an exclusive connection: all ${this.#max} are busy (maxExclusiveConnections) after ${this.#waitTimeout} ms`,
            ),
          );
        }, this.#waitTimeout);
        w.resolve = (c) => {
          this.#clock.clearTimer(timer);
          resolve(c);
        };
        w.reject = (e) => {
          this.#clock.clearTimer(timer);
          reject(e);
        };
      }
      this.#waiters.push(w);
    });
  }

  release(conn: Connection): void {
    if (!this.#busy.delete(conn)) return;
    if (!conn.idle && !conn.closed) {
      // A command still waits for its reply (a timed-out BLPOP, say): never lend it again.
      conn.destroy();
      this.#serveWaiter();
      return;
    }
    if (this.#closed || conn.closed || this.#retire.has(conn)) {
      conn.close().catch(() => {});
      this.#serveWaiter();
      return;
    }
    const w = this.#waiters.shift();
    if (w) {
      this.#busy.add(conn);
      w.resolve(conn);
      return;
    }
    this.#idle.push({ conn, since: this.#clock.now() });
    this.#armSweep();
  }

  /** Drops a broken connection. */
  discard(conn: Connection): void {
    this.#busy.delete(conn);
    conn.destroy();
    this.#serveWaiter();
  }

  /** Retires connections matching `pred`: idle ones at once, busy ones when released. */
  retire(pred: (c: Connection) => boolean): number {
    let n = 0;
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const c = this.#idle[i]!.conn;
      if (pred(c)) {
        this.#idle.splice(i, 1);
        c.close().catch(() => {});
        n++;
      }
    }
    for (const c of this.#busy) {
      if (pred(c)) {
        this.#retire.add(c);
        n++;
      }
    }
    return n;
  }

  #serveWaiter(): void {
    if (this.#waiters.length === 0 || this.size >= this.#max) return;
    const w = this.#waiters.shift()!;
    const conn = this.#create();
    this.#busy.add(conn);
    w.resolve(conn);
  }

  #armSweep(): void {
    if (this.#sweep !== undefined || this.#idleTimeout <= 0) return;
    this.#sweep = this.#clock.setTimer(() => {
      this.#sweep = undefined;
      const now = this.#clock.now();
      for (let i = this.#idle.length - 1; i >= 0; i--) {
        const idle = this.#idle[i]!;
        if (now - idle.since >= this.#idleTimeout) {
          this.#idle.splice(i, 1);
          idle.conn.close().catch(() => {});
        }
      }
      if (this.#idle.length > 0) this.#armSweep();
    }, this.#idleTimeout);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#clock.clearTimer(this.#sweep);
    this.#sweep = undefined;
    for (const w of this.#waiters.splice(0)) {
      w.reject(new ClosedError("Cannot borrow a connection: the client is closed"));
    }
    const all = [...this.#idle.splice(0).map((i) => i.conn), ...this.#busy];
    this.#busy.clear();
    // Busy connections hold blocking commands that may never return: close at once.
    await Promise.all(all.map((c) => {
      c.destroy();
      return c.close();
    }));
  }
}
