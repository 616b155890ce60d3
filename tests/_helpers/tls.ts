// A throwaway CA, a server certificate for 127.0.0.1/localhost, and a TLS-only redis-server.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type RedisServer, startRedis } from "./redis_server.ts";

/** PEM material written to `dir` by {@linkcode makeCerts}. */
export interface TestCerts {
  /** Temporary directory holding the files (remove with `rmSync(dir, {recursive: true})`). */
  dir: string;
  caPem: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** A client certificate/key signed by the same CA (for mutual TLS). */
  clientCertPem: string;
  clientKeyPem: string;
}

// P-256 keys: generated in milliseconds where RSA takes a noticeable fraction of a second.
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

/** Generates a CA and a server certificate valid for 127.0.0.1, ::1 and localhost. */
export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-tls-"));
  // deno-fmt-ignore
  {
    openssl(["req", "-x509", ...EC_KEY, "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
      "-days", "2", "-subj", "/CN=edge-redis test CA",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
    writeFileSync(join(dir, "server.ext"), [
      "basicConstraints=CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth,clientAuth",
      "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
      "",
    ].join("\n"));
    openssl(["req", ...EC_KEY, "-nodes", "-keyout", "server.key", "-out", "server.csr",
      "-subj", "/CN=localhost"], dir);
    openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
      "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "server.ext"], dir);
    writeFileSync(join(dir, "client.ext"), "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
    openssl(["req", ...EC_KEY, "-nodes", "-keyout", "client.key", "-out", "client.csr",
      "-subj", "/CN=edge-redis test client"], dir);
    openssl(["x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
      "-CAcreateserial", "-out", "client.crt", "-days", "2", "-extfile", "client.ext"], dir);
  }
  return {
    dir,
    caPem: readFileSync(join(dir, "ca.crt"), "utf8"),
    caFile: join(dir, "ca.crt"),
    certFile: join(dir, "server.crt"),
    keyFile: join(dir, "server.key"),
    clientCertPem: readFileSync(join(dir, "client.crt"), "utf8"),
    clientKeyPem: readFileSync(join(dir, "client.key"), "utf8"),
  };
}

// Servers started at the same time share one set of certificates (generation spawns openssl
// seven times); the directory goes when the last of them stops.
let shared: { certs: TestCerts; users: number } | undefined;

function acquireCerts(): TestCerts {
  shared ??= { certs: makeCerts(), users: 0 };
  shared.users++;
  return shared.certs;
}

function releaseCerts(certs: TestCerts): void {
  if (shared?.certs !== certs || --shared.users > 0) return;
  shared = undefined;
  rmSync(certs.dir, { recursive: true, force: true });
}

/** A redis-server listening for TLS on `tlsPort` (plain TCP on `server.port` as well). */
export interface TlsRedis {
  server: RedisServer;
  tlsPort: number;
  /** The CA that signed the server certificate (PEM). */
  caPem: string;
  /** Directory of the certificates (shared while several servers run; do not remove it). */
  dir: string;
  certs: TestCerts;
  /** Stops the server (and removes the certificates once no server uses them). Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@linkcode startTlsRedis}. */
export interface TlsRedisOptions {
  /** Require a client certificate signed by the test CA. Default false. */
  authClients?: boolean;
  /** Extra redis-server arguments. */
  args?: string[];
}

/**
 * Starts a redis-server with TLS on a free loopback port. The plain TCP port stays open too
 * (`server.port`), which the readiness probe and tests that need a side channel use.
 */
export async function startTlsRedis(options: TlsRedisOptions = {}): Promise<TlsRedis> {
  execFileSync("openssl", ["version"], { stdio: "ignore" });
  const certs = acquireCerts();
  const tlsPort = await freePort();
  let server: RedisServer;
  try {
    server = await startRedis({
      args: [
        "--tls-port",
        String(tlsPort),
        "--tls-cert-file",
        certs.certFile,
        "--tls-key-file",
        certs.keyFile,
        "--tls-ca-cert-file",
        certs.caFile,
        "--tls-auth-clients",
        options.authClients ? "yes" : "no",
        ...(options.args ?? []),
      ],
      readyPort: tlsPort,
    });
  } catch (e) {
    releaseCerts(certs);
    throw e;
  }
  let stopped = false;
  return {
    server,
    tlsPort,
    caPem: certs.caPem,
    dir: certs.dir,
    certs,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      releaseCerts(certs);
    },
  };
}
