// Incremental reader of client requests (RESP arrays of bulk strings, or inline commands).
// The proxy forwards the original bytes; it only inspects the arguments.

/** One complete request: its arguments and where its bytes lie in the buffer passed to the callback. */
export interface Request {
  /** Arguments, as the raw bytes of each one. */
  args: Uint8Array[];
  /** The request's original bytes. */
  raw: Uint8Array;
}

const CR = 13;
const LF = 10;
const MAX_INLINE = 64 * 1024;

/** Thrown for a request stream the proxy cannot parse. */
export class RequestSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RequestSyntaxError";
  }
}

/** Splits a byte stream of requests into {@linkcode Request}s. */
export class RequestReader {
  #buf: Uint8Array = new Uint8Array(0);

  /** Feeds bytes; returns the requests completed by them. Throws {@linkcode RequestSyntaxError}. */
  feed(chunk: Uint8Array): Request[] {
    let buf: Uint8Array;
    if (this.#buf.length === 0) buf = chunk;
    else {
      buf = new Uint8Array(this.#buf.length + chunk.length);
      buf.set(this.#buf);
      buf.set(chunk, this.#buf.length);
    }
    const out: Request[] = [];
    let pos = 0;
    while (pos < buf.length) {
      const end = buf[pos] === 0x2a
        ? this.#parseArray(buf, pos, out)
        : this.#parseInline(buf, pos, out);
      if (end < 0) break;
      pos = end;
    }
    // Keep the unparsed tail (copied: the transport may reuse `chunk`).
    this.#buf = pos >= buf.length ? new Uint8Array(0) : buf.slice(pos);
    if (buf === chunk) {
      for (const r of out) {
        r.raw = r.raw.slice();
        r.args = r.args.map((a) => a.slice());
      }
    }
    return out;
  }

  /** Bytes received but not yet forming a complete request. */
  get pending(): number {
    return this.#buf.length;
  }

  #line(buf: Uint8Array, from: number): number {
    for (let i = from; i + 1 < buf.length; i++) {
      if (buf[i] === CR && buf[i + 1] === LF) return i;
    }
    return -1;
  }

  #int(buf: Uint8Array, from: number, to: number): number {
    let n = 0;
    if (to <= from) throw new RequestSyntaxError("Protocol error: expected a number");
    for (let i = from; i < to; i++) {
      const c = buf[i]! - 48;
      if (c < 0 || c > 9) throw new RequestSyntaxError("Protocol error: invalid multibulk length");
      n = n * 10 + c;
    }
    return n;
  }

  #parseArray(buf: Uint8Array, start: number, out: Request[]): number {
    const eol = this.#line(buf, start);
    if (eol < 0) return -1;
    const count = this.#int(buf, start + 1, eol);
    let pos = eol + 2;
    const args: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      if (pos >= buf.length) return -1;
      if (buf[pos] !== 0x24) throw new RequestSyntaxError("Protocol error: expected '$'");
      const e = this.#line(buf, pos);
      if (e < 0) return -1;
      const len = this.#int(buf, pos + 1, e);
      const dataStart = e + 2;
      if (dataStart + len + 2 > buf.length) return -1;
      if (buf[dataStart + len] !== CR || buf[dataStart + len + 1] !== LF) {
        throw new RequestSyntaxError("Protocol error: bulk string not followed by CRLF");
      }
      args.push(buf.subarray(dataStart, dataStart + len));
      pos = dataStart + len + 2;
    }
    out.push({ args, raw: buf.subarray(start, pos) });
    return pos;
  }

  #parseInline(buf: Uint8Array, start: number, out: Request[]): number {
    let eol = -1;
    for (let i = start; i < buf.length; i++) {
      if (buf[i] === LF) {
        eol = i;
        break;
      }
    }
    if (eol < 0) {
      if (buf.length - start > MAX_INLINE) {
        throw new RequestSyntaxError("Protocol error: too big inline request");
      }
      return -1;
    }
    const lineEnd = eol > start && buf[eol - 1] === CR ? eol - 1 : eol;
    const text = new TextDecoder().decode(buf.subarray(start, lineEnd)).trim();
    if (text.length > 0) {
      const enc = new TextEncoder();
      out.push({
        args: text.split(/\s+/).map((s) => enc.encode(s)),
        raw: buf.subarray(start, eol + 1),
      });
    }
    return eol + 1;
  }
}

const decoder = new TextDecoder();

/** Decodes an argument as UTF-8. */
export function argText(arg: Uint8Array | undefined): string {
  return arg === undefined ? "" : decoder.decode(arg);
}

/** Decodes an argument as upper-case UTF-8 (command names, keywords). */
export function argUpper(arg: Uint8Array | undefined): string {
  return argText(arg).toUpperCase();
}
