/**
 * Cluster topology: parsing of `CLUSTER SHARDS` (RESP2 and RESP3) and `CLUSTER SLOTS`, the
 * 16384-entry slot table, address rewriting and the choice between views of several nodes.
 * Pure: no sockets, no timers.
 *
 * @module
 */

import { ReplyError } from "../errors.ts";
import { endpointKeyOf } from "../maintenance/endpoint.ts";
import { type Endpoint as HostPort, splitEndpoint } from "../endpoint.ts";
import type { SlotRange } from "../maintenance/slots.ts";
import type { RespValue } from "../resp/types.ts";
import { SLOT_COUNT } from "./slot.ts";

/** The slot table value of a slot no usable primary serves. */
export const NO_NODE = 0xffff;

/** The most nodes a topology may name; a larger view is refused as malformed. */
export const MAX_NODES = 2000;

/** The role of a cluster node. */
export type ClusterNodeRole = "primary" | "replica";

/** The health of a cluster node as `CLUSTER SHARDS` reports it; nothing is routed unless `online`. */
export type ClusterNodeHealth = "online" | "loading" | "fail";

/**
 * One node of the topology.
 *
 * @example
 * ```ts
 * import type { ClusterNode } from "@edge/redis/cluster";
 * const n: ClusterNode = {
 *   address: "127.0.0.1:7000", host: "127.0.0.1", port: 7000, id: null, role: "primary",
 *   health: "online", replicationOffset: 0, primary: null, hostname: null,
 * };
 * ```
 */
export interface ClusterNode {
  /** The canonical `host:port` the client connects to (after `nodeAddressMap`): the node's key. */
  address: string;
  /** Host to connect to. */
  host: string;
  /** Port to connect to (the TLS port on TLS connections when the node announces one). */
  port: number;
  /** The node id, or `null` when the reply did not carry it. */
  id: string | null;
  /** Primary or replica. */
  role: ClusterNodeRole;
  /** Health; only `online` nodes are routed to. */
  health: ClusterNodeHealth;
  /** Replication offset, 0 when unknown. */
  replicationOffset: number;
  /** The address of the primary of a replica; `null` on primaries. */
  primary: string | null;
  /** The announced host name, or `null`. */
  hostname: string | null;
}

/**
 * A view of the cluster: its nodes and the slot table.
 *
 * `slots[s]` is the index in `nodes` of the primary serving slot `s`, or {@linkcode NO_NODE}
 * when no online primary serves it. `replicas[i]` lists the online replicas of node `i` (empty
 * for replicas and for primaries without any).
 */
export interface ClusterTopology {
  /** Every node, primaries and replicas, including unhealthy ones. */
  nodes: ClusterNode[];
  /** 16384 entries: node index of the serving primary, or `NO_NODE`. */
  slots: Uint16Array;
  /** Per node index: indexes of its online replicas. */
  replicas: number[][];
  /** The cluster's current epoch as the answering node saw it (0 when unknown). */
  epoch: number;
}

/** Rewrites an announced address (NAT, containers); returns it unchanged when not mapped. */
export type AddressMapper = (announced: HostPort) => HostPort;

/**
 * A map of announced addresses to reachable ones: `{ "10.0.0.5:6379": "127.0.0.1:7000" }`, or a
 * function.
 */
export type NodeAddressMap =
  | Record<string, string | HostPort>
  | ((announced: HostPort) => HostPort | undefined);

/** Options of the topology parsers. */
export interface ParseTopologyOptions {
  /** The node that answered: fills in an empty or unknown announced host. */
  answeredBy: HostPort;
  /**
   * Connect to TLS ports (`tls-port`) when the node announces one.
   * @default {false}
   */
  tls?: boolean;
  /** Address rewriting. */
  mapAddress?: AddressMapper;
  /** The cluster's current epoch (`cluster_current_epoch` of `CLUSTER INFO`). @default {0} */
  epoch?: number;
}

const decoder = new TextDecoder();

function str(v: RespValue | undefined): string | undefined {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return decoder.decode(v);
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  return undefined;
}

function num(v: RespValue | undefined): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  const s = str(v);
  if (s === undefined || s.trim() === "" || !/^-?[0-9]+$/.test(s.trim())) return undefined;
  return Number(s);
}

