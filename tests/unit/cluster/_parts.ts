// A harness for the cluster client's parts on a manual clock: fake node executors (made by the
// node map's factory) answering from a test's script, and a model topology served as
// CLUSTER SHARDS. No socket, no real timer.
import type { Clock, TimerId } from "../../../src/_clock.ts";
import type { NodeExecutor } from "../../../src/client/node_executor.ts";
import { resolveClientOptions } from "../../../src/client/options.ts";
import type { PubSubListener } from "../../../src/client/subscription.ts";
import { ConnectionError, ReplyError } from "../../../src/errors.ts";
import { silentLogger } from "../../../src/logger.ts";
import type { HostPort } from "../../../src/maintenance/endpoint.ts";
import type { RedisArgument } from "../../../src/resp/types.ts";
import { type ClusterContext, emptyStats } from "../../../src/cluster/_context.ts";
import { ClusterScan } from "../../../src/cluster/_scan.ts";
import { FanOut } from "../../../src/cluster/_fan_out.ts";
import { type NodeFactoryHooks, NodeMap } from "../../../src/cluster/_node_map.ts";
import { ClusterPubSub } from "../../../src/cluster/_pubsub.ts";
import { RedirectPolicy } from "../../../src/cluster/_redirect_policy.ts";
import { Router } from "../../../src/cluster/_router.ts";
import { TopologyHolder } from "../../../src/cluster/_topology_holder.ts";
import { Transactions } from "../../../src/cluster/_transactions.ts";
import {
  type RedisClusterClientOptions,
  resolveClusterOptions,
} from "../../../src/cluster/options.ts";
import { addressMapper } from "../../../src/cluster/topology.ts";
import { type ModelShard, shardsReply } from "./_model.ts";

