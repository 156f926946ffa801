// The saver's Lua scripts, as Redis runs them: build/copy-scripts.mjs copies
// them into lua/ from internal/scripts/linked/, where the Go linker writes
// each script with the lib.lua helpers it calls (go generate
// ./internal/scripts): one source, shared with the Go saver.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Script {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "lua");

function load(name: string): Script {
  const source = readFileSync(join(dir, name), "utf8");
  return { name, source, sha: createHash("sha1").update(source).digest("hex") };
}

export const scripts = {
  put: load("put.lua"),
  putWrites: load("put_writes.lua"),
  getTuple: load("get_tuple.lua"),
  list: load("list.lua"),
  deleteThread: load("delete_thread.lua"),
  deleteRuns: load("delete_runs.lua"),
  prune: load("prune.lua"),
  copyRead: load("copy_read.lua"),
  copyWrite: load("copy_write.lua"),
  deltaHistory: load("delta_history.lua"),
  sweep: load("sweep.lua"),
  blobGC: load("blob_gc.lua"),
} as const;
