// A tiny raw RESP client over node:net for byte-level tests: it writes exactly what it is told
// and records everything it receives, decoded with our codec (replies and pushes in arrival
// order) and as raw bytes.
import { Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { encodeCommand, RespDecoder } from "../../src/resp/mod.ts";
import type { RedisArgument, RespValue } from "../../src/resp/types.ts";

/** One decoded item of the received stream. */
export interface Received {
  kind: "reply" | "push";
  value: RespValue;
}

/** A raw client connection. */
export class RawClient {
  readonly socket: Socket;
  /** Everything received, decoded, in arrival order. */
  readonly items: Received[] = [];
  /** Raw bytes received. */
  readonly chunks: Uint8Array[] = [];
  /** The peer closed its side (FIN). */
  ended = false;
  /** The socket is fully closed. */
  closed = false;
  /** Resolves when the socket is fully closed. */
  readonly closedPromise: Promise<void>;
  /** A decoding error, if the stream was not valid RESP. */
  error: Error | undefined;
  #cursor = 0;
  #waiters: (() => void)[] = [];
  #decoder: RespDecoder;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.#decoder = new RespDecoder({
      onReply: (value) => this.#add({ kind: "reply", value }),
      onPush: (value) => this.#add({ kind: "push", value }),
    });
    socket.on("data", (chunk: Uint8Array) => {
      this.chunks.push(new Uint8Array(chunk));
      try {
        this.#decoder.feed(chunk);
      } catch (e) {
        this.error = e as Error;
      }
      this.#wake();
    });
    socket.on("end", () => {
      this.ended = true;
      this.#wake();
    });
    socket.on("error", () => {});
    this.closedPromise = new Promise((resolve) =>
      socket.on("close", () => {
        this.closed = true;
        this.#wake();
        resolve();
      })
    );
  }

  /** Connects to `host:port`. */
  static connect(port: number, host = "127.0.0.1"): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = new Socket();
      s.once("error", reject);
      s.connect(port, host, () => {
        s.off("error", reject);
        s.setNoDelay(true);
        resolve(new RawClient(s));
      });
    });
  }

  /** Connects over TLS, trusting `ca` (PEM) and verifying `servername`. */
  static connectTls(
    port: number,
    host: string,
    options: { ca: string; servername: string },
  ): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = tlsConnect({ port, host, ca: [options.ca], servername: options.servername }, () => {
        s.off("error", reject);
        resolve(new RawClient(s));
      });
      s.once("error", reject);
    });
  }

  #add(r: Received): void {
    this.items.push(r);
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  /** Writes the commands in one write. */
  send(...commands: RedisArgument[][]): void {
    const parts = commands.map((c) => encodeCommand(c));
    let n = 0;
    for (const p of parts) n += p.length;
    const buf = new Uint8Array(n);
    let o = 0;
    for (const p of parts) {
      buf.set(p, o);
      o += p.length;
    }
    this.socket.write(buf);
  }

  /** Writes raw bytes (or text). */
  sendRaw(bytes: Uint8Array | string): void {
    this.socket.write(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes);
  }

  /** Waits until `predicate` holds (checked on every received chunk), or throws after `timeoutMs`. */
  async until(predicate: () => boolean, timeoutMs = 5_000, what = "condition"): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!predicate()) {
      if (this.closed && !predicate()) {
        throw new Error(`Connection closed while waiting for ${what}`);
      }
      const left = end - Date.now();
      if (left <= 0) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The next unread item (reply or push). */
  async next(timeoutMs = 5_000): Promise<Received> {
    await this.until(() => this.items.length > this.#cursor, timeoutMs, "the next item");
    return this.items[this.#cursor++]!;
  }

  /** The next `n` unread items. */
  async take(n: number, timeoutMs = 5_000): Promise<Received[]> {
    await this.until(() => this.items.length >= this.#cursor + n, timeoutMs, `${n} items`);
    const out = this.items.slice(this.#cursor, this.#cursor + n);
    this.#cursor += n;
    return out;
  }

  /** Sends one command and returns the next item received (which should be its reply). */
  async call(...args: RedisArgument[]): Promise<RespValue> {
    this.send(args);
    const r = await this.next();
    return r.value;
  }

  /** Unread items. */
  get unread(): Received[] {
    return this.items.slice(this.#cursor);
  }

  /** Every received byte, concatenated. */
  bytes(): Uint8Array {
    let n = 0;
    for (const c of this.chunks) n += c.length;
    const out = new Uint8Array(n);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }

  /** Waits until the peer closes the connection. */
  async waitClosed(timeoutMs = 5_000): Promise<void> {
    await this.until(() => this.ended || this.closed, timeoutMs, "the peer to close");
  }

  /** Closes the socket and waits until it is closed. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.socket.destroy();
      await this.closedPromise;
    }
  }
}
