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
import { channelPlace } from "./encryption.js";
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
  const acc = new Map<string, { seed?: Buffer; seedVersion?: Buffer; segs: Reply[][] }>(open.map((ch) => [ch, { segs: [] }]));
  // With encryption on, the script answers the places of values too (their AAD's parts): a seed's version, the
  // checkpoint of each group of writes.
  const places = o.enc.on;
  let target = target0;
  let gen = "";
  let cursor = "";
  const seen = new Set<string>();
  for (;;) {
    let res: Reply;
    try {
      res = await o.conn.run(scripts.deltaHistory, [o.layout.head(thread), o.layout.threads(shard)],
        [o.layout.shardBase(shard), encode(thread), encode(ns), target, cursor, gen, String(DELTA_BUDGET), places ? "1" : "0", ...open]);
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
      const seed = parts[0];
      if (places && Array.isArray(seed)) {
        if (seed.length !== 2 || !Buffer.isBuffer(seed[0]) || !Buffer.isBuffer(seed[1])) throw new CorruptError("delta history seed");
        a.seed = seed[0];
        a.seedVersion = seed[1];
      } else if (!places && Buffer.isBuffer(seed)) a.seed = seed;
      else if (seed === null) still.push(ch);
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
    // Each list: its seed, then per checkpoint (nearest the target first) its count n (with places, then its id)
    // and n field/value pairs.
    const head = places ? 2 : 1;
    const groups: { seg: Reply[]; at: number; n: number; id: string }[] = [];
    for (const seg of a.segs) {
      for (let i = 1; i < seg.length; ) {
        const n = seg[i];
        if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > (seg.length - i - head) / 2 || (places && !Buffer.isBuffer(seg[i + 1]))) {
          throw new CorruptError(`delta history writes: count ${String(n)} at ${i} of ${seg.length} entries`);
        }
        groups.push({ seg, at: i + head, n, id: places ? str(seg[i + 1]) : "" });
        i += head + 2 * n;
      }
    }
    const writes: CheckpointPendingWrite[] = [];
    for (let g = groups.length - 1; g >= 0; g--) {
      const { seg, at, n, id } = groups[g]!;
      const ws: StoredWrite[] = [];
      for (let i = at; i < at + 2 * n; i += 2) {
        if (!Buffer.isBuffer(seg[i]) || !Buffer.isBuffer(seg[i + 1])) throw new CorruptError("delta history write");
        ws.push(await o.decodeWrite(thread, ns, id, seg[i] as Buffer, seg[i + 1] as Buffer));
      }
      for (const w of sortWrites(ws)) writes.push([w.task, w.channel, w.value]);
    }
    const h: DeltaChannelHistory = { writes };
    if (a.seed !== undefined) h.seed = await decodeValue(o.serde, await o.enc.open(channelPlace(thread, ns, ch, a.seedVersion ?? ""), a.seed));
    out[ch] = h;
  }
  return out;
}
