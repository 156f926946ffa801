// The saver's multi-step operations beyond LangGraph.js's BaseCheckpointSaver
// (Python LangGraph's delete_for_runs, copy_thread and prune), driven as the
// Go saver drives them (redissaver/runs.go, collect.go, prune.go, copy.go):
// every script call does bounded work, and each step leaves a state readers
// handle.
import { buf, num, str, arr, type Arg, type Conn, type Reply } from "./conn.js";
import { CorruptError, InvalidConfigError, NotFoundError, scriptError } from "./errors.js";
import { decode, encode, newGen, validateRunID, validateThreadID, type Layout } from "./keys.js";
import { cutLen, joinNames, pack, parseWriteField, unpack } from "./codec.js";
import { channelPlace, writePlace, type Encryption } from "./encryption.js";
import { isSealed } from "./seal.js";
import { scripts } from "./scripts.js";

const RUN_BUDGET = 64;
const COLLECT_BUDGET = 64;
const PRUNE_BUDGET = 64;
const COPY_BUDGET = 32;
const COPY_GRACE_MS = 10 * 60_000;

/** What the operations need of the saver. */
export interface Ops {
  conn: Conn;
  layout: Layout;
  /** Encryption at rest: a copy opens each value for its source place and seals it again for its target's. */
  enc: Encryption;
  ttl: number;
  eventSpec(fields: Arg[]): Arg[];
  eventBounds(): [string, string];
  traceArgs(): Arg[];
  /** How long (ms) a deleted thread's event stream stays. */
  retainDeletedMs: number;
  deleteThread(threadId: string): Promise<void>;
}

/** One namespace of one generation of a thread. */
interface NsRef {
  shard: number;
  enct: Arg;
  gen: Arg;
  encns: Arg;
}

/**
 * deleteForRuns deletes every checkpoint whose metadata run_id is one of
 * runIds, through the run indexes (delete_runs.lua, a scan of about 128
 * members per step, the steps of every (shard, run) sent together), then
 * removes the values no remaining checkpoint points to (blob_gc.lua).
 * Checkpoints put to the runs meanwhile may or may not be deleted. Cut off,
 * it leaves a state readers handle; repeat it to finish.
 */
export async function deleteForRuns(o: Ops, runIds: string[]): Promise<void> {
  const valid = runIds.filter((r) => typeof r === "string" && !validateRunID(r));
  if (valid.length === 0) return;
  let pending: { shard: number; key: string; cursor: Arg }[] = [];
  for (let n = 0; n < o.layout.shards; n++) for (const r of valid) pending.push({ shard: n, key: o.layout.run(n, r), cursor: "0" });
  const [maxLen, feedMaxLen] = o.eventBounds();
  const names = joinNames(valid);
  const trace = o.traceArgs();
  const touched = new Set<string>();
  const refs: NsRef[] = [];
  while (pending.length > 0) {
    const replies = await Promise.all(pending.map((p) =>
      o.conn.run(scripts.deleteRuns, [p.key], [o.layout.shardBase(p.shard), String(RUN_BUDGET), maxLen, feedMaxLen, names, p.cursor, String(o.retainDeletedMs), ...trace])
        .catch((e) => { throw scriptError("delete for runs", e); })));
    const next: typeof pending = [];
    replies.forEach((res, i) => {
      const r = arr(res);
      if (r.length % 3 !== 1) throw new CorruptError("delete runs reply");
      for (let j = 1; j + 2 < r.length; j += 3) {
        const ref = { shard: pending[i]!.shard, enct: buf(r[j]), gen: buf(r[j + 1]), encns: buf(r[j + 2]) };
        const k = `${ref.shard}\0${ref.enct.toString("latin1")}\0${ref.gen.toString("latin1")}\0${ref.encns.toString("latin1")}`;
        if (!touched.has(k)) {
          touched.add(k);
          refs.push(ref);
        }
      }
      const cursor = buf(r[0]);
      if (str(cursor) !== "0") next.push({ ...pending[i]!, cursor });
    });
    pending = next;
  }
  await collectValues(o, "delete for runs", refs);
}

/**
 * collectValues runs blob_gc.lua's mark and sweep steps on each namespace, one step of each per round trip.
 * Each job's token marks the keep set as its own: a job whose keep set another one made anew stops.
 */
