// copyFrom: copy threads, with their whole history, from any LangGraph.js
// checkpointer (MemorySaver, the SQLite, Postgres or MongoDB savers...) into a
// RedcheckSaver, through the public BaseCheckpointSaver API on both sides:
// list() of the source, put/putWrites/getTuple/list/deleteThread of the target
// (docs/typescript.md, "Migrating from another saver").
//
// Idempotent: a thread already in the target with the same content is skipped;
// one holding part of the source's history (a copy cut off) is completed; one
// holding anything else is refused (CopyConflictError) unless replace is set,
// and then deleted and copied anew. Every thread is checked before anything is
// written, so a refusal writes nothing.
//
// Bounded: the source is read by async iteration over its list(), the target
// written in steps of batchSize checkpoints (each Put and PutWrites one bounded
// script); the memory held per thread is its checkpoint IDs and one digest per
// channel version, never its values.
import { createHash } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  TASKS,
  type BaseCheckpointSaver,
  type ChannelVersions,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { canonicalJSON } from "./canonjson.js";
import { writeIndex } from "./codec.js";
import { InvalidCheckpointError, InvalidConfigError, NotFoundError } from "./errors.js";
import { validateID, validateNamespace, validateThreadID } from "./keys.js";
import { dumpsTyped } from "./values.js";
import { versionToStore } from "./version.js";

/** The default and greatest number of checkpoints copyFrom reads and writes per step. */
export const COPY_BATCH = 64;
const MAX_COPY_BATCH = 1000;

/** Options of copyFrom. */
export interface CopyFromOptions {
  /**
   * Replace a thread that exists in redcheck with other content: delete it (deleteThread, every
   * namespace), then copy it. Without it such a thread is refused (CopyConflictError) and nothing is
   * written, as `redcheck import` refuses a thread that exists unless --replace.
   */
  replace?: boolean;
  /** Checkpoints read from the source and written per step: 1 to 1000, default 64. */
  batchSize?: number;
}

/** What copyFrom did with one thread. */
export type ThreadCopyStatus =
  /** the thread was not in redcheck: copied whole */
  | "copied"
  /** redcheck held part of it (a copy cut off): the rest was copied */
  | "completed"
  /** redcheck held other content: deleted, then copied whole (replace) */
  | "replaced"
  /** redcheck held the same content already: nothing written */
  | "skipped";

/** ThreadCopy reports one thread of a copyFrom. */
export interface ThreadCopy {
  threadId: string;
  status: ThreadCopyStatus;
  checkpointsCopied: number;
  checkpointsSkipped: number;
  writesCopied: number;
  writesSkipped: number;
}

/** CopyReport is what copyFrom did: per thread, and the totals. */
export interface CopyReport {
  threads: ThreadCopy[];
  /** threads written (status copied, completed or replaced) */
  threadsCopied: number;
  /** threads found identical in redcheck (status skipped) */
  threadsSkipped: number;
  checkpointsCopied: number;
  checkpointsSkipped: number;
  writesCopied: number;
  writesSkipped: number;
}

/**
 * CopyConflictError: threads of a copyFrom exist in redcheck with content other than the source's (other
 * checkpoints, values, metadata or pending writes); nothing was written. Set replace to delete and copy
 * them anew. Its code is INVALID_CONFIG, as a copy onto an existing thread (copyThread) answers.
 */
export class CopyConflictError extends InvalidConfigError {
  /** The threads refused, each with the first difference found. */
  readonly conflicts: ReadonlyArray<{ threadId: string; reason: string }>;
  constructor(conflicts: Array<{ threadId: string; reason: string }>) {
    super(`copyFrom: ${conflicts.length} thread(s) exist in redcheck with other content, nothing copied (replace deletes and copies them anew): ` +
      conflicts.map((c) => `${JSON.stringify(c.threadId)}: ${c.reason}`).join("; "));
    this.conflicts = conflicts;
  }
}

