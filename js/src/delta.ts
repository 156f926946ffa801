// getDeltaChannelHistory's walk up the parent chain, in steps of
// delta_history.lua (Go: redissaver's DeltaChannelHistory).
import type { CheckpointPendingWrite, DeltaChannelHistory } from "@langchain/langgraph-checkpoint";
import { arr, str, type Reply } from "./conn.js";
import { CorruptError, scriptError } from "./errors.js";
import { encode } from "./keys.js";
import type { ReadOps } from "./readops.js";
import { scripts } from "./scripts.js";
import { sortWrites, type StoredWrite } from "./stored.js";
import { decodeValue } from "./values.js";
import { byteOrder } from "./walk.js";

/** DELTA_BUDGET: ancestors one delta_history.lua call may visit (Go: the same budget). */
const DELTA_BUDGET = 250;

/**
 * deltaChannelHistory collects, for each channel, the writes from the
 * checkpoint target0 of thread and ns (its latest when "") up to the nearest
 * ancestor holding a value for it, whose value is the seed.
 */
export async function deltaChannelHistory(o: ReadOps, thread: string, ns: string, target0: string, channels: string[]): Promise<Record<string, DeltaChannelHistory>> {
  const out: Record<string, DeltaChannelHistory> = {};
  const shard = o.layout.shard(thread);
  let open = [...new Set(channels)].sort(byteOrder);
  // Per channel: the seed, and its lists of writes (one per script call, in call order: nearest the target first).
  const acc = new Map<string, { seed?: Buffer; segs: Reply[][] }>(open.map((ch) => [ch, { segs: [] }]));
  let target = target0;
  let gen = "";
  let cursor = "";
  const seen = new Set<string>();
  for (;;) {
    let res: Reply;
    try {
      res = await o.conn.run(scripts.deltaHistory, [o.layout.head(thread), o.layout.threads(shard)],
        [o.layout.shardBase(shard), encode(thread), encode(ns), target, cursor, gen, String(DELTA_BUDGET), "0", ...open]);
    } catch (e) {
      throw scriptError("delta channel history", e);
    }
    if (res === null) {
      // No such checkpoint (first step only): empty histories, as BaseCheckpointSaver's walk answers.
      for (const ch of channels) out[ch] = { writes: [] };
      return out;
    }
    const r = arr(res);
    if (r.length !== 3 + open.length) throw new CorruptError(`delta history reply of ${r.length} entries for ${open.length} channels`);
    target = str(r[0]);
    gen = str(r[1]);
    const next = str(r[2]);
    const still: string[] = [];
    open.forEach((ch, i) => {
      const parts = r[3 + i];
      if (!Array.isArray(parts) || parts.length === 0) throw new CorruptError("delta history entry");
      const a = acc.get(ch)!;
      if (parts.length > 1) a.segs.push(parts);
      if (Buffer.isBuffer(parts[0])) a.seed = parts[0];
      else if (parts[0] === null) still.push(ch);
      else throw new CorruptError("delta history seed");
    });
    if (next === "" || still.length === 0) break;
    if (seen.has(next)) throw scriptError("delta channel history", new Error(`CYCLE the parent chain cycles through ${next}`));
    seen.add(next);
    open = still;
    cursor = next;
  }
  for (const ch of channels) {
    const a = acc.get(ch)!;
    // Each list: its seed, then per checkpoint (nearest the target first) its count n and n field/value pairs.
    const groups: { seg: Reply[]; at: number; n: number }[] = [];
    for (const seg of a.segs) {
      for (let i = 1; i < seg.length; ) {
        const n = seg[i];
        if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > (seg.length - i - 1) / 2) {
          throw new CorruptError(`delta history writes: count ${String(n)} at ${i} of ${seg.length} entries`);
        }
        groups.push({ seg, at: i + 1, n });
        i += 1 + 2 * n;
      }
    }
    const writes: CheckpointPendingWrite[] = [];
    for (let g = groups.length - 1; g >= 0; g--) {
      const { seg, at, n } = groups[g]!;
      const ws: StoredWrite[] = [];
      for (let i = at; i < at + 2 * n; i += 2) {
        if (!Buffer.isBuffer(seg[i]) || !Buffer.isBuffer(seg[i + 1])) throw new CorruptError("delta history write");
        ws.push(await o.decodeWrite(seg[i] as Buffer, seg[i + 1] as Buffer));
      }
      for (const w of sortWrites(ws)) writes.push([w.task, w.channel, w.value]);
    }
    const h: DeltaChannelHistory = { writes };
    if (a.seed !== undefined) h.seed = await decodeValue(o.serde, a.seed);
    out[ch] = h;
  }
  return out;
}
