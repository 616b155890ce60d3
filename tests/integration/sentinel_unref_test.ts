// RedisSentinelClient with unref: an open, idle client (its monitor's subscription and periodic
// check included) lets the process exit; without it the process stays.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { type SentinelGroup, startSentinelGroup } from "../_helpers/sentinel.ts";

const runtime = "Bun" in globalThis ? "bun" : "deno";

/** Runs `code` in a child process; its exit code and output, or "running" after `ms`. */
function runChild(code: string, ms: number): Promise<{ exit: number | "running"; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), "edge-redis-sentinel-unref-"));
  const file = join(dir, "child.ts");
  writeFileSync(file, code);
  const exec = runtime === "deno"
    ? [Deno.execPath(), ["run", "-A", file]] as const
    : [process.execPath, [file]] as const;
  return new Promise((resolve, reject) => {
    const child = spawn(exec[0], [...exec[1]], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => out += c);
    child.stderr.on("data", (c) => err += c);
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      const killed = signal === "SIGKILL";
      if (!killed && code !== 0) console.error(err);
      resolve({ exit: killed ? "running" : code ?? -1, out });
    });
  });
}

describe(`sentinel client: unref (${runtime})`, () => {
  let group: SentinelGroup;
  before(async () => {
    group = await startSentinelGroup({ replicas: 1, sentinels: 2 });
  });
  after(async () => {
    await group?.stop();
  });

  const code = (unref: boolean) => {
    const url = JSON.stringify(new URL("../../src/sentinel/mod.ts", import.meta.url).href);
    return `
      import { RedisSentinelClient } from ${url};
      const client = new RedisSentinelClient({
        masterName: ${JSON.stringify(group.masterName)},
        sentinels: ${JSON.stringify(group.sentinelUrls)},
        sentinelCheckInterval: 100,
        unref: ${unref},
      });
      await client.set("unref-k", "v");
      // Let the monitor subscribe and check a few times.
      await new Promise((r) => setTimeout(r, 300));
      console.log("done", await client.get("unref-k"));
      // Not closed: the open, idle client is all that is left.
    `;
  };

  it("an idle client lets the process exit with unref, and keeps it alive without", async () => {
    const [held, released] = await Promise.all([
      runChild(code(false), 3_000),
      runChild(code(true), 4_500),
    ]);
    assert.equal(held.exit, "running", "without unref the open client keeps the process alive");
    assert.match(held.out, /done v/);
    assert.equal(released.exit, 0, "with unref the process exits on its own");
    assert.match(released.out, /done v/);
  });
});
