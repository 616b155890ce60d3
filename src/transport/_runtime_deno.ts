/**
 * The runtime connector of the npm package resolved with the `deno` export condition: the
 * Deno transport alone, loaded on first use (see `_runtime.ts`).
 *
 * @module
 */

import type { Connector } from "./types.ts";

/** The Deno connector. */
export function loadRuntimeConnector(): Promise<Connector> {
  return import("./deno.ts").then((m) => m.denoConnector);
}
