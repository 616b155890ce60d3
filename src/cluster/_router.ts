// The router: which node a command goes to — its keys' slot, the slot's primary or a replica
// (readFrom), a keyless command to one primary or, by its request policy, to all of them, SCAN
// over every primary in turn, a cross-slot command split — and the first attempt, straight to that node (the hot path).
import { FLAG_READONLY, type Transform } from "../commands/command_runner.ts";
import { commandKeyIndexes, commandPolicy } from "../commands/command_keys.ts";
import { FLAG_ERRORS_AS_VALUES } from "../command_flags.ts";
import { ClosedError } from "../errors.ts";
import { argumentsError } from "../connection/connection.ts";
import type { RedisArgument } from "../resp/types.ts";
import type { ClusterContext } from "./_context.ts";
import type { FanOut } from "./_fan_out.ts";
import type { NodeMap } from "./_node_map.ts";
import type { Job, RedirectPolicy } from "./_redirect_policy.ts";
import type { ClusterScan } from "./_scan.ts";
import type { TopologyHolder } from "./_topology_holder.ts";
import { keySlot } from "./slot.ts";
import { NO_NODE } from "./topology.ts";

/**
 * Routes commands to nodes.
 *
 * @example
 * ```ts ignore
 * await router.dispatch(["GET", "user:1"], undefined, 0, undefined, undefined);
 * ```
 */
export class Router {
  readonly #ctx: ClusterContext;
  readonly #holder: TopologyHolder;
  readonly #nodes: NodeMap;
  readonly #slotMoves: ReadonlyMap<number, Promise<unknown>>;
  #policy!: RedirectPolicy;
  #fanOut!: FanOut;
  #scan!: ClusterScan;
  /** `readFrom: "primary"`: every command goes to the slot's primary. */
  readonly #primaryOnly: boolean;
  /** Round robin over primaries (keyless commands) and replicas (reads). */
  #rr = 0;

  /**
   * @param ctx The client's shared state.
   * @param holder The topology.
   * @param nodes The node map.
   * @param slotMoves Slots whose shard subscriptions are moving (their commands wait).
   */
  constructor(
    ctx: ClusterContext,
    holder: TopologyHolder,
    nodes: NodeMap,
    slotMoves: ReadonlyMap<number, Promise<unknown>>,
  ) {
    this.#ctx = ctx;
    this.#holder = holder;
    this.#nodes = nodes;
    this.#slotMoves = slotMoves;
    this.#primaryOnly = ctx.options.readFrom === "primary";
  }

  /** Completes the wiring: the policy, fan-out and SCAN are made with this router. */
  attach(policy: RedirectPolicy, fanOut: FanOut, scan: ClusterScan): void {
    this.#policy = policy;
    this.#fanOut = fanOut;
    this.#scan = scan;
  }

  // ------------------------------------------------------------------ node selection

