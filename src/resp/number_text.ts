/**
 * The text of a number argument.
 *
 * @module
 */

/**
 * The text of a number argument, as it is sent: the one rule the encoder, the cluster's key slot
 * and the client-side cache share (`Infinity` is `+inf`, so a key `Infinity` hashes and is
 * invalidated as what the server stores).
 *
 * @param n The number.
 * @returns Its decimal form (`+inf`/`-inf` for the infinities).
 * @throws {RangeError} For `NaN`.
 *
 * @example
 * ```ts ignore
 * numberText(Infinity); // "+inf"
 * numberText(1.5); // "1.5"
 * ```
 */
export function numberText(n: number): string {
  if (n === Infinity) return "+inf";
  if (n === -Infinity) return "-inf";
  if (Number.isNaN(n)) {
    throw new RangeError("Cannot encode the command: a number argument is NaN");
  }
  return String(n);
}
