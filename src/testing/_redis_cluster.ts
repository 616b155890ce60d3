// Starts a real Redis Cluster of redis-server processes on loopback, assembled with
// CLUSTER ADDSLOTSRANGE / MEET / REPLICATE, and drives it: live slot migrations (SETSLOT
// IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE), manual failovers, nodes added and removed. Used by
// the simulator's cluster mode and by the tests.
import type { Connector } from "../transport/types.ts";
import { defaultConnector } from "../transport/default.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { ReplyError } from "../errors.ts";
import { openControl, parseInfo, type RedisControl } from "./_redis_control.ts";
import { freePort, type SpawnedRedis, spawnRedis } from "./_redis_process.ts";

import { SLOT_COUNT, slotKey } from "./_slot_key.ts";
import { parseNodes, shardHealth, text, type ViewEntry } from "./_cluster_view.ts";
import {
  type MigrateOptions,
  type MigrateResult,
  migrateSlots,
  type MigrationHost,
} from "./_slot_migration.ts";

export { SLOT_COUNT, slotKey };
export type { MigrateOptions, MigrateResult };

/** An address a node announces instead of its own (a proxy in front of it). */
export interface AnnouncedAddress {
  host: string;
  port: number;
}

/** How to start a cluster. */
export interface RedisClusterOptions {
  /** Number of primaries, each given an equal contiguous share of the slots. @default 3 */
  primaries?: number;
  /** Replicas of each primary. @default 1 */
  replicasPerPrimary?: number;
  /** Loopback address the nodes bind. @default "127.0.0.1" */
  host?: string;
  /** Extra redis-server arguments for every node (override the defaults). */
  args?: string[];
  /** `cluster-node-timeout` in milliseconds. @default 2000 */
  nodeTimeoutMs?: number;
  /**
   * The address a node announces (`cluster-announce-ip` / `cluster-announce-port`), asked for
   * each node before it starts, with the node's own address. Absent: nodes announce themselves.
   */
  announce?: (node: { index: number; host: string; port: number }) =>
    | AnnouncedAddress
    | Promise<AnnouncedAddress>;
  /** The executable. @default "redis-server" */
  command?: string;
  /** Connector for the control connections. @default defaultConnector */
  connector?: Connector;
  /** How long startup, failovers and joins may take before failing. @default 20000 */
  timeoutMs?: number;
}

/** One node of a started cluster. */
export interface RedisClusterNode {
  /** Creation order (0 .. n-1; added nodes continue the count). */
  readonly index: number;
  /** The real address the process binds. */
  readonly host: string;
  readonly port: number;
  /** `redis://host:port` (real address). */
  readonly url: string;
  /** The cluster bus port (`cluster-port`). */
  readonly clusterPort: number;
  /** What the node announces, when `announce` was given. */
  readonly announced: AnnouncedAddress | undefined;
  /** The node id (40 hex characters). */
  readonly id: string;
  /** Role, as of the last refresh of the cluster view. */
  readonly role: "primary" | "replica";
  /** For a replica: the id of its primary (last refresh). */
  readonly primaryId: string | undefined;
  /** The pid of the current process. */
  readonly pid: number;
  /** Whether the process runs. */
  readonly running: boolean;
  /** Working directory (holds `nodes.conf`). */
  readonly dir: string;
  /** SIGKILL; keeps the directory so `restart()` brings the same node id back. */
  kill(): Promise<void>;
  /** SIGTERM, removes the directory. The node stays in the others' view (see `removeNode`). */
  stop(): Promise<void>;
  /** Starts the killed process again (same port, same nodes.conf). */
  restart(): Promise<void>;
  /** Sends a command on the node's control connection; error replies reject with `ReplyError`. */
  command(args: RedisArgument[]): Promise<RespValue>;
}

