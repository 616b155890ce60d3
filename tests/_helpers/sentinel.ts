// Starts a real Sentinel group for the tests: one master, its replicas (--replicaof) and
// sentinels (`redis-server <conf> --sentinel`), on free loopback ports.
import { defaultConnector } from "../../src/transport/default.ts";
import type { RedisArgument, RespValue } from "../../src/resp/types.ts";
import { oneCommand, openControl, parseInfo } from "../../src/testing/_redis_control.ts";
import { freePort, type RedisServer, startRedis } from "./redis_server.ts";

/** How to start a sentinel group. */
export interface SentinelGroupOptions {
  /** Replicas of the master. @default 2 */
  replicas?: number;
  /** Sentinels. @default 3 */
  sentinels?: number;
  /** The monitored master's name. @default "mymaster" */
  masterName?: string;
  /** `--appendonly yes` on the data nodes, so a restarted node keeps its data. @default true */
  persistence?: boolean;
  /** Quorum. @default 2 */
  quorum?: number;
  /** `requirepass` / `masterauth` of the data nodes (sentinels get `auth-pass`). */
  password?: string;
  /** `requirepass` of the sentinels themselves. */
  sentinelPassword?: string;
  /** `down-after-milliseconds`. @default 1000 */
  downAfterMs?: number;
  /** `failover-timeout`. @default 5000 */
  failoverTimeoutMs?: number;
  /** Extra arguments for the data nodes. */
  args?: string[];
  /** How long startup and failovers may take. @default 20000 */
  timeoutMs?: number;
}

