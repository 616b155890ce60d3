// Readable sentences for the raw error texts transports give for a failed TLS handshake
// (Deno's rustls names such as "CaUsedAsEndEntity", Node/Bun's OpenSSL codes). The raw name is
// kept in parentheses so it can still be searched for.

const EXPLAINED: [RegExp, string][] = [
  [/CaUsedAsEndEntity/i, "the server presents a CA certificate instead of a server certificate"],
  [
    /KEY_USAGE_BIT_INCORRECT|InvalidPurpose|UNSUITABLE_CERTIFICATE_PURPOSE|unsuitable certificate purpose/i,
    "the server's certificate is not meant for a server (wrong key usage: a CA certificate?)",
  ],
  [
    /UnknownIssuer|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT|self[- ]signed certificate/i,
    "the server's certificate is not signed by a trusted CA (give it in tls.caCerts)",
  ],
  [
    /NotValidForName|ERR_TLS_CERT_ALTNAME_INVALID|Hostname\/IP does not match/i,
    "the server's certificate is not valid for this host name",
  ],
  [
    /CertExpired|\bExpired\b|CERT_HAS_EXPIRED|certificate has expired/i,
    "the server's certificate has expired",
  ],
  [/NotValidYet|CERT_NOT_YET_VALID/i, "the server's certificate is not valid yet"],
  [/BadSignature|CERT_SIGNATURE_FAILURE/i, "the server's certificate has an invalid signature"],
  [/BadEncoding|UnsupportedCertVersion/i, "the server's certificate cannot be parsed"],
  [
    /CertificateRequired|certificate required/i,
    "the server requires a client certificate (give tls.cert and tls.key)",
  ],
  [/UnknownCA|unknown ca/i, "the server does not trust the client certificate"],
  [
    /PeerIncompatible|NoCipherSuitesInCommon|wrong version number|WRONG_VERSION_NUMBER/i,
    "the server does not speak a compatible TLS version (is it a TLS port?)",
  ],
  [
    /InvalidContentType|CorruptMessage|packet length too long/i,
    "the server did not answer with TLS (is it a TLS port?)",
  ],
];

/**
 * A readable detail for a transport error: the raw text, or for a known TLS failure a sentence
 * followed by the raw text in parentheses.
 *
 * @param e The error from the transport.
 * @returns The detail for a "Cannot connect to ..." message.
 */
export function describeTransportError(e: Error): string {
  // A transport may already say what failed; the sentence replaces that prefix.
  const raw = e.message.replace(/^TLS handshake failed: /, "");
  const code = (e as { code?: unknown }).code;
  const text = typeof code === "string" ? `${raw} ${code}` : raw;
  for (const [re, sentence] of EXPLAINED) {
    if (re.test(text)) return `TLS handshake failed: ${sentence} (${raw})`;
  }
  return e.message;
}
