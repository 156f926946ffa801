// Copies the saver's Lua scripts, as Redis runs them, from
// ../internal/scripts/linked into lua/. Go is the one linker: scripts.Source
// (internal/scripts/scripts.go) puts the prelude and the lib.lua helpers a
// script calls before it, and `go generate ./internal/scripts` writes the
// result into internal/scripts/linked, which is committed so that building
// this package needs no Go (a Go test fails when it is stale).
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, "..", "..", "internal", "scripts", "linked");
const out = join(here, "..", "lua");

const names = readdirSync(src).filter((n) => n.endsWith(".lua"));
if (names.length === 0) throw new Error(`no scripts in ${src}: run go generate ./internal/scripts`);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const name of names) copyFileSync(join(src, name), join(out, name));
process.stderr.write(`copied ${names.length} scripts from ${src} into ${out}\n`);