async function collectValues(o: Ops, op: string, refs: NsRef[]): Promise<void> {
  let jobs = refs.map((r) => ({ ...r, phase: "mark" as string, cursor: "" as Arg, token: newGen() }));
  while (jobs.length > 0) {
    const replies = await Promise.all(jobs.map((j) =>
      o.conn.run(scripts.blobGC, [o.layout.shardBase(j.shard) + "t:" + str(j.enct)],
        [o.layout.shardBase(j.shard), j.enct, j.gen, j.encns, j.phase, j.cursor, String(COLLECT_BUDGET), j.token])
        .catch((e) => { throw scriptError(`${op}: collect values`, e); })));
    const next: typeof jobs = [];
    replies.forEach((res, i) => {
      const r = arr(res);
      if (r.length !== 3) throw new CorruptError("blob gc reply");
      const phase = str(r[0]);
      if (phase !== "") next.push({ ...jobs[i]!, phase, cursor: buf(r[1]) });
    });
    jobs = next;
  }
}

/**
 * prune keeps, in each namespace of each thread, only the newest checkpoint
 * (with the ancestors its delta channels need: strategy "keep_latest"), or
 * deletes the threads ("delete"); prune.lua's steps, as the Go saver's Prune.
 */
export async function prune(o: Ops, threadIds: string[], strategy: "keep_latest" | "delete"): Promise<void> {
  if (strategy !== "keep_latest" && strategy !== "delete") throw new InvalidConfigError(`unknown prune strategy ${JSON.stringify(strategy)}`);
  for (const th of threadIds) {
    const bad = validateThreadID(th);
    if (bad) throw new InvalidConfigError(bad);
  }
  for (const th of threadIds) {
    if (strategy === "delete") await o.deleteThread(th);
    else await pruneKeepLatest(o, th);
  }
}

async function pruneKeepLatest(o: Ops, th: string): Promise<void> {
  const shard = o.layout.shard(th);
  const keys = [o.layout.head(th), o.layout.threads(shard), o.layout.events(th), o.layout.feed(shard)];
  let gen: Arg = "";
  // Marks the keep sets this job plans as its own: another prune of a namespace that starts its plan anew
  // ends this one's work there (prune.lua).
  const token = newGen();
  const step = async (phase: string, ...args: Arg[]): Promise<Reply[] | undefined> => {
    let res: Reply;
    try {
      res = await o.conn.run(scripts.prune, keys, [o.layout.shardBase(shard), encode(th), gen, phase, ...args]);
    } catch (e) {
      throw scriptError("prune", e);
    }
    const r = arr(res);
    if (r.length === 0) throw new CorruptError("empty prune reply");
    if (buf(r[0]).length === 0) return undefined; // the thread is gone, expired or replaced
    gen = buf(r[0]);
    return r.slice(1);
  };
  const namespaces: Buffer[] = [];
  for (let cursor: Arg = "0"; ;) {
    const r = await step("namespaces", cursor, "", String(PRUNE_BUDGET), "");
    if (!r) return;
    cursor = buf(r[0]);
    namespaces.push(...r.slice(1).map(buf));
    if (str(cursor) === "0") break;
  }
  let deleted = 0;
  const refs: NsRef[] = [];
  for (const encns of namespaces) {
    let latest: Arg = "";
    let open: Arg[] = [];
    for (let cursor: Arg = ""; ;) {
      const r = await step("plan", encns, cursor, String(PRUNE_BUDGET), latest, token, ...open);
      if (!r) return;
      if (r.length < 2) throw new CorruptError("prune plan reply");
      cursor = buf(r[0]);
      latest = buf(r[1]);
      open = r.slice(2).map(buf);
      if (cursor.length === 0) break;
    }
    if (buf(latest).length === 0) continue; // a namespace emptied meanwhile, or another prune planned it anew
    for (let cursor: Arg = ""; ;) {
      const r = await step("drop", encns, cursor, String(PRUNE_BUDGET), latest, token);
      if (!r) return;
      if (r.length !== 2) throw new CorruptError("prune drop reply");
      deleted += num(r[1]);
      cursor = buf(r[0]);
      if (cursor.length === 0) break;
    }
    refs.push({ shard, enct: encode(th), gen, encns });
  }
  await collectValues(o, "prune", refs);
  await step("finish", String(deleted), "", String(PRUNE_BUDGET), "", token,
    ...o.eventSpec(["t", "pruned", "th", encode(th), "strategy", "keep_latest"]), ...namespaces);
}

/** MissingValue is copy_write.lua's MISSING: a value of the copied checkpoints was not copied. */
class MissingValue extends Error {}