/** A RESP3 map or a RESP2 flat list of pairs, as a Map with string keys. */
function record(v: RespValue | undefined, what: string): Map<string, RespValue> {
  const out = new Map<string, RespValue>();
  if (v instanceof Map) {
    for (const [k, val] of v) {
      const key = str(k);
      if (key !== undefined) out.set(key.toLowerCase(), val);
    }
    return out;
  }
  if (Array.isArray(v) && v.length % 2 === 0) {
    for (let i = 0; i < v.length; i += 2) {
      const key = str(v[i]);
      if (key !== undefined) out.set(key.toLowerCase(), v[i + 1]!);
    }
    return out;
  }
  throw new TypeError(`Cannot read the cluster topology: expected ${what} to be a map`);
}

/**
 * Builds a mapper from a {@linkcode NodeAddressMap}.
 *
 * @param map The map (keys `host:port`), a function, or `undefined`.
 * @returns A function rewriting announced addresses.
 *
 * @example
 * ```ts
 * import { addressMapper } from "@edge/redis/cluster";
 * const map = addressMapper({ "10.0.0.5:6379": "127.0.0.1:7000" });
 * map({ host: "10.0.0.5", port: 6379 }); // { host: "127.0.0.1", port: 7000 }
 * ```
 */
export function addressMapper(map: NodeAddressMap | undefined): AddressMapper {
  if (map === undefined) return (a) => a;
  if (typeof map === "function") return (a) => map(a) ?? a;
  const table = new Map<string, HostPort>();
  for (const key of Object.keys(map)) {
    const to = map[key]!;
    if (typeof to === "string") {
      const e = splitEndpoint(to);
      if (typeof e === "string" || e.port < 1) {
        throw new TypeError(
          `Cannot use the nodeAddressMap entry "${key}": expected "host:port", got "${to}"`,
        );
      }
      table.set(endpointKeyOf(key), e);
    } else {
      table.set(endpointKeyOf(key), to);
    }
  }
  return (a) => table.get(endpointKeyOf(a)) ?? a;
}

interface RawNode {
  node: ClusterNode;
  shard: number;
}

function makeNode(
  host: string,
  port: number,
  fields: Omit<ClusterNode, "address" | "host" | "port">,
  o: ParseTopologyOptions,
): ClusterNode {
  if (host === "" || host === "?") host = o.answeredBy.host;
  const mapped = (o.mapAddress ?? ((a: HostPort) => a))({ host, port });
  return { ...fields, address: endpointKeyOf(mapped), host: mapped.host, port: mapped.port };
}

function healthOf(v: RespValue | undefined): ClusterNodeHealth {
  const h = str(v)?.toLowerCase();
  if (h === undefined || h === "online") return "online";
  // "fail", "loading", and anything unknown: route nothing to it.
  return h === "loading" ? "loading" : "fail";
}

/** Assembles a topology from nodes grouped in shards. */
function assemble(
  shards: { nodes: ClusterNode[]; slots: SlotRange[] }[],
  epoch: number,
): ClusterTopology {
  const nodes: ClusterNode[] = [];
  const index = new Map<string, number>();
  const replicas: number[][] = [];
  const slots = new Uint16Array(SLOT_COUNT).fill(NO_NODE);
  for (const shard of shards) {
    let primary = -1;
    const shardNodes: number[] = [];
    for (const n of shard.nodes) {
      let i = index.get(n.address);
      if (i === undefined) {
        i = nodes.length;
        if (i >= MAX_NODES) {
          throw new RangeError(
            `Cannot read the cluster topology: it names more than ${MAX_NODES} nodes (a Redis Cluster has at most about 1000)`,
          );
        }
        nodes.push(n);
        index.set(n.address, i);
        replicas.push([]);
      } else {
        nodes[i] = n;
      }
      shardNodes.push(i);
      if (n.role === "primary" && primary === -1) primary = i;
    }
    const p = primary === -1 ? undefined : nodes[primary]!;
    // A node named twice in a shard is one replica (a set: linear however large the shard).
    const seen = new Set<number>(primary === -1 ? [] : replicas[primary]);
    for (const i of shardNodes) {
      const n = nodes[i]!;
      if (i === primary) continue;
      if (n.role === "primary") continue;
      if (p) {
        n.primary = p.address;
        if (n.health === "online" && !seen.has(i)) {
          seen.add(i);
          replicas[primary]!.push(i);
        }
      }
    }
    if (p === undefined || p.health !== "online") continue;
    for (const r of shard.slots) slots.fill(primary, r.start, r.end + 1);
  }
  return { nodes, slots, replicas, epoch };
}

