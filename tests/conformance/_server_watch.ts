// What the servers see of a client: its connections (`CLIENT LIST`, by client name) with their
// subscription counts, and how many connections the servers accepted (`INFO stats`). One raw
// connection per server, opened once, so the watch itself opens nothing while a test counts.
import { RawClient } from "../_helpers/raw_client.ts";
import type { RespValue } from "../../src/resp/types.ts";
import type { Endpoint } from "./kinds.ts";

/** One connection as `CLIENT LIST` shows it. */
export interface ClientRow {
  /** `host:port` of the server it is connected to. */
  server: string;
  name: string;
  /** Channels, patterns and shard channels it is subscribed to. */
  sub: number;
  psub: number;
  ssub: number;
}

function text(v: RespValue): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v instanceof Error) throw v;
  return String(v);
}

/** Raw connections to a set of servers, for counting what a client holds there. */
export class ServerWatch {
  readonly #raws: Map<string, RawClient>;

  private constructor(raws: Map<string, RawClient>) {
    this.#raws = raws;
  }

  /** Connects to every server. */
  static async open(servers: readonly Endpoint[]): Promise<ServerWatch> {
    const raws = new Map<string, RawClient>();
    for (const s of servers) {
      raws.set(`${s.host}:${s.port}`, await RawClient.connect(s.port, s.host));
    }
    return new ServerWatch(raws);
  }

  /** Every connection named `name` on the servers (all servers unless `only` is given). */
  async connections(name: string, only?: readonly Endpoint[]): Promise<ClientRow[]> {
    const rows: ClientRow[] = [];
    const wanted = only?.map((e) => `${e.host}:${e.port}`);
    for (const [server, raw] of this.#raws) {
      if (wanted !== undefined && !wanted.includes(server)) continue;
      for (const line of text(await raw.call("CLIENT", "LIST")).split("\n")) {
        const f = new Map(
          line.trim().split(" ").map((kv) => {
            const i = kv.indexOf("=");
            return [kv.slice(0, i), kv.slice(i + 1)] as const;
          }),
        );
        if (f.get("name") !== name) continue;
        rows.push({
          server,
          name,
          sub: Number(f.get("sub") ?? 0),
          psub: Number(f.get("psub") ?? 0),
          ssub: Number(f.get("ssub") ?? 0),
        });
      }
    }
    return rows;
  }

  /** The sum of `total_connections_received` over the servers. */
  async connectionsReceived(): Promise<number> {
    let n = 0;
    for (const raw of this.#raws.values()) {
      const m = text(await raw.call("INFO", "stats")).match(/total_connections_received:(\d+)/);
      n += Number(m?.[1] ?? Number.NaN);
    }
    return n;
  }

  /** Closes the raw connections. */
  async close(): Promise<void> {
    await Promise.all([...this.#raws.values()].map((r) => r.close()));
  }
}
