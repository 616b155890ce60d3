// Node.js 22's type stripping (`module.stripTypeScriptTypes`, the transform behind
// `node --experimental-strip-types`) over every file given: reports syntax it cannot erase
// (parameter properties, enums, namespaces, ...). Exit 1 when any file fails.
// Usage: npx -y node@22 scripts/_strip_types.mjs <files...>
import { stripTypeScriptTypes } from "node:module";
import { readFileSync } from "node:fs";

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    stripTypeScriptTypes(readFileSync(file, "utf8"), { mode: "strip" });
  } catch (e) {
    failed++;
    // The stack opens with ":<line>" and a code frame, then the message.
    const stack = String(e.stack ?? "");
    const frame = stack.startsWith(":") ? stack.slice(0, stack.indexOf("\n\n")) : "";
    const line = frame.split("\n")[0] ?? "";
    console.error(`${file}${line}: ${e.message}\n${frame.split("\n").slice(1).join("\n")}`);
  }
}
console.log(`strip-types: ${process.argv.length - 2 - failed} files ok, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
