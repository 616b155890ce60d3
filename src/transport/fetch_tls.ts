/**
 * `fetch` with a custom certificate authority, on the runtime's own HTTP client: Deno's
 * `Deno.createHttpClient({ caCerts })`, Bun's `tls: { ca }` fetch option. Elsewhere the global
 * `fetch` is used as is (the CA must then be trusted by the process, e.g. `NODE_EXTRA_CA_CERTS`).
 *
 * @module
 */

/**
 * A `fetch` bound to a CA, and the HTTP client it holds.
 *
 * @example
 * ```ts ignore
 * import type { TlsFetch } from "./fetch_tls.ts";
 * const use = async (f: TlsFetch) => (await f.fetch("https://example.com")).status;
 * ```
 */
export interface TlsFetch {
  /** Fetches with the CA trusted. */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /** Releases the HTTP client (Deno). */
  close(): void;
}

interface DenoHttp {
  createHttpClient(options: { caCerts: string[] }): { close(): void };
}

/**
 * Creates a `fetch` that trusts `ca` (PEM) in addition to the system roots.
 *
 * @param ca PEM certificate(s) of the authority; `undefined` for the global `fetch`.
 * @returns The bound fetch and its `close`.
 *
 * @example
 * ```ts ignore
 * import { tlsFetch } from "./fetch_tls.ts";
 * const f = tlsFetch(await Deno.readTextFile("ca.pem"));
 * const res = await f.fetch("https://cluster.example:9443/v1/bdbs");
 * f.close();
 * ```
 */
export function tlsFetch(ca: string | undefined): TlsFetch {
  if (ca === undefined) {
    return { fetch: (url, init) => fetch(url, init), close: () => {} };
  }
  const deno = (globalThis as { Deno?: DenoHttp }).Deno;
  if (deno !== undefined && typeof deno.createHttpClient === "function") {
    const client = deno.createHttpClient({ caCerts: [ca] });
    return {
      fetch: (url, init) => fetch(url, { ...init, client } as RequestInit),
      close: () => client.close(),
    };
  }
  if ("Bun" in globalThis) {
    return {
      fetch: (url, init) => fetch(url, { ...init, tls: { ca } } as RequestInit),
      close: () => {},
    };
  }
  return { fetch: (url, init) => fetch(url, init), close: () => {} };
}
