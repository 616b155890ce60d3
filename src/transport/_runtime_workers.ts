/**
 * The runtime connector of the npm package resolved with the `workerd` export condition: the
 * Cloudflare Workers transport alone, loaded on first use (see `_runtime.ts`).
 *
 * @module
 */

import type { Connector } from "./types.ts";

/** The Cloudflare Workers connector. */
export function loadRuntimeConnector(): Promise<Connector> {
  return import("./workers.ts").then((m) => m.workersConnector);
}
