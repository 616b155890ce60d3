// How the sentinel client asks its own questions: short-lived clients for one round of
// commands to a sentinel or to a data node (ROLE), and the long-lived session the monitor
// subscribes on. Both are our own RedisClient, so the handshake, TLS, timeouts and password
// redaction are the standalone ones.
import type { Endpoint } from "../endpoint.ts";
import { RedisClient } from "../client/redis_client.ts";
import type { RedisClientOptions } from "../client/options.ts";
import { ClosedError, ReplyError } from "../errors.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { PubSubListener } from "../client/subscription.ts";

/** Asks sentinels and data nodes one round of commands each. */
export interface Probe {
  /**
   * Sends `commands` to the sentinel at `endpoint`. Error replies come back as `ReplyError`
   * values; the promise rejects when the sentinel cannot be reached or does not answer.
   */
  sentinel(endpoint: Endpoint, commands: RedisArgument[][]): Promise<RespValue[]>;
  /** The same for a data node, with the data connections' credentials and TLS. */
  node(endpoint: Endpoint, commands: RedisArgument[][]): Promise<RespValue[]>;
  /**
   * Ends every round under way (their clients are destroyed: they reject with `ClosedError`)
   * and refuses new ones: a discovery stops at once instead of asking one silent sentinel
   * after another.
   */
  close(): Promise<void>;
}

/** A connection to one sentinel that stays open: the monitor's. */
export interface SentinelSession {
  /** The sentinel. */
  readonly endpoint: Endpoint;
  /** Subscribes to channels; resolves once confirmed. */
  subscribe(channels: string[], listener: PubSubListener): Promise<void>;
  /** Sends one command. */
  command(args: RedisArgument[]): Promise<RespValue>;
  /** Calls `fn` once when the connection is lost. */
  onLost(fn: (error: Error | undefined) => void): void;
  /** Closes it. */
  close(): Promise<void>;
}

/** Opens a session to a sentinel, ready (connected) when it resolves. */
export type SessionOpener = (endpoint: Endpoint) => Promise<SentinelSession>;

/** Connection settings of the probe and the sessions. */
export interface DialSettings {
  /** Base options of every client (timeouts, protocol, connector, logger). */
  base: RedisClientOptions;
  /** Credentials and TLS of the sentinels. */
  sentinel: Pick<RedisClientOptions, "username" | "password" | "tls">;
  /** Credentials and TLS of the data nodes. */
  node: Pick<RedisClientOptions, "username" | "password" | "tls">;
}

function clientFor(
  s: DialSettings,
  endpoint: Endpoint,
  which: "sentinel" | "node",
  reconnect: boolean,
): RedisClient {
  const creds = which === "sentinel" ? s.sentinel : s.node;
  return new RedisClient({
    ...s.base,
    url: undefined,
    db: 0,
    host: endpoint.host,
    port: endpoint.port,
    username: creds.username,
    password: creds.password,
    tls: creds.tls ?? false,
    // A probe never queues behind a dead endpoint: the caller moves on to the next one. A
    // session reconnects only so that its loss is reported ("reconnecting"): the monitor then
    // closes it and moves to another sentinel.
    reconnect: reconnect ? { baseDelay: 100, maxDelay: 1000 } : false,
    maintenanceNotifications: { mode: "disabled" },
  });
}

async function ask(client: RedisClient, commands: RedisArgument[][]): Promise<RespValue[]> {
  try {
    const settled = await Promise.allSettled(commands.map((c) => client.sendCommand(c)));
    return settled.map((r) => {
      if (r.status === "fulfilled") return r.value;
      if (r.reason instanceof ReplyError) return r.reason;
      throw r.reason;
    });
  } finally {
    await client.close();
  }
}

/** The probe of a sentinel client: one short-lived client per round. */
export function createProbe(s: DialSettings): Probe {
  const live = new Set<RedisClient>();
  let closed = false;
  const round = async (
    which: "sentinel" | "node",
    endpoint: Endpoint,
    commands: RedisArgument[][],
  ): Promise<RespValue[]> => {
    if (closed) throw new ClosedError("Cannot ask: the client is closed", { written: false });
    const client = clientFor(s, endpoint, which, false);
    live.add(client);
    try {
      return await ask(client, commands);
    } finally {
      live.delete(client);
    }
  };
  return {
    sentinel: (endpoint, commands) => round("sentinel", endpoint, commands),
    node: (endpoint, commands) => round("node", endpoint, commands),
    async close() {
      closed = true;
      await Promise.all([...live].map((c) => c.destroy()));
    },
  };
}

/** Opens monitor sessions with the sentinel settings. */
export function createSessionOpener(s: DialSettings): SessionOpener {
  return async (endpoint) => {
    const client = clientFor(s, endpoint, "sentinel", true);
    let lost: ((e: Error | undefined) => void) | undefined;
    let fired = false;
    const fire = (e: Error | undefined) => {
      if (fired) return;
      fired = true;
      lost?.(e);
    };
    client.addEventListener("reconnecting", (ev) => {
      fire(ev.detail.error);
    });
    try {
      // RESP2 keeps pub/sub on a connection of its own: the shared one must be up to notice
      // the sentinel going away, and PING checks that it answers.
      await client.sendCommand(["PING"]);
    } catch (e) {
      await client.close();
      throw e;
    }
    return {
      endpoint,
      async subscribe(channels, listener) {
        await client.subscribe(channels, listener);
      },
      command: (args) => client.sendCommand(args),
      onLost(fn) {
        lost = fn;
      },
      close: () => {
        fired = true;
        return client.close();
      },
    };
  };
}