  /** The node index to send to for a slot served by primary `i`: a replica for reads when asked. */
  readIndex(i: number, flags: number): number {
    if (this.#primaryOnly || (flags & FLAG_READONLY) === 0) return i;
    const readFrom = this.#ctx.options.readFrom;
    const t = this.#holder.topology;
    const reps = t.replicas[i];
    if (reps === undefined || reps.length === 0) return i;
    const r = reps[(this.#rr++ & 0x7fffffff) % reps.length]!;
    if (readFrom === "replica" || !this.#nodes.down.has(t.nodes[r]!.address)) return r;
    return i;
  }

  /** A primary serving slots, reachable ones first (round robin). */
  anyPrimary(): string | undefined {
    const list = this.#holder.primaries;
    const nodes = this.#holder.topology.nodes;
    if (list.length === 0) return undefined;
    for (let k = 0; k < list.length; k++) {
      const i = list[(this.#rr++ & 0x7fffffff) % list.length]!;
      const a = nodes[i]!.address;
      if (!this.#nodes.down.has(a)) return a;
    }
    return nodes[list[0]!]!.address;
  }

  /** The address of the node for a job's next attempt, or `undefined` when none serves it. */
  target(job: Job): string | undefined {
    if (job.asking !== undefined) return job.asking;
    if (job.node !== undefined) return job.node;
    if (job.slot < 0) return this.anyPrimary();
    const t = this.#holder.topology;
    const i = t.slots[job.slot]!;
    if (i === NO_NODE) return undefined;
    return t.nodes[this.readIndex(i, job.flags)]!.address;
  }

  // ------------------------------------------------------------------ commands

  /**
   * Runs one command on its node(s). The client-side cache sits in front of this, in the
   * client shell.
   */
  dispatch(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
  ): Promise<unknown> {
    if (this.#ctx.closed) {
      const e = new ClosedError("Cannot send the command: the client is closed", {
        written: false,
      });
      return (flags & FLAG_ERRORS_AS_VALUES) !== 0 ? Promise.resolve(e) : Promise.reject(e);
    }
    if (!this.#holder.ready) {
      return this.#holder.discover().then(
        () => this.#routeOrRefuse(args, transform, flags, blockMs, timeout),
        (e) => {
          if ((flags & FLAG_ERRORS_AS_VALUES) !== 0) return e;
          throw e;
        },
      );
    }
    return this.#routeOrRefuse(args, transform, flags, blockMs, timeout);
  }

  /**
   * `#route`, with an argument that cannot be hashed or sent (a JS caller's `null`) refused
   * as the connection refuses it: a rejected promise (or an error value), never a throw.
   */
  #routeOrRefuse(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
  ): Promise<unknown> {
    try {
      return this.#route(args, transform, flags, blockMs, timeout);
    } catch (e) {
      const refused = argumentsError(args, 0) ?? e;
      return (flags & FLAG_ERRORS_AS_VALUES) !== 0
        ? Promise.resolve(refused)
        : Promise.reject(refused);
    }
  }

  #route(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
  ): Promise<unknown> {
    const idx = commandKeyIndexes(args, true);
    if (idx !== undefined && idx.length > 0) {
      const slot = keySlot(args[idx[0]!]!);
      for (let i = 1; i < idx.length; i++) {
        if (keySlot(args[idx[i]!]!) !== slot) {
          return this.#fanOut.crossSlot(args, idx, transform, flags, timeout);
        }
      }
      return this.#sendKeyed(args, transform, flags, blockMs, timeout, slot);
    }
    if (idx === undefined && args.length > 1) {
      // A command the key table does not know (a module's): its key is most often the first
      // argument; a MOVED corrects the slot otherwise.
      return this.#sendKeyed(args, transform, flags, blockMs, timeout, keySlot(args[1]!));
    }
    const policy = commandPolicy(args);
    if (policy?.request === "all_shards" || policy?.request === "all_nodes") {
      return this.#fanOut.all(args, transform, flags, timeout, policy);
    }
    // SCAN walks every primary: its cursor names the node of the next page.
    if (policy?.name === "scan") return this.#scan.page(args, transform, flags, timeout);
    const p = this.#policy;
    return p.send(p.job(args, transform, flags, blockMs, timeout, -1, undefined));
  }

  /**
   * The first attempt of a keyed command: straight to the slot's node; the `Job` that carries
   * redirections and retries is only made when the node refuses or the connection fails (the
   * retry budget counts from then).
   */
  #sendKeyed(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs: number | undefined,
    timeout: number | undefined,
    slot: number,
  ): Promise<unknown> {
    const t = this.#holder.topology;
    const i = t.slots[slot]!;
    if (i !== NO_NODE && this.#slotMoves.size === 0) {
      const k = this.readIndex(i, flags);
      const address = t.nodes[k]!.address;
      const down = this.#nodes.down;
      if (down.size === 0 || !down.has(address)) {
        const node = this.#nodes.at(k);
        return node.run(args, transform, flags & ~FLAG_ERRORS_AS_VALUES, blockMs, timeout).then(
          undefined,
          (e) =>
            this.#policy.retryFirst(
              args,
              transform,
              flags,
              blockMs,
              timeout,
              slot,
              e,
              node,
              address,
            ),
        );
      }
    }
    const p = this.#policy;
    return p.send(p.job(args, transform, flags, blockMs, timeout, slot, undefined));
  }
}
