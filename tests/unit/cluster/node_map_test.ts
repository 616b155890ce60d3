// The node map's cluster node check: the handshake step every node socket carries.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clusterNodeCheck } from "../../../src/cluster/_node_map.ts";
import { ConnectionError, ReplyError } from "../../../src/errors.ts";

describe("clusterNodeCheck", () => {
  const id = "a".repeat(40);

  it("is CLUSTER MYID, and passes the node the topology names at the address", () => {
    const step = clusterNodeCheck("127.0.0.1:7000", () => id);
    assert.deepEqual(step.args, ["CLUSTER", "MYID"]);
    step.onReply!(id);
    step.onReply!(new TextEncoder().encode(id));
    // A first discovery knows no id yet.
    clusterNodeCheck("127.0.0.1:7000", () => undefined).onReply!("b".repeat(40));
  });

  it("fails a server with cluster support disabled, naming the address", () => {
    const step = clusterNodeCheck("127.0.0.1:7000", () => id);
    assert.throws(
      () => step.onReply!(new ReplyError("ERR This instance has cluster support disabled")),
      (e: Error) =>
        e instanceof ConnectionError && e.written === false &&
        e.message ===
          'Cannot use "127.0.0.1:7000": it is not a cluster node (cluster support disabled)',
    );
  });

  it("fails another node at the address", () => {
    const step = clusterNodeCheck("127.0.0.1:7000", () => id);
    assert.throws(
      () => step.onReply!("b".repeat(40)),
      (e: Error) =>
        e instanceof ConnectionError &&
        /^Cannot use "127\.0\.0\.1:7000": it is not the cluster node the topology names there/
          .test(e.message),
    );
  });

  it("lets other refusals pass (a user without the permission)", () => {
    const step = clusterNodeCheck("127.0.0.1:7000", () => id);
    step.onReply!(
      new ReplyError("NOPERM this user has no permissions to run the 'cluster|myid' command"),
    );
  });
});
