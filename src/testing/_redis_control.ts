// A minimal request/response connection to a redis-server, for the simulator's own commands
// (REPLICAOF, INFO, WAIT, PING).
import type { Connector, Transport } from "../transport/types.ts";
import { encodeCommand, RespDecoder } from "../resp/mod.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { ReplyError } from "../errors.ts";

/** A control connection. */
export interface RedisControl {
  /** Sends a command; resolves with its reply, rejects with a `ReplyError` on an error reply. */
  command(args: RedisArgument[]): Promise<RespValue>;
  close(): void;
}

/** Opens a control connection. */
export async function openControl(
  connector: Connector,
  host: string,
  port: number,
): Promise<RedisControl> {
  const t: Transport = await connector({ host, port });
  const waiting: { resolve(v: RespValue): void; reject(e: Error): void }[] = [];
  let closed = false;
  const decoder = new RespDecoder({
    onReply: (v: RespValue) => {
      const w = waiting.shift();
      if (w === undefined) return;
      if (v instanceof ReplyError) w.reject(v);
      else w.resolve(v);
    },
    onPush: () => {},
  });
  const fail = (e: Error) => {
    closed = true;
    for (const w of waiting.splice(0)) w.reject(e);
  };
  t.setHandlers({
    onData: (chunk) => {
      try {
        decoder.feed(chunk);
      } catch (e) {
        fail(e as Error);
        t.close();
      }
    },
    onDrain: () => {},
    onClose: (e) => fail(e ?? new Error(`Connection to ${host}:${port} closed`)),
  });
  return {
    command(args: RedisArgument[]): Promise<RespValue> {
      if (closed) return Promise.reject(new Error(`Connection to ${host}:${port} closed`));
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        t.write(encodeCommand(args));
      });
    },
    close(): void {
      closed = true;
      t.close();
    },
  };
}

/** Runs one command on a fresh connection. */
export async function oneCommand(
  connector: Connector,
  host: string,
  port: number,
  args: RedisArgument[],
): Promise<RespValue> {
  const c = await openControl(connector, host, port);
  try {
    return await c.command(args);
  } finally {
    c.close();
  }
}

/** Parses `INFO` text into a record. */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0 && !line.startsWith("#")) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}