/** Lets every pending promise callback run (a macrotask turn: after all microtasks). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A clock driven by the test. */
export class ManualClock implements Clock {
  t = 1_000_000;
  #next = 1;
  readonly timers: { id: number; at: number; fn: () => void }[] = [];
  now = (): number => this.t;
  setTimer(fn: () => void, ms: number): TimerId {
    const id = this.#next++;
    this.timers.push({ id, at: this.t + Math.max(0, ms), fn });
    return id;
  }
  clearTimer(id: TimerId | undefined): void {
    const i = this.timers.findIndex((x) => x.id === id);
    if (i !== -1) this.timers.splice(i, 1);
  }
  /** Delays of the pending timers, from now. */
  delays(): number[] {
    return this.timers.map((x) => x.at - this.t).sort((a, b) => a - b);
  }
  /** Moves time on by `ms`, firing each timer due on the way, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
    await flush();
  }
}

/** A fake subscription: what the parts read of one. */
export class FakeSub {
  active = true;
  constructor(
    readonly node: string,
    readonly name: string,
    readonly listener: PubSubListener,
    readonly asking: boolean,
  ) {}
  unsubscribe(): Promise<void> {
    this.active = false;
    return Promise.resolve();
  }
}

/** What a script answers: a value, an error (thrown), or a promise of either. */
export type Answer = unknown;
export type Script = (node: string, args: string[], asking: boolean) => Answer;

/** A fake executor of one node. */
export class FakeNode {
  closed = false;
  readonly forgotten: string[] = [];
  readonly subs: FakeSub[] = [];
  readonly pubsub = {
    forget: (_kind: string, names: string[]) => {
      this.forgotten.push(...names);
      // The node's subscriptions of these names end (nothing is sent).
      for (const s of this.subs) if (names.includes(s.name)) s.active = false;
    },
  };
  constructor(
    readonly address: string,
    readonly endpoint: HostPort,
    readonly cluster: FakeCluster,
    readonly hooks: NodeFactoryHooks,
  ) {}
  /**
   * The node publishes `message` to `channel`: every active subscription of it on this node's
   * connection gets it, as a server delivers one message per connection and the connection's
   * subscriptions share it.
   */
  publish(channel: string, message: string): void {
    for (const s of this.subs.filter((x) => x.active && x.name === channel)) {
      s.listener(message, channel);
    }
  }
  /** The node's connection is ready (again). */
  ready(): void {
    this.hooks.emit("ready", undefined);
  }
  /** The node's connection was lost; it reconnects. */
  lost(): void {
    this.hooks.emit("reconnecting", { error: new ConnectionError(`Cannot reach ${this.address}`) });
  }
  run(args: RedisArgument[]): Promise<unknown> {
    return this.cluster.answer(this.address, args.map(String), false);
  }
  sendAll(commands: { args: RedisArgument[] }[]): Promise<unknown>[] {
    let asking = false;
    return commands.map((c) => {
      const args = c.args.map(String);
      if (args[0] === "ASKING") {
        asking = true;
        this.cluster.log.push({ node: this.address, args, asking: false });
        return Promise.resolve("OK");
      }
      return this.cluster.answer(this.address, args, asking);
    });
  }
  watch(keys: RedisArgument[]): Promise<unknown> {
    return this.cluster.answer(this.address, ["WATCH", ...keys.map(String)], false).then(() => ({
      node: this.address,
    }));
  }
  subscribe(
    _kind: string,
    name: string,
    listener: PubSubListener,
    _max: number,
    _restore?: boolean,
    asking = false,
  ): Promise<FakeSub> {
    return this.cluster.answer(this.address, ["SSUBSCRIBE", name], asking).then(() => {
      const sub = new FakeSub(this.address, name, listener, asking);
      this.subs.push(sub);
      return sub;
    });
  }
  connect(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
  destroy(): void {
    this.closed = true;
  }
}

/** The model cluster the fake nodes answer for. */
export class FakeCluster {
  shards: ModelShard[];
  epoch = 1;
  readonly nodes = new Map<string, FakeNode>();
  readonly log: { node: string; args: string[]; asking: boolean }[] = [];
  /** A test's answer to a command, tried first (`undefined`: the default). */
  script: Script | undefined;
  constructor(shards: ModelShard[]) {
    this.shards = shards;
  }
  answer(node: string, args: string[], asking: boolean): Promise<unknown> {
    this.log.push({ node, args, asking });
    return Promise.resolve().then(() => {
      const custom = this.script?.(node, args, asking);
      if (custom !== undefined) return custom;
      const name = args[0]!.toUpperCase();
      if (name === "CLUSTER" && args[1] === "SHARDS") return shardsReply(this.shards);
      if (name === "CLUSTER" && args[1] === "INFO") {
        return `cluster_state:ok\r\ncluster_current_epoch:${this.epoch}\r\n`;
      }
      return "OK";
    }).then((v) => {
      if (v instanceof Error) throw v;
      return v;
    });
  }
  /** Commands a node was sent (by name). */
  count(name: string, node?: string): number {
    return this.log.filter((x) => x.args[0] === name && (node === undefined || x.node === node))
      .length;
  }
}

/** A ReplyError as the server sends it. */
export function reply(text: string): ReplyError {
  return new ReplyError(text);
}

/** Three primaries (7000, 7001, 7002) with one replica each (7100, 7101, 7102). */
export function threeShards(): ModelShard[] {
  const h = "127.0.0.1";
  return [
    { primary: { host: h, port: 7000 }, replicas: [{ host: h, port: 7100 }], ranges: [[0, 5460]] },
    {
      primary: { host: h, port: 7001 },
      replicas: [{ host: h, port: 7101 }],
      ranges: [[5461, 10922]],
    },
    {
      primary: { host: h, port: 7002 },
      replicas: [{ host: h, port: 7102 }],
      ranges: [[10923, 16383]],
    },
  ];
}

/** The parts of one cluster client, wired as the client wires them, on fakes. */
export function parts(
  shards: ModelShard[] = threeShards(),
  options: Partial<RedisClusterClientOptions> = {},
) {
  const clock = new ManualClock();
  const c = resolveClusterOptions({
    nodes: ["redis://127.0.0.1:7000"],
    topologyRefreshInterval: 0,
    protocol: 3,
    ...options,
  });
  const seed = c.seeds[0]!;
  const settings = resolveClientOptions({ ...c.node, host: seed.host, port: seed.port });
  const events: { name: string; detail: unknown }[] = [];
  const ctx: ClusterContext = {
    options: c,
    settings,
    clock,
    logger: silentLogger,
    map: addressMapper(undefined),
    stats: emptyStats(),
    closed: false,
    emit: (name, detail) => void events.push({ name, detail }),
  };
  const cluster = new FakeCluster(shards);
  // deno-lint-ignore prefer-const
  let pubsub: ClusterPubSub;
  const nodes: NodeMap = new NodeMap(
    ctx,
    (address, endpoint, hooks) => {
      const n = new FakeNode(address, endpoint, cluster, hooks);
      cluster.nodes.set(address, n);
      return n as unknown as NodeExecutor;
    },
    () => holder.topology,
    {
      shardEnded: (address, channel) => pubsub.shardEnded(address, channel),
      lost: (address) => pubsub.shadows.lost(address),
      unreachable: () => holder.scheduleRefresh(),
    },
  );
  const holder: TopologyHolder = new TopologyHolder(ctx, nodes);
  const slotMoves = new Map<number, Promise<unknown>>();
  const router = new Router(ctx, holder, nodes, slotMoves);
  const policy = new RedirectPolicy(ctx, holder, nodes, router, {
    slotMoves,
    migrating: (slot, to) => pubsub.migration.migrating(slot, to),
    moved: (slot) => pubsub.moveSlot(slot),
  });
  router.attach(policy, new FanOut(ctx, holder, policy), new ClusterScan(holder, policy));
  const transactions = new Transactions(holder, router, policy);
  pubsub = new ClusterPubSub(ctx, holder, nodes, policy, slotMoves);
  holder.setHooks({
    adopted: () => pubsub.reconcile(),
    migrated: (moved, dropped) => pubsub.migrated(moved, dropped),
  });
  /** Sends a command as the typed methods do. */
  const send = (...args: string[]) => router.dispatch(args, undefined, 0, undefined, undefined);
  return { clock, ctx, cluster, nodes, holder, router, policy, transactions, pubsub, events, send };
}

/** A key whose slot is in `[from, to]`. */
export function keyIn(from: number, to: number, keySlot: (k: string) => number): string {
  for (let i = 0;; i++) {
    const k = `k${i}`;
    const s = keySlot(k);
    if (s >= from && s <= to) return k;
  }
}
