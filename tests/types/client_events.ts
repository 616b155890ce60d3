// Type-level tests of every client's event map (checked by `deno check`, never run): listeners
// get the event's typed `detail` without a cast, and an unknown event name does not compile.
import type {
  AddListenerOptions,
  HandoffDetail,
  HostPort,
  ListenerOptions,
  RedisClient,
  RedisClientEventMap,
  TypedEventListener,
} from "../../mod.ts";
import type {
  RedisSentinelClient,
  RedisSentinelClientEventMap,
  SentinelSwitchDetail,
} from "../../src/sentinel/mod.ts";
import type { RedisClusterClient, TopologyEventDetail } from "../../src/cluster/mod.ts";
import type { MultiDbClient, SwitchEventDetail } from "../../src/multi_db/mod.ts";

/** Compiles only when `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
function assertType<T extends true>(_: T): void {}

export function standalone(client: RedisClient): void {
  client.addEventListener("handoff", (e) => {
    const to: HostPort = e.detail.to;
    const reason: string = e.detail.reason;
    assertType<Equal<typeof e.detail, HandoffDetail>>(true);
    console.log(to.host, to.port, reason, e.detail.drainMs, e.detail.held);
  });
  client.addEventListener("ready", (e) => console.log(e.detail.host, e.detail.port));
  client.addEventListener("reconnecting", (e) => {
    const attempt: number = e.detail.attempt;
    const error: Error | undefined = e.detail.error;
    console.log(attempt, e.detail.delay, error?.message);
  });
  client.addEventListener("error", (e) => console.log(e.detail.message));
  client.addEventListener("maintenance", (e) => {
    if (e.detail.type === "handoff") console.log(e.detail.seq, e.detail.target?.host);
  });
  client.addEventListener("close", (e) => assertType<Equal<typeof e.detail, undefined>>(true));
  // An object listener and `once`.
  client.addEventListener("connect", { handleEvent: (e) => console.log(e.detail.host) }, {
    once: true,
  });
  // A listener declared apart, removed again.
  const onError: TypedEventListener<RedisClientEventMap["error"]> = (e) => console.log(e.detail);
  client.addEventListener("error", onError);
  client.removeEventListener("error", onError);

  // @ts-expect-error a misspelt event name does not compile
  client.addEventListener("handof", () => {});
  // @ts-expect-error neither does one of another client kind
  client.addEventListener("switch", () => {});
  // @ts-expect-error the detail of `handoff` has no `target`
  client.addEventListener("handoff", (e) => console.log(e.detail.target));
  // @ts-expect-error a `ready` listener does not take a handoff event
  client.addEventListener("ready", (e: CustomEvent<HandoffDetail>) => console.log(e));
  // @ts-expect-error removing with a misspelt name does not compile either
  client.removeEventListener("closed", onError);
}

export function sentinel(client: RedisSentinelClient): void {
  // Its own events and the standalone ones.
  client.addEventListener("switch", (e) => {
    assertType<Equal<typeof e.detail, SentinelSwitchDetail>>(true);
    console.log(e.detail.to.host, e.detail.role);
  });
  client.addEventListener("sentinel-added", (e) => console.log(e.detail.host));
  client.addEventListener("handoff", (e) => console.log(e.detail.to.host));
  const onSwitch = (e: RedisSentinelClientEventMap["switch"]) => console.log(e.detail.reason);
  client.addEventListener("switch", onSwitch);
  // @ts-expect-error a misspelt event name does not compile
  client.addEventListener("swich", () => {});
}

export function cluster(client: RedisClusterClient): void {
  client.addEventListener("topology", (e) => {
    assertType<Equal<typeof e.detail, TopologyEventDetail>>(true);
    console.log(e.detail.epoch, e.detail.reason);
  });
  client.addEventListener("maintenance", (e) => console.log(e.detail.type));
  // @ts-expect-error a misspelt event name does not compile
  client.addEventListener("topolgy", () => {});
}

export function multiDb(client: MultiDbClient): void {
  client.addEventListener("switch", (e) => {
    assertType<Equal<typeof e.detail, SwitchEventDetail>>(true);
    console.log(e.detail.from, e.detail.to, e.detail.reason);
  });
  // @ts-expect-error a misspelt event name does not compile
  client.addEventListener("swtich", () => {});
}

export function eventTarget(client: RedisClient): EventTarget {
  // The client is still an EventTarget.
  return client;
}

export function listenerOptions(client: RedisClient, signal: AbortSignal): void {
  // The package's own listener option types (no DOM lib in the npm declarations).
  const once: AddListenerOptions = { once: true, passive: false, signal };
  client.addEventListener("ready", (e) => console.log(e.detail.host), once);
  client.addEventListener("error", { handleEvent: (e) => console.log(e.detail.message) }, true);
  const capture: ListenerOptions = { capture: false };
  client.removeEventListener("ready", null, capture);
  // @ts-expect-error `once` is a boolean
  client.addEventListener("ready", () => {}, { once: "yes" });
}