function rangesOf(v: RespValue | undefined): SlotRange[] {
  if (!Array.isArray(v) || v.length % 2 !== 0) {
    throw new TypeError("Cannot read the cluster topology: expected the slots as start/end pairs");
  }
  const out: SlotRange[] = [];
  for (let i = 0; i < v.length; i += 2) {
    const start = num(v[i]);
    const end = num(v[i + 1]);
    if (
      start === undefined || end === undefined || start < 0 || end >= SLOT_COUNT || start > end
    ) {
      throw new TypeError(
        `Cannot read the cluster topology: bad slot range ${String(v[i])}-${String(v[i + 1])}`,
      );
    }
    out.push({ start, end });
  }
  return out;
}

/**
 * Parses a `CLUSTER SHARDS` reply (Redis 7.0+), RESP3 maps or RESP2 flat lists. The node's
 * address is its `endpoint` (falling back to `ip`, then to the answering node for an empty or
 * `?` one) and its `port`, or its `tls-port` with `tls`. Slots of a shard whose primary is not
 * `online` are left unassigned; replicas that are not `online` serve no reads.
 *
 * @param reply The reply.
 * @param options The answering node, TLS, address rewriting, epoch.
 * @returns The topology.
 * @throws {TypeError} When the reply is not a `CLUSTER SHARDS` reply.
 *
 * @example
 * ```ts
 * import { parseClusterShards } from "@edge/redis/cluster";
 * const t = parseClusterShards([
 *   ["slots", [0, 16383], "nodes", [[
 *     "id", "a1", "port", 7000, "ip", "127.0.0.1", "endpoint", "127.0.0.1",
 *     "role", "master", "replication-offset", 0, "health", "online",
 *   ]]],
 * ], { answeredBy: { host: "127.0.0.1", port: 7000 } });
 * t.nodes[t.slots[42]!]!.address; // "127.0.0.1:7000"
 * ```
 */
export function parseClusterShards(
  reply: RespValue,
  options: ParseTopologyOptions,
): ClusterTopology {
  if (!Array.isArray(reply)) {
    throw new TypeError("Cannot read the cluster topology: expected CLUSTER SHARDS to be a list");
  }
  const shards = reply.map((s, si) => {
    const shard = record(s, `shard ${si}`);
    const slots = rangesOf(shard.get("slots"));
    const list = shard.get("nodes");
    if (!Array.isArray(list)) {
      throw new TypeError(`Cannot read the cluster topology: shard ${si} has no node list`);
    }
    const nodes = list.map((raw, ni) => {
      const f = record(raw, `node ${ni} of shard ${si}`);
      const ip = str(f.get("ip")) ?? "";
      const endpoint = str(f.get("endpoint")) ?? "";
      const hostname = str(f.get("hostname")) || null;
      const port = num(f.get("port"));
      const tlsPort = num(f.get("tls-port"));
      const chosen = options.tls ? (tlsPort ?? port) : (port ?? tlsPort);
      if (chosen === undefined || chosen <= 0 || chosen > 65535) {
        throw new TypeError(
          `Cannot read the cluster topology: node ${ni} of shard ${si} has no port`,
        );
      }
      const host = endpoint !== "" && endpoint !== "?" ? endpoint : ip;
      const role = (str(f.get("role")) ?? "").toLowerCase();
      return makeNode(host, chosen, {
        id: str(f.get("id")) ?? null,
        role: role === "master" || role === "primary" ? "primary" : "replica",
        health: healthOf(f.get("health")),
        replicationOffset: num(f.get("replication-offset")) ?? 0,
        primary: null,
        hostname,
      }, options);
    });
    return { nodes, slots };
  });
  return assemble(shards, options.epoch ?? 0);
}

/**
 * Parses a `CLUSTER SLOTS` reply: `[start, end, [host, port, id, meta?], ...replicas]` per range
 * (the fallback before Redis 7.0). Every node counts as online.
 *
 * @param reply The reply.
 * @param options The answering node, address rewriting, epoch (`tls` is ignored: the reply
 *   carries one port per node, the one of the server's own mode).
 * @returns The topology.
 * @throws {TypeError} When the reply is not a `CLUSTER SLOTS` reply.
 *
 * @example
 * ```ts
 * import { parseClusterSlots } from "@edge/redis/cluster";
 * const t = parseClusterSlots([[0, 16383, ["127.0.0.1", 7000, "a1"]]], {
 *   answeredBy: { host: "127.0.0.1", port: 7000 },
 * });
 * t.nodes.length; // 1
 * ```
 */
