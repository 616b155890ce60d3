import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { applySlotDelta, type SlotTable } from "../../../src/cluster/slot_delta.ts";
import { NO_NODE, parseClusterShards } from "../../../src/cluster/topology.ts";
import { addressMapper } from "../../../src/cluster/topology.ts";
import { type ModelShard, prng, rangesOf, shardsReply } from "./_model.ts";

const NONE = 0xffff;

function table(owners: [string, number, number][]): SlotTable {
  const nodes: string[] = [];
  const slots = new Uint16Array(16384).fill(NONE);
  for (const [address, start, end] of owners) {
    let i = nodes.indexOf(address);
    if (i === -1) i = nodes.push(address) - 1;
    slots.fill(i, start, end + 1);
  }
  return { nodes, slots };
}

function ownerOf(t: { nodes: readonly string[]; slots: Uint16Array }, s: number): string | null {
  const i = t.slots[s]!;
  return i === NONE ? null : t.nodes[i]!;
}

const A = "127.0.0.1:7000";
const B = "127.0.0.1:7001";
const C = "127.0.0.1:7002";
const D = "127.0.0.1:7003";

describe("applySlotDelta", () => {
  const three = () => table([[A, 0, 5460], [B, 5461, 10922], [C, 10923, 16383]]);

  it("moves slots between known nodes (triples), leaving the input alone", () => {
    const t = three();
    const before = t.slots.slice();
    const d = applySlotDelta(t, [[A, B, "0-99,200"]]);
    assert.deepEqual(t.slots, before);
    assert.equal(ownerOf(d.table, 0), B);
    assert.equal(ownerOf(d.table, 99), B);
    assert.equal(ownerOf(d.table, 100), A);
    assert.equal(ownerOf(d.table, 200), B);
    assert.deepEqual(d.added, []);
    assert.deepEqual(d.dropped, []);
    assert.equal(d.movedCount, 101);
    assert.deepEqual(d.moved, [{
      from: A,
      to: B,
      slots: [{ start: 0, end: 99 }, { start: 200, end: 200 }],
    }]);
    assert.deepEqual(d.malformed, []);
  });

  it("accepts [destination, slots] pairs, taking the current owners as sources", () => {
    const d = applySlotDelta(three(), [[D, "5000-6000"]]);
    assert.deepEqual(d.added, [D]);
    assert.equal(ownerOf(d.table, 5000), D);
    assert.equal(ownerOf(d.table, 6000), D);
    assert.deepEqual(d.moved.map((m) => [m.from, m.to]), [[A, D], [B, D]]);
    assert.deepEqual(d.dropped, []);
  });

  it("accepts parsed entries", () => {
    const d = applySlotDelta(three(), [{
      source: { host: "127.0.0.1", port: 7002 },
      destination: { host: "127.0.0.1", port: 7003 },
      slots: [{ start: 10923, end: 16383 }],
    }]);
    assert.deepEqual(d.added, [D]);
    assert.deepEqual(d.dropped, [C]);
    assert.deepEqual(d.table.nodes, [A, B, D]);
    assert.equal(ownerOf(d.table, 16383), D);
    assert.equal(ownerOf(d.table, 0), A);
  });

  it("drops a source left without a primary slot, unless it serves replica reads", () => {
    const d = applySlotDelta(three(), [[A, B, "0-5460"]]);
    assert.deepEqual(d.dropped, [A]);
    assert.deepEqual(d.table.nodes, [B, C]);
    assert.equal(ownerOf(d.table, 0), B);
    assert.equal(ownerOf(d.table, 16000), C);
    const kept = applySlotDelta({ ...three(), replicaReads: [A] }, [[A, B, "0-5460"]]);
    assert.deepEqual(kept.dropped, []);
    assert.deepEqual(kept.table.nodes, [A, B, C]);
  });

  it("keeps a source that still owns slots and never drops a node that was not a source", () => {
    const t = table([[A, 0, 100], [B, 101, 16383]]);
    const withIdle = { nodes: [...t.nodes, D], slots: t.slots };
    const d = applySlotDelta(withIdle, [[A, B, "0-50"]]);
    assert.deepEqual(d.dropped, []);
    assert.deepEqual(d.table.nodes, [A, B, D]);
  });

  it("reports malformed entries and applies none of them, the valid ones whole", () => {
    const t = three();
    const d = applySlotDelta(t, [
      [A, B, "0-10,99999"],
      [A, B, "20-10"],
      [A, "not-an-address", "1"],
      ["x", "y", "z", "w"],
      "junk" as unknown as string[],
      42 as unknown as string[],
      [A, C, "300-301"],
      { source: null, destination: { host: "h", port: 1 }, slots: [{ start: 0, end: 16384 }] },
      { source: null, destination: { host: "", port: 1 }, slots: [] },
    ]);
    assert.deepEqual(d.malformed.map((m) => m.index), [0, 1, 2, 3, 4, 5, 7, 8]);
    assert.match(d.malformed[0]!.reason, /16383/);
    assert.match(d.malformed[1]!.reason, /start is above the end/);
    for (let s = 0; s <= 10; s++) assert.equal(ownerOf(d.table, s), A);
    assert.equal(ownerOf(d.table, 300), C);
    assert.equal(d.movedCount, 2);
    assert.deepEqual(d.added, []);
  });

  it("treats an empty entry list as no change", () => {
    const d = applySlotDelta(three(), []);
    assert.equal(d.movedCount, 0);
    assert.deepEqual(d.table.nodes, [A, B, C]);
  });

  it("assigns unassigned slots, canonicalises and rewrites addresses", () => {
    const t = table([[A, 0, 100]]);
    const d = applySlotDelta(t, [["10.0.0.9:6379", "101-200"]], {
      mapAddress: addressMapper({ "10.0.0.9:6379": "LOCALHOST:7009" }),
    });
    assert.deepEqual(d.added, ["localhost:7009"]);
    assert.deepEqual(d.moved, [{
      from: null,
      to: "localhost:7009",
      slots: [{ start: 101, end: 200 }],
    }]);
    assert.equal(ownerOf(d.table, 300), null);
  });

  it("rejects a table of the wrong size", () => {
    assert.throws(() => applySlotDelta({ nodes: [], slots: new Uint16Array(10) }, []), TypeError);
  });
});

