// The demos (`deno task demo`, `deno task demo:cluster`) run for several seconds per phase: they
// must show that they are working (a progress line a second on stderr, with counts) and still end
// with their report on stdout, progress-free. Run once, under Deno (the demos are Deno tasks).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const skip = "Deno" in globalThis ? false : "the demos are Deno tasks: run once, under Deno";

interface Line {
  at: number;
  stream: "stdout" | "stderr";
  text: string;
}

/** Runs a demo to its end; every output line with the time it arrived. */
function runDemo(
  file: string,
  env: Record<string, string>,
): Promise<{ code: number; lines: Line[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(Deno.execPath(), ["run", "-A", file], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: Line[] = [];
    for (const stream of ["stdout", "stderr"] as const) {
      let rest = "";
      child[stream].on("data", (c: Uint8Array) => {
        const parts = (rest + new TextDecoder().decode(c)).split("\n");
        rest = parts.pop()!;
        for (const text of parts) lines.push({ at: Date.now(), stream, text });
      });
    }
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code: code ?? -1, lines }));
  });
}

const PROGRESS =
  /^ {2}\[notifications (off|on)\] \+\d+s +\S.* \d+ completed \(\+\d+\/s\), \d+ failed$/;

function checkProgress(lines: Line[], started: number): void {
  const out = lines.map((l) => `${l.stream}: ${l.text}`).join("\n");
  const progress = lines.filter((l) => l.stream === "stderr" && PROGRESS.test(l.text));
  for (const label of ["off", "on"]) {
    const n = progress.filter((l) => l.text.includes(`[notifications ${label}]`)).length;
    assert.ok(n >= 4, `${n} progress lines with notifications ${label}:\n${out}`);
  }
  // Nothing silent for long: no gap between two lines (or from the start) over 2.5 s, however
  // loaded the machine (the lines come every second).
  let last = started;
  let worst = 0;
  for (const l of lines) {
    worst = Math.max(worst, l.at - last);
    last = l.at;
  }
  assert.ok(worst < 2_500, `${worst} ms without output:\n${out}`);
  assert.ok(lines.some((l) => l.stream === "stderr" && /[1-9]\d* completed/.test(l.text)));
  // The report stays on stdout, without progress lines in it.
  const stdout = lines.filter((l) => l.stream === "stdout").map((l) => l.text);
  assert.ok(!stdout.some((t) => PROGRESS.test(t)), "progress on stdout");
  assert.ok(stdout.includes("| | notifications off | notifications on |"), out);
  assert.ok(stdout.some((t) => /^\| completed commands \| \d+ \| \d+ \|$/.test(t)), out);
  assert.ok(stdout.some((t) => /^\| failed commands \| \d+ \| \d+ \|$/.test(t)), out);
}

describe("the demos", { skip }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it("examples/demo.ts reports progress every second and ends with its table", {
    timeout: 120_000,
  }, async () => {
    const started = Date.now();
    const { code, lines } = await runDemo("examples/demo.ts", { REDIS_URL: redis.url });
    assert.equal(code, 0, lines.map((l) => l.text).join("\n"));
    checkProgress(lines, started);
  });

  it("examples/cluster_demo.ts reports progress every second and ends with its table", {
    timeout: 180_000,
  }, async () => {
    const started = Date.now();
    const { code, lines } = await runDemo("examples/cluster_demo.ts", {});
    assert.equal(code, 0, lines.map((l) => l.text).join("\n"));
    checkProgress(lines, started);
  });
});