export function parseClusterSlots(
  reply: RespValue,
  options: ParseTopologyOptions,
): ClusterTopology {
  if (!Array.isArray(reply)) {
    throw new TypeError("Cannot read the cluster topology: expected CLUSTER SLOTS to be a list");
  }
  // Ranges served by the same primary form one shard.
  const byPrimary = new Map<string, { nodes: ClusterNode[]; slots: SlotRange[] }>();
  for (const [ri, entry] of reply.entries()) {
    if (!Array.isArray(entry) || entry.length < 3) {
      throw new TypeError(`Cannot read the cluster topology: bad CLUSTER SLOTS entry ${ri}`);
    }
    const [range] = rangesOf([entry[0]!, entry[1]!]);
    const nodes: ClusterNode[] = [];
    for (let i = 2; i < entry.length; i++) {
      const n = entry[i];
      if (!Array.isArray(n) || n.length < 2) {
        throw new TypeError(
          `Cannot read the cluster topology: bad node in CLUSTER SLOTS entry ${ri}`,
        );
      }
      const port = num(n[1]);
      if (port === undefined || port <= 0 || port > 65535) {
        throw new TypeError(
          `Cannot read the cluster topology: bad port in CLUSTER SLOTS entry ${ri}`,
        );
      }
      let hostname: string | null = null;
      const meta = n[3];
      if (meta instanceof Map || (Array.isArray(meta) && meta.length > 0)) {
        hostname = str(record(meta, "node metadata").get("hostname")) || null;
      }
      nodes.push(makeNode(str(n[0]) ?? "", port, {
        id: str(n[2]) ?? null,
        role: i === 2 ? "primary" : "replica",
        health: "online",
        replicationOffset: 0,
        primary: null,
        hostname,
      }, options));
    }
    const key = nodes[0]!.address;
    const shard = byPrimary.get(key);
    if (shard) {
      shard.slots.push(range!);
      const known = new Set(shard.nodes.map((m) => m.address));
      for (const n of nodes.slice(1)) {
        if (!known.has(n.address)) {
          known.add(n.address);
          shard.nodes.push(n);
        }
      }
    } else {
      byPrimary.set(key, { nodes, slots: [range!] });
    }
  }
  return assemble([...byPrimary.values()], options.epoch ?? 0);
}

/**
 * Reads `cluster_current_epoch` out of a `CLUSTER INFO` reply.
 *
 * @param info The reply text.
 * @returns The epoch, or 0 when absent.
 *
 * @example
 * ```ts
 * import { clusterInfoEpoch } from "@edge/redis/cluster";
 * clusterInfoEpoch("cluster_state:ok\r\ncluster_current_epoch:6\r\n"); // 6
 * ```
 */