/** CopyTarget: what copyFrom uses of the RedcheckSaver it copies into (its public methods). */
export interface CopyTarget {
  readonly serde: SerializerProtocol;
  setup(): Promise<void>;
  put: BaseCheckpointSaver["put"];
  putWrites: BaseCheckpointSaver["putWrites"];
  getTuple: BaseCheckpointSaver["getTuple"];
  list: BaseCheckpointSaver["list"];
  deleteThread(threadId: string): Promise<void>;
}

/** The plan of one thread, made before anything is written. */
interface ThreadPlan {
  thread: string;
  /** the thread has a checkpoint in redcheck */
  exists: boolean;
  /** the first difference with redcheck's content; undefined when none */
  conflict?: string;
  /** the source's checkpoints ("ns\0id") */
  listed: Set<string>;
  /** checkpoints redcheck holds equal, with all their writes */
  done: Set<string>;
  /** checkpoints redcheck holds equal but with only some of their tasks' writes: the writes of these tasks are missing */
  missingTasks: Map<string, Set<string>>;
  /** the digest of every channel version of the source ("ns\0channel\0version" -> digest) */
  digests: Map<string, string>;
  /** the channel versions redcheck holds */
  written: Set<string>;
  checkpoints: number;
  writes: number;
}

/**
 * copyFrom copies threads from source into target (see the file's comment): every namespace, every
 * checkpoint with its parent, metadata, channel versions and values, and pending writes.
 */
export async function copyFrom(target: CopyTarget, source: BaseCheckpointSaver, threadIds: string[], options: CopyFromOptions = {}): Promise<CopyReport> {
  if (!source || typeof (source as { list?: unknown }).list !== "function") throw new InvalidConfigError("copyFrom: source must be a BaseCheckpointSaver");
  if (!Array.isArray(threadIds)) throw new InvalidConfigError("copyFrom: threadIds must be an array of thread IDs");
  const batch = options.batchSize ?? COPY_BATCH;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_COPY_BATCH) throw new InvalidConfigError(`copyFrom: batchSize must be 1 to ${MAX_COPY_BATCH}`);
  const threads: string[] = [];
  const seen = new Set<string>();
  for (const t of threadIds) {
    const thread = String(t);
    const bad = validateThreadID(thread);
    if (bad) throw new InvalidConfigError(`copyFrom: ${bad}`);
    if (seen.has(thread)) continue;
    seen.add(thread);
    threads.push(thread);
  }
  await target.setup();

  // Every thread is planned (read from both sides) before anything is written.
  const plans: ThreadPlan[] = [];
  for (const thread of threads) plans.push(await plan(target, source, thread, batch));
  const conflicts = plans.filter((p) => p.conflict !== undefined);
  if (conflicts.length > 0 && !options.replace) {
    throw new CopyConflictError(conflicts.map((p) => ({ threadId: p.thread, reason: p.conflict! })));
  }

  const report: CopyReport = { threads: [], threadsCopied: 0, threadsSkipped: 0, checkpointsCopied: 0, checkpointsSkipped: 0, writesCopied: 0, writesSkipped: 0 };
  for (const p of plans) {
    const r = await copyThread(target, source, p, batch);
    report.threads.push(r);
    if (r.status === "skipped") report.threadsSkipped++;
    else report.threadsCopied++;
    report.checkpointsCopied += r.checkpointsCopied;
    report.checkpointsSkipped += r.checkpointsSkipped;
    report.writesCopied += r.writesCopied;
    report.writesSkipped += r.writesSkipped;
  }
  return report;
}

// ---- reading the source ---------------------------------------------------------

/** batches yields the source's checkpoints of thread (every namespace), n at a time. */
async function* batches(source: BaseCheckpointSaver, thread: string, n: number): AsyncGenerator<CheckpointTuple[]> {
  let b: CheckpointTuple[] = [];
  for await (const t of source.list({ configurable: { thread_id: thread } })) {
    const got = String(t.config?.configurable?.thread_id ?? "");
    if (got !== thread) throw new InvalidCheckpointError(`copyFrom: the source listed a checkpoint of thread ${JSON.stringify(got)} for thread ${JSON.stringify(thread)}`);
    b.push(t);
    if (b.length >= n) {
      yield b;
      b = [];
    }
  }
  if (b.length > 0) yield b;
}

