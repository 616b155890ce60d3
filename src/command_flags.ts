/**
 * What a command carries to the connection besides its arguments and its reply transform
 * (`Transform`, in `src/resp/types.ts`): the `FLAG_*` bits. The typed command methods
 * (`src/commands/`) set them, the connection layer and the client-side cache read them; they
 * live at the bottom layer (no imports) so none of these imports another for them.
 *
 * @module
 */

/** No special handling. */
export const FLAG_NONE = 0;
/**
 * The command may block the connection (BLPOP, XREAD BLOCK, WAIT, ...): the standalone client
 * runs it on an exclusive pooled connection; its timeout is `blockMs` plus `commandTimeout`
 * (`blockMs` 0 means it blocks forever: no timeout).
 */
export const FLAG_BLOCKING = 1;
/** The command only reads (cluster: may be served by a replica). */
export const FLAG_READONLY = 2;
/** Reply bulk strings as `Uint8Array` (set by the binary view, not by command methods). */
export const FLAG_BINARY = 4;
/**
 * A raw command from `sendCommand` (client, pipeline or transaction): the connection refuses
 * the commands that would change its state for every caller (see `reservedCommandError`).
 */
export const FLAG_RAW = 8;

/** Internal flag: the command gets no reply slot (`sendNoReply`). */
export const FLAG_NO_REPLY = 256;
/**
 * Internal flag: a subscribe- or unsubscribe-family command, answered by one confirmation push
 * per channel (or by an error reply).
 */
export const FLAG_SUBSCRIBE = 512;
/** Internal flag: more commands of the same transaction follow; never split them over writes. */
export const FLAG_GROUP = 1024;
/**
 * Internal flag: the promise never rejects; an error (reply, timeout, connection) is its value
 * (pipelines: one promise per command instead of two).
 */
export const FLAG_ERRORS_AS_VALUES = 2048;
/** Internal flag: one command of a transaction (`sendAll`), the last one included. */
export const FLAG_TRANSACTION = 4096;
/** Internal flag: a keep-alive PING written on an idle socket; its reply is discarded. */
export const FLAG_PING = 8192;
/**
 * Internal flag: the error a caller receives for this command is told to its connection's
 * error tap (the error-count metric, without a promise reaction per command).
 */
export const FLAG_COUNTED = 16384;
/**
 * Internal flag, set by the connection: the command was written behind its socket's handshake
 * (in the same write) and is unanswered. It means something only while that socket is not ready.
 */
export const FLAG_EARLY = 32768;
