// One client connection of the simulator's data plane: a RESP proxy between an accepted client
// socket and a per-client upstream connection to a real redis-server.
//
// Ordering model: every request reserves a slot in `#slots`, in request order. Forwarded slots
// also sit in `#fwd`, the FIFO the upstream answers in. A slot answered by the proxy itself is
// computed only when it reaches the head of `#slots` (so a pipelined `HELLO 3` ahead of it has
// taken effect). Replies leave strictly in slot order; server pushes that belong to no slot pass
// straight through; injected notifications are written between whole frames only.
import type { ServerTransport } from "../transport/listen.ts";
import type { Endpoint } from "../endpoint.ts";
import type { Connector, Transport } from "../transport/types.ts";
import { encodeCommand, RespDecoder, RespFramer } from "../resp/mod.ts";
import type { RespValue } from "../resp/types.ts";
import { argText, argUpper, type Request, RequestReader } from "./_request_reader.ts";
import { hostPort } from "./_notifications.ts";
import { maintInfoReply, parseMaintNotifications } from "./_maint_handshake.ts";
import { ProxySession } from "./_proxy_session.ts";
import { parseRedirect, REDIRECT_LOG_LIMIT, type RedirectRecord } from "./_redirects.ts";
import { concat, errorReply, OK } from "./_reply_bytes.ts";

export type { RedirectRecord };

/** What a proxy connection needs from the simulator that owns it. */
export interface ProxyHost {
  readonly connector: Connector;
  readonly rejectMaintNotifications: boolean;
  /** Extra delay applied to every reply, in ms. */
  latencyMs(): number;
  /** Replies are held until this time (ms since epoch; `Infinity` while paused). */
  holdUntil(): number;
  /** Requests are read and dropped, nothing is answered. */
  blackholed(): boolean;
  /** Requests are buffered, not forwarded (proxy paused). */
  paused(): boolean;
  /** Frames to send right after a connection opts in (replays). */
  optInReplay(conn: ProxyConnection): Uint8Array[];
  /** Called once when the connection is gone. */
  closed(conn: ProxyConnection): void;
  /** Called for every MOVED / ASK reply forwarded to the client. */
  redirected?(conn: ProxyConnection, record: RedirectRecord): void;
  /** Logs a diagnostic. */
  debug(message: string): void;
}

type Family =
  | "subscribe"
  | "psubscribe"
  | "ssubscribe"
  | "unsubscribe"
  | "punsubscribe"
  | "sunsubscribe";

const FAMILIES: ReadonlySet<string> = new Set([
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
]);
const MESSAGES: ReadonlySet<string> = new Set(["message", "pmessage", "smessage"]);

interface Slot {
  /** `fwd`: forwarded, reply written to the client; `silent`: forwarded by the proxy itself,
   * reply dropped; `local`: answered by the proxy. */
  kind: "fwd" | "silent" | "local";
  /** Reply frames expected; -1: computed when the first one arrives (UNSUBSCRIBE of all). */
  expect: number;
  family?: Family;
  frames: Uint8Array[];
  done: boolean;
  /** Written to the current upstream. */
  sent: boolean;
  /** Local slots: computes the reply when the slot reaches the head. */
  produce?: () => Uint8Array[];
  /** Forwarded slots: runs when the reply is complete (`ok` = not an error reply). */
  effect?: (ok: boolean) => void;
}

const T_PUSH = 0x3e;
const T_ARRAY = 0x2a;
const T_ERROR = 0x2d;
const T_BULK_ERROR = 0x21;

let nextId = 1;

