/**
 * The runtime connector of the npm package resolved with the `bun` export condition: the
 * Bun transport alone, loaded on first use (see `_runtime.ts`).
 *
 * @module
 */

import type { Connector } from "./types.ts";

/** The Bun connector. */
export function loadRuntimeConnector(): Promise<Connector> {
  return import("./bun.ts").then((m) => m.bunConnector);
}
