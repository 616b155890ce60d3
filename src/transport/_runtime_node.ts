/**
 * The runtime connector of the npm package resolved with the `node` export condition: the
 * Node.js transport alone, loaded on first use (see `_runtime.ts`).
 *
 * @module
 */

import type { Connector } from "./types.ts";

/** The Node.js connector. */
export function loadRuntimeConnector(): Promise<Connector> {
  return import("./node.ts").then((m) => m.nodeConnector);
}
