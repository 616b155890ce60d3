// A test executor: records every `_run` call and answers with canned raw replies.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisCommands } from "../../../src/commands/commands.ts";
import type { Transform } from "../../../src/commands/command_runner.ts";
import type { RedisArgument, RespValue } from "../../../src/resp/types.ts";
import { ReplyError } from "../../../src/errors.ts";

export interface RecordedCall {
  args: RedisArgument[];
  flags: number;
  blockMs: number | undefined;
  transform: Transform | undefined;
}

export class Recorder<S extends string | Uint8Array = string> extends RedisCommands<S> {
  calls: RecordedCall[] = [];
  replies: (RespValue | undefined)[] = [];

  _run(
    args: RedisArgument[],
    transform: Transform | undefined,
    flags: number,
    blockMs?: number,
  ): Promise<unknown> {
    this.calls.push({ args, flags, blockMs, transform });
    const reply = this.replies.length > 0 ? this.replies.shift() : null;
    if (reply instanceof ReplyError) return Promise.reject(reply);
    try {
      return Promise.resolve(transform ? transform(reply ?? null) : reply ?? null);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The only call recorded since the last `take()`. */
  take(): RecordedCall {
    const c = this.calls.shift();
    if (!c) throw new Error("No command was recorded");
    return c;
  }
}

/** Runs `fn` on a fresh recorder answering `reply`; returns the call and the result. */
export async function run<T>(
  reply: RespValue | undefined,
  fn: (r: Recorder) => Promise<T>,
): Promise<{ call: RecordedCall; result: T }> {
  const r = new Recorder();
  r.replies.push(reply);
  const result = await fn(r);
  return { call: r.take(), result };
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** One table-driven case: the arguments sent and the result for the RESP2 and RESP3 reply. */
export interface Case {
  name: string;
  call: (r: Recorder) => Promise<unknown>;
  args: RedisArgument[];
  /** Raw RESP2 reply. */
  resp2: RespValue;
  /** Raw RESP3 reply (defaults to the RESP2 one: same shape in both protocols). */
  resp3?: RespValue;
  result: unknown;
  flags?: number;
  blockMs?: number;
}

export function cases(family: string, list: Case[]): void {
  describe(family, () => {
    for (const c of list) {
      it(c.name, async () => {
        for (const [proto, reply] of [["RESP2", c.resp2], ["RESP3", c.resp3 ?? c.resp2]] as const) {
          const { call, result } = await run(reply, c.call);
          assert.deepEqual(call.args, c.args, `${proto} arguments`);
          assert.deepEqual(result, c.result, `${proto} result`);
          if (c.flags !== undefined) assert.equal(call.flags, c.flags, `${proto} flags`);
          assert.equal(call.blockMs, c.blockMs, `${proto} blockMs`);
        }
      });
    }
  });
}
