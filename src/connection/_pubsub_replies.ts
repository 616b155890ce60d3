// How pub/sub frames take part in reply matching: on a RESP2 subscriber connection the pub/sub
// arrays arrive as replies and are told apart by their kind; a subscribe-family command holds a
// reply slot answered by one confirmation push per channel (or by an error reply: a cluster node
// answers SUNSUBSCRIBE of a slot it lost with MOVED), so neither form can put the stream out of
// step.
import type { RespValue } from "../resp/types.ts";
import type { Pending } from "./_pending.ts";

const TEXT = new TextDecoder();

const MESSAGE_KINDS = new Set(["message", "pmessage", "smessage"]);

const CONFIRM_KINDS = new Set([
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
]);

const PUBSUB_KINDS = new Set([
  ...MESSAGE_KINDS,
  ...CONFIRM_KINDS,
  "pong",
]);

/**
 * Whether a reply on a RESP2 subscriber connection is a pub/sub array (its kind decoded to text
 * in place when it arrived as bytes).
 *
 * @param value The reply.
 * @returns Whether it goes to the push handler.
 */
export function isPubSubArray(value: RespValue[]): boolean {
  let k = value[0];
  if (k instanceof Uint8Array && k.length < 16) value[0] = k = TEXT.decode(k);
  return typeof k === "string" && PUBSUB_KINDS.has(k.toLowerCase());
}

/**
 * The kind of a push frame (its first element), decoded to text in place for binary
 * subscriptions (the rest of the frame stays bytes).
 *
 * @param frame The push frame.
 * @returns The kind, or `undefined` when it is not a string.
 */
export function pushKind(frame: RespValue[]): string | undefined {
  let k = frame[0];
  if (k instanceof Uint8Array) frame[0] = k = TEXT.decode(k);
  return typeof k === "string" ? k : undefined;
}

/**
 * Whether a push of this kind is a pub/sub message (taken from the current socket only).
 *
 * @param kind The frame's kind.
 * @returns Whether it is `message`, `pmessage` or `smessage`.
 */
export function isMessageKind(kind: string): boolean {
  return MESSAGE_KINDS.has(kind);
}

/**
 * Counts a confirmation push against the subscribe-family command at the head of the in-flight
 * queue.
 *
 * @param head The command awaiting a reply first.
 * @param kind The push's kind.
 * @returns Whether this was the command's last confirmation: it is answered.
 */
export function takeConfirmation(head: Pending, kind: string): boolean {
  if (head.pushes <= 0 || !CONFIRM_KINDS.has(kind)) return false;
  const expected = typeof head.cmd === "string" ? head.cmd.toLowerCase() : "";
  return expected === kind.toLowerCase() && --head.pushes === 0;
}
