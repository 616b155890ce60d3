import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { describeSocketError, socketError } from "../../../src/transport/_errors.ts";

function err(message: string, props: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), props);
}

describe("describeSocketError", () => {
  const cases: [string, unknown, string][] = [
    [
      "node refused",
      err("connect ECONNREFUSED 127.0.0.1:1", { code: "ECONNREFUSED" }),
      "connection refused",
    ],
    [
      "deno refused",
      err("Connection refused (os error 111)", { name: "ConnectionRefused" }),
      "connection refused",
    ],
    [
      "node dns",
      err("getaddrinfo ENOTFOUND nope.invalid", { code: "ENOTFOUND" }),
      "host not found",
    ],
    [
      "deno dns",
      err("failed to lookup address information: Name or service not known"),
      "host not found",
    ],
    ["timeout", err("connect ETIMEDOUT 10.0.0.1:6379", { code: "ETIMEDOUT" }), "timed out"],
    ["reset", err("read ECONNRESET", { code: "ECONNRESET" }), "connection reset"],
    [
      "deno eof",
      err("peer closed connection without sending TLS close_notify", { name: "UnexpectedEof" }),
      "connection closed unexpectedly",
    ],
    [
      "deno unknown issuer",
      err("invalid peer certificate: UnknownIssuer", { name: "InvalidData" }),
      "certificate verify failed: unknown issuer",
    ],
    [
      "node self-signed",
      err("self-signed certificate in certificate chain", { code: "SELF_SIGNED_CERT_IN_CHAIN" }),
      "certificate verify failed: self-signed certificate in certificate chain",
    ],
    [
      "node expired",
      err("certificate has expired", { code: "CERT_HAS_EXPIRED" }),
      "certificate verify failed: certificate has expired",
    ],
    [
      "tls other",
      err("SSL routines::wrong version number", { code: "ERR_SSL_WRONG_VERSION_NUMBER" }),
      "TLS handshake failed: SSL routines::wrong version number",
    ],
    ["fallback", err("Something odd (os error 5)"), "something odd"],
    ["not an error", "boom", "boom"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(describeSocketError(input), expected));
  }

  it("names a host name mismatch", () => {
    const m = describeSocketError(
      err(
        "Hostname/IP does not match certificate's altnames: Host: x. is not in the cert's altnames",
        {
          code: "ERR_TLS_CERT_ALTNAME_INVALID",
        },
      ),
    );
    assert.match(m, /^certificate verify failed: host name mismatch \(hostname\/IP does not match/);
  });

  it("keeps the original as cause", () => {
    const original = err("connect ECONNREFUSED", { code: "ECONNREFUSED" });
    const e = socketError(original);
    assert.equal(e.message, "connection refused");
    assert.equal(e.cause, original);
  });
});
