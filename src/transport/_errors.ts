/**
 * Turns the runtimes' socket errors into short, human messages (`connection refused`,
 * `host not found`, `certificate verify failed: ...`). The connection layer prefixes them with
 * the endpoint.
 *
 * @module
 */

const CERT_CODES = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

const RUSTLS_CERT_ERRORS: Record<string, string> = {
  UnknownIssuer: "unknown issuer",
  Expired: "certificate has expired",
  NotValidYet: "certificate is not yet valid",
  BadSignature: "bad signature",
  Revoked: "certificate revoked",
};

function lowerFirst(s: string): string {
  return s.length > 1 && /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

/** Returns a short message for a connect or socket error of any runtime. */
export function describeSocketError(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === "string" ? e.code : "";
  const name = typeof e?.name === "string" ? e.name : "";
  const message = typeof e?.message === "string" ? e.message : String(error);
  if (code === "ECONNREFUSED" || name === "ConnectionRefused") return "connection refused";
  if (
    code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME" ||
    code === "EAI_FAIL" || /lookup address|getaddrinfo|name or service not known/i.test(message)
  ) return "host not found";
  if (code === "ETIMEDOUT" || name === "TimedOut") return "timed out";
  if (code === "ECONNRESET" || name === "ConnectionReset") return "connection reset";
  if (code === "EPIPE" || name === "BrokenPipe") return "broken pipe";
  if (code === "EHOSTUNREACH") return "host unreachable";
  if (code === "ENETUNREACH") return "network unreachable";
  if (code === "EADDRNOTAVAIL" || name === "AddrNotAvailable") return "address not available";
  if (name === "UnexpectedEof") return "connection closed unexpectedly";
  if (CERT_CODES.has(code) || /certificate/i.test(message)) {
    let detail = message.replace(/^invalid peer certificate:\s*/i, "");
    detail = RUSTLS_CERT_ERRORS[detail] ?? detail;
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || /not valid for name/i.test(detail)) {
      detail = `host name mismatch (${lowerFirst(detail)})`;
    }
    return `certificate verify failed: ${lowerFirst(detail)}`;
  }
  if (/tls|ssl|handshake/i.test(message) || code.startsWith("ERR_SSL")) {
    return `TLS handshake failed: ${lowerFirst(message)}`;
  }
  const clean = message.replace(/\s*\(os error \d+\)$/, "");
  return lowerFirst(clean) || (code ? code : "socket error");
}

/** Wraps a runtime error into an `Error` with a short message and the original as `cause`. */
export function socketError(error: unknown): Error {
  return new Error(describeSocketError(error), { cause: error });
}