/**
 * copyThread copies every checkpoint, write and value of a thread to a
 * thread that has none, in pages of at most 64 (copy_read.lua into a staging
 * generation of copy_write.lua, which becomes the target at once at commit).
 * A source deleted or replaced during the copy, or one whose values of
 * checkpoints the copy had taken were reclaimed before the copy read them (a
 * prune or deleteForRuns meanwhile), fails it with NotFoundError, as does a
 * copy idle for longer than the grace of its staging generation. A source
 * whose namespaces were all emptied before the copy read them copies
 * nothing, as a thread without checkpoints. A source that lost a key the
 * copy needs (a namespace's index, its values hash, a checkpoint hash) or
 * values its checkpoints point to fails it with DataLossError.
 */
export async function copyThread(o: Ops, source: string, target: string): Promise<void> {
  for (const th of [source, target]) {
    const bad = validateThreadID(th);
    if (bad) throw new InvalidConfigError(bad);
  }
  if (source === target) throw new InvalidConfigError(`cannot copy thread ${JSON.stringify(source)} onto itself`);
  const sShard = o.layout.shard(source);
  const tShard = o.layout.shard(target);
  let sGen: Arg = "";
  const read = async (part: string, encns: Arg, cursor: Arg, ...ids: Arg[]): Promise<Reply[] | undefined> => {
    let res: Reply;
    try {
      res = await o.conn.run(scripts.copyRead, [o.layout.head(source), o.layout.threads(sShard)],
        [o.layout.shardBase(sShard), encode(source), sGen, part, encns, cursor, String(COPY_BUDGET), ...ids]);
    } catch (e) {
      throw scriptError("copy thread: read source", e);
    }
    const r = arr(res);
    if (r.length === 0) throw new CorruptError("empty copy page");
    if (buf(r[0]).length === 0) {
      if (buf(sGen).length === 0) return undefined; // no source
      throw new NotFoundError("copy thread: the source thread was deleted or replaced during the copy");
    }
    sGen = buf(r[0]);
    if (r.length < 2) throw new CorruptError("copy page");
    return r.slice(1);
  };
  const namespaces: Buffer[] = [];
  for (let cursor: Arg = "0"; ;) {
    const r = await read("ns", "", cursor);
    if (!r) return;
    namespaces.push(...r.slice(1).map(buf));
    cursor = buf(r[0]);
    if (str(cursor) === "0") break;
  }
  if (namespaces.length === 0) return;
  const tGen = newGen();
  const write = async (phase: string, ...args: Arg[]): Promise<void> => {
    try {
      await o.conn.run(scripts.copyWrite,
        [o.layout.head(target), o.layout.threads(tShard), o.layout.all(tShard), o.layout.gc(tShard), o.layout.events(target), o.layout.feed(tShard)],
        [o.layout.shardBase(tShard), encode(target), tGen, phase, String(COPY_GRACE_MS), ...args]);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith("EXISTS")) throw new InvalidConfigError(`target thread ${JSON.stringify(target)} already has checkpoints`);
      if (e instanceof Error && e.message.startsWith("MISSING")) throw new MissingValue(e.message);
      throw scriptError("copy thread: write target", e);
    }
  };
  await write("begin");
  try {
    let count = 0;
    const runBase = o.layout.shardBase(tShard) + "run:";
    for (const encns of namespaces) {
      const before = count;
      const ids: Buffer[] = []; // the checkpoints copied, asked about when a value was not copied
      for (let cursor: Arg = ""; ;) {
        const r = await read("cps", encns, cursor);
        if (!r) throw new NotFoundError("copy thread: the source thread was deleted during the copy");
        const args: Arg[] = [encns];
        for (const c of r.slice(1)) {
          const cp = arr(c);
          const flat = arr(cp[1]);
          if (cp.length !== 2 || flat.length % 2 !== 0) throw new CorruptError("copy page checkpoint");
          ids.push(buf(cp[0]));
          args.push(buf(cp[0]), String(flat.length / 2));
          for (let i = 0; i < flat.length; i += 2) {
            let v = buf(flat[i + 1]);
            if (str(flat[i]) === "r") {
              const at = v.indexOf("}:run:");
              if (at >= 0) v = Buffer.concat([Buffer.from(runBase), v.subarray(at + "}:run:".length)]);
            }
            const f = buf(flat[i]);
            if (f[0] === 0x77 && f[1] === 0x3a) v = await resealWrite(o.enc, source, target, encns, buf(cp[0]), f, v); // "w:"
            args.push(f, v);
          }
          count++;
        }
        if (r.length > 1) await write("cps", ...args);
        cursor = buf(r[0]);
        if (cursor.length === 0) break;
      }
      // A namespace emptied since the source listed it: no checkpoint, so no value, to copy.
      if (count === before) continue;
      for (let cursor: Arg = "0"; ;) {
        const r = await read("blobs", encns, cursor);
        if (!r) throw new NotFoundError("copy thread: the source thread was deleted during the copy");
        if (r.length > 1) await write("blobs", encns, ...(await resealBlobs(o.enc, source, target, encns, r.slice(1).map(buf))));
        cursor = buf(r[0]);
        if (str(cursor) === "0") break;
      }
      // Every value the copied checkpoints point to was written (copy_write.lua's need set). One that was
      // not is lost data when a copied checkpoint still points to it (copy_read.lua's part "lost"), else
      // it was reclaimed during the copy.
      try {
        await write("check", encns);
      } catch (e) {
        if (!(e instanceof MissingValue)) throw e;
        for (let i = 0; i < ids.length; i += COPY_BUDGET) {
          try {
            await read("lost", encns, "", ...ids.slice(i, i + COPY_BUDGET));
          } catch (le) {
            if (!(le instanceof NotFoundError)) throw le;
          }
        }
        throw new NotFoundError("copy thread: values of checkpoints the copy had taken left the source during the copy " +
          `(a prune, deleteForRuns or re-put of the source ran meanwhile): copy again (${e.message})`);
      }
    }
    if (count === 0) {
      // Every namespace listed was emptied before its checkpoints were read: nothing to copy, as from a
      // thread without checkpoints.
      await write("abort").catch(() => undefined);
      return;
    }
    await write("commit", String(o.ttl), String(count), ...o.eventSpec(["t", "thread_copied", "th", encode(target), "from", encode(source)]));
  } catch (e) {
    await write("abort").catch(() => undefined);
    throw e;
  }
}