/** One proxied client connection. */
export class ProxyConnection {
  readonly id: number = nextId++;
  readonly client: ServerTransport;
  /** The listener (endpoint) the client connected to. */
  readonly endpoint: Endpoint;
  readonly createdAt: number = Date.now();
  #host: ProxyHost;
  #reader = new RequestReader();
  #slots: Slot[] = [];
  #slotHead = 0;
  #fwd: Slot[] = [];
  #fwdHead = 0;
  #sentUnanswered = 0;
  #up: Transport | undefined;
  #upstreamAddr: Endpoint;
  #framer: RespFramer | undefined;
  #connecting = true;
  #connectDone: Promise<void> = Promise.resolve();
  #pendingSwitches = 0;
  #switching = false;
  #pendingUp: Uint8Array[] = [];
  #fwdBatch: Uint8Array[] = [];
  #out: Uint8Array[] = [];
  #incoming: { frame: Uint8Array; type: number; at: number }[] = [];
  #incomingHead = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = 0;
  #heldInput: Uint8Array[] = [];
  #inspect: RespValue | undefined;
  #decoder: RespDecoder;
  #drainWaiters: (() => void)[] = [];
  #upstreamGone = false;
  #closed = false;
  #closing = false;
  #inMulti = false;
  #tunnel = false;

  /** RESP version of the connection (2 until a successful `HELLO 3`). */
  protocol: 2 | 3 = 2;
  /** Opted in to maintenance notifications. */
  optedIn = false;
  /** The endpoint type asked for at opt-in; `null` for a bare `ON`. */
  endpointType: string | null = null;
  /** Bytes received from the client. */
  bytesIn = 0;
  /** Bytes written to the client. */
  bytesOut = 0;
  /** Something was dropped by a blackhole: the reply stream is no longer in step. */
  poisoned = false;
  /** MOVED replies forwarded to the client. */
  moved = 0;
  /** ASK replies forwarded to the client. */
  ask = 0;
  /** The forwarded MOVED / ASK replies, oldest first (the latest 10 000). */
  readonly redirects: RedirectRecord[] = [];
  /** What is replayed on a new upstream: HELLO, AUTH, SELECT, tracking, subscriptions. */
  readonly #session = new ProxySession();

