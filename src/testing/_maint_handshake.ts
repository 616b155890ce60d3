// Internal: the proxy's own answers to the maintenance handshake (`CLIENT MAINT_NOTIFICATIONS`,
// `CLIENT MAINT_NOTIFICATIONS_INFO`), as Redis Software's proxy gives them.
import { argText, argUpper } from "./_request_reader.ts";
import { ENDPOINT_TYPES } from "./_notifications.ts";
import { bulk, errorReply, utf8 } from "./_reply_bytes.ts";

/** A `CLIENT MAINT_NOTIFICATIONS` command read: an error reply, or what it switches. */
export type MaintNotificationsCommand =
  | { reply: Uint8Array; on?: undefined; type?: undefined }
  | { reply?: undefined; on: false; type?: undefined }
  | { reply?: undefined; on: true; type: string | null };

/** Reads `CLIENT MAINT_NOTIFICATIONS ON [moving-endpoint-type <t>]` or `... OFF`. */
export function parseMaintNotifications(args: Uint8Array[]): MaintNotificationsCommand {
  const mode = argUpper(args[2]);
  if (args.length < 3) {
    return {
      reply: errorReply("ERR wrong number of arguments for 'client|maint_notifications' command"),
    };
  }
  if (mode === "OFF") {
    if (args.length !== 3) return { reply: errorReply("ERR syntax error") };
    return { on: false };
  }
  if (mode !== "ON") return { reply: errorReply("ERR syntax error") };
  let type: string | null = null;
  for (let i = 3; i < args.length; i += 2) {
    const key = argText(args[i]).toLowerCase();
    const value = args[i + 1];
    if (key !== "moving-endpoint-type" || value === undefined) {
      return { reply: errorReply("ERR syntax error") };
    }
    const t = argText(value).toLowerCase();
    if (!ENDPOINT_TYPES.includes(t)) {
      return {
        reply: errorReply(
          `ERR invalid moving-endpoint-type '${argText(value)}', expected one of ${
            ENDPOINT_TYPES.join(", ")
          }`,
        ),
      };
    }
    type = t;
  }
  return { on: true, type };
}

/** The reply to `CLIENT MAINT_NOTIFICATIONS_INFO` (a map in RESP3, a flat array in RESP2). */
export function maintInfoReply(
  optedIn: boolean,
  endpointType: string | null,
  protocol: 2 | 3,
): Uint8Array {
  const status = optedIn ? "on" : "off";
  const type = endpointType ?? "none";
  if (protocol === 3) {
    return utf8(
      `%2\r\n${bulk("status")}${bulk(status)}${bulk("parameters")}%1\r\n${
        bulk("moving-endpoint-type")
      }${bulk(type)}`,
    );
  }
  return utf8(
    `*4\r\n${bulk("status")}${bulk(status)}${bulk("parameters")}*2\r\n${
      bulk("moving-endpoint-type")
    }${bulk(type)}`,
  );
}
