import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEndpoint, RestMock } from "../../../src/testing/mod.ts";

const AUTH = `Basic ${btoa("admin@example.com:secret")}`;
const req = (path: string, query = "", authorization: string | undefined = AUTH) => ({
  method: "GET",
  path,
  query: new URLSearchParams(query),
  authorization,
});

describe("RestMock", () => {
  it("lists the database with its endpoints, filtered by fields", () => {
    const rest = new RestMock({}, () => [{ host: "127.0.0.1", port: 16379 }]);
    const all = rest.handle(req("/v1/bdbs"))!;
    assert.equal(all.status, 200);
    const [db] = all.body as Record<string, unknown>[];
    assert.equal(db!.uid, 1);
    assert.deepEqual(db!.endpoints, [{
      uid: "1:1",
      dns_name: "localhost",
      addr: ["127.0.0.1"],
      port: 16379,
      addr_type: "internal",
    }]);
    const some = rest.handle(req("/v1/bdbs", "fields=uid"))!;
    assert.deepEqual(some.body, [{ uid: 1 }]);
    assert.deepEqual(rest.handle(req("/v1/bdbs/1", "fields=uid,name"))!.body, {
      uid: 1,
      name: "db1",
    });
  });

  it("checks Basic credentials", () => {
    const rest = new RestMock({ username: "u", password: "p" });
    assert.equal(rest.handle(req("/v1/bdbs/1/availability"))!.status, 401);
    assert.equal(rest.handle(req("/v1/bdbs/1/availability", "", undefined))!.status, 401);
    assert.equal(
      rest.handle(req("/v1/bdbs/1/availability", "", `Basic ${btoa("u:p")}`))!.status,
      200,
    );
    assert.deepEqual(rest.requests().map((r) => r.authorized), [false, false, true]);
  });

  it("plays a standing answer and a one-shot queue", () => {
    const rest = new RestMock();
    const avail = () =>
      rest.handle(
        req("/v1/bdbs/1/availability", "extend_check=lag&availability_lag_tolerance_ms=50"),
      )!;
    assert.equal(avail().status, 200);
    rest.script({ status: 503 });
    const lag = avail();
    assert.equal(lag.status, 503);
    assert.match(JSON.stringify(lag.body), /50 ms/);
    rest.script([{ status: 200, delayMs: 1_000 }, { status: 401 }]);
    const slow = avail();
    assert.deepEqual([slow.status, slow.delayMs], [200, 1_000]);
    assert.equal(avail().status, 401);
    assert.equal(avail().status, 503);
    rest.script({ status: 200, body: { custom: true } });
    assert.deepEqual(avail().body, { custom: true });
    assert.equal(rest.handle(req("/v1/bdbs/2/availability"))!.status, 404);
    assert.equal(rest.handle(req("/v1/other")), undefined);
  });
});

describe("parseEndpoint", () => {
  it("parses host:port forms", () => {
    assert.deepEqual(parseEndpoint("127.0.0.1:6379"), { host: "127.0.0.1", port: 6379 });
    assert.deepEqual(parseEndpoint("redis://user:pw@localhost:7000/0"), {
      host: "localhost",
      port: 7000,
    });
    assert.deepEqual(parseEndpoint("[::1]:6380"), { host: "::1", port: 6380 });
    assert.deepEqual(parseEndpoint(":7001"), { host: "127.0.0.1", port: 7001 });
    assert.deepEqual(parseEndpoint({ port: 5 }), { host: "127.0.0.1", port: 5 });
    assert.throws(() => parseEndpoint("h:99999"), TypeError);
  });
});