  constructor(
    host: ProxyHost,
    client: ServerTransport,
    endpoint: Endpoint,
    upstream: Endpoint,
    /** When set, the upstream is not known yet (a switch is in progress): connect once it is. */
    pendingUpstream?: Promise<Endpoint>,
  ) {
    this.#host = host;
    this.client = client;
    this.endpoint = endpoint;
    this.#upstreamAddr = upstream;
    this.#decoder = new RespDecoder({
      onReply: (v: RespValue) => this.#inspect = v,
      onPush: (v: RespValue[]) => this.#inspect = v,
    });
    client.setHandlers({
      onData: (chunk) => this.#onClientData(chunk),
      onDrain: () => {},
      onClose: () => this.#teardown(),
    });
    this.#connectDone = pendingUpstream === undefined
      ? this.#connect(upstream)
      : pendingUpstream.then((addr) => {
        this.#upstreamAddr = addr;
        return this.#connect(addr);
      });
  }

  /** Selected database. */
  get db(): number {
    return this.#session.db;
  }

  /** The upstream this connection forwards to. */
  get upstream(): Endpoint {
    return this.#upstreamAddr;
  }

  /** Commands forwarded and not yet answered (including held ones). */
  get inFlight(): number {
    return this.#fwd.length - this.#fwdHead;
  }

  /** Whether the connection is gone. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** Whether the connection is closing or gone. */
  get isClosing(): boolean {
    return this.#closing || this.#closed;
  }

  /** Writes a notification frame to the client now (between whole frames). */
  inject(frame: Uint8Array): void {
    if (this.#closed || this.#closing || this.#host.blackholed()) return;
    this.#out.push(frame);
    this.#flushOut();
  }

  /** Closes the client gracefully (FIN after what is already written) and the upstream. */
  close(): void {
    if (this.#closed || this.#closing) return;
    this.#closing = true;
    this.#flushOut();
    this.client.close();
    this.#up?.close();
  }

  /** Closes at once. */
  destroy(): void {
    if (this.#closed) return;
    this.client.destroy();
    this.#up?.close();
    this.#teardown();
  }

  /** Re-runs held input and replies (after a pause, a stall, a latency change). */
  kick(): void {
    if (this.#closed) return;
    if (!this.#host.paused() && this.#heldInput.length > 0) {
      const held = this.#heldInput;
      this.#heldInput = [];
      for (const chunk of held) this.#processInput(chunk);
    }
    this.#pump();
  }

  /**
   * Moves the connection to another upstream: {@linkcode ProxyConnection.hold}, then
   * {@linkcode ProxyConnection.release} to `target`.
   */
  async switchUpstream(target: Endpoint, drainTimeoutMs = 5_000): Promise<void> {
    if (await this.hold(drainTimeoutMs)) await this.release(target);
  }

  /**
   * First half of an upstream switch: new requests wait from now on; resolves `true` once the
   * replies of the requests already written to the current upstream have arrived (and a
   * connection attempt in progress has finished). After `drainTimeoutMs` the connection is
   * closed instead and the result is `false`. Every `true` must be followed by `release`.
   */
  hold(drainTimeoutMs = 5_000): Promise<boolean> {
    if (this.#closed || this.#closing) return Promise.resolve(false);
    this.#pendingSwitches++;
    this.#switching = true;
    const held = this.#connectDone.then(async () => {
      if (this.#sentUnanswered > 0 && !this.#closed) {
        const drained = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), drainTimeoutMs);
          this.#drainWaiters.push(() => {
            clearTimeout(t);
            resolve(true);
          });
        });
        if (!drained) {
          this.#host.debug(`connection ${this.id}: in-flight replies did not drain, closing it`);
          this.close();
        }
      }
      if (this.#closed || this.#closing) {
        this.#pendingSwitches--;
        return false;
      }
      return true;
    });
    this.#connectDone = held.then(() => {});
    return held;
  }

  /**
   * Second half of an upstream switch: opens a connection to `target`, re-applies the session
   * (HELLO/AUTH, SELECT, CLIENT TRACKING, subscriptions) silently, then sends the held requests.
   */
  release(target: Endpoint): Promise<void> {
    this.#pendingSwitches--;
    if (this.#closed) return Promise.resolve();
    const old = this.#up;
    this.#up = undefined;
    this.#framer = undefined;
    old?.close();
    this.#upstreamAddr = target;
    this.#connecting = true;
    this.#connectDone = this.#connect(target, this.#session.replay());
    return this.#connectDone;
  }

  #connect(target: Endpoint, replay: Uint8Array[][] = []): Promise<void> {
    return this.#host.connector({ host: target.host, port: target.port }).then((up) => {
      if (this.#closed) {
        up.close();
        return;
      }
      const framer = new RespFramer((frame: Uint8Array, type: number) => {
        if (this.#framer === framer) this.#onUpstreamFrame(frame, type);
      });
      this.#framer = framer;
      this.#up = up;
      up.setHandlers({
        onData: (chunk) => {
          if (this.#framer !== framer) return;
          if (this.#tunnel) {
            // A replication stream (after SYNC / PSYNC): bytes pass as they are.
            this.#flushOut();
            this.bytesOut += chunk.length;
            this.client.write(chunk);
            return;
          }
          try {
            framer.feed(chunk);
          } catch (e) {
            this.#host.debug(`connection ${this.id}: bad upstream stream: ${(e as Error).message}`);
            this.destroy();
            return;
          }
          this.#pump();
        },
        onDrain: () => {},
        onClose: () => {
          if (this.#up !== up) return;
          this.#upstreamGone = true;
          this.#pump();
        },
      });
      this.#connecting = false;
      // Session replay first (silent slots ahead of every held request), then held requests.
      const silent: Slot[] = replay.map((args) => this.#silentSlot(args));
      this.#fwd.splice(this.#fwdHead, 0, ...silent);
      const bytes: Uint8Array[] = replay.map((args) => encodeCommand(args));
      for (const s of silent) {
        s.sent = true;
        this.#sentUnanswered++;
      }
      // Held requests follow, unless another switch is already waiting.
      this.#switching = this.#pendingSwitches > 0;
      if (!this.#switching) {
        for (let i = this.#fwdHead + silent.length; i < this.#fwd.length; i++) {
          const s = this.#fwd[i]!;
          if (!s.sent) {
            s.sent = true;
            this.#sentUnanswered++;
          }
        }
        bytes.push(...this.#pendingUp);
        this.#pendingUp = [];
      }
      if (bytes.length > 0) up.write(concat(bytes));
    }, (e: unknown) => {
      this.#host.debug(
        `connection ${this.id}: cannot connect to upstream ${hostPort(target.host, target.port)}: ${
          (e as Error).message
        }`,
      );
      this.destroy();
    });
  }

  #silentSlot(args: Uint8Array[]): Slot {
    const slot: Slot = { kind: "silent", expect: 1, frames: [], done: false, sent: false };
    const name = argUpper(args[0]);
    const family = name.toLowerCase();
    if (FAMILIES.has(family)) {
      slot.family = family as Family;
      slot.expect = Math.max(1, args.length - 1);
    }
    return slot;
  }

  // ---- client -> upstream ------------------------------------------------------------------

  #onClientData(chunk: Uint8Array): void {
    if (this.#closed) return;
    this.bytesIn += chunk.length;
    if (this.#host.blackholed()) {
      this.poisoned = true;
      return;
    }
    if (this.#host.paused() || this.#heldInput.length > 0) {
      this.#heldInput.push(chunk.slice());
      return;
    }
    this.#processInput(chunk);
  }

  #processInput(chunk: Uint8Array): void {
    let requests: Request[];
    try {
      requests = this.#reader.feed(chunk);
    } catch (e) {
      this.#out.push(errorReply(`ERR ${(e as Error).message}`));
      this.#flushOut();
      this.close();
      return;
    }
    for (const r of requests) this.#onRequest(r);
    this.#sendBatch();
    this.#flushSlots();
  }

  #sendBatch(): void {
    if (this.#fwdBatch.length === 0) return;
    const bytes = concat(this.#fwdBatch);
    this.#fwdBatch = [];
    if (this.#up !== undefined && !this.#connecting && !this.#switching) this.#up.write(bytes);
    else this.#pendingUp.push(bytes);
  }

  #local(produce: () => Uint8Array[]): void {
    this.#slots.push({ kind: "local", expect: 0, frames: [], done: true, sent: false, produce });
  }

  #onRequest(r: Request): void {
    if (this.#tunnel) {
      this.#fwdBatch.push(r.raw);
      return;
    }
    const name = argUpper(r.args[0]);
    if (name === "CLIENT" && !this.#host.rejectMaintNotifications) {
      const sub = argUpper(r.args[1]);
      if (sub === "MAINT_NOTIFICATIONS") {
        this.#local(this.#maintNotifications(r.args));
        return;
      }
      if (sub === "MAINT_NOTIFICATIONS_INFO") {
        this.#local(() => [maintInfoReply(this.optedIn, this.endpointType, this.protocol)]);
        return;
      }
    }
    const slot: Slot = { kind: "fwd", expect: 1, frames: [], done: false, sent: false };
    const family = name.toLowerCase();
    if (this.#inMulti) {
      if (name === "EXEC" || name === "DISCARD") this.#inMulti = false;
    } else if (FAMILIES.has(family)) {
      slot.family = family as Family;
      const n = r.args.length - 1;
      // UNSUBSCRIBE of everything: one confirmation per subscribed name (at least one),
      // counted when the reply starts (every earlier confirmation has been seen by then).
      slot.expect = n > 0 ? n : family.includes("unsub") ? -1 : 1;
    } else {
      switch (name) {
        case "MULTI":
          this.#inMulti = true;
          break;
        case "SYNC":
        case "PSYNC":
          // A replica: from here on both directions are a replication stream (an RDB payload
          // without a trailing CRLF, then commands), passed through without framing.
          this.#tunnel = true;
          break;
        case "HELLO": {
          const proto = r.args.length > 1 ? Number(argText(r.args[1])) : NaN;
          const args = r.args;
          slot.effect = (ok) => {
            if (!ok) return;
            this.#session.hello = args;
            if (proto === 2 || proto === 3) {
              this.protocol = proto;
              if (proto === 2) this.optedIn = false;
            }
          };
          break;
        }
        case "AUTH": {
          const args = r.args;
          slot.effect = (ok) => {
            if (ok) this.#session.auth = args;
          };
          break;
        }
        case "SELECT": {
          const db = Number(argText(r.args[1]));
          slot.effect = (ok) => {
            if (ok && Number.isInteger(db)) this.#session.db = db;
          };
          break;
        }
        case "RESET":
          slot.effect = (ok) => {
            if (!ok) return;
            this.protocol = 2;
            this.optedIn = false;
            this.endpointType = null;
            this.#session.reset();
          };
          break;
        case "CLIENT":
          if (argUpper(r.args[1]) === "TRACKING") {
            const on = argUpper(r.args[2]) === "ON";
            const args = r.args;
            slot.effect = (ok) => {
              if (ok) this.#session.tracking = on ? args : undefined;
            };
          }
          break;
      }
    }
    this.#slots.push(slot);
    this.#fwd.push(slot);
    if (this.#up !== undefined && !this.#connecting && !this.#switching) {
      slot.sent = true;
      this.#sentUnanswered++;
    }
    this.#fwdBatch.push(r.raw);
  }

  #maintNotifications(args: Uint8Array[]): () => Uint8Array[] {
    const c = parseMaintNotifications(args);
    if (c.reply !== undefined) return () => [c.reply];
    if (!c.on) {
      return () => {
        this.optedIn = false;
        this.endpointType = null;
        return [OK];
      };
    }
    return () => {
      if (this.protocol !== 3) {
        return [errorReply("ERR CLIENT MAINT_NOTIFICATIONS ON requires RESP3: send HELLO 3 first")];
      }
      this.optedIn = true;
      this.endpointType = c.type;
      return [OK, ...this.#host.optInReplay(this)];
    };
  }

  // ---- upstream -> client ------------------------------------------------------------------

  #onUpstreamFrame(frame: Uint8Array, type: number): void {
    const latency = this.#host.latencyMs();
    const at = latency > 0 ? Date.now() + latency : 0;
    this.#incoming.push({ frame, type, at });
  }

  #pump(): void {
    if (this.#closed) return;
    const now = Date.now();
    const hold = this.#host.holdUntil();
    while (this.#incomingHead < this.#incoming.length) {
      if (hold > now) {
        this.#schedule(hold);
        break;
      }
      const e = this.#incoming[this.#incomingHead]!;
      if (e.at > now) {
        this.#schedule(e.at);
        break;
      }
      this.#incomingHead++;
      if (this.#host.blackholed()) {
        this.poisoned = true;
        continue;
      }
      this.#classify(e.frame, e.type);
    }
    if (this.#incomingHead === this.#incoming.length) {
      this.#incoming = [];
      this.#incomingHead = 0;
    } else if (this.#incomingHead > 4096) {
      this.#incoming = this.#incoming.slice(this.#incomingHead);
      this.#incomingHead = 0;
    }
    this.#flushSlots();
    if (this.#upstreamGone && this.#incoming.length === 0 && !this.#switching) this.close();
  }

  #schedule(at: number): void {
    if (!Number.isFinite(at)) return;
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, Math.max(0, at - Date.now()));
  }

  #decode(frame: Uint8Array): RespValue | undefined {
    this.#inspect = undefined;
    try {
      this.#decoder.feed(frame);
    } catch {
      this.#decoder.reset();
      return undefined;
    }
    return this.#inspect;
  }

  #headFwd(): Slot | undefined {
    return this.#fwd[this.#fwdHead];
  }

  #classify(frame: Uint8Array, type: number): void {
    const head = this.#headFwd();
    const inspect = type === T_PUSH ||
      (type === T_ARRAY && this.protocol === 2 &&
        (head?.family !== undefined || this.#session.subscribed()));
    if (inspect) {
      const v = this.#decode(frame);
      const kind = Array.isArray(v) && typeof v[0] === "string" ? v[0].toLowerCase() : "";
      if (FAMILIES.has(kind)) {
        if (head?.family === kind) {
          if (head.expect < 0) head.expect = Math.max(1, this.#session.familySet(kind).size);
          this.#session.track(kind, v as RespValue[]);
          this.#attach(head, frame, type);
        } else {
          this.#session.track(kind, v as RespValue[]);
          this.#out.push(frame);
        }
        return;
      }
      if (type === T_PUSH || (MESSAGES.has(kind) && this.#session.subscribed())) {
        this.#out.push(frame);
        return;
      }
    }
    if (head === undefined) {
      this.#out.push(frame);
      return;
    }
    this.#attach(head, frame, type);
  }

  #attach(slot: Slot, frame: Uint8Array, type: number): void {
    slot.frames.push(frame);
    const aggregate = type === T_ARRAY || type === T_PUSH;
    if (aggregate && slot.family !== undefined && slot.frames.length < slot.expect) return;
    slot.done = true;
    this.#fwdHead++;
    if (this.#fwdHead > 4096) {
      this.#fwd = this.#fwd.slice(this.#fwdHead);
      this.#fwdHead = 0;
    } else if (this.#fwdHead === this.#fwd.length) {
      this.#fwd = [];
      this.#fwdHead = 0;
    }
    if (slot.sent) {
      this.#sentUnanswered--;
      if (this.#sentUnanswered === 0 && this.#drainWaiters.length > 0) {
        const waiters = this.#drainWaiters;
        this.#drainWaiters = [];
        for (const w of waiters) w();
      }
    }
    slot.effect?.(type !== T_ERROR && type !== T_BULK_ERROR);
    if (slot.kind === "silent") return;
    if (type === T_ERROR && slot.frames.length === 1) this.#countRedirect(frame);
    this.#flushSlots();
  }

  /** Counts a `-MOVED <slot> <host:port>` or `-ASK <slot> <host:port>` reply. */
  #countRedirect(frame: Uint8Array): void {
    const record = parseRedirect(frame, Date.now());
    if (record === undefined) return;
    if (record.kind === "MOVED") this.moved++;
    else this.ask++;
    this.redirects.push(record);
    if (this.redirects.length > REDIRECT_LOG_LIMIT) this.redirects.shift();
    this.#host.redirected?.(this, record);
  }

  #flushSlots(): void {
    while (this.#slotHead < this.#slots.length) {
      const s = this.#slots[this.#slotHead]!;
      if (s.kind === "local") this.#out.push(...s.produce!());
      else if (!s.done) break;
      else this.#out.push(...s.frames);
      this.#slotHead++;
    }
    if (this.#slotHead === this.#slots.length) {
      this.#slots = [];
      this.#slotHead = 0;
    } else if (this.#slotHead > 4096) {
      this.#slots = this.#slots.slice(this.#slotHead);
      this.#slotHead = 0;
    }
    this.#flushOut();
  }

  #flushOut(): void {
    if (this.#out.length === 0 || this.#closed) return;
    const bytes = concat(this.#out);
    this.#out = [];
    this.bytesOut += bytes.length;
    this.client.write(bytes);
  }

  #teardown(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#up?.close();
    this.#up = undefined;
    for (const w of this.#drainWaiters) w();
    this.#drainWaiters = [];
    this.#host.closed(this);
  }
}
