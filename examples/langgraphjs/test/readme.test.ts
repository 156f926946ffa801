// The README's LangGraph.js quickstart (its ```ts block) is, byte for byte,
// the code of src/quickstart.ts between its README:begin and README:end
// lines, which npm test type-checks: the README cannot drift from code that
// compiles.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");

/** fenced returns the body of the first code block of doc that opens with the line open. */
function fenced(doc: string, open: string): string {
  const start = doc.indexOf(`\n${open}\n`);
  if (start < 0) throw new Error(`no ${open} block`);
  const body = doc.slice(start + open.length + 2);
  const end = body.indexOf("\n```\n");
  if (end < 0) throw new Error(`unterminated ${open} block`);
  return body.slice(0, end + 1);
}

/** marked returns the lines of src strictly between the lines begin and end, without trailing blank lines. */
function marked(src: string, begin: string, end: string): string {
  const start = src.indexOf(`\n${begin}\n`);
  if (start < 0) throw new Error(`no ${begin} line`);
  const rest = src.slice(start + begin.length + 2);
  const stop = rest.indexOf(`\n${end}\n`);
  if (stop < 0) throw new Error(`no ${end} line after ${begin}`);
  return rest.slice(0, stop).replace(/\n+$/, "") + "\n";
}

it("the README's ts block is src/quickstart.ts's README region", () => {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  const src = readFileSync(join(here, "..", "src", "quickstart.ts"), "utf8");
  expect(fenced(readme, "```ts")).toBe(marked(src, "// README:begin", "// README:end"));
  expect(readme.split("\n```ts\n").length - 1).toBe(1); // the one block checked here
});