/** A running cluster. */
export interface RedisCluster {
  /** Every node (added ones included, removed ones dropped). */
  readonly nodes: RedisClusterNode[];
  /** `redis://host:port` of every node (real addresses). */
  readonly seeds: string[];
  /** Primaries as of the last refresh. */
  primaries(): RedisClusterNode[];
  /** Replicas as of the last refresh. */
  replicas(): RedisClusterNode[];
  /** Replicas of `primary`. */
  replicasOf(primary: RedisClusterNode | string): RedisClusterNode[];
  /** A node by id. */
  node(id: string): RedisClusterNode | undefined;
  /** The primary owning `slot` as of the last refresh. */
  nodeForSlot(slot: number): RedisClusterNode;
  /** Slots owned by `node` as of the last refresh. */
  slotsOf(node: RedisClusterNode | string): number[];
  /** A key hashing to `slot`: `<prefix>{<tag>}`. */
  keyForSlot(slot: number, prefix?: string): string;
  /** The slot of `key`, asked with `CLUSTER KEYSLOT`. */
  keySlot(key: string): Promise<number>;
  /** Re-reads roles and the slot map from a running node. */
  refresh(): Promise<void>;
  /** Waits until every running node agrees on the slot map and roles and says `cluster_state:ok`. */
  waitStable(timeoutMs?: number): Promise<void>;
  /** Moves `slot` to `toNodeId` live (real SETSLOT / MIGRATE). */
  migrateSlot(slot: number, toNodeId: string, options?: MigrateOptions): Promise<MigrateResult>;
  /** Moves several slots to `toNodeId`, pipelining the SETSLOT steps. */
  migrateSlots(slots: number[], toNodeId: string, options?: MigrateOptions): Promise<MigrateResult>;
  /** `CLUSTER FAILOVER` on a replica of `primary`; resolves with the new primary once stable. */
  failover(
    primary: RedisClusterNode | string,
    options?: { mode?: "default" | "force" | "takeover" },
  ): Promise<RedisClusterNode>;
  /** Starts a node and MEETs it: an empty primary, or a replica of `replicaOf`. */
  addNode(options?: { replicaOf?: string }): Promise<RedisClusterNode>;
  /** Moves the node's slots to the other primaries, stops it and FORGETs it on every node. */
  removeNode(id: string): Promise<void>;
  /** Stops every process and removes their directories. Idempotent. */
  stop(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// --- the cluster ---------------------------------------------------------------------------

interface NodeState {
  node: RedisClusterNode;
  proc: SpawnedRedis;
  role: "primary" | "replica";
  primaryId: string | undefined;
  ctl: RedisControl | undefined;
  ctlOpening: Promise<RedisControl> | undefined;
}

/**
 * Starts a cluster: spawns the nodes on free ports, assigns the slots, MEETs them, attaches the
 * replicas and waits until every node agrees and says `cluster_state:ok`.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  try {
    return await startRedisClusterOnce(options);
  } catch (e) {
    // On a loaded machine a node can reset its first connections (its port was another test's
    // server a moment before): everything started was stopped, so try once more on fresh ports.
    // (Not with `announce`: its owner keeps per-node state and retries by itself.)
    if (e instanceof RangeError || e instanceof ReplyError || options.announce) throw e;
    return await startRedisClusterOnce(options);
  }
}

async function startRedisClusterOnce(options: RedisClusterOptions): Promise<RedisCluster> {
  const primaries = options.primaries ?? 3;
  const perPrimary = options.replicasPerPrimary ?? 1;
  if (!Number.isInteger(primaries) || primaries < 1) {
    throw new RangeError(`Cannot start a cluster: primaries must be a positive integer`);
  }
  if (!Number.isInteger(perPrimary) || perPrimary < 0) {
    throw new RangeError(`Cannot start a cluster: replicasPerPrimary must be an integer >= 0`);
  }
  const host = options.host ?? "127.0.0.1";
  const connector = options.connector ?? defaultConnector;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const states: NodeState[] = [];
  let owners: (string | undefined)[] = new Array(SLOT_COUNT).fill(undefined);
  let nextIndex = 0;
  let stopped: Promise<void> | undefined;
  /** Processes being started: stop() waits for them and stops them too. */
  const spawns = new Set<Promise<SpawnedRedis>>();
  /** Every process started and not yet removed. */
  const procs = new Set<SpawnedRedis>();
  /** Throws once the cluster is being stopped: loops and joins end instead of going on. */
  const assertRunning = (): void => {
    if (stopped) throw new Error("Cannot go on: the cluster was stopped");
  };
  const pause = async (ms: number): Promise<void> => {
    await sleep(ms);
    assertRunning();
  };

  const control = (s: NodeState): Promise<RedisControl> => {
    if (s.ctl) return Promise.resolve(s.ctl);
    s.ctlOpening ??= openControl(connector, s.node.host, s.node.port).then(
      (c) => {
        s.ctl = c;
        s.ctlOpening = undefined;
        return c;
      },
      (e) => {
        s.ctlOpening = undefined;
        throw e;
      },
    );
    return s.ctlOpening;
  };
  const dropControl = (s: NodeState): void => {
    s.ctl?.close();
    s.ctl = undefined;
  };
  const command = async (s: NodeState, args: RedisArgument[]): Promise<RespValue> => {
    const c = await control(s);
    try {
      return await c.command(args);
    } catch (e) {
      if (!(e instanceof ReplyError)) dropControl(s);
      throw e;
    }
  };

  const spawnNode = async (): Promise<NodeState> => {
    const index = nextIndex++;
    const port = await freePort(host);
    let clusterPort = await freePort(host);
    while (clusterPort === port) clusterPort = await freePort(host);
    const announced = options.announce ? await options.announce({ index, host, port }) : undefined;
    const args = [
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      "nodes.conf",
      "--cluster-port",
      String(clusterPort),
      "--cluster-node-timeout",
      String(options.nodeTimeoutMs ?? 2_000),
      "--cluster-allow-replica-migration",
      "no",
      "--repl-diskless-sync-delay",
      "0",
      // Primaries ping their replicas every second, so replication offsets leave 0 at once
      // (CLUSTER SHARDS reports a replica at offset 0 as "loading").
      "--repl-ping-replica-period",
      "1",
      ...(announced
        ? [
          "--cluster-announce-ip",
          announced.host,
          "--cluster-announce-port",
          String(announced.port),
          "--cluster-announce-bus-port",
          String(clusterPort),
        ]
        : []),
      ...(options.args ?? []),
    ];
    assertRunning();
    const spawning = spawnRedis({ host, port, args, command: options.command });
    spawns.add(spawning);
    let proc: SpawnedRedis;
    try {
      proc = await spawning;
    } finally {
      spawns.delete(spawning);
    }
    // Every process is stopped by stop(), from now on, whether or not it joins `states`.
    procs.add(proc);
    if (stopped) {
      await proc.stop();
      assertRunning();
    }
    const state = {} as NodeState;
    let id = "";
    const node: RedisClusterNode = {
      index,
      host,
      port,
      url: `redis://${host}:${port}`,
      clusterPort,
      announced,
      get id() {
        return id;
      },
      get role() {
        return state.role;
      },
      get primaryId() {
        return state.primaryId;
      },
      get pid() {
        return proc.pid;
      },
      get running() {
        return proc.running;
      },
      dir: proc.dir,
      kill: async () => {
        dropControl(state);
        await proc.kill();
      },
      stop: async () => {
        dropControl(state);
        await proc.stop();
      },
      restart: async () => {
        dropControl(state);
        await proc.restart();
      },
      command: (a) => command(state, a),
    };
    Object.assign(state, { node, proc, role: "primary", primaryId: undefined, ctl: undefined });
    // A server that just started may still reset its first connection on a loaded machine:
    // ask a few times before giving up on it.
    for (let attempt = 1;; attempt++) {
      try {
        id = text(await command(state, ["CLUSTER", "MYID"]));
        break;
      } catch (e) {
        dropControl(state);
        if (attempt < 5 && !(e instanceof ReplyError) && proc.running) {
          await new Promise((r) => setTimeout(r, 50 * attempt));
          continue;
        }
        await proc.stop();
        throw e;
      }
    }
    if (stopped) {
      dropControl(state);
      await proc.stop();
      assertRunning();
    }
    return state;
  };

  const running = (): NodeState[] => states.filter((s) => s.proc.running);
  const byId = (id: string): NodeState | undefined => states.find((s) => s.node.id === id);
  const resolve = (n: RedisClusterNode | string): NodeState => {
    const id = typeof n === "string" ? n : n.id;
    const s = byId(id);
    if (!s) throw new RangeError(`Cannot find cluster node ${id}`);
    return s;
  };

  /** One node's view, or why it is not usable yet. */
  const viewOf = async (s: NodeState): Promise<{ view: ViewEntry[]; ok: boolean }> => {
    const info = parseInfo(text(await command(s, ["CLUSTER", "INFO"])));
    const view = parseNodes(text(await command(s, ["CLUSTER", "NODES"])));
    return { view, ok: info.cluster_state === "ok" };
  };

  const applyView = (view: ViewEntry[]): void => {
    const o: (string | undefined)[] = new Array(SLOT_COUNT).fill(undefined);
    for (const e of view) {
      const s = byId(e.id);
      if (s) {
        s.role = e.flags.includes("master") ? "primary" : "replica";
        s.primaryId = e.primaryId;
      }
      for (const [a, b] of e.slots) for (let i = a; i <= b; i++) o[i] = e.id;
    }
    owners = o;
  };

  const refresh = async (): Promise<void> => {
    let last: unknown;
    for (const s of running()) {
      try {
        applyView((await viewOf(s)).view);
        return;
      } catch (e) {
        last = e;
      }
    }
    throw new Error(`Cannot read the cluster view: ${(last as Error)?.message ?? "no node runs"}`);
  };

  const signature = (view: ViewEntry[]): string =>
    view.filter((e) => byId(e.id)?.proc.running).map((e) =>
      `${e.id}:${e.flags.includes("master") ? "m" : "r"}:${e.primaryId ?? "-"}:${
        e.slots.map(([a, b]) => `${a}-${b}`).join(",")
      }`
    ).sort().join("|");

  /** Why the cluster is not stable yet, or undefined when it is. */
  const unstable = async (): Promise<string | undefined> => {
    const live = running();
    const ids = new Set(live.map((s) => s.node.id));
    let sig: string | undefined;
    for (const s of live) {
      let v: { view: ViewEntry[]; ok: boolean };
      try {
        v = await viewOf(s);
      } catch (e) {
        return `${s.node.url}: ${(e as Error).message}`;
      }
      if (!v.ok) return `${s.node.url}: cluster_state is not ok`;
      const known = new Set(v.view.map((e) => e.id));
      for (const id of ids) if (!known.has(id)) return `${s.node.url} does not know ${id}`;
      for (const e of v.view) {
        if (!ids.has(e.id)) continue;
        const bad = e.flags.find((f) => ["fail", "fail?", "handshake", "noaddr"].includes(f));
        if (bad) return `${s.node.url} sees ${e.id} as ${bad}`;
        if (e.id !== s.node.id && e.link !== "connected") {
          return `${s.node.url} has no link to ${e.id}`;
        }
      }
      const mine = signature(v.view);
      if (sig === undefined) sig = mine;
      else if (sig !== mine) return `${s.node.url} disagrees on the slot map or roles`;
      const self = v.view.find((e) => e.id === s.node.id);
      if (self && self.flags.includes("slave")) {
        const r = parseInfo(text(await command(s, ["INFO", "replication"])));
        if (r.master_link_status !== "up") return `${s.node.url}: replication link is down`;
      }
      const health = shardHealth(await command(s, ["CLUSTER", "SHARDS"]));
      for (const [id, h] of health) {
        if (ids.has(id) && h !== "online") return `${s.node.url} reports ${id} as ${h}`;
      }
    }
    return undefined;
  };

  const waitStable = async (ms = timeoutMs): Promise<void> => {
    const end = Date.now() + ms;
    let why: string | undefined;
    for (;;) {
      why = await unstable();
      if (why === undefined) break;
      if (Date.now() > end) throw new Error(`Cannot get a stable cluster within ${ms} ms: ${why}`);
      await pause(50);
    }
    await refresh();
  };

  const meet = async (from: NodeState, to: NodeState): Promise<void> => {
    await command(from, [
      "CLUSTER",
      "MEET",
      to.node.host,
      String(to.node.port),
      String(to.node.clusterPort),
    ]);
  };

  const waitKnown = async (s: NodeState, ids: string[]): Promise<void> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const view = parseNodes(text(await command(s, ["CLUSTER", "NODES"])));
      const known = new Set(
        view.filter((e) => !e.flags.includes("handshake") && !e.flags.includes("noaddr"))
          .map((e) => e.id),
      );
      if (ids.every((id) => known.has(id))) return;
      if (Date.now() > end) throw new Error(`Cannot join ${s.node.url} to the cluster in time`);
      await pause(25);
    }
  };

  const replicate = async (replica: NodeState, primaryId: string): Promise<void> => {
    await waitKnown(replica, [primaryId]);
    await command(replica, ["CLUSTER", "REPLICATE", primaryId]);
  };

  const migrations: MigrationHost<NodeState> = {
    resolve,
    refresh,
    ownerOf: (slot) => owners[slot],
    command,
    pause,
    running,
    waitStable: () => waitStable(),
  };

  const cluster: RedisCluster = {
    get nodes() {
      return states.map((s) => s.node);
    },
    get seeds() {
      return states.map((s) => s.node.url);
    },
    primaries: () => states.filter((s) => s.role === "primary").map((s) => s.node),
    replicas: () => states.filter((s) => s.role === "replica").map((s) => s.node),
    replicasOf: (p) => {
      const id = typeof p === "string" ? p : p.id;
      return states.filter((s) => s.role === "replica" && s.primaryId === id).map((s) => s.node);
    },
    node: (id) => byId(id)?.node,
    nodeForSlot(slot) {
      const id = owners[slot];
      const s = id === undefined ? undefined : byId(id);
      if (!s) throw new RangeError(`Cannot find the owner of slot ${slot}`);
      return s.node;
    },
    slotsOf(n) {
      const id = typeof n === "string" ? n : n.id;
      const out: number[] = [];
      for (let i = 0; i < SLOT_COUNT; i++) if (owners[i] === id) out.push(i);
      return out;
    },
    keyForSlot: (slot, prefix) => slotKey(slot, prefix),
    async keySlot(key) {
      const s = running()[0];
      if (!s) throw new Error(`Cannot ask CLUSTER KEYSLOT: no node runs`);
      return Number(await command(s, ["CLUSTER", "KEYSLOT", key]));
    },
    refresh,
    waitStable,
    migrateSlot: (slot, to, mo) => migrateSlots(migrations, [slot], to, mo),
    migrateSlots: (slots, to, mo) => migrateSlots(migrations, slots, to, mo),
    async failover(p, fo = {}) {
      await refresh();
      const primary = resolve(p);
      const replica = states.find((s) =>
        s.role === "replica" && s.primaryId === primary.node.id && s.proc.running
      );
      if (!replica) {
        throw new Error(`Cannot fail over ${primary.node.url}: it has no running replica`);
      }
      const mode = fo.mode ?? "default";
      await command(replica, ["CLUSTER", "FAILOVER", ...(mode === "default" ? [] : [mode])]);
      const end = Date.now() + timeoutMs;
      for (;;) {
        const self = parseNodes(text(await command(replica, ["CLUSTER", "NODES"])))
          .find((e) => e.id === replica.node.id);
        if (self?.flags.includes("master")) break;
        if (Date.now() > end) {
          throw new Error(`Cannot fail over ${primary.node.url}: the replica was not promoted`);
        }
        await pause(25);
      }
      await waitStable();
      return replica.node;
    },
    async addNode(ao = {}) {
      const s = await spawnNode();
      states.push(s);
      const seed = running().find((x) => x !== s)!;
      await meet(seed, s);
      await waitKnown(s, running().map((x) => x.node.id));
      if (ao.replicaOf !== undefined) await replicate(s, ao.replicaOf);
      await waitStable();
      return s.node;
    },
    async removeNode(id) {
      await refresh();
      const gone = resolve(id);
      const others = running().filter((s) => s !== gone);
      const primaries = others.filter((s) => s.role === "primary");
      if (gone.role === "primary") {
        const mine = cluster.slotsOf(id);
        if (mine.length > 0 && primaries.length === 0) {
          throw new Error(`Cannot remove ${gone.node.url}: no other primary takes its slots`);
        }
        const share = Math.ceil(mine.length / Math.max(1, primaries.length));
        for (let i = 0; i < primaries.length && i * share < mine.length; i++) {
          await migrateSlots(
            migrations,
            mine.slice(i * share, (i + 1) * share),
            primaries[i]!.node.id,
          );
        }
        for (const r of others.filter((s) => s.primaryId === id)) {
          await command(r, ["CLUSTER", "REPLICATE", primaries[0]!.node.id]);
        }
      }
      dropControl(gone);
      await gone.proc.stop();
      procs.delete(gone.proc);
      states.splice(states.indexOf(gone), 1);
      for (const s of others) {
        try {
          await command(s, ["CLUSTER", "FORGET", id]);
        } catch (e) {
          if (!(e instanceof ReplyError) || !/unknown node/i.test(e.message)) throw e;
        }
      }
      await waitStable();
    },
    stop() {
      stopped ??= (async () => {
        for (const s of states) dropControl(s);
        await Promise.all([...procs].map((p) => p.stop()));
        // Started while stopping: their spawnNode sees `stopped` and stops them; wait for it.
        const late = await Promise.allSettled([...spawns]);
        await Promise.all(
          late.map((r) => r.status === "fulfilled" ? r.value.stop() : undefined),
        );
      })();
      return stopped;
    },
  };

  try {
    const total = primaries * (1 + perPrimary);
    states.push(...await Promise.all(Array.from({ length: total }, () => spawnNode())));
    const prim = states.slice(0, primaries);
    // Distinct config epochs up front: no epoch collisions to resolve while the cluster forms.
    await Promise.all(
      states.map((s, i) => command(s, ["CLUSTER", "SET-CONFIG-EPOCH", String(i + 1)])),
    );
    await Promise.all(prim.map((s, i) => {
      const a = Math.floor((i * SLOT_COUNT) / primaries);
      const b = Math.floor(((i + 1) * SLOT_COUNT) / primaries) - 1;
      return command(s, ["CLUSTER", "ADDSLOTSRANGE", String(a), String(b)]);
    }));
    await Promise.all(states.slice(1).map((s) => meet(states[0]!, s)));
    const ids = states.map((s) => s.node.id);
    await Promise.all(states.map((s) => waitKnown(s, ids)));
    await Promise.all(
      states.slice(primaries).map((s, i) =>
        replicate(s, prim[Math.floor(i / perPrimary)]!.node.id)
      ),
    );
    await waitStable();
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
