/**
 * Argument checks for callers the type checker does not see (plain JavaScript): what a value
 * is, in words, and the one check of an options object's keys, with a "Did you mean" hint.
 * Used by the client options of every kind and by the command builders; a builder calls it
 * only when an options object was given, so a command without options pays nothing.
 *
 * @module
 */

/**
 * A value in words for an error message: `the string "17379"`, `the number 1.5`, `an array`,
 * `null`. Strings are cut at 40 characters.
 *
 * @param v The value.
 * @returns The words.
 */
export function received(v: unknown): string {
  switch (typeof v) {
    case "string":
      return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
    case "number":
    case "bigint":
      return `the number ${String(v)}`;
    case "boolean":
      return String(v);
    case "undefined":
      return "undefined";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
  }
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Uint8Array) return "a Uint8Array";
  return "an object";
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive. */
function distance(a: string, b: string): number {
  a = a.toLowerCase();
  b = b.toLowerCase();
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    d.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        d[0]!.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      }
      d[i]!.push(v);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known name closest to an unknown one, when it is close enough to be a slip (the same
 * letters in another case, or at most a third of them wrong, 2 at most).
 *
 * @param name The unknown name.
 * @param known The known names.
 * @returns The closest known name, or `undefined`.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const dist = distance(name, k);
    if (dist < bestD) {
      best = k;
      bestD = dist;
    }
  }
  const limit = Math.min(2, Math.floor(name.length / 3));
  return bestD <= limit || best?.toLowerCase() === name.toLowerCase() ? best : undefined;
}

/**
 * The table of an options type's keys: `Record<keyof T, true>`, so the compiler fails when a
 * key is added to the type and not here (or the other way round).
 */
export type KeyTable<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Throws a `TypeError` for the first own key of `o` (not set to `undefined`) that `known` lacks, with a "Did you mean"
 * hint when a known key is close.
 *
 * @param o The options object (an object: the caller checked).
 * @param known The known keys.
 * @param what Whose options, for the message: `the client`, `set`.
 * @param hints Messages for keys that peers use, by key: `{ withScores: "use zrangeWithScores" }`.
 * @throws {TypeError} On an unknown key.
 */
export function checkKeys(
  o: object,
  known: Readonly<Record<string, true>>,
  what: string,
  hints?: Readonly<Record<string, string>>,
): void {
  for (const k in o) if (known[k] !== true) unknownKey(o, k, known, what, hints);
}

function unknownKey(
  o: object,
  k: string,
  known: Readonly<Record<string, true>>,
  what: string,
  hints: Readonly<Record<string, string>> | undefined,
): void {
  if (Object.hasOwn(known, k)) return;
  // An inherited key, or one set to undefined (`{ ...defaults, x: undefined }`), is no slip.
  if (!Object.hasOwn(o, k) || (o as Record<string, unknown>)[k] === undefined) return;
  const hint = hints !== undefined && Object.hasOwn(hints, k)
    ? `: ${hints[k]}`
    : unknownHint(k, Object.keys(known));
  throw new TypeError(`Cannot use the option \`${k}\` of ${what}${hint}`);
}

function unknownHint(k: string, known: string[]): string {
  const near = closest(k, known);
  if (near !== undefined) return `: no such option. Did you mean \`${near}\`?`;
  return known.length <= 12
    ? `: no such option (expected ${known.map((x) => `\`${x}\``).join(", ")})`
    : ": no such option";
}

/**
 * What a command's options object may hold: its keys, an example of the form for messages,
 * and messages for keys peers use (`withScores` on `zrange`).
 */
export interface OptionSpec {
  /** The known keys. */
  readonly keys: Readonly<Record<string, true>>;
  /** The expected form, for messages: `{ ex: 60 }`. */
  readonly form: string;
  /** Messages for keys that peers use, by key (see {@linkcode checkKeys}). */
  readonly hints?: Readonly<Record<string, string>>;
}

/**
 * Checks the options argument of a command: an object (not a string, an array or `null`)
 * whose keys are all known.
 *
 * @param o The argument (the caller skips the check when it is `undefined` and optional).
 * @param spec What the options may hold.
 * @param command The method, for the message: `set`.
 * @throws {TypeError} When it is not an object or has an unknown key.
 */
export function checkCommandOptions(o: unknown, spec: OptionSpec, command: string): void {
  if (typeof o !== "object" || o === null || Array.isArray(o) || o instanceof Uint8Array) {
    notOptions(o, spec, command);
  }
  checkKeys(o, spec.keys, command, spec.hints);
}

function notOptions(o: unknown, spec: OptionSpec, command: string): never {
  cannotUse(o, "the options", command, `an options object, e.g. ${command}(..., ${spec.form})`);
}

/**
 * Throws a `TypeError` for an argument of the wrong shape, in the one form of these messages:
 * `Cannot use undefined as the keys of zdiff: expected a list, e.g. ["a", "b"]`.
 *
 * @param v The argument (or the part of it that is wrong).
 * @param what What it was given as: `the keys`, `a member`.
 * @param method The method, or its form (`zdiff(keys)`: the name is read from it).
 * @param expected What is expected, with an example.
 * @throws {TypeError} Always.
 */
export function cannotUse(v: unknown, what: string, method: string, expected: string): never {
  throw new TypeError(
    `Cannot use ${received(v)} as ${what} of ${nameOf(method)}: expected ${expected}`,
  );
}

/** The method name of a form (`set` of `set(key, value, options?)`), or the name itself. */
export function nameOf(form: string): string {
  const i = form.indexOf("(");
  return i < 0 ? form : form.slice(0, i);
}

/**
 * The argument checks of a command whose last parameter is an options object, in one call:
 * at most `max` arguments ({@linkcode tooManyArguments}), and the options, when given (always
 * when `required`), an object of known keys ({@linkcode checkCommandOptions}). A builder calls
 * it only when it got more than `max` arguments or an options object (or always, when the
 * options are required), so a call with neither pays nothing; the method name is read from
 * `form` only for a message.
 *
 * @param got The arguments the method got (`arguments.length`).
 * @param max The parameters it takes.
 * @param form The method's parameters, for messages: `set(key, value, options?)`.
 * @param spec What its options object may hold.
 * @param o The options argument.
 * @param required Whether the options are required (`undefined` is refused too).
 * @throws {TypeError} On an extra argument, an options argument that is not an object, or an
 * unknown key.
 */
export function checkArgs(
  got: number,
  max: number,
  form: string,
  spec: OptionSpec,
  o: unknown,
  required?: true,
): void {
  if (got > max) tooManyArguments(got, form, spec);
  if (o === undefined && required === undefined) return;
  if (typeof o !== "object" || o === null || Array.isArray(o) || o instanceof Uint8Array) {
    notOptions(o, spec, nameOf(form));
  }
  const known = spec.keys;
  for (const k in o) if (known[k] !== true) unknownKey(o, k, known, nameOf(form), spec.hints);
}

/**
 * Throws a `TypeError` when a method got more arguments than it takes (a plain JavaScript
 * caller writing a peer's form, `hset(k, "f1", "v1", "f2", "v2")`).
 *
 * @param got The arguments it got (`arguments.length`).
 * @param form The method's parameters, for the message: `hset(key, field, value?)`.
 * @param options What its options object holds, when it takes one (named in the message).
 * @throws {TypeError} Always.
 */
export function tooManyArguments(got: number, form: string, options?: OptionSpec): never {
  const name = nameOf(form);
  const flags = options === undefined ? "" : `, the options as one object, e.g. ${options.form}`;
  throw new TypeError(`Cannot call ${name} with ${got} arguments: expected ${form}${flags}`);
}