/** A random cluster: 2-5 primaries over contiguous ranges, some with replicas. */
function randomModel(rnd: () => number): ModelShard[] {
  const n = 2 + Math.floor(rnd() * 4);
  const cuts = new Set<number>();
  while (cuts.size < n - 1) cuts.add(1 + Math.floor(rnd() * 16383));
  const bounds = [0, ...[...cuts].sort((a, b) => a - b), 16384];
  const shards: ModelShard[] = [];
  for (let i = 0; i < n; i++) {
    shards.push({
      primary: { host: "127.0.0.1", port: 7000 + i },
      replicas: rnd() < 0.5 ? [{ host: "127.0.0.1", port: 7500 + i }] : [],
      ranges: [[bounds[i]!, bounds[i + 1]! - 1]],
    });
  }
  return shards;
}

describe("applySlotDelta against a re-read topology", () => {
  it("gives the table CLUSTER SHARDS gives after the same move (seeded random)", () => {
    for (let seed = 1; seed <= 100; seed++) {
      const rnd = prng(seed);
      const model = randomModel(rnd);
      const answeredBy = { host: "127.0.0.1", port: 7000 };
      const before = parseClusterShards(shardsReply(model, rnd() < 0.5), { answeredBy });
      const slotTable: SlotTable = {
        nodes: before.nodes.map((n) => n.address),
        slots: before.slots,
        replicaReads: before.nodes.filter((n) => n.role === "replica").map((n) => n.address),
      };

      // The move: owner per slot in the model, then some slot sets change owner.
      const owner: number[] = new Array(16384);
      model.forEach((s, i) => {
        for (const [a, b] of s.ranges) for (let x = a; x <= b; x++) owner[x] = i;
      });
      const entries: unknown[][] = [];
      const moves = 1 + Math.floor(rnd() * 3);
      let nextPort = 7100;
      for (let m = 0; m < moves; m++) {
        const src = Math.floor(rnd() * model.length);
        const mine: number[] = [];
        for (let x = 0; x < 16384; x++) if (owner[x] === src) mine.push(x);
        if (mine.length === 0) continue;
        let moving: number[];
        if (rnd() < 0.3) moving = mine; // the source is emptied
        else {
          const a = Math.floor(rnd() * mine.length);
          const len = 1 + Math.floor(rnd() * Math.min(500, mine.length - a));
          moving = mine.slice(a, a + len);
          if (rnd() < 0.3 && mine.length > 1) moving.push(mine[Math.floor(rnd() * mine.length)]!);
        }
        let dst: number;
        if (rnd() < 0.4) {
          model.push({
            primary: { host: "127.0.0.1", port: nextPort++ },
            replicas: [],
            ranges: [],
          });
          dst = model.length - 1;
        } else {
          dst = Math.floor(rnd() * model.length);
          if (dst === src) dst = (dst + 1) % model.length;
        }
        for (const x of moving) owner[x] = dst;
        const list = rangesOf([...new Set(moving)]).map(([a, b]) => a === b ? `${a}` : `${a}-${b}`)
          .join(",");
        const s = `127.0.0.1:${model[src]!.primary.port}`;
        const d = `127.0.0.1:${model[dst]!.primary.port}`;
        entries.push(rnd() < 0.5 ? [s, d, list] : [d, list]);
        if (rnd() < 0.2) entries.push([s, d, `${list},16384`]); // malformed: ignored whole
      }
      const primaries = new Set(model.map((s) => `127.0.0.1:${s.primary.port}`));
      // The server's view after the move: emptied primaries without replicas leave the cluster.
      const after: ModelShard[] = [];
      model.forEach((s, i) => {
        const slots: number[] = [];
        for (let x = 0; x < 16384; x++) if (owner[x] === i) slots.push(x);
        if (slots.length === 0 && s.replicas.length === 0) return;
        after.push({ ...s, ranges: rangesOf(slots) });
      });
      const reread = parseClusterShards(shardsReply(after), { answeredBy });

      const d = applySlotDelta(slotTable, entries);
      for (let x = 0; x < 16384; x++) {
        const i = reread.slots[x]!;
        const want = i === NO_NODE ? null : reread.nodes[i]!.address;
        assert.equal(ownerOf(d.table, x), want, `seed ${seed} slot ${x}`);
      }
      // Every primary the re-read view routes to is known; every dropped one owns nothing there.
      const serving = new Set<string>();
      for (let x = 0; x < 16384; x++) serving.add(ownerOf(d.table, x)!);
      for (const a of serving) assert.ok(d.table.nodes.includes(a), `seed ${seed}`);
      for (const a of d.dropped) {
        assert.ok(primaries.has(a), `seed ${seed}: dropped ${a} was a primary`);
        assert.ok(!serving.has(a), `seed ${seed}: dropped ${a} still serves`);
      }
      for (const p of primaries) {
        if (!serving.has(p)) assert.ok(d.dropped.includes(p), `seed ${seed}: ${p} should go`);
      }
      assert.equal(
        d.malformed.length,
        entries.filter((e) => String(e[e.length - 1]).endsWith("16384")).length,
      );
    }
  });
});
