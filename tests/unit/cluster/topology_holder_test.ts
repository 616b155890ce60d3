// The topology holder on the manual clock, over fake node executors: adopting a view (events,
// executors of nodes that left closed), a MOVED patched in, refreshes coalesced, the follow-up
// refresh rate-limited, the periodic refresh.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { shardsReply } from "./_model.ts";
import { flush, parts, threeShards } from "./_parts.ts";
import { REFRESH_GAP_MS } from "../../../src/cluster/_topology_holder.ts";

const A = "127.0.0.1:7000";
const B = "127.0.0.1:7001";
const C = "127.0.0.1:7002";

/** Gates every CLUSTER SHARDS reply until `open()`. */
function gate(p: ReturnType<typeof parts>) {
  const waiting: (() => void)[] = [];
  p.cluster.script = (_node, args) => {
    if (args[0] !== "CLUSTER" || args[1] !== "SHARDS") return undefined;
    return new Promise((resolve) => waiting.push(() => resolve(shardsReply(p.cluster.shards))));
  };
  return {
    open(): void {
      p.cluster.script = undefined;
      for (const w of waiting.splice(0)) w();
    },
    get waiting(): number {
      return waiting.length;
    },
  };
}

describe("TopologyHolder", () => {
  it("discovers from the seed and adopts the view: nodes added, one topology event", async () => {
    const p = parts();
    await p.holder.discover();
    assert.equal(p.holder.ready, true);
    assert.deepEqual(p.holder.primaryAddresses(), [A, B, C]);
    assert.equal(p.holder.ownerOf(0), A);
    assert.equal(p.holder.ownerOf(16383), C);
    const added = p.events.filter((e) => e.name === "node-added").map((e) =>
      (e.detail as { address: string }).address
    );
    assert.equal(added.length, 6);
    assert.equal(p.events.filter((e) => e.name === "topology").length, 1);
  });

  it("closes the executor of a node that left the view, and says so", async () => {
    const p = parts();
    await p.holder.discover();
    await flush();
    p.nodes.executor(C);
    const shards = threeShards();
    shards[0]!.ranges = [[0, 5460], [10923, 16383]];
    p.cluster.shards = [shards[0]!, shards[1]!];
    p.cluster.epoch = 2;
    await p.holder.refresh();
    assert.equal(p.holder.ownerOf(16383), A);
    assert.equal(p.nodes.has(C), false);
    assert.equal(p.cluster.nodes.get(C)!.closed, true);
    assert.ok(p.events.some((e) => e.name === "node-removed"));
  });

  it("never adopts a view older than the current one", async () => {
    const p = parts();
    p.cluster.epoch = 5;
    await p.holder.discover();
    await flush();
    const shards = threeShards();
    shards[0]!.ranges = [[0, 100]];
    shards[1]!.ranges = [[101, 10922]];
    p.cluster.shards = shards;
    p.cluster.epoch = 4;
    await p.holder.refresh();
    assert.equal(p.holder.ownerOf(200), A, "the older view is not adopted");
  });

  it("patches a MOVED in at once (a new node too) and refreshes after it", async () => {
    const p = parts();
    await p.holder.discover();
    await p.clock.advance(REFRESH_GAP_MS);
    const before = p.cluster.count("CLUSTER");
    p.holder.patch(42, { host: "127.0.0.1", port: 7001 });
    assert.equal(p.holder.ownerOf(42), B);
    p.holder.patch(43, { host: "127.0.0.1", port: 7999 });
    assert.equal(p.holder.ownerOf(43), "127.0.0.1:7999");
    assert.ok(p.holder.primaryAddresses().includes("127.0.0.1:7999"));
    await flush();
    assert.ok(p.cluster.count("CLUSTER") > before, "a refresh was started");
  });

  it("coalesces refreshes: requests during one run one more after it, not one each", async () => {
    const p = parts();
    await p.holder.discover();
    await flush();
    const g = gate(p);
    const first = p.holder.refresh();
    const second = p.holder.refresh();
    p.holder.scheduleRefresh();
    p.holder.scheduleRefresh();
    assert.equal(second, first, "one refresh runs at a time");
    await flush();
    const asked = g.waiting;
    assert.ok(asked > 0 && asked <= 3, "at most three nodes asked per round");
    g.open();
    await first;
    await p.clock.advance(REFRESH_GAP_MS);
    // The first round, then exactly one more for the four requests made during it.
    assert.equal(p.ctx.stats.refreshes - 1, 2);
  });

  it("rate-limits background refreshes: a storm of requests makes one per REFRESH_GAP_MS", async () => {
    const p = parts();
    await p.holder.discover();
    await flush();
    const before = p.ctx.stats.refreshes;
    // 16 workers meeting MOVED for a second: a request every millisecond.
    for (let t = 0; t < 1000; t++) {
      p.holder.scheduleRefresh();
      await p.clock.advance(1);
    }
    const made = p.ctx.stats.refreshes - before;
    // Before: a refresh right after every refresh, hundreds per second.
    assert.ok(made >= 5 && made <= 1000 / REFRESH_GAP_MS + 1, `${made} refreshes in 1 s`);
    p.holder.close();
  });

  it("runs one follow-up refresh however often it is asked for (refreshLater)", async () => {
    const p = parts();
    await p.holder.discover();
    await flush();
    const before = p.ctx.stats.refreshes;
    p.holder.refreshLater(1_000);
    p.holder.refreshLater(1_000);
    p.holder.refreshLater(10);
    assert.deepEqual(p.clock.delays(), [1_000]);
    await p.clock.advance(999);
    assert.equal(p.ctx.stats.refreshes, before);
    await p.clock.advance(1);
    assert.equal(p.ctx.stats.refreshes, before + 1);
  });

  it("refreshes every topologyRefreshInterval on the injected clock, and stops on close", async () => {
    const p = parts(undefined, { topologyRefreshInterval: 5_000 });
    await p.holder.discover();
    await flush();
    const before = p.ctx.stats.refreshes;
    await p.clock.advance(5_000);
    assert.equal(p.ctx.stats.refreshes, before + 1);
    await p.clock.advance(5_000);
    assert.equal(p.ctx.stats.refreshes, before + 2);
    p.ctx.closed = true;
    p.holder.close();
    assert.equal(p.clock.timers.length, 0);
  });
});
