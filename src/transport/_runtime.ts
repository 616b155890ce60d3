/**
 * Finds the runtime and loads its transport's connector: `Deno.connect` on Deno, `Bun.connect`
 * on Bun, `cloudflare:sockets` on Cloudflare Workers, `node:net` elsewhere. Every transport is
 * imported dynamically, so none is evaluated before it is used; a bundler without code
 * splitting still carries all four, which is why the npm package maps this file, per export
 * condition, to the `_runtime_<name>.ts` loader of one runtime (see scripts/build_npm.ts).
 *
 * @module
 */

import type { Connector } from "./types.ts";

/**
 * Cloudflare Workers and workerd: `navigator.userAgent` is documented to be
 * `"Cloudflare-Workers"` there (the `global_navigator` flag, on by default since 2022-03-21).
 * Checked before Node.js, since `nodejs_compat` adds a `process` global.
 */
function onWorkers(): boolean {
  const nav = (globalThis as { navigator?: { userAgent?: unknown } }).navigator;
  return nav?.userAgent === "Cloudflare-Workers";
}

/** The connector of the runtime this code runs on. */
export function loadRuntimeConnector(): Promise<Connector> {
  if ("Deno" in globalThis) return import("./deno.ts").then((m) => m.denoConnector);
  if ("Bun" in globalThis) return import("./bun.ts").then((m) => m.bunConnector);
  if (onWorkers()) return import("./workers.ts").then((m) => m.workersConnector);
  return import("./node.ts").then((m) => m.nodeConnector);
}