export function clusterInfoEpoch(info: RespValue): number {
  const text = str(info) ?? "";
  const m = /cluster_current_epoch:([0-9]+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Tells whether an error means the server is not a cluster node (cluster support disabled).
 *
 * @param e The error of a `CLUSTER ...` command.
 * @returns `true` for "This instance has cluster support disabled".
 *
 * @example
 * ```ts
 * import { ReplyError } from "@edge/redis";
 * import { isClusterDisabledError } from "@edge/redis/cluster";
 * isClusterDisabledError(new ReplyError("ERR This instance has cluster support disabled")); // true
 * ```
 */
export function isClusterDisabledError(e: unknown): boolean {
  return e instanceof ReplyError && /cluster support disabled/i.test(e.message);
}

/**
 * A short text identifying a view: the same slot table and nodes give the same text.
 *
 * @param t The topology.
 * @returns The signature.
 *
 * @example
 * ```ts ignore
 * topologySignature(a) === topologySignature(b); // the same view
 * ```
 */
export function topologySignature(t: ClusterTopology): string {
  const parts: string[] = [];
  let start = 0;
  for (let s = 1; s <= SLOT_COUNT; s++) {
    if (s === SLOT_COUNT || t.slots[s] !== t.slots[start]) {
      const i = t.slots[start]!;
      parts.push(`${start}-${s - 1}:${i === NO_NODE ? "-" : t.nodes[i]!.address}`);
      start = s;
    }
  }
  const nodes = t.nodes.map((n, i) =>
    `${n.address}/${n.role}/${n.health}/${n.primary ?? ""}/${t.replicas[i]!.length}`
  ).sort();
  return `${parts.join(",")}|${nodes.join(",")}`;
}

/**
 * Chooses the view to adopt among those read from several nodes. Views with an epoch below
 * `currentEpoch` are never adopted; among the others the highest epoch wins, and among equal
 * epochs the view most nodes agree on (the first of those on a tie).
 *
 * @param candidates The views read, in the order the nodes were asked.
 * @param currentEpoch The epoch of the view in use.
 * @returns The chosen view, or `undefined` when none may be adopted.
 *
 * @example
 * ```ts ignore
 * const next = chooseTopology([a, b, c], current.epoch);
 * if (next) current = next;
 * ```
 */
export function chooseTopology(
  candidates: readonly ClusterTopology[],
  currentEpoch: number,
): ClusterTopology | undefined {
  const usable = candidates.filter((c) => c.epoch >= currentEpoch);
  if (usable.length === 0) return undefined;
  const top = Math.max(...usable.map((c) => c.epoch));
  const best = usable.filter((c) => c.epoch === top);
  if (best.length === 1) return best[0];
  const votes = new Map<string, { view: ClusterTopology; count: number }>();
  for (const v of best) {
    const sig = topologySignature(v);
    const entry = votes.get(sig);
    if (entry) entry.count++;
    else votes.set(sig, { view: v, count: 1 });
  }
  let chosen: { view: ClusterTopology; count: number } | undefined;
  for (const e of votes.values()) if (!chosen || e.count > chosen.count) chosen = e;
  return chosen!.view;
}

/** What changed between two views. */
export interface TopologyChange {
  /** Addresses of nodes in the new view only. */
  added: string[];
  /** Addresses of nodes in the old view only. */
  removed: string[];
  /** How many slots changed owner (unassigned counts as an owner). */
  slotsMoved: number;
  /** Addresses whose role or health changed. */
  changed: string[];
}

/**
 * Compares two views.
 *
 * @param before The old view.
 * @param after The new view.
 * @returns The nodes added, removed and changed, and the number of slots that moved.
 *
 * @example
 * ```ts ignore
 * const { added, removed, slotsMoved } = diffTopology(old, next);
 * ```
 */
export function diffTopology(before: ClusterTopology, after: ClusterTopology): TopologyChange {
  const old = new Map(before.nodes.map((n) => [n.address, n]));
  const now = new Map(after.nodes.map((n) => [n.address, n]));
  const added = [...now.keys()].filter((a) => !old.has(a));
  const removed = [...old.keys()].filter((a) => !now.has(a));
  const changed: string[] = [];
  for (const [a, n] of now) {
    const o = old.get(a);
    if (o && (o.role !== n.role || o.health !== n.health || o.primary !== n.primary)) {
      changed.push(a);
    }
  }
  let slotsMoved = 0;
  for (let s = 0; s < SLOT_COUNT; s++) {
    const a = before.slots[s]!;
    const b = after.slots[s]!;
    const aa = a === NO_NODE ? "" : before.nodes[a]!.address;
    const bb = b === NO_NODE ? "" : after.nodes[b]!.address;
    if (aa !== bb) slotsMoved++;
  }
  return { added, removed, slotsMoved, changed };
}

/**
 * A primary the client learned of from a redirect or a slot delta, before any view listed it.
 *
 * @param address Its `host:port`.
 * @param endpoint Where to connect.
 * @returns The node, online, with no id yet.
 */
export function unknownPrimary(address: string, endpoint: HostPort): ClusterNode {
  return {
    address,
    host: endpoint.host,
    port: endpoint.port,
    id: null,
    role: "primary",
    health: "online",
    replicationOffset: 0,
    primary: null,
    hostname: null,
  };
}

/**
 * Routes one slot to a node at once (after a `MOVED`), adding the node as a primary when the
 * view does not know it. Changes `topology` in place.
 *
 * @param topology The view to patch.
 * @param slot The slot.
 * @param node The new owner.
 * @returns The node's index.
 *
 * @example
 * ```ts ignore
 * patchSlot(topology, 3999, { host: "127.0.0.1", port: 7001 });
 * ```
 */
export function patchSlot(topology: ClusterTopology, slot: number, node: HostPort): number {
  const address = endpointKeyOf(node);
  let i = topology.nodes.findIndex((n) => n.address === address);
  if (i === -1) {
    i = topology.nodes.length;
    topology.nodes.push(unknownPrimary(address, node));
    topology.replicas.push([]);
  } else {
    const n = topology.nodes[i]!;
    if (n.role === "replica") {
      // A promoted replica: it now serves as a primary.
      n.role = "primary";
      n.primary = null;
      for (const list of topology.replicas) {
        const k = list.indexOf(i);
        if (k !== -1) list.splice(k, 1);
      }
    }
  }
  topology.slots[slot] = i;
  return i;
}

/**
 * An empty view (no node, every slot unassigned).
 *
 * @returns The view.
 *
 * @example
 * ```ts
 * import { emptyTopology } from "@edge/redis/cluster";
 * emptyTopology().nodes.length; // 0
 * ```
 */
export function emptyTopology(): ClusterTopology {
  return { nodes: [], slots: new Uint16Array(SLOT_COUNT).fill(NO_NODE), replicas: [], epoch: 0 };
}
