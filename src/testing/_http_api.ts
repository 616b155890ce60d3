// Routes of the simulator's HTTP API: the fault injector's /action endpoints, /connections,
// /events, and the management REST mock (/v1/...).
import type { HttpRequest, HttpResponse } from "./_http_server.ts";
import type { MaintenanceSimulator } from "./maintenance_simulator.ts";

/** Answers one HTTP request. */
export async function handleApi(
  sim: MaintenanceSimulator,
  req: HttpRequest,
): Promise<HttpResponse> {
  if (req.path.startsWith("/v1/")) {
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
  if (req.path === "/faults") return { status: 200, body: sim.faults.state() };
  if (req.path === "/" || req.path === "/endpoints") {
    return {
      status: 200,
      body: { endpoints: sim.endpoints(), upstream: sim.upstream, http: sim.http },
    };
  }
  return { status: 404, body: { error: `Cannot find ${req.path}` } };
}
