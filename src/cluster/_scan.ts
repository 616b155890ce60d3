// Cluster SCAN: one cursor over the whole key space. Each page runs on one primary; the cursor
// the client returns names that primary and its own cursor, so a walk visits every primary in
// turn (ordered by node id) and ends with "0" after the last one.
import type { Transform } from "../commands/command_runner.ts";
import { FLAG_ERRORS_AS_VALUES } from "../command_flags.ts";
import { RedisError } from "../errors.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import type { RedirectPolicy } from "./_redirect_policy.ts";
import type { TopologyHolder } from "./_topology_holder.ts";

const decoder = new TextDecoder();

function text(v: unknown): string {
  if (v instanceof Uint8Array) return decoder.decode(v);
  return String(v);
}

/** A primary of the walk: the name its cursors carry (node id, else address) and its address. */
interface Stop {
  name: string;
  address: string;
}

/**
 * The cursor of a cluster SCAN: `"0"` (start, and end of the walk), or
 * `"<node cursor>:<node id>"`, the cursor of the primary that serves the next page. A cursor
 * naming a node that no longer serves slots (a failover, a node removed) is refused with a
 * `RedisError` saying to start again; it never silently restarts a node's walk.
 *
 * @example
 * ```ts ignore
 * const [cursor, keys] = await scan.page(["SCAN", "0", "COUNT", 100], undefined, 0, undefined) as [string, string[]];
 * // cursor: "17:07c37dfeb235213a872192d90877d0cd55635b91", or "0" after the last primary
 * ```
 */
export class ClusterScan {
  readonly #holder: TopologyHolder;
  readonly #policy: RedirectPolicy;

  /**
   * @param holder The topology (the primaries walked).
   * @param policy Sends each page to its primary.
   */
  constructor(holder: TopologyHolder, policy: RedirectPolicy) {
    this.#holder = holder;
    this.#policy = policy;
  }

  /** The primaries serving slots, in walk order (by node id). */
  #stops(): Stop[] {
    const t = this.#holder.topology;
    const stops = this.#holder.primaries.map((i) => {
      const n = t.nodes[i]!;
      return { name: n.id ?? n.address, address: n.address };
    });
    return stops.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * One page of SCAN (`args[1]` is the cluster cursor; MATCH, COUNT and TYPE are passed on).
   *
   * @param args The command.
   * @param transform The reply transform, applied to `[cursor, keys]`.
   * @param flags The command's flags.
   * @param timeout The command timeout.
   * @returns The page, its cursor a cluster cursor.
   */
  page(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    timeout: number | undefined,
  ): Promise<unknown> {
    const asValue = (flags & FLAG_ERRORS_AS_VALUES) !== 0;
    const run = this.#page(args, flags & ~FLAG_ERRORS_AS_VALUES, timeout).then((value) =>
      transform ? transform(value as RespValue) : value
    );
    return asValue ? run.catch((e) => e) : run;
  }

  async #page(
    args: RedisArgument[],
    flags: number,
    timeout: number | undefined,
  ): Promise<RespValue> {
    const cursor = text(args[1] ?? "0");
    const stops = this.#stops();
    if (stops.length === 0) {
      throw new RedisError('Cannot send "SCAN": no primary serves any slot');
    }
    let k = 0;
    let nodeCursor = "0";
    if (cursor !== "0") {
      const m = /^([0-9]{1,20}):(.{1,300})$/.exec(cursor);
      if (m === null) {
        throw new TypeError(
          `Cannot send "SCAN" with cursor "${
            cursor.slice(0, 64)
          }": a cluster cursor is "0" or one a page returned ("<cursor>:<node>")`,
        );
      }
      k = stops.findIndex((s) => s.name === m[2]);
      if (k === -1) {
        throw new RedisError(
          `Cannot continue the SCAN: its cursor names node "${
            m[2]
          }", which serves no slot now (the topology changed); start again from cursor "0"`,
        );
      }
      nodeCursor = m[1]!;
    }
    const stop = stops[k]!;
    const sub = [...args];
    sub[1] = nodeCursor;
    const p = this.#policy;
    const reply = await p.send(p.job(sub, undefined, flags, undefined, timeout, -1, stop.address));
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new RedisError(
        `Cannot read the SCAN reply of "${stop.address}": expected [cursor, keys]`,
      );
    }
    const next = text(reply[0]);
    let out: string;
    if (next !== "0") out = `${next}:${stop.name}`;
    else if (k + 1 < stops.length) out = `0:${stops[k + 1]!.name}`;
    else out = "0";
    return [out, reply[1] as RespValue];
  }
}