const nsOfTuple = (t: CheckpointTuple) => String(t.config?.configurable?.checkpoint_ns ?? "");
const parentOf = (t: CheckpointTuple) => String(t.parentConfig?.configurable?.checkpoint_id ?? "");
const keyOf = (t: CheckpointTuple) => nsOfTuple(t) + "\0" + t.checkpoint.id;

/**
 * formatVersion: a channel version as copyFrom stores it. LangGraph.js's savers number versions 1, 2,
 * 3...; redcheck's getNextVersion makes strings ("000000000005.5f0c21aa"), and LangGraph's loop compares
 * a channel's version with the version a node last saw by `>`, which is false between a number and such
 * a string: a copied thread resumed on redcheck would not trigger its next nodes. So an integer version n
 * is stored as n in the format's own form, zero-padded to 12 digits with the suffix ".00000000"
 * (4 -> "000000000004.00000000"): it compares in order with every version getNextVersion makes after it.
 * Other versions (strings) are kept as they are.
 */
export function formatVersion(v: string | number): string | number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) return v;
  return String(v).padStart(12, "0") + ".00000000";
}

function formatVersions(v: ChannelVersions): ChannelVersions {
  return Object.fromEntries(Object.entries(v ?? {}).map(([ch, ver]) => [ch, formatVersion(ver as string | number)]));
}

/**
 * versionsOf: the channel versions a checkpoint stores (formatVersion). A checkpoint of format v < 4 is
 * read with its parent's pending sends moved into the channel TASKS; that channel is not stored
 * (readers migrate it again from the parent's writes, as the source did).
 */
function versionsOf(t: CheckpointTuple): ChannelVersions {
  const v = formatVersions(t.checkpoint.channel_versions ?? {});
  if ((t.checkpoint.v ?? 0) < 4) delete v[TASKS];
  return v;
}

/** seenOf: the versions seen of a checkpoint, as it stores them (formatVersion). */
function seenOf(t: CheckpointTuple): Record<string, ChannelVersions> {
  const out: Record<string, ChannelVersions> = {};
  for (const [node, m] of Object.entries(t.checkpoint.versions_seen ?? {})) out[node] = formatVersions((m ?? {}) as ChannelVersions);
  return out;
}

// ---- digests ----------------------------------------------------------------------

/** stableJSON writes parsed JSON with object keys sorted, to compare values whatever their key order. */
function stableJSON(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(stableJSON).join(",") + "]";
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return "{" + Object.keys(o).sort().map((k) => JSON.stringify(k) + ":" + stableJSON(o[k])).join(",") + "}";
  }
  return JSON.stringify(v) ?? "null";
}

const ABSENT = "-";

/** digest of a value as the target's serde stores it; ABSENT for a channel without a value. */
async function digest(serde: SerializerProtocol, present: boolean, v: unknown): Promise<string> {
  if (!present) return ABSENT;
  const [type, data] = await dumpsTyped(serde, v);
  let body: Uint8Array = data;
  if (type === "json" || type === "delta/json") {
    try {
      body = Buffer.from(stableJSON(JSON.parse(Buffer.from(data).toString("utf8"))));
    } catch {
      // not JSON after all: compare the bytes
    }
  }
  return createHash("sha256").update(type).update("\0").update(body).digest("base64");
}

/** valueDigests: the digest of every versioned channel's value of t ("channel" -> digest). */
async function valueDigests(serde: SerializerProtocol, t: CheckpointTuple): Promise<Map<string, string>> {
  const values = (t.checkpoint.channel_values ?? {}) as Record<string, unknown>;
  const out = new Map<string, string>();
  for (const ch of Object.keys(versionsOf(t))) {
    out.set(ch, await digest(serde, Object.prototype.hasOwnProperty.call(values, ch) && values[ch] !== undefined, values[ch]));
  }
  return out;
}

