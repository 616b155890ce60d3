// The handshake plan of a new socket: which commands set it up (HELLO/AUTH, CLIENT SETNAME,
// CLIENT SETINFO, the owner's steps, SELECT, the session), each with the check of its reply.
// Pure: the connection writes the plan in one batch and runs the checks in order.
import { ReplyError } from "../errors.ts";
import type { RedisArgument, RespValue } from "../resp/types.ts";
import { cannotConnect, unwrittenError } from "./_admission.ts";

/** A command handed to the handshake: its arguments and what to do with the reply. */
export interface HandshakeStep {
  /** The command. */
  args: RedisArgument[];
  /** Called with the reply (an error reply arrives as a `ReplyError` value); throw to fail the handshake. */
  onReply?: (reply: RespValue) => void;
  /** Subscribe family: answered by this many confirmation pushes (or an error reply). */
  pushes?: number;
  /**
   * Commands may be written behind this step, in the same write, before its reply: whatever the
   * reply, a command after it runs with the meaning it was sent with (same database, same
   * node, same user or not at all, nothing cached on the strength of it). Only a plan whose
   * every step says so takes commands along (see {@linkcode commandsMayFollow}).
   */
  commandsMayFollow?: boolean;
}

/** The errors of a server that refused the socket (maxclients): it ran nothing written to it. */
const REFUSED = new WeakSet<Error>();

/**
 * Whether `error` is a server's refusal of the whole socket (at its `maxclients` limit): the
 * server answers one error and closes without reading, so no command written to it ran.
 *
 * @param error The handshake's error.
 * @returns Whether nothing written to the socket ran.
 */
export function refusedSocket(error: Error): boolean {
  return REFUSED.has(error);
}

/**
 * Whether commands may be written behind `steps` in the same write (every step says so; an
 * empty plan too).
 *
 * @param steps The plan.
 * @returns Whether the first queued commands may go with the handshake.
 */
export function commandsMayFollow(steps: readonly HandshakeStep[]): boolean {
  for (const s of steps) if (s.commandsMayFollow !== true) return false;
  return true;
}

/** What the plan is built from. */
export interface HandshakeSettings {
  protocol: 2 | 3;
  username?: string;
  password?: string;
  db: number;
  clientName?: string;
  libName?: string;
  libVersion?: string;
}

/**
 * A fixed description of an error reply to a command that carried a secret. The server's own
 * text never passes: a server that does not know the command echoes its arguments (cut at 128
 * characters, CR/LF turned into spaces), so no redaction of the password can be complete.
 */
function secretSafeDetail(e: ReplyError, command: string): string {
  switch (e.prefix) {
    case "WRONGPASS":
      return "invalid username-password pair or user is disabled (WRONGPASS)";
    case "NOPERM":
      return "the user has no permission to run it (NOPERM)";
    case "NOPROTO":
      return "the server does not support RESP3 (NOPROTO)";
  }
  if (e.prefix === "ERR") {
    if (/^ERR unknown command/i.test(e.message)) {
      return `the server does not know ${command} (ERR unknown command)`;
    }
    if (/^ERR (AUTH <password> called without|Client sent AUTH, but no password)/.test(e.message)) {
      return "the server has no password set for this user (ERR)";
    }
  }
  return `the server refused ${command} (${e.prefix})`;
}

/** The error reply with the server's text replaced by its prefix, as a safe `cause`. */
function prefixOnly(e: ReplyError): ReplyError {
  return new ReplyError(e.prefix);
}

/**
 * The steps that set up a new socket, in order: HELLO (with AUTH) or AUTH, CLIENT SETNAME,
 * CLIENT SETINFO, `extra`, SELECT, then `session`.
 *
 * A user name without a password authenticates as that user with an empty password (`AUTH user
 * ""`), never as `default`.
 *
 * @param o The settings.
 * @param name The endpoint, for messages.
 * @param extra The owner's steps (maintenance opt-in), after SETINFO, before SELECT.
 * @param session State re-applied last (subscriptions, tracking).
 * @returns The steps.
 */
