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
import { loadRuntimeConnector as loadDeno } from "./_runtime_deno.ts";
import { loadRuntimeConnector as loadBun } from "./_runtime_bun.ts";
import { loadRuntimeConnector as loadWorkers } from "./_runtime_workers.ts";
import { loadRuntimeConnector as loadNode } from "./_runtime_node.ts";

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
  if ("Deno" in globalThis) return loadDeno();
  if ("Bun" in globalThis) return loadBun();
  if (onWorkers()) return loadWorkers();
  return loadNode();
}