/** taskWrites: a checkpoint's pending writes per task, each task's as its sorted digests (compared as a set: list() gives no index). */
async function taskWrites(serde: SerializerProtocol, ws: CheckpointTuple["pendingWrites"]): Promise<Map<string, string>> {
  const by = new Map<string, string[]>();
  for (const [task, channel, value] of ws ?? []) {
    const d = channel + "\0" + await digest(serde, true, value);
    const l = by.get(task);
    if (l) l.push(d);
    else by.set(task, [d]);
  }
  return new Map([...by].map(([task, l]) => [task, l.sort().join("\n")]));
}

// ---- planning -----------------------------------------------------------------------

/**
 * plan reads a thread on both sides and tells what redcheck holds of it. It refuses a source whose
 * channel version holds different values in different checkpoints (checkVersions).
 */
async function plan(target: CopyTarget, source: BaseCheckpointSaver, thread: string, n: number): Promise<ThreadPlan> {
  const p: ThreadPlan = { thread, exists: false, listed: new Set(), done: new Set(), missingTasks: new Map(), digests: new Map(), written: new Set(), checkpoints: 0, writes: 0 };
  for await (const _ of target.list({ configurable: { thread_id: thread } }, { limit: 1 })) p.exists = true;
  for await (const b of batches(source, thread, n)) {
    p.checkpoints += b.length;
    const got = p.exists && p.conflict === undefined
      ? await Promise.all(b.map((t) => target.getTuple({ configurable: { thread_id: thread, checkpoint_ns: nsOfTuple(t), checkpoint_id: t.checkpoint.id } })))
      : [];
    for (let i = 0; i < b.length; i++) {
      const s = b[i]!;
      const bad = validateNamespace(nsOfTuple(s)) ?? validateID(String(s.checkpoint.id ?? ""));
      if (bad) throw new InvalidCheckpointError(`copyFrom: thread ${JSON.stringify(thread)}: checkpoint ${JSON.stringify(s.checkpoint.id)} (namespace ${JSON.stringify(nsOfTuple(s))}) cannot be stored: ${bad}`);
      p.writes += s.pendingWrites?.length ?? 0;
      p.listed.add(keyOf(s));
      const sd = await valueDigests(target.serde, s);
      checkVersions(p, s, sd);
      if (p.exists && p.conflict === undefined) p.conflict = await compare(target.serde, s, sd, got[i], p);
    }
  }
  if (p.checkpoints === 0) throw new NotFoundError(`copyFrom: the source has no checkpoint of thread ${JSON.stringify(thread)}`);
  if (p.exists && p.conflict === undefined) {
    for await (const t of target.list({ configurable: { thread_id: thread } })) {
      if (!p.listed.has(keyOf(t))) {
        p.conflict = `redcheck holds checkpoint ${t.checkpoint.id} (namespace ${JSON.stringify(nsOfTuple(t))}), which the source does not`;
        break;
      }
    }
  }
  return p;
}

/**
 * checkVersions records the digests of a source checkpoint's channel versions. A version met again must
 * hold the same value: redcheck keeps one value per channel version of a namespace, and LangGraph.js's
 * integer versions can repeat, with different values, across the branches of a fork, which redcheck
 * cannot keep apart (an InvalidCheckpointError).
 */
function checkVersions(p: ThreadPlan, t: CheckpointTuple, sd: Map<string, string>): void {
  const ns = nsOfTuple(t);
  const versions = versionsOf(t);
  for (const [ch, d] of sd) {
    const k = versionKey(ns, ch, versions[ch]!);
    const had = p.digests.get(k);
    if (had === undefined) p.digests.set(k, d);
    else if (had !== d) {
      throw new InvalidCheckpointError(`copyFrom: thread ${JSON.stringify(p.thread)} namespace ${JSON.stringify(ns)}: channel ${JSON.stringify(ch)} ` +
        `version ${JSON.stringify(versions[ch])} holds different values in different checkpoints of the source (checkpoint ${t.checkpoint.id} and another); ` +
        "redcheck keeps one value per channel version, so this history (a fork whose branches reuse LangGraph.js's integer versions) cannot be copied as it is");
    }
  }
}

