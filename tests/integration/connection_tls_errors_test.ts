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
import { makeCerts, type TestCerts } from "../_helpers/tls.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

describe("Connection TLS errors", () => {
  let certs: TestCerts;
  let server: RedisServer;
  let tlsPort: number;
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
  });
  after(async () => {
    await server.stop();
    rmSync(certs.dir, { recursive: true, force: true });
  });

  it("explains a server certificate that fails verification", async () => {
    markLeakBaseline();
    const conn = new Connection({
      endpoint: { host: "127.0.0.1", port: tlsPort },
      tls: { caCerts: [certs.caPem] },
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
});
