// Type-level tests of pipelines and transactions (checked by `deno check`, never run):
// `exec()` resolves with a tuple typed per queued command, errors included as values.
import type { Pipeline, RedisClient, RespValue, Transaction } from "../../mod.ts";

/** Compiles only when `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function assertType<T extends true>(_: T): void {}

export async function pipelines(client: RedisClient): Promise<void> {
  const r = await client.pipeline().set("k", "v").get("k").incr("n").hgetall("h").exec();
  assertType<
    Equal<
      typeof r,
      ["OK" | null | Error, string | null | Error, number | Error, Record<string, string> | Error]
    >
  >(true);
  const [ok, value, n] = r;
  if (!(value instanceof Error) && value !== null) value.toUpperCase();
  if (typeof n === "number") n.toFixed();
  console.log(ok);

  // Overloads are kept: SET with `get` answers the old value, HSET with an object a count.
  const o = await client.pipeline().set("k", "v", { get: true }).hset("h", { f: "1" }).exec();
  assertType<Equal<typeof o, [string | null | Error, number | Error]>>(true);

  // Any command through sendCommand: a raw value.
  const raw = await client.pipeline().sendCommand(["INFO", "server"]).ping().exec();
  assertType<Equal<typeof raw, [RespValue | Error, string | Error]>>(true);

  // A pipeline filled in a loop: the compiler cannot know its length.
  const p = client.pipeline();
  for (let i = 0; i < 3; i++) p.incr(`n${i}`);
  const many = await p.exec();
  assertType<Equal<typeof many, unknown[]>>(true);

  // The binary view's pipelines reply bulk strings as bytes.
  const b = await client.binary().pipeline().get("k").hgetall("h").exec();
  assertType<Equal<typeof b, [Uint8Array | null | Error, Record<string, Uint8Array> | Error]>>(
    true,
  );

  // @ts-expect-error a GET result is not a number
  const wrong: [number] = await client.pipeline().get("k").exec();
  // @ts-expect-error there is no third result
  const [, , third] = await client.pipeline().get("a").get("b").exec();
  // @ts-expect-error unknown commands are not methods of a pipeline
  client.pipeline().gett("k");
  console.log(wrong, third);
}

export async function transactions(client: RedisClient): Promise<void> {
  const r = await client.multi().incr("a").get("a").expire("a", 10).exec();
  assertType<Equal<typeof r, [number | Error, string | null | Error, boolean | Error] | null>>(
    true,
  );
  if (r !== null) {
    const [a, value, expiring] = r;
    console.log(a, value, expiring);
  }
  const [n] = await client.multi().incr("a").exec() ?? [];
  assertType<Equal<typeof n, number | Error | undefined>>(true);

  const b = await client.binary().multi().get("k").exec();
  assertType<Equal<typeof b, [Uint8Array | null | Error] | null>>(true);

  // WATCH sessions end in a typed transaction too.
  await using tx = await client.watch("a");
  const w = await tx.multi().set("a", "1").exec();
  assertType<Equal<typeof w, ["OK" | null | Error] | null>>(true);

  // @ts-expect-error exec() may answer null (a WATCHed key changed): no direct destructuring
  const [first] = await client.multi().incr("a").exec();
  console.log(first);
}

export function batchTypes(client: RedisClient): void {
  // The types are exported for annotations.
  const p: Pipeline<[string | null | Error]> = client.pipeline().get("k");
  const t: Transaction<[number | Error]> = client.multi().incr("n");
  // @ts-expect-error the annotation must match what was queued
  const bad: Pipeline<[number]> = client.pipeline().get("k");
  console.log(p, t, bad);
}
