// Reading what the scripts return of a stored checkpoint: hash replies,
// blob fields, pending writes and JSON fields.
import { compareWritesSortKeys, writesSortKey } from "@langchain/langgraph-checkpoint";
import { cutLen } from "./codec.js";
import type { Reply } from "./conn.js";
import { CorruptError } from "./errors.js";

/** StoredWrite is a pending write as read back. */
export interface StoredWrite {
  task: string;
  channel: string;
  path: string;
  idx: number;
  value: unknown;
}

/** flatHash reads an HGETALL reply given as field/value pairs or, inside MULTI, as an object. */
export function flatHash(r: unknown): Reply[] {
  if (Array.isArray(r)) return r as Reply[];
  if (r && typeof r === "object") return Object.entries(r as Record<string, Reply>).flat();
  return [];
}

/** blobChannel is the channel of a blob field: len(channel) ":" channel version. */
export function blobChannel(field: Buffer): string {
  const c = cutLen(field);
  return c ? field.subarray(c.rest, c.rest + c.n).toString("utf8") : field.toString("utf8");
}

/** sortWrites orders writes as LangGraph.js does: by task path, task, index. */
export function sortWrites(ws: StoredWrite[]): StoredWrite[] {
  return [...ws].sort((a, b) => compareWritesSortKeys(writesSortKey(a.path, a.task, a.idx), writesSortKey(b.path, b.task, b.idx)));
}

/** parseJSONField parses a JSON field of a checkpoint's hash; bad JSON is a CorruptError. */
export function parseJSONField(id: string, what: string, v: Buffer): unknown {
  try {
    return JSON.parse(v.toString("utf8"));
  } catch (e) {
    throw new CorruptError(`checkpoint ${id}: ${what}: ${(e as Error).message}`);
  }
}
