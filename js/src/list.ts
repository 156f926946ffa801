// List: the checkpoints of one namespace, one thread or every thread, newest
// first, a page of list.lua at a time (Go: redissaver's List).
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { Address } from "./address.js";
import { arr, buf, str, type Reply } from "./conn.js";
import { CorruptError, scriptError } from "./errors.js";
import { SEP, encode, parseMember } from "./keys.js";
import { ValueGone, readValues, type CheckpointRead } from "./outoflua.js";
import type { ReadOps } from "./readops.js";
import { scripts } from "./scripts.js";
import { paged } from "./telemetry.js";
import { Walk, latinCompare, parseListMember, type Query } from "./walk.js";

function pageOf(o: ReadOps, q: Query): number {
return q.left >= 0 && q.left < o.pageSize ? q.left : o.pageSize;
}

/**
 * firstGen returns a test of whether a member of a shard index is of the generation of its thread that a
 * listing of every thread met first (recording it when the thread is new to it). A thread deleted and written again (or copied onto) while
 * the listing runs has a new generation, which may hold the ids already listed: its checkpoints are skipped, as a
 * listing of that thread alone ends at a change of generation, and so no checkpoint is listed twice.
 */
function firstGen(): (member: string) => boolean {
  const gens = new Map<string, string>(); // encoded thread -> generation
  return (member) => {
    const [, enct, , gen] = member.split(SEP);
    const g = gens.get(enct!);
    if (g === undefined) gens.set(enct!, gen!);
    return g === undefined || g === gen;
  };
}

/** listOne lists one thread, or every thread of a saver with one shard, a page of list.lua at a time. */
export async function* listOne(o: ReadOps, q: Query): AsyncGenerator<CheckpointTuple> {
  let w: Walk;
  if (q.thread !== "") {
    const sb = o.layout.shardBase(o.layout.shard(q.thread));
    w = q.ns !== undefined
      ? new Walk(o.layout.head(q.thread), "ns", sb, encode(q.thread), encode(q.ns), q)
      : new Walk(o.layout.head(q.thread), "thread", sb, encode(q.thread), "", q);
  } else {
    w = new Walk(o.layout.all(0), "shard", o.layout.shardBase(0), "", "", q);
  }
  let what: "0" | "2" = "2";
  const first = firstGen();
  while (!w.done && q.left !== 0) {
    const at = w.save();
    const call = w.call(q, pageOf(o, q), what, o.refreshMs());
    let res: Reply;
    try {
      res = await o.conn.run(scripts.list, call.keys, call.args);
    } catch (e) {
      throw scriptError("list", e);
    }
    paged();
    const r = arr(res);
    if (r.length < 2) throw new CorruptError(`list reply of ${r.length} items`);
    const gen = str(r[1]);
    w.advance(str(r[0]), gen);
    const items = r.slice(2).map((it) => {
      const parts = arr(it);
      if (parts.length !== 4) throw new CorruptError("list item");
      const m = str(parts[0]);
      const a = parseListMember(q, w.mode, m);
      const read: CheckpointRead = { id: a.id, thread: a.thread, ns: a.ns, gen: w.mode === "shard" ? parseMember(m).gen : gen, flat: parts[1]!, values: parts[2]! };
      return { a, read, extra: parts[3]!, member: m };
    }).filter((it) => w.mode !== "shard" || first(it.member));
    try {
      await readValues(o.conn, o.layout, items.map((it) => it.read));
    } catch (e) {
      if (!(e instanceof ValueGone)) throw e;
      // A value went between the two round trips (or was lost): the script reads the page whole.
      w.restore(at);
      what = "0";
      continue;
    }
    what = "2";
    for (const it of items) {
      yield await o.decodeTuple(it.a.thread, it.a.ns, it.a.id, it.read.flat, it.read.values, it.extra);
      if (q.left > 0) q.left--;
      if (q.left === 0) return;
    }
  }
}

/** listMerged lists every thread of a saver with several shards: it merges the shards' next members, newest first, then reads them. */
export async function* listMerged(o: ReadOps, q: Query): AsyncGenerator<CheckpointTuple> {
  const walks = Array.from({ length: o.layout.shards }, (_, n) =>
    Object.assign(new Walk(o.layout.all(n), "shard", o.layout.shardBase(n), "", "", q), { buf: [] as string[] }));
  const first = firstGen();
  while (q.left !== 0) {
    const page = pageOf(o, q);
    const pending = walks.filter((w) => w.buf.length === 0 && !w.done);
    const replies = await Promise.all(pending.map((w) => {
      const call = w.call(q, page, "1", o.refreshMs());
      return o.conn.run(scripts.list, call.keys, call.args).catch((e) => {
        throw scriptError("list", e);
      });
    }));
    if (pending.length > 0) paged();
    replies.forEach((res, i) => {
      const r = arr(res);
      if (r.length < 2) throw new CorruptError(`list reply of ${r.length} items`);
      pending[i]!.advance(str(r[0]), str(r[1]));
      for (const m of r.slice(2)) pending[i]!.buf.push(buf(m).toString("latin1"));
    });
    const batch: string[] = [];
    merge: while (batch.length < page) {
      let best: (typeof walks)[number] | undefined;
      for (const w of walks) {
        if (w.buf.length === 0) {
          if (!w.done) break merge;
          continue;
        }
        if (!best || latinCompare(w.buf[0]!, best.buf[0]!) > 0) best = w;
      }
      if (!best) break;
      const m = best.buf.shift()!;
      if (first(m)) batch.push(m);
    }
    if (batch.length === 0) {
      if (walks.every((w) => w.done && w.buf.length === 0)) return;
      continue;
    }
    const addrs = batch.map((m) => {
      const p = parseMember(m);
      return { id: p.id, thread: p.thread.toString("utf8"), ns: p.ns.toString("utf8") };
    });
    let got: { a: Address; read: CheckpointRead; extra: Reply }[];
    try {
      got = await readAddrs(o, addrs, false);
    } catch (e) {
      if (!(e instanceof ValueGone)) throw e;
      got = await readAddrs(o, addrs, true); // a value went in between: read them whole
    }
    for (const it of got) {
      yield await o.decodeTuple(it.a.thread, it.a.ns, it.a.id, it.read.flat, it.read.values, it.extra);
      if (q.left > 0) q.left--;
      if (q.left === 0) return;
    }
  }
}

/** readAddrs reads checkpoints by get_tuple.lua, together, then the values it left out (readValues); deleted ones are left out. */
async function readAddrs(o: ReadOps, addrs: Address[], whole: boolean): Promise<{ a: Address; read: CheckpointRead; extra: Reply }[]> {
  const got = await Promise.all(addrs.map((a) => {
    const c = o.getTupleCall(a, whole);
    return o.conn.run(scripts.getTuple, c.keys, c.args).catch((e) => {
      throw scriptError("list", e);
    });
  }));
  const out: { a: Address; read: CheckpointRead; extra: Reply }[] = [];
  got.forEach((res, i) => {
    if (res === null) return; // deleted since the first round trip
    const r = arr(res);
    if (r.length !== 5) throw new CorruptError(`get tuple reply of ${r.length} items`);
    out.push({ a: addrs[i]!, read: { id: str(r[0]), thread: addrs[i]!.thread, ns: addrs[i]!.ns, gen: str(r[4]), flat: r[1]!, values: r[2]! }, extra: r[3]! });
  });
  await readValues(o.conn, o.layout, out.map((it) => it.read));
  return out;
}
