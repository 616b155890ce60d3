// Internal: the client session a proxy connection replays on a new upstream (a rebind or a
// failover moves it): HELLO, AUTH, SELECT, CLIENT TRACKING and the subscriptions, as the client
// last set them.
import type { RespValue } from "../resp/types.ts";
import { utf8 } from "./_reply_bytes.ts";

/** A subscription family. */
export type SubFamily = "subscribe" | "psubscribe" | "ssubscribe";

/** The session state of one proxied client. */
export class ProxySession {
  /** The last successful HELLO. */
  hello: Uint8Array[] | undefined;
  /** The last successful AUTH. */
  auth: Uint8Array[] | undefined;
  /** The last successful `CLIENT TRACKING ON ...` (undefined once turned off). */
  tracking: Uint8Array[] | undefined;
  /** Selected database. */
  db = 0;
  readonly #subs: Record<SubFamily, Set<string>> = {
    subscribe: new Set(),
    psubscribe: new Set(),
    ssubscribe: new Set(),
  };

  /** Whether any channel, pattern or shard channel is subscribed. */
  subscribed(): boolean {
    return this.#subs.subscribe.size + this.#subs.psubscribe.size + this.#subs.ssubscribe.size >
      0;
  }

  /** The names subscribed in the family of `kind` (`unsubscribe` counts as `subscribe`). */
  familySet(kind: string): Set<string> {
    const base = kind.replace("unsubscribe", "subscribe") as SubFamily;
    return this.#subs[base] ?? this.#subs.subscribe;
  }

  /** Applies a (un)subscribe confirmation `v` of `kind`. */
  track(kind: string, v: RespValue[]): void {
    const channel = v[1];
    const name = typeof channel === "string"
      ? channel
      : channel instanceof Uint8Array
      ? new TextDecoder().decode(channel)
      : null;
    if (name === null) return;
    const set = this.familySet(kind);
    if (kind.includes("unsub")) set.delete(name);
    else set.add(name);
  }

  /** What RESET clears (AUTH stays). */
  reset(): void {
    this.db = 0;
    this.hello = undefined;
    this.tracking = undefined;
    for (const s of Object.values(this.#subs)) s.clear();
  }

  /** The commands that set the session up again on a new upstream, in order. */
  replay(): Uint8Array[][] {
    const cmds: Uint8Array[][] = [];
    if (this.hello !== undefined) cmds.push(this.hello);
    if (this.auth !== undefined) cmds.push(this.auth);
    if (this.db !== 0) cmds.push([utf8("SELECT"), utf8(String(this.db))]);
    if (this.tracking !== undefined) cmds.push(this.tracking);
    for (const family of ["subscribe", "psubscribe", "ssubscribe"] as const) {
      const set = this.#subs[family];
      if (set.size > 0) cmds.push([utf8(family.toUpperCase()), ...[...set].map((c) => utf8(c))]);
    }
    return cmds;
  }
}
