// Internal: the real redis-server replicas of the maintenance simulator's failover and
// data-movement rebind: one started and synchronised with a primary, then promoted.
import { closedError, sleepOrClosed } from "./_action_queue.ts";
import { hostPort } from "./_notifications.ts";
import { oneCommand, openControl, parseInfo } from "./_redis_control.ts";
import { type SpawnedRedis, spawnRedis } from "./_redis_process.ts";
import type { Connector } from "../transport/types.ts";
import type { Endpoint } from "./types.ts";

/** How a replica is started. */
export interface ReplicaOptions {
  /** Opens the control connections. */
  connector: Connector;
  /** The redis-server command. */
  command: string | undefined;
  /** The simulator's timers (cut short on close). */
  timers: Set<() => void>;
  /** Told of the process once it runs; false when the simulator closed meanwhile. */
  started(r: SpawnedRedis): boolean;
  /** Logs a debug message. */
  debug(message: string): void;
}

async function ping(connector: Connector, host: string, port: number): Promise<boolean> {
  try {
    return (await oneCommand(connector, host, port, ["PING"])) === "PONG";
  } catch {
    return false;
  }
}

/**
 * Starts a redis-server on loopback and makes it a replica of `primary`; resolves once it is in
 * sync (15 s at most). Lowers the primary's repl-diskless-sync-delay for the sync.
 */
export async function spawnReplicaOf(
  primary: Endpoint,
  o: ReplicaOptions,
): Promise<SpawnedRedis> {
  const { connector } = o;
  const r = await spawnRedis(
    { host: "127.0.0.1", command: o.command },
    (h, p) => ping(connector, h, p),
  );
  if (!o.started(r)) {
    await r.stop();
    throw closedError();
  }
  // The primary waits repl-diskless-sync-delay (5 s by default) before a full sync: lower it
  // for the duration of this sync, then restore it.
  let delay: string | undefined;
  try {
    const v = await oneCommand(connector, primary.host, primary.port, [
      "CONFIG",
      "GET",
      "repl-diskless-sync-delay",
    ]);
    const found = v instanceof Map
      ? v.get("repl-diskless-sync-delay")
      : Array.isArray(v)
      ? v[1]
      : undefined;
    if (typeof found === "string" && found !== "0") {
      await oneCommand(connector, primary.host, primary.port, [
        "CONFIG",
        "SET",
        "repl-diskless-sync-delay",
        "0",
      ]);
      delay = found;
    }
  } catch (e) {
    o.debug(`cannot lower repl-diskless-sync-delay: ${(e as Error).message}`);
  }
  const c = await openControl(connector, r.host, r.port);
  try {
    await c.command(["REPLICAOF", primary.host, primary.port]);
    const end = Date.now() + 15_000;
    for (;;) {
      const info = parseInfo(String(await c.command(["INFO", "replication"])));
      if (info.master_link_status === "up" && info.master_sync_in_progress === "0") break;
      if (Date.now() > end) {
        throw new Error(
          `Cannot synchronise the replica ${r.host}:${r.port}: no sync within 15 s`,
        );
      }
      if (!await sleepOrClosed(20, o.timers)) throw closedError();
    }
  } finally {
    c.close();
    if (delay !== undefined) {
      await oneCommand(connector, primary.host, primary.port, [
        "CONFIG",
        "SET",
        "repl-diskless-sync-delay",
        delay,
      ]).catch(() => {});
    }
  }
  o.debug(
    `replica ${r.host}:${r.port} (pid ${r.pid}) in sync with ${
      hostPort(primary.host, primary.port)
    }`,
  );
  return r;
}

/** Lets `replica` catch up with `primary`'s offset (2 s at most), then promotes it. */
export async function promoteReplica(
  connector: Connector,
  replica: Endpoint,
  primary: Endpoint,
  debug: (message: string) => void,
): Promise<void> {
  // Let the replica catch up with the primary's offset (bounded), then promote it.
  try {
    const p = await openControl(connector, primary.host, primary.port);
    const r = await openControl(connector, replica.host, replica.port);
    try {
      const end = Date.now() + 2_000;
      for (;;) {
        const pi = parseInfo(String(await p.command(["INFO", "replication"])));
        const ri = parseInfo(String(await r.command(["INFO", "replication"])));
        if (Number(ri.slave_repl_offset ?? -1) >= Number(pi.master_repl_offset ?? 0)) break;
        if (Date.now() > end) break;
        await new Promise((res) => setTimeout(res, 10));
      }
    } finally {
      p.close();
      r.close();
    }
  } catch (e) {
    debug(`cannot compare replication offsets: ${(e as Error).message}`);
  }
  await oneCommand(connector, replica.host, replica.port, ["REPLICAOF", "NO", "ONE"]);
}
