// Discovery: ask the sentinels in turn where the master (or the replicas) of a name are,
// verify each answer with ROLE on the node itself before using it, and learn further
// sentinels from SENTINEL SENTINELS. Every failure names what was tried; no password ever
// appears (the handshake redacts it from server replies, and none is added here).
import { type Endpoint, endpointKey, formatEndpoint, sameEndpoint } from "../endpoint.ts";
import { ConnectionError, ReplyError } from "../errors.ts";
import type { RespValue } from "../resp/types.ts";
import type { Probe } from "./_dial.ts";
import {
  entriesOf,
  entryAddress,
  entryIsDown,
  masterAddressOf,
  replicaEntryHealthy,
  roleOf,
} from "./_replies.ts";

/**
 * The known sentinels, in the order they are asked: the configured ones, then the ones
 * learnt. The one that answered last moves to the front.
 */
export class SentinelSet {
  #list: Endpoint[] = [];
  /** The keys of `#list` (`endpointKey`), so an add is O(1) however many are known. */
  readonly #keys = new Set<string>();
  /** Whether an add was refused for the cap (reported once). */
  #capped = false;

  /** @param initial The configured sentinels. */
  constructor(initial: Endpoint[]) {
    for (const e of initial) this.add(e);
  }

  /** The sentinels, in asking order (a copy). */
  list(): Endpoint[] {
    return [...this.#list];
  }

  /** The number of sentinels known. */
  get size(): number {
    return this.#list.length;
  }

  /**
   * Adds a sentinel at the end; returns whether it was new. Past {@linkcode MAX_SENTINELS}
   * learnt ones, more are refused (a hostile or broken reply could name thousands).
   */
  add(e: Endpoint): boolean {
    const key = endpointKey(e);
    if (this.#keys.has(key)) return false;
    if (this.#list.length >= MAX_SENTINELS) {
      this.#capped = true;
      return false;
    }
    this.#keys.add(key);
    this.#list.push({ host: e.host, port: e.port });
    return true;
  }

  /** Whether sentinels were refused for the cap (then cleared: each overflow is told once). */
  takeCapped(): boolean {
    const c = this.#capped;
    this.#capped = false;
    return c;
  }

  /** Moves a sentinel to the front (it answered). */
  promote(e: Endpoint): void {
    const i = this.#list.findIndex((x) => sameEndpoint(x, e));
    if (i <= 0) return;
    const [x] = this.#list.splice(i, 1);
    this.#list.unshift(x!);
  }

  /** The sentinels starting after `e` (wrapping around), for moving off a failed one. */
  after(e: Endpoint | undefined): Endpoint[] {
    const i = e === undefined ? -1 : this.#list.findIndex((x) => sameEndpoint(x, e));
    if (i < 0) return this.list();
    return [...this.#list.slice(i + 1), ...this.#list.slice(0, i + 1)];
  }
}

/** The most sentinels a client keeps (configured and learnt). */
export const MAX_SENTINELS = 64;

/** What discovery needs. */
export interface DiscoveryContext {
  /** The monitored master's name. */
  masterName: string;
  /** The known sentinels; learnt ones are added. */
  sentinels: SentinelSet;
  /** Asks sentinels and nodes. */
  probe: Probe;
  /** Called for each sentinel learnt from SENTINEL SENTINELS. */
  onSentinelAdded?: (e: Endpoint) => void;
  /** Called when a reply named more sentinels than {@linkcode MAX_SENTINELS}. */
  onTooMany?: () => void;
}

/** A discovered master, and the sentinel that named it. */
export interface DiscoveredMaster {
  /** The master, verified with ROLE. */
  master: Endpoint;
  /** The sentinel that named it. */
  sentinel: Endpoint;
}

/** A failure's short description (its message, never a password: none is put in). */
function reason(e: unknown): string {
  if (e instanceof Error) {
    // The endpoint is already named: keep what happened.
    const m = /^Cannot connect to "[^"]*": (.*)$/s.exec(e.message);
    if (m) return m[1]!;
    const a = /^Cannot authenticate to "[^"]*"( as "[^"]*")?: (.*)$/s.exec(e.message);
    if (a) return `cannot authenticate${a[1] ?? ""}: ${a[2]}`;
    return e.message;
  }
  return String(e);
}

function learn(ctx: DiscoveryContext, reply: RespValue | undefined): void {
  if (reply === undefined || reply instanceof ReplyError) return;
  for (const f of entriesOf(reply)) {
    if (entryIsDown(f)) continue;
    const e = entryAddress(f);
    if (e && ctx.sentinels.add(e)) ctx.onSentinelAdded?.(e);
  }
  if (ctx.sentinels.takeCapped()) ctx.onTooMany?.();
}

function unknownName(v: RespValue): boolean {
  return v === null || v instanceof ReplyError && /no such master/i.test(v.message);
}

/**
 * Asks the sentinels in turn for the master and verifies it with ROLE: the first answer
 * whose node says `master` wins. A sentinel that is down, does not know the name, or names a
 * node that is not a master is skipped.
 *
 * @param ctx What to ask and whom.
 * @returns The master and the sentinel that named it.
 * @throws {ConnectionError} When no sentinel named a verified master; the message lists what
 *   each sentinel answered.
 */
export async function discoverMaster(ctx: DiscoveryContext): Promise<DiscoveredMaster> {
  const tried: string[] = [];
  const name = ctx.masterName;
  let unknown = 0;
  let down = 0;
  const asked = new Set<string>();
  // Sentinels learnt along the way are asked too.
  for (let round = 0; round < 4; round++) {
    const list = ctx.sentinels.list().filter((s) => !asked.has(formatEndpoint(s)));
    if (list.length === 0) break;
    for (const s of list) {
      asked.add(formatEndpoint(s));
      const sn = formatEndpoint(s);
      let replies: RespValue[];
      try {
        replies = await ctx.probe.sentinel(s, [
          ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", name],
          ["SENTINEL", "SENTINELS", name],
        ]);
      } catch (e) {
        down++;
        tried.push(`sentinel ${sn}: ${reason(e)}`);
        continue;
      }
      const [addrReply, sentinelsReply] = replies;
      if (addrReply === undefined || unknownName(addrReply)) {
        unknown++;
        tried.push(`sentinel ${sn}: does not know "${name}"`);
        continue;
      }
      if (addrReply instanceof ReplyError) {
        tried.push(`sentinel ${sn}: ${addrReply.message}`);
        continue;
      }
      const master = masterAddressOf(addrReply);
      if (master === undefined) {
        tried.push(`sentinel ${sn}: unreadable reply`);
        continue;
      }
      learn(ctx, sentinelsReply);
      const mn = formatEndpoint(master);
      let role: RespValue | undefined;
      try {
        [role] = await ctx.probe.node(master, [["ROLE"]]);
      } catch (e) {
        tried.push(`sentinel ${sn} named ${mn}: ${reason(e)}`);
        continue;
      }
      if (role instanceof ReplyError) {
        tried.push(`sentinel ${sn} named ${mn}: ROLE failed: ${role.message}`);
        continue;
      }
      const r = roleOf(role ?? null);
      if (r.role !== "master") {
        tried.push(
          `sentinel ${sn} named ${mn}, which is ${r.role === "replica" ? "a replica" : r.name}`,
        );
        continue;
      }
      ctx.sentinels.promote(s);
      return { master, sentinel: s };
    }
  }
  const what = tried.length === 0
    ? "no sentinel configured"
    : unknown > 0 && unknown + down === tried.length
    ? `no sentinel knows the master name "${name}"`
    : down === tried.length
    ? `no sentinel answered for "${name}"`
    : `no sentinel named a reachable master for "${name}"`;
  throw new ConnectionError(`Cannot discover the master: ${what} (${tried.join("; ")})`);
}

/** A discovered, verified replica. */
export interface DiscoveredReplicas {
  /** Healthy replicas, verified with ROLE (replica of the master, link connected). */
  replicas: Endpoint[];
  /** The sentinel that listed them. */
  sentinel: Endpoint;
}

/**
 * Asks the sentinels in turn for the replicas of the master and keeps those that are up by
 * the sentinel's account and whose ROLE says a replica with its link to the master connected.
 *
 * @param ctx What to ask and whom.
 * @param exclude Replicas to leave out (one that just failed).
 * @returns The healthy replicas, from the first sentinel that listed any.
 * @throws {ConnectionError} When no sentinel listed a healthy replica.
 */
export async function discoverReplicas(
  ctx: DiscoveryContext,
  exclude: Endpoint[] = [],
): Promise<DiscoveredReplicas> {
  const tried: string[] = [];
  const name = ctx.masterName;
  let unknown = 0;
  let down = 0;
  for (const s of ctx.sentinels.list()) {
    const sn = formatEndpoint(s);
    let replies: RespValue[];
    try {
      replies = await ctx.probe.sentinel(s, [
        ["SENTINEL", "REPLICAS", name],
        ["SENTINEL", "SENTINELS", name],
      ]);
    } catch (e) {
      down++;
      tried.push(`sentinel ${sn}: ${reason(e)}`);
      continue;
    }
    const [list, sentinelsReply] = replies;
    if (list === undefined || unknownName(list)) {
      unknown++;
      tried.push(`sentinel ${sn}: does not know "${name}"`);
      continue;
    }
    if (list instanceof ReplyError) {
      tried.push(`sentinel ${sn}: ${list.message}`);
      continue;
    }
    learn(ctx, sentinelsReply);
    const candidates: Endpoint[] = [];
    for (const f of entriesOf(list)) {
      const e = entryAddress(f);
      if (!e || !replicaEntryHealthy(f) || exclude.some((x) => sameEndpoint(x, e))) continue;
      candidates.push(e);
    }
    const checks = await Promise.all(candidates.map(async (e) => {
      try {
        const [role] = await ctx.probe.node(e, [["ROLE"]]);
        const r = roleOf(role ?? null);
        if (r.role === "replica" && r.connected) return undefined;
        return `${formatEndpoint(e)} is ${
          r.role === "replica" ? "not connected to its master" : `a ${r.role}`
        }`;
      } catch (err) {
        return `${formatEndpoint(e)}: ${reason(err)}`;
      }
    }));
    const replicas = candidates.filter((_, i) => checks[i] === undefined);
    if (replicas.length > 0) {
      ctx.sentinels.promote(s);
      return { replicas, sentinel: s };
    }
    const why = checks.filter((c): c is string => c !== undefined);
    tried.push(
      `sentinel ${sn}: no healthy replica${why.length > 0 ? ` (${why.join(", ")})` : ""}`,
    );
  }
  const what = tried.length === 0
    ? "no sentinel configured"
    : unknown > 0 && unknown + down === tried.length
    ? `no sentinel knows the master name "${name}"`
    : down === tried.length
    ? `no sentinel answered for "${name}"`
    : `no sentinel listed a healthy replica of "${name}"`;
  throw new ConnectionError(`Cannot discover a replica: ${what} (${tried.join("; ")})`);
}
