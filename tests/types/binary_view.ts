// Type-level tests of the binary view (checked by `deno check`, never run): commands,
// pipelines, transactions and scan iterators reply bulk strings as `Uint8Array`.
import type { BinaryView, RedisClient, ScoredMember } from "../../mod.ts";

/** Compiles only when `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function assertType<T extends true>(_: T): void {}

export async function binaryView(client: RedisClient): Promise<void> {
  const b: BinaryView = client.binary();
  const v = await b.get("k");
  assertType<Equal<typeof v, Uint8Array | null>>(true);
  const h = await b.hgetall("h");
  assertType<Equal<typeof h, Record<string, Uint8Array>>>(true);

  for await (const key of b.scan({ match: "user:*" })) {
    assertType<Equal<typeof key, Uint8Array>>(true);
  }
  for await (const [field, value] of b.hscan("h")) {
    assertType<Equal<[typeof field, typeof value], [Uint8Array, Uint8Array]>>(true);
  }
  for await (const member of b.sscan("s")) assertType<Equal<typeof member, Uint8Array>>(true);
  for await (const entry of b.zscan("z")) {
    assertType<Equal<typeof entry, ScoredMember<Uint8Array>>>(true);
  }

  const p = await b.pipeline().get("k").lrange("l", 0, -1).exec();
  assertType<Equal<typeof p, [Uint8Array | null | Error, Uint8Array[] | Error]>>(true);
  const t = await b.multi().get("k").exec();
  assertType<Equal<typeof t, [Uint8Array | null | Error] | null>>(true);

  const sub = await b.subscribe("frames", (message, channel) => {
    assertType<Equal<typeof message, Uint8Array>>(true);
    assertType<Equal<typeof channel, string>>(true);
  });
  for await (const m of await b.psubscribe("f*")) {
    assertType<Equal<typeof m.message, Uint8Array>>(true);
    assertType<Equal<typeof m.pattern, string | undefined>>(true);
  }
  await sub.unsubscribe();
  for await (const m of await client.subscribe("text")) {
    assertType<Equal<typeof m.message, string>>(true);
  }
  // @ts-expect-error a binary subscription's messages are not strings
  await b.ssubscribe("s", (message: string) => console.log(message));

  // @ts-expect-error the binary view's GET is not a string
  const s: string | null = await b.get("k");
  // @ts-expect-error neither are the keys of its scan
  for await (const key of b.scan()) key.toUpperCase();
  console.log(s);
}
