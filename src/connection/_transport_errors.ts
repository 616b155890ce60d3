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
    // Also the texts the transports' own messages carry (src/transport/_errors.ts): Deno's
    // "unknown issuer", OpenSSL's "unable to verify the first certificate" on Bun and Node.
    /UnknownIssuer|unknown issuer|UNABLE_TO_GET_ISSUER_CERT|unable to get (local )?issuer certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify the first certificate|SELF_SIGNED_CERT|self[- ]signed certificate/i,
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
    "the server does not speak a compatible TLS version",
  ],
  [
    /InvalidContentType|CorruptMessage|packet length too long|invalid TLS record|record overflow/i,
    "the server did not answer with TLS",
  ],
];

/** The sentences of {@linkcode EXPLAINED} that mean the port may not be a TLS port at all. */
const PLAIN_PORT = new Set([
  "the server does not speak a compatible TLS version",
  "the server did not answer with TLS",
]);

/**
 * A readable detail for a transport error: the raw text, or for a known TLS failure a sentence
 * followed by the raw text in parentheses.
 *
 * @param e The error from the transport.
 * @param tlsTo The endpoint, when the dial is over TLS: an error left unexplained is then the
 *   handshake's, and says so.
 * @returns The detail for a "Cannot connect to ..." message.
 */
export function describeTransportError(e: Error, tlsTo?: string): string {
  // A transport may already say what failed; the sentence replaces that prefix.
  const raw = e.message.replace(/^TLS handshake failed: /, "");
  const code = (e as { code?: unknown }).code;
  const text = typeof code === "string" ? `${raw} ${code}` : raw;
  for (const [re, sentence] of EXPLAINED) {
    if (!re.test(text)) continue;
    if (PLAIN_PORT.has(sentence)) {
      const where = tlsTo === undefined ? "" : ` with ${tlsTo}`;
      return `TLS handshake${where} failed: ${sentence} (${raw}); is the server TLS-enabled?`;
    }
    return `TLS handshake failed: ${sentence} (${raw})`;
  }
  // Over TLS, anything but a refused or unresolved dial is the handshake's failure.
  if (tlsTo !== undefined && !NOT_TLS.test(text)) {
    return `TLS handshake with ${tlsTo} failed: ${raw}; is the server TLS-enabled?`;
  }
  return e.message;
}

/** Dial failures that happen before any TLS byte is exchanged. */
const NOT_TLS =
  /ECONNREFUSED|connection refused|ENOTFOUND|EAI_AGAIN|failed to lookup|Name or service not known|EHOSTUNREACH|ENETUNREACH|aborted/i;

/**
 * The detail of a connect timeout: over TLS the handshake is part of the dial, and a server
 * that does not speak TLS (a plain port) just waits, so the timeout says so.
 *
 * @param ms The connect timeout.
 * @param tlsTo The endpoint, when the dial is over TLS.
 * @returns The detail for a "Cannot connect to ..." message.
 */
export function describeConnectTimeout(ms: number, tlsTo?: string): string {
  return tlsTo !== undefined
    ? `TLS handshake with ${tlsTo} timed out after ${ms} ms; is the server TLS-enabled?`
    : `timed out after ${ms} ms`;
}
