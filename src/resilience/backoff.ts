/**
 * Exponential backoff with full jitter, as a pure function.
 *
 * @module
 */

/** Backoff settings. */
export interface BackoffOptions {
  /**
   * Delay cap of the first retry, in milliseconds.
   * @default {100}
   */
  baseDelay?: number;
  /**
   * Largest delay, in milliseconds.
   * @default {5000}
   */
  maxDelay?: number;
}

/**
 * Returns the delay before retry number `attempt` (0 for the first retry): a uniformly random
 * value in `[0, min(maxDelay, baseDelay * 2^attempt)]` ("full jitter").
 *
 * @param attempt The 0-based retry number.
 * @param options The base and maximum delays.
 * @param random A source of numbers in [0, 1), `Math.random` by default (inject one in tests).
 * @returns The delay in milliseconds.
 *
 * @example
 * ```ts
 * import { backoffDelay } from "@edge/redis";
 * const ms = backoffDelay(3, { baseDelay: 100, maxDelay: 5000 }, () => 0.5); // 400
 * ```
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const base = options.baseDelay ?? 100;
  const max = options.maxDelay ?? 5000;
  const cap = Math.min(max, base * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * cap);
}
