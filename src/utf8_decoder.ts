/**
 * The slot for a runtime's faster UTF-8 decoder: a transport installs one (Bun's `Buffer`
 * decoder), the RESP reader uses it. It lives at the bottom layer so the transport does not
 * import the RESP codec, nor the codec a transport.
 *
 * @module
 */

/**
 * Decodes `buf[start..end)` as UTF-8 like `TextDecoder` with `ignoreBOM` (invalid sequences
 * become U+FFFD).
 *
 * @param buf The bytes.
 * @param start The first byte.
 * @param end One past the last byte.
 * @returns The text.
 */
export type Utf8Decoder = (buf: Uint8Array, start: number, end: number) => string;

let installed: Utf8Decoder | undefined;
const readers: ((decoder: Utf8Decoder | undefined) => void)[] = [];

/**
 * Installs a runtime-specific UTF-8 decoder that the RESP reader uses for strings longer than a
 * few bytes, in place of `TextDecoder` (`undefined` restores it). It must decode exactly like
 * `new TextDecoder("utf-8", { ignoreBOM: true })`.
 *
 * @param decoder The decoder, or `undefined`.
 *
 * @example
 * ```ts ignore
 * setUtf8Decoder((buf, start, end) => Buffer.prototype.toString.call(buf, "utf8", start, end));
 * ```
 */
export function setUtf8Decoder(decoder: Utf8Decoder | undefined): void {
  installed = decoder;
  for (const r of readers) r(decoder);
}

/**
 * Calls `reader` with the installed decoder now and whenever another is installed, so a reader
 * keeps it in a variable of its own (the RESP reader's hot path reads no other module).
 *
 * @param reader Takes the decoder, or `undefined` for none.
 *
 * @example
 * ```ts ignore
 * let native: Utf8Decoder | undefined;
 * onUtf8Decoder((d) => native = d);
 * ```
 */
export function onUtf8Decoder(reader: (decoder: Utf8Decoder | undefined) => void): void {
  readers.push(reader);
  reader(installed);
}