// A copy moves values to another thread, where the AAD of their place differs: it opens each with its
// source place and seals it again for its target (a fresh nonce, the current key). With encryption off,
// values move as they are, and an encrypted one fails the copy (DecryptError): moved, it could not be read.

/** resealWrite returns the value of pending-write field f of checkpoint id (pack(channel, task path, V)) as the copy writes it to target. */
async function resealWrite(enc: Encryption, source: string, target: string, encns: Buffer, id: Buffer, f: Buffer, stored: Buffer): Promise<Buffer> {
  const parts = unpack(stored, 3); // channel, task path, stored value
  if (!parts) throw new CorruptError(`copy thread: write ${JSON.stringify(f.toString("utf8"))} of checkpoint ${JSON.stringify(id.toString("utf8"))}`);
  if (!enc.on && !isSealed(parts[2]!)) return stored;
  const w = parseWriteField(f);
  if (!w) throw new CorruptError(`copy thread: write field ${JSON.stringify(f.toString("utf8"))} of checkpoint ${JSON.stringify(id.toString("utf8"))}`);
  const ns = decode(encns.toString("latin1"));
  const plain = await enc.open(writePlace(source, ns, id, w.task, w.idx, parts[0]!), parts[2]!);
  return pack(parts[0]!, parts[1]!, await enc.seal(writePlace(target, ns, id, w.task, w.idx, parts[0]!), plain));
}

/** resealBlobs returns a page of blob field/value pairs as the copy writes them to target. */
async function resealBlobs(enc: Encryption, source: string, target: string, encns: Buffer, pairs: Buffer[]): Promise<Buffer[]> {
  let ns: Buffer | undefined;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const stored = pairs[i + 1]!;
    if (stored.length === 0 || (!enc.on && !isSealed(stored))) continue; // the empty marker (and the values hash's "#" marker), or a plain copy
    const field = pairs[i]!;
    const c = cutLen(field);
    if (!c || c.rest + c.n > field.length) throw new CorruptError(`copy thread: blob field ${JSON.stringify(field.toString("utf8"))}`);
    const ch = field.subarray(c.rest, c.rest + c.n);
    const ver = field.subarray(c.rest + c.n);
    ns ??= decode(encns.toString("latin1"));
    const plain = await enc.open(channelPlace(source, ns, ch, ver), stored);
    pairs[i + 1] = await enc.seal(channelPlace(target, ns, ch, ver), plain);
  }
  return pairs;
}