const versionKey = (ns: string, ch: string, ver: string | number) => ns + "\0" + ch + "\0" + versionToStore(ver);

/**
 * compare tells how redcheck's copy t of the source's checkpoint s stands: absent (nothing recorded),
 * equal (recorded in p.done, or in p.missingTasks when some tasks' writes are missing), or different (the
 * difference, returned).
 */
async function compare(serde: SerializerProtocol, s: CheckpointTuple, sd: Map<string, string>, t: CheckpointTuple | undefined, p: ThreadPlan): Promise<string | undefined> {
  if (t === undefined) return undefined;
  const ns = nsOfTuple(s);
  const where = `checkpoint ${s.checkpoint.id} (namespace ${JSON.stringify(ns)})`;
  const sv = normVersions(versionsOf(s));
  const tv = normVersions(versionsOf(t));
  if (parentOf(s) !== parentOf(t)) return `${where}: parent ${JSON.stringify(parentOf(t))} in redcheck, ${JSON.stringify(parentOf(s))} in the source`;
  if ((s.checkpoint.v ?? 0) !== (t.checkpoint.v ?? 0) || String(s.checkpoint.ts ?? "") !== String(t.checkpoint.ts ?? "")) return `${where}: format version or ts differs`;
  if (stableJSON(sv) !== stableJSON(tv)) return `${where}: channel versions differ`;
  if (stableJSON(normSeen(s)) !== stableJSON(normSeen(t))) return `${where}: versions seen differ`;
  const su = (s.checkpoint as { updated_channels?: unknown }).updated_channels ?? null;
  const tu = (t.checkpoint as { updated_channels?: unknown }).updated_channels ?? null;
  if (stableJSON(su) !== stableJSON(tu)) return `${where}: updated channels differ`;
  if (metadataJSON(s) !== metadataJSON(t)) return `${where}: metadata differs`;
  const td = await valueDigests(serde, t);
  for (const [ch, d] of sd) {
    if (td.get(ch) !== d) return `${where}: the value of channel ${JSON.stringify(ch)} differs`;
  }
  const sw = await taskWrites(serde, s.pendingWrites);
  const tw = await taskWrites(serde, t.pendingWrites);
  const missing = new Set<string>();
  for (const [task, d] of tw) {
    if (sw.get(task) !== d) return `${where}: the pending writes of task ${JSON.stringify(task)} differ`;
  }
  for (const task of sw.keys()) if (!tw.has(task)) missing.add(task);
  for (const ch of sd.keys()) p.written.add(versionKey(ns, ch, sv[ch]!));
  if (missing.size > 0) p.missingTasks.set(keyOf(s), missing);
  else p.done.add(keyOf(s));
  return undefined;
}

function normVersions(v: ChannelVersions): Record<string, string> {
  return Object.fromEntries(Object.entries(v).map(([ch, ver]) => [ch, versionToStore(ver as string | number)]));
}

function normSeen(t: CheckpointTuple): Record<string, Record<string, string>> {
  return Object.fromEntries(Object.entries(seenOf(t)).map(([node, m]) => [node, normVersions(m)]));
}

/** metadataJSON: the metadata as redcheck stores it, canonical JSON per key (undefined values left out). */
function metadataJSON(t: CheckpointTuple): string {
  const md = (t.metadata ?? {}) as Record<string, unknown>;
  return Object.keys(md).filter((k) => md[k] !== undefined).sort().map((k) => JSON.stringify(k) + ":" + canonicalJSON(md[k])).join(",");
}

// ---- copying -------------------------------------------------------------------------

