/**
 * The callbacks of a transport, with the bookkeeping every runtime needs: `onClose` exactly
 * once, and events that happen before `setHandlers` (a socket closing while the caller was
 * still deciding, or a stray early chunk) are held until the handlers arrive.
 *
 * @module
 */

import type { TransportHandlers } from "./types.ts";

/** Holds the handlers of one transport. */
export class HandlerSlot {
  #h: TransportHandlers | undefined;
  #early: Uint8Array[] | undefined;
  #closed = false;
  #closeDelivered = false;
  #closeError: Error | undefined;

  /** Whether the close has been reported (or is pending delivery). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Installs the handlers and replays anything that happened before. */
  set(handlers: TransportHandlers): void {
    if (this.#h !== undefined) throw new Error("Cannot set transport handlers twice");
    this.#h = handlers;
    const early = this.#early;
    this.#early = undefined;
    if (early) { for (const chunk of early) handlers.onData(chunk); }
    if (this.#closed && !this.#closeDelivered) {
      // Never call back synchronously from inside setHandlers.
      queueMicrotask(() => this.#deliverClose());
    }
  }

  /** Reports received bytes (`chunk` may be reused after the call). */
  data(chunk: Uint8Array): void {
    if (this.#closed) return;
    if (this.#h) this.#h.onData(chunk);
    else (this.#early ??= []).push(chunk.slice());
  }

  /** Reports that the socket takes bytes again. */
  drain(): void {
    if (!this.#closed) this.#h?.onDrain();
  }

  /** Reports the close; only the first call counts. */
  close(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeError = error;
    this.#early = undefined;
    if (this.#h) this.#deliverClose();
  }

  #deliverClose(): void {
    if (this.#closeDelivered || !this.#h) return;
    this.#closeDelivered = true;
    this.#h.onClose(this.#closeError);
  }
}
