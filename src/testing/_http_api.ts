// Routes of the simulator's HTTP API: the fault injector's /action endpoints, /connections,
// /events, and the management REST mock (/v1/...).
import type { HttpRequest, HttpResponse } from "./_http_server.ts";
import type { RestMock } from "./rest_mock.ts";
import type { ActionStatus, Endpoint } from "./types.ts";

/** What the API serves: a standalone or a cluster simulator. */
export interface ApiTarget {
  readonly rest?: RestMock;
  readonly faults?: { state(): unknown };
  readonly upstream?: Endpoint;
  readonly http: Endpoint | undefined;
  startAction(type: string, parameters: Record<string, unknown>): string;
  actionStatus(id: string): ActionStatus | undefined;
  connections(): unknown;
  events(): unknown;
  endpoints(): Endpoint[];
  /** Cluster: the nodes. */
  nodes?(): unknown;
  /** Cluster: the MOVED / ASK replies forwarded. */
  redirects?(): unknown;
}

/** Answers one HTTP request. */
export async function handleApi(
  sim: ApiTarget,
  req: HttpRequest,
): Promise<HttpResponse> {
  if (req.path.startsWith("/v1/") && sim.rest !== undefined) {
    const res = sim.rest.handle({
      method: req.method,
      path: req.path,
      query: req.query,
      authorization: req.headers.get("authorization"),
    });
    if (res === undefined) return { status: 404, body: { error_code: "not_found" } };
    if (res.delayMs > 0) await new Promise((r) => setTimeout(r, res.delayMs));
    return { status: res.status, body: res.body };
  }
  if (req.path === "/action" || req.path === "/action/") {
    if (req.method !== "POST") return { status: 405, body: { error: "Use POST /action" } };
    let body: { type?: unknown; parameters?: unknown };
    try {
      body = JSON.parse(req.body || "{}");
    } catch {
      return { status: 400, body: { error: "Cannot parse the request body: expected JSON" } };
    }
    if (typeof body.type !== "string") {
      return { status: 400, body: { error: 'Cannot start the action: "type" is missing' } };
    }
    try {
      const id = sim.startAction(body.type, (body.parameters ?? {}) as Record<string, unknown>);
      return { status: 200, body: { action_id: id } };
    } catch (e) {
      return { status: 400, body: { error: (e as Error).message } };
    }
  }
  const m = /^\/action\/([^/]+)\/?$/.exec(req.path);
  if (m !== null) {
    const status = sim.actionStatus(decodeURIComponent(m[1]!));
    if (status === undefined) {
      return { status: 404, body: { error: `Cannot find action "${m[1]}"` } };
    }
    return { status: 200, body: status };
  }
  if (req.path === "/connections") return { status: 200, body: sim.connections() };
  if (req.path === "/events") return { status: 200, body: sim.events() };
  if (req.path === "/faults" && sim.faults) return { status: 200, body: sim.faults.state() };
  if (req.path === "/nodes" && sim.nodes) return { status: 200, body: sim.nodes() };
  if (req.path === "/redirects" && sim.redirects) return { status: 200, body: sim.redirects() };
  if (req.path === "/" || req.path === "/endpoints") {
    return {
      status: 200,
      body: { endpoints: sim.endpoints(), upstream: sim.upstream, http: sim.http },
    };
  }
  return { status: 404, body: { error: `Cannot find ${req.path}` } };
}