/** copyThread writes what redcheck lacks of a planned thread, batch by batch in the source's order. */
async function copyThread(target: CopyTarget, source: BaseCheckpointSaver, p: ThreadPlan, n: number): Promise<ThreadCopy> {
  const r: ThreadCopy = { threadId: p.thread, status: "copied", checkpointsCopied: 0, checkpointsSkipped: 0, writesCopied: 0, writesSkipped: 0 };
  if (p.exists && p.conflict === undefined && p.done.size === p.checkpoints) {
    return { ...r, status: "skipped", checkpointsSkipped: p.checkpoints, writesSkipped: p.writes };
  }
  if (p.conflict !== undefined) {
    await target.deleteThread(p.thread);
    p.done.clear();
    p.missingTasks.clear();
    p.written.clear();
    r.status = "replaced";
  } else if (p.exists) {
    r.status = "completed";
  }
  for await (const b of batches(source, p.thread, n)) {
    const puts: Array<Promise<unknown>> = [];
    const writes: Array<{ t: CheckpointTuple; tasks?: Set<string> }> = [];
    for (const t of b) {
      const k = keyOf(t);
      const nw = t.pendingWrites?.length ?? 0;
      if (p.done.has(k)) {
        r.checkpointsSkipped++;
        r.writesSkipped += nw;
        continue;
      }
      const tasks = p.missingTasks.get(k);
      if (tasks) {
        r.checkpointsSkipped++;
        writes.push({ t, tasks });
        continue;
      }
      const newVersions = await newVersionsOf(target.serde, t, p);
      const cfg: RunnableConfig = { configurable: { thread_id: p.thread, checkpoint_ns: nsOfTuple(t), checkpoint_id: parentOf(t) } };
      const cp = { ...t.checkpoint, channel_versions: versionsOf(t), versions_seen: seenOf(t) };
      puts.push(target.put(cfg, cp, t.metadata ?? ({} as never), newVersions));
      r.checkpointsCopied++;
      writes.push({ t });
    }
    await Promise.all(puts);
    const calls: Array<Promise<void>> = [];
    for (const { t, tasks } of writes) {
      const cfg: RunnableConfig = { configurable: { thread_id: p.thread, checkpoint_ns: nsOfTuple(t), checkpoint_id: t.checkpoint.id } };
      for (const [task, ws] of groupWrites(t.pendingWrites)) {
        if (tasks && !tasks.has(task)) {
          r.writesSkipped += ws.length;
          continue;
        }
        calls.push(target.putWrites(cfg, ws, task));
        r.writesCopied += ws.length;
      }
    }
    await Promise.all(calls);
  }
  return r;
}

/**
 * newVersionsOf: the channels of t whose version redcheck does not hold yet (the first checkpoint met that
 * names a version writes its value). A checkpoint the plan did not see (the source changed since) has
 * its versions checked first.
 */
async function newVersionsOf(serde: SerializerProtocol, t: CheckpointTuple, p: ThreadPlan): Promise<ChannelVersions> {
  if (!p.listed.has(keyOf(t))) checkVersions(p, t, await valueDigests(serde, t));
  const ns = nsOfTuple(t);
  const out: ChannelVersions = {};
  for (const [ch, ver] of Object.entries(versionsOf(t))) {
    const k = versionKey(ns, ch, ver);
    if (p.written.has(k)) continue;
    p.written.add(k);
    out[ch] = ver;
  }
  return out;
}

/**
 * groupWrites: a checkpoint's pending writes as one putWrites call per task (in the order of their first
 * write): its regular writes in their order, so that they get the indices 0, 1, ... they had, then its
 * writes to special channels, which get their fixed indices whatever their position.
 */
function groupWrites(ws: CheckpointTuple["pendingWrites"]): Map<string, PendingWrite[]> {
  const regular = new Map<string, PendingWrite[]>();
  const special = new Map<string, PendingWrite[]>();
  for (const [task, channel, value] of ws ?? []) {
    if (!regular.has(task)) {
      regular.set(task, []);
      special.set(task, []);
    }
    (writeIndex(channel, 0) < 0 ? special : regular).get(task)!.push([channel, value]);
  }
  return new Map([...regular].map(([task, l]) => [task, [...l, ...special.get(task)!]]));
}