export function planHandshake(
  o: HandshakeSettings,
  name: string,
  extra: HandshakeStep[] | undefined,
  session: HandshakeStep[] | undefined,
): HandshakeStep[] {
  const steps: HandshakeStep[] = [];
  const password = o.password ?? (o.username !== undefined ? "" : undefined);
  const user = o.username ?? "default";
  // When AUTH fails, a command written behind it runs as "default" if that user needs no
  // password: the meaning is kept only when "default" is the user asked for.
  const sameUser = user === "default";
  const authFail = (command: string) => (v: RespValue): void => {
    if (!(v instanceof ReplyError)) return;
    throw unwrittenError(
      `Cannot authenticate to "${name}" as "${user}": ${secretSafeDetail(v, command)}`,
      prefixOnly(v),
    );
  };
  if (o.protocol === 3) {
    const hello: RedisArgument[] = ["HELLO", "3"];
    if (password !== undefined) hello.push("AUTH", user, password);
    const onAuth = authFail("HELLO");
    steps.push({
      args: hello,
      commandsMayFollow: sameUser,
      onReply: (v) => {
        if (!(v instanceof ReplyError)) return;
        if (v.prefix === "NOPROTO" || /^ERR unknown command/i.test(v.message)) {
          throw unwrittenError(
            `Cannot use RESP3 with "${name}": ${secretSafeDetail(v, "HELLO")} (set protocol: 2)`,
            prefixOnly(v),
          );
        }
        onAuth(v);
      },
    });
  } else if (password !== undefined) {
    steps.push({
      args: o.username !== undefined ? ["AUTH", o.username, password] : ["AUTH", password],
      commandsMayFollow: sameUser,
      onReply: authFail("AUTH"),
    });
  }
  if (o.clientName) {
    steps.push({
      args: ["CLIENT", "SETNAME", o.clientName],
      commandsMayFollow: true,
      onReply: (v) => {
        if (!(v instanceof ReplyError)) return;
        throw unwrittenError(`Cannot set the client name on "${name}": ${v.message}`, v);
      },
    });
  }
  if (o.libName) {
    // Older servers do not know SETINFO: its errors are ignored.
    steps.push({
      args: ["CLIENT", "SETINFO", "LIB-NAME", o.libName],
      commandsMayFollow: true,
      onReply: () => {},
    });
    if (o.libVersion) {
      steps.push({
        args: ["CLIENT", "SETINFO", "LIB-VER", o.libVersion],
        commandsMayFollow: true,
        onReply: () => {},
      });
    }
  }
  if (extra) steps.push(...extra);
  if (o.db !== 0) {
    // No commandsMayFollow: a command behind a SELECT that fails would run on database 0.
    steps.push({
      args: ["SELECT", o.db],
      onReply: (v) => {
        if (v instanceof ReplyError) {
          throw unwrittenError(`Cannot select database ${o.db} on "${name}": ${v.message}`, v);
        }
      },
    });
  }
  // Session state (subscriptions, tracking) is restored before the socket takes any work;
  // subscriptions count as restored once every confirmation arrived.
  if (session && session.length > 0) steps.push(...session);
  // A server at its maxclients limit answers a new socket with one error, whatever was sent,
  // and closes it: that error is the first step's reply.
  const first = steps[0];
  const onFirst = first?.onReply;
  if (first !== undefined && onFirst !== undefined) {
    steps[0] = {
      ...first,
      onReply: (v) => {
        if (v instanceof ReplyError && MAX_CLIENTS.test(v.message)) {
          const e = cannotConnect(
            name,
            "the server refused the connection: max number of clients reached (maxclients)",
            prefixOnly(v),
          );
          REFUSED.add(e);
          throw e;
        }
        onFirst(v);
      },
    };
  }
  return steps;
}

/** The error a server at its `maxclients` limit sends a new socket before closing it. */
const MAX_CLIENTS = /^ERR max (number of )?clients reached/i;
