// In-memory databases for the multi-database client's tests on a manual clock.
import {
  type DatabaseClient,
  type DatabaseClientOptions,
  MultiDbClient,
  type MultiDbClientOptions,
  type SwitchEventDetail,
} from "../../../src/multi_db/mod.ts";
import { ConnectionError } from "../../../src/errors.ts";
import type { RedisArgument, RespValue } from "../../../src/resp/types.ts";
import { ManualClock } from "../connection/_manual_clock.ts";

/** An in-memory server: up or down, a few commands; BLPOP blocks until released. */
export class FakeServer {
  up = true;
  readonly data = new Map<string, string>();
  commands = 0;
  /** BLPOPs waiting: resolve them with a value. */
  readonly blocked: ((v: RespValue) => void)[] = [];
  answer(args: RedisArgument[]): Promise<RespValue> {
    this.commands++;
    if (!this.up) {
      return Promise.reject(
        new ConnectionError("Cannot get the reply: the connection was lost", { written: true }),
      );
    }
    const [name, key, value] = args.map(String);
    switch (name!.toUpperCase()) {
      case "PING":
        return Promise.resolve("PONG");
      case "SET":
        this.data.set(key!, value!);
        return Promise.resolve("OK");
      case "GET":
        return Promise.resolve(this.data.get(key!) ?? null);
      case "INCR": {
        const n = Number(this.data.get(key!) ?? 0) + 1;
        this.data.set(key!, String(n));
        return Promise.resolve(n);
      }
      case "BLPOP":
        return new Promise((resolve) => this.blocked.push(resolve));
      default:
        return Promise.reject(new Error(`fake: ${name} not supported`));
    }
  }
}

/**
 * A factory of clients of the fake servers, by URL. With `cache`, each client answers a GET it
 * answered before from memory (as a client-side cache does) and has `cacheStats()`.
 */
export function fakeFactory(servers: Map<string, FakeServer>, cache = false) {
  return (o: DatabaseClientOptions): DatabaseClient => {
    const server = servers.get(o.url!)!;
    const unused = () => Promise.reject(new Error("fake: unused"));
    const memory = new Map<string, unknown>();
    let hits = 0;
    const run = (args: RedisArgument[]): Promise<RespValue> => {
      const k = args.map(String).join(" ");
      if (cache && String(args[0]).toUpperCase() === "GET" && memory.has(k)) {
        hits++;
        return Promise.resolve(memory.get(k) as RespValue);
      }
      return server.answer(args).then((r) => {
        if (cache && String(args[0]).toUpperCase() === "GET") memory.set(k, r);
        return r;
      });
    };
    const client: DatabaseClient = {
      _run: (args, transform) => run(args).then((r) => (transform ? transform(r) : r)),
      sendCommand: (args) => run(args),
      multi: () => {
        throw new Error("fake: unused");
      },
      watch: unused,
      subscribe: () => Promise.resolve({ unsubscribe: () => Promise.resolve() }),
      psubscribe: unused,
      ssubscribe: unused,
      close: () => Promise.resolve(),
      addEventListener: () => {},
      removeEventListener: () => {},
    };
    if (cache) {
      client.cacheStats = () => ({
        hits,
        misses: 0,
        entries: memory.size,
        bytes: 0,
        evictions: 0,
        expired: 0,
        bytesSaved: 0,
        invalidations: 0,
        flushes: 0,
      });
    }
    return client;
  };
}

/** Two fake databases, "a" (weight 2) and "b", on a manual clock; `seen` logs the switches. */
export function setup(extra: Partial<MultiDbClientOptions> = {}, cache = false) {
  const clock = new ManualClock(0);
  const a = new FakeServer();
  const b = new FakeServer();
  const servers = new Map([["redis://a:1", a], ["redis://b:1", b]]);
  const client = new MultiDbClient({
    databases: [
      { url: "redis://a:1", name: "a", weight: 2 },
      { url: "redis://b:1", name: "b", weight: 1 },
    ],
    createClient: fakeFactory(servers, cache),
    clock,
    ...extra,
  });
  const seen: (SwitchEventDetail & { at: number })[] = [];
  client.addEventListener("switch", (e) => seen.push({ ...e.detail, at: clock.now() }));
  return { clock, a, b, client, seen };
}
