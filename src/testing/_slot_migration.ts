// Internal: a live slot migration on a real Redis Cluster, as redis-cli --cluster reshard does
// it: SETSLOT IMPORTING/MIGRATING, the keys moved in MIGRATE batches, then SETSLOT NODE on the
// target, the source and every other primary.
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { RedisClusterNode } from "./_redis_cluster.ts";
import { SLOT_COUNT } from "./_slot_key.ts";

/** Options of a slot migration. */
export interface MigrateOptions {
  /** Keys per `MIGRATE ... KEYS` batch. @default 100 */
  keysPerBatch?: number;
  /** Pause after each batch, so clients meet the migration in progress (ASK). @default 0 */
  pauseBetweenKeysMs?: number;
  /** Runs after every key has moved and before `SETSLOT NODE` (the ASK window). */
  beforeFinalize?: () => void | Promise<void>;
  /** `MIGRATE` timeout in milliseconds. @default 5000 */
  migrateTimeoutMs?: number;
}

/** What a migration did. */
export interface MigrateResult {
  /** Slots that changed owner. */
  slots: number[];
  /** Keys moved with MIGRATE. */
  keys: number;
  /** Source node ids by slot. */
  sources: Map<number, string>;
}

/** A node as the migration sees it. */
export interface MigrationNode {
  readonly node: RedisClusterNode;
  readonly role: "primary" | "replica";
  readonly proc: { readonly running: boolean };
}

/** What a migration needs of the cluster that runs it. */
export interface MigrationHost<N extends MigrationNode> {
  /** The node of an id; throws a RangeError for an unknown one. */
  resolve(id: string): N;
  /** Reads the cluster view again (slot owners, roles). */
  refresh(): Promise<void>;
  /** The id of the node owning `slot` in the last view read. */
  ownerOf(slot: number): string | undefined;
  /** Sends a command on the node's control connection. */
  command(n: N, args: RedisArgument[]): Promise<RespValue>;
  /** Sleeps; throws once the cluster is being stopped. */
  pause(ms: number): Promise<void>;
  /** The nodes whose process runs. */
  running(): N[];
  /** Waits until every node agrees on the view. */
  waitStable(): Promise<void>;
}

/**
 * Moves `slots` to the node `toNodeId` with their keys; slots it already owns are skipped.
 * Returns the slots moved, the keys moved and each slot's former owner.
 */
export async function migrateSlots<N extends MigrationNode>(
  host: MigrationHost<N>,
  slots: number[],
  toNodeId: string,
  mo: MigrateOptions = {},
): Promise<MigrateResult> {
  const { resolve, command, pause, running } = host;
  const target = resolve(toNodeId);
  const perBatch = mo.keysPerBatch ?? 100;
  const pauseMs = mo.pauseBetweenKeysMs ?? 0;
  const migrateTimeout = mo.migrateTimeoutMs ?? 5_000;
  for (const slot of slots) {
    if (!Number.isInteger(slot) || slot < 0 || slot >= SLOT_COUNT) {
      throw new RangeError(`Cannot migrate slot ${slot}: out of 0-16383`);
    }
  }
  await host.refresh();
  const sources = new Map<number, string>();
  const moving: number[] = [];
  for (const slot of slots) {
    const src = host.ownerOf(slot);
    if (src === undefined) throw new Error(`Cannot migrate slot ${slot}: no node owns it`);
    if (src === target.node.id) continue;
    sources.set(slot, src);
    moving.push(slot);
  }
  let keys = 0;
  const bySource = new Map<string, number[]>();
  for (const slot of moving) {
    const src = sources.get(slot)!;
    let list = bySource.get(src);
    if (!list) bySource.set(src, list = []);
    list.push(slot);
  }
  const CHUNK = 512;
  for (const [srcId, list] of bySource) {
    const source = resolve(srcId);
    for (let i = 0; i < list.length; i += CHUNK) {
      const part = list.slice(i, i + CHUNK);
      await Promise.all(
        part.map((slot) =>
          command(target, ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", srcId])
        ),
      );
      await Promise.all(
        part.map((slot) =>
          command(source, ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", target.node.id])
        ),
      );
    }
  }
  for (const [srcId, list] of bySource) {
    const source = resolve(srcId);
    const counts = await Promise.all(
      list.map((slot) => command(source, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)])),
    );
    for (let i = 0; i < list.length; i++) {
      if (Number(counts[i]) === 0) continue;
      const slot = list[i]!;
      for (;;) {
        const found = await command(source, [
          "CLUSTER",
          "GETKEYSINSLOT",
          String(slot),
          String(perBatch),
        ]);
        const batch = (found as RespValue[]).map((k) => k as RedisArgument);
        if (batch.length === 0) break;
        await command(source, [
          "MIGRATE",
          target.node.host,
          String(target.node.port),
          "",
          "0",
          String(migrateTimeout),
          "KEYS",
          ...batch,
        ]);
        keys += batch.length;
        if (pauseMs > 0) await pause(pauseMs);
      }
    }
  }
  await mo.beforeFinalize?.();
  // SETSLOT NODE on the target first, then the source, then every other primary (replicas
  // refuse SETSLOT and follow their primary).
  for (const [srcId, list] of bySource) {
    const source = resolve(srcId);
    const order = [
      target,
      source,
      ...running().filter((s) => s !== target && s !== source && s.role === "primary"),
    ];
    for (const s of order) {
      if (!s.proc.running) continue;
      for (let i = 0; i < list.length; i += CHUNK) {
        await Promise.all(
          list.slice(i, i + CHUNK).map((slot) =>
            command(s, ["CLUSTER", "SETSLOT", String(slot), "NODE", target.node.id])
          ),
        );
      }
    }
  }
  await host.waitStable();
  return { slots: moving, keys, sources };
}
