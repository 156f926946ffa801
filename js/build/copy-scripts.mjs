// Copies redcheck's Lua scripts (../scripts, the single source of truth)
// into lua/, each as Redis runs it: the prelude line, the lib.lua helpers it
// calls (directly or through other helpers), in lib.lua's order, then the
// script's file.
// This is scripts.Source of the Go package (scripts/scripts.go), line for
// line; test/scripts.test.ts checks the result against Go's, byte for byte.
import { mkdirSync, readFileSync, readdirSync, writeFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, "..", "..", "internal", "scripts");
const out = join(here, "..", "lua");

// The scripts the saver runs (store_*.lua and check_*.lua belong to other
// Go packages and are not copied).
export const saverScripts = [
  "put.lua", "put_writes.lua", "get_tuple.lua", "list.lua", "delete_thread.lua", "delete_runs.lua",
  "prune.lua", "copy_read.lua", "copy_write.lua", "delta_history.lua", "sweep.lua", "blob_gc.lua",
];

// libHelpers splits lib.lua into its functions, each with the comment above
// it. A function starts at a line "local function NAME(" and ends at the
// first line "end" in column 0; lib.lua's header belongs to no function.
function libHelpers(lib) {
  const out = [];
  let pending = "";
  let inFunc = false;
  let header = true;
  for (const line of splitAfter(lib)) {
    if (inFunc) {
      out[out.length - 1].text += line;
      inFunc = line.replace(/[\r\n]+$/, "") !== "end";
    } else if (line.startsWith("local function ")) {
      const name = line.slice("local function ".length).split("(")[0];
      out.push({ name, text: pending + line });
      pending = "";
      inFunc = true;
      header = false;
    } else if (line.startsWith("--") && !header) {
      pending += line;
    } else if (line.trim() === "") {
      header = false;
      pending = "";
    }
  }
  if (inFunc) throw new Error(`lib.lua: function ${out[out.length - 1].name} has no closing end`);
  return out;
}

function splitAfter(s) {
  const parts = [];
  let from = 0;
  for (;;) {
    const at = s.indexOf("\n", from);
    if (at < 0) {
      parts.push(s.slice(from)); // strings.SplitAfter yields the (possibly empty) rest
      return parts;
    }
    parts.push(s.slice(from, at + 1));
    from = at + 1;
  }
}

const isIdent = (c) => /[_.:0-9a-zA-Z]/.test(c);

function callsHelper(text, name) {
  for (let i = 0; ;) {
    const j = text.indexOf(name + "(", i);
    if (j < 0) return false;
    if (j === 0 || !isIdent(text[j - 1])) return true;
    i = j + name.length;
  }
}

export function source(name, dir = src) {
  const body = readFileSync(join(dir, name), "utf8");
  const helpers = libHelpers(readFileSync(join(dir, "lib.lua"), "utf8"));
  const used = new Set();
  const mark = (text) => {
    for (const h of helpers) {
      if (!used.has(h.name) && callsHelper(text, h.name)) {
        used.add(h.name);
        mark(h.text);
      }
    }
  };
  mark(body);
  let b = `-- ${name} (with the lib.lua helpers it uses)\n`;
  b += "local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use\n"; // Go: prelude
  for (const h of helpers) if (used.has(h.name)) b += h.text;
  return b + body;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const present = new Set(readdirSync(src));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const name of saverScripts) {
    if (!present.has(name)) throw new Error(`scripts/${name} is missing`);
    writeFileSync(join(out, name), source(name));
  }
  process.stderr.write(`copied ${saverScripts.length} scripts from ${src} into ${out}\n`);
}
