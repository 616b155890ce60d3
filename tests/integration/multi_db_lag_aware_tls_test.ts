// The lag-aware health check over HTTPS with a private CA (the `ca` option), on each runtime's
// own fetch client.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:https";
import { readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { type DatabaseClient, lagAwareHealthCheck } from "../../src/multi_db/mod.ts";
import { makeCerts, type TestCerts } from "../_helpers/tls.ts";

describe("lagAwareHealthCheck over HTTPS", () => {
  let certs: TestCerts;
  let server: Server;
  let port = 0;
  const seen: string[] = [];
  before(async () => {
    certs = makeCerts();
    server = createServer({
      cert: readFileSync(certs.certFile),
      key: readFileSync(certs.keyFile),
    }, (req, res) => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      res.setHeader("content-type", "application/json");
      if (req.url?.startsWith("/v1/bdbs?")) {
        res.end(JSON.stringify([
          { uid: 3, endpoints: [{ dns_name: "db.example", addr: ["10.0.0.9"], port: 12000 }] },
        ]));
      } else res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections?.();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(certs.dir, { recursive: true, force: true });
  });

  const target = () => ({
    database: "east",
    endpoint: { host: "10.0.0.9", port: 12000 },
    client: {} as DatabaseClient,
    timeout: 3000,
    signal: AbortSignal.timeout(3000),
  });

  it("trusts the given CA and matches the database on addr[]", async () => {
    const check = lagAwareHealthCheck({
      restUrl: `https://localhost:${port}`,
      username: "u",
      password: "p",
      ca: certs.caPem,
    });
    assert.equal(await check(target()), true);
    check.close();
    // A check after close() makes a new HTTP client.
    assert.equal(await check(target()), true);
    check.close();
    assert.deepEqual(seen.slice(-3, -1), [
      `/v1/bdbs?fields=uid,endpoints Basic ${btoa("u:p")}`,
      `/v1/bdbs/3/availability?extend_check=lag&availability_lag_tolerance_ms=5000 Basic ${
        btoa("u:p")
      }`,
    ]);
  });

  it("without the CA the certificate is refused: a failed probe, no password in the error", async () => {
    const check = lagAwareHealthCheck({
      restUrl: `https://localhost:${port}`,
      username: "u",
      password: "secret-pw",
    });
    await assert.rejects(check(target()), (e: unknown) => {
      assert.match(
        (e as Error).message,
        /^Cannot check "east" via the REST API at https:\/\/localhost:\d+: /,
      );
      assert.ok(!(e as Error).message.includes("secret-pw"));
      return true;
    });
  });
});