/** A running sentinel group. */
export interface SentinelGroup {
  readonly masterName: string;
  /** Master and replicas, in start order (the first started as master). */
  readonly servers: RedisServer[];
  /** The sentinels. */
  readonly sentinels: RedisServer[];
  /** `redis://host:port` of every sentinel. */
  readonly sentinelUrls: string[];
  /** The master the sentinels reported last (at start, after failover / waitForNewMaster). */
  readonly master: RedisServer;
  /** Every data node but `master`. */
  readonly replicas: RedisServer[];
  /** Each running data node's last `ROLE` (refreshRoles). */
  readonly roles: ReadonlyMap<RedisServer, "master" | "replica">;
  /** The master address the first reachable sentinel reports. */
  masterAddress(): Promise<{ host: string; port: number }>;
  /** Re-reads each data node's ROLE. */
  refreshRoles(): Promise<void>;
  /**
   * `SENTINEL FAILOVER` on a sentinel; resolves with the new master once every running sentinel
   * reports it and it answers `ROLE` as master, and has the other live replicas attached
   * (`waitReplicas`, default true) and also the old master (`waitOldMaster`, default false: the
   * sentinels demote it about 10 s later).
   */
  failover(options?: { waitReplicas?: boolean; waitOldMaster?: boolean }): Promise<RedisServer>;
  /** Waits until every running sentinel reports a master other than `old` (after a kill). */
  waitForNewMaster(old: { host: string; port: number }, timeoutMs?: number): Promise<RedisServer>;
  /** Sends a command to a data node (authenticated when a password is set). */
  command(server: RedisServer, args: RedisArgument[]): Promise<RespValue>;
  /** Sends a command to a sentinel. */
  sentinelCommand(sentinel: RedisServer, args: RedisArgument[]): Promise<RespValue>;
  /** Stops every process and removes their directories. Idempotent. */
  stop(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function str(v: RespValue): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return String(v);
}

/** Starts a master, its replicas and the sentinels, and waits until the sentinels know all. */
export async function startSentinelGroup(
  options: SentinelGroupOptions = {},
): Promise<SentinelGroup> {
  const nReplicas = options.replicas ?? 2;
  const nSentinels = options.sentinels ?? 3;
  const name = options.masterName ?? "mymaster";
  const timeoutMs = options.timeoutMs ?? 20_000;
  const host = "127.0.0.1";
  const password = options.password;
  const servers: RedisServer[] = [];
  const sentinels: RedisServer[] = [];
  let roles = new Map<RedisServer, "master" | "replica">();
  let current: RedisServer | undefined;
  let stopped: Promise<void> | undefined;

  const run = async (
    s: RedisServer,
    pass: string | undefined,
    args: RedisArgument[],
  ): Promise<RespValue> => {
    if (pass === undefined) return await oneCommand(defaultConnector, s.host, s.port, args);
    const c = await openControl(defaultConnector, s.host, s.port);
    try {
      await c.command(["AUTH", pass]);
      return await c.command(args);
    } finally {
      c.close();
    }
  };
  const command = (s: RedisServer, args: RedisArgument[]) => run(s, password, args);
  const sentinelCommand = (s: RedisServer, args: RedisArgument[]) =>
    run(s, options.sentinelPassword, args);

  const dataArgs = (): string[] => [
    "--repl-diskless-sync-delay",
    "0",
    ...(options.persistence ?? true ? ["--appendonly", "yes"] : []),
    ...(password === undefined ? [] : ["--requirepass", password, "--masterauth", password]),
    ...(options.args ?? []),
  ];

  const until = async (what: string, ms: number, check: () => Promise<boolean>) => {
    const end = Date.now() + ms;
    for (;;) {
      try {
        if (await check()) return;
      } catch {
        // not reachable yet
      }
      if (Date.now() > end) throw new Error(`Cannot ${what} within ${ms} ms`);
      await sleep(50);
    }
  };

  const refreshRoles = async (): Promise<void> => {
    const next = new Map<RedisServer, "master" | "replica">();
    for (const s of servers) {
      if (!s.running) continue;
      try {
        const r = await command(s, ["ROLE"]);
        next.set(s, Array.isArray(r) && str(r[0]!) === "master" ? "master" : "replica");
      } catch {
        // down
      }
    }
    roles = next;
  };

  const masterAddress = async (): Promise<{ host: string; port: number }> => {
    let last: unknown;
    for (const s of sentinels) {
      if (!s.running) continue;
      try {
        const r = await sentinelCommand(s, ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", name]);
        if (Array.isArray(r) && r.length === 2) return { host: str(r[0]!), port: Number(r[1]) };
      } catch (e) {
        last = e;
      }
    }
    throw new Error(`Cannot ask the sentinels for ${name}: ${(last as Error)?.message ?? "none"}`);
  };

  const serverAt = (a: { host: string; port: number }): RedisServer | undefined =>
    servers.find((s) => s.port === a.port);

  const waitForNewMaster = async (
    old: { host: string; port: number },
    ms = timeoutMs,
    waitReplicas = false,
    waitOldMaster = false,
  ): Promise<RedisServer> => {
    let found: RedisServer | undefined;
    await until(`see a new master of ${name}`, ms, async () => {
      const seen = new Set<number>();
      for (const s of sentinels) {
        if (!s.running) continue;
        const r = await sentinelCommand(s, ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", name]);
        if (!Array.isArray(r)) return false;
        seen.add(Number(r[1]));
      }
      if (seen.size !== 1) return false;
      const port = [...seen][0]!;
      if (port === old.port) return false;
      const m = serverAt({ host, port });
      if (!m) return false;
      const role = await command(m, ["ROLE"]);
      if (!Array.isArray(role) || str(role[0]!) !== "master") return false;
      if (waitReplicas) {
        const live = servers.filter((s) =>
          s.running && s !== m && (waitOldMaster || s.port !== old.port)
        ).length;
        const info = parseInfo(str(await command(m, ["INFO", "replication"])));
        if (Number(info.connected_slaves ?? 0) < live) return false;
      }
      found = m;
      return true;
    });
    current = found;
    await refreshRoles();
    return found!;
  };

  const group: SentinelGroup = {
    masterName: name,
    servers,
    sentinels,
    get sentinelUrls() {
      return sentinels.map((s) => s.url);
    },
    get master() {
      return current!;
    },
    get replicas() {
      return servers.filter((s) => s !== current);
    },
    get roles() {
      return roles;
    },
    masterAddress,
    refreshRoles,
    async failover(fo = {}) {
      const old = await masterAddress();
      const s = sentinels.find((x) => x.running);
      if (!s) throw new Error(`Cannot fail over ${name}: no sentinel runs`);
      await sentinelCommand(s, ["SENTINEL", "FAILOVER", name]);
      const oldToo = fo.waitOldMaster ?? false;
      return await waitForNewMaster(old, timeoutMs, oldToo || (fo.waitReplicas ?? true), oldToo);
    },
    waitForNewMaster: (old, ms) => waitForNewMaster(old, ms),
    command,
    sentinelCommand,
    stop() {
      stopped ??= (async () => {
        await Promise.all([...sentinels, ...servers].map((s) => s.stop()));
      })();
      return stopped;
    },
  };

  try {
    const master = await startRedis({ args: dataArgs() });
    servers.push(master);
    current = master;
    servers.push(
      ...await Promise.all(
        Array.from(
          { length: nReplicas },
          () => startRedis({ args: [...dataArgs(), "--replicaof", host, String(master.port)] }),
        ),
      ),
    );
    await until("sync the replicas", timeoutMs, async () => {
      for (const r of servers.slice(1)) {
        const info = parseInfo(str(await command(r, ["INFO", "replication"])));
        if (info.master_link_status !== "up") return false;
      }
      return true;
    });
    const conf = (port: number): string =>
      [
        `port ${port}`,
        `bind ${host}`,
        "sentinel resolve-hostnames yes",
        `sentinel monitor ${name} ${host} ${master.port} ${options.quorum ?? 2}`,
        `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1_000}`,
        `sentinel failover-timeout ${name} ${options.failoverTimeoutMs ?? 5_000}`,
        ...(password === undefined ? [] : [`sentinel auth-pass ${name} ${password}`]),
        ...(options.sentinelPassword === undefined
          ? []
          : [`requirepass ${options.sentinelPassword}`]),
        "",
      ].join("\n");
    sentinels.push(
      ...await Promise.all(Array.from({ length: nSentinels }, async () => {
        const port = await freePort(host);
        return startRedis({
          port,
          config: conf(port),
          debugCommand: false,
          args: ["--sentinel"],
        });
      })),
    );
    await until("let every sentinel discover the group", timeoutMs, async () => {
      for (const s of sentinels) {
        const reps = await sentinelCommand(s, ["SENTINEL", "REPLICAS", name]);
        const sens = await sentinelCommand(s, ["SENTINEL", "SENTINELS", name]);
        if (!Array.isArray(reps) || reps.length !== nReplicas) return false;
        if (!Array.isArray(sens) || sens.length !== nSentinels - 1) return false;
      }
      return true;
    });
    await refreshRoles();
  } catch (e) {
    await group.stop();
    throw e;
  }
  return group;
}
