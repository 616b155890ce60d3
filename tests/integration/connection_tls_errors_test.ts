// A TLS handshake that fails certificate verification is reported as a readable sentence, with
// the runtime's raw error name kept in parentheses.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Connection } from "../../src/connection/connection.ts";
import { defaultConnector } from "../../src/transport/default.ts";
import { silentLogger } from "../../src/logger.ts";
import { ConnectionError } from "../../mod.ts";
import { freePort, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { makeCerts, startTlsRedis, type TestCerts, type TlsRedis } from "../_helpers/tls.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

function connection(port: number, caCerts?: string[]): Connection {
  return new Connection({
    endpoint: { host: "127.0.0.1", port },
    tls: caCerts ? { caCerts } : {},
    connector: defaultConnector,
    protocol: 3,
    db: 0,
    connectTimeout: 5000,
    commandTimeout: 5000,
    reconnect: false,
    maxQueueLength: 10,
    maxQueueBytes: 1 << 20,
    logger: silentLogger,
  });
}

describe("Connection TLS errors", () => {
  let certs: TestCerts;
  let server: RedisServer;
  let tlsPort: number;
  // A proper server certificate, from a CA the client is not given.
  let untrusted: TlsRedis;
  before(async () => {
    certs = makeCerts();
    tlsPort = await freePort();
    // The server presents the CA certificate itself, not a server certificate.
    server = await startRedis({
      args: [
        "--tls-port",
        String(tlsPort),
        "--tls-cert-file",
        certs.caFile,
        "--tls-key-file",
        join(certs.dir, "ca.key"),
        "--tls-ca-cert-file",
        certs.caFile,
        "--tls-auth-clients",
        "no",
      ],
      readyPort: tlsPort,
    });
    untrusted = await startTlsRedis();
  });
  after(async () => {
    await untrusted?.stop();
    await server.stop();
    rmSync(certs.dir, { recursive: true, force: true });
  });

  it("explains a server certificate that fails verification", async () => {
    markLeakBaseline();
    const conn = connection(tlsPort, [certs.caPem]);
    const err = await conn.connect().then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.match(
      err.message,
      /Cannot connect to "127\.0\.0\.1:\d+": TLS handshake failed: the server/,
    );
    assert.match(err.message, /\(.+\)$/, "the raw error text stays, in parentheses");
    assert.equal(err.written, false);
    conn.destroy();
    await assertNoLeaks();
  });

  // Deno says "unknown issuer", Bun and Node "unable to verify the first certificate": both
  // are the CA to give in tls.caCerts, not a server without TLS.
  it("says that the server's CA is not trusted, and not that TLS may be off", async () => {
    markLeakBaseline();
    const conn = connection(untrusted.tlsPort);
    const err = await conn.connect().then(() => undefined, (e) => e);
    assert.ok(err instanceof ConnectionError, String(err));
    assert.match(
      err.message,
      /TLS handshake failed: the server's certificate is not signed by a trusted CA \(give it in tls\.caCerts\) \(certificate verify failed: .+\)$/,
    );
    assert.doesNotMatch(err.message, /TLS-enabled/);
    conn.destroy();
    await assertNoLeaks();
  });
});
