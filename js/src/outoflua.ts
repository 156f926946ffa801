// Values out of Lua (docs/storage-format.md, "Values out of Lua"): get_tuple.lua
// (ARGV[6] "1") and list.lua (ARGV[10] "2") answer false in place of values
// that hold more than 32 KiB, and the client reads them by plain HMGET, each
// once, so that Redis never hashes them into Lua (Go: redissaver/values.go).
import type { Conn, Reply } from "./conn.js";
import { arr, buf, str } from "./conn.js";
import { CorruptError } from "./errors.js";
import type { Layout } from "./keys.js";

/** lib.lua's inline_bytes: the bytes of values up to which a script still returns them itself. */
export const INLINE_BYTES = 32 << 10;

/** One checkpoint as a script returned it: where it lives, its hash, its values (null: left out of Lua). */
export interface CheckpointRead {
  id: string;
  thread: string;
  ns: string;
  gen: string;
  flat: Reply;
  values: Reply;
}

/** ValueGone: a value left out of the script was missing at the HMGET (deleted since, or lost): read again whole. */
export class ValueGone extends Error {
  constructor() {
    super("redcheck: a value left out of the script is gone");
  }
}

/**
 * readValues reads the values the script left out (null) of each read, by
 * plain HMGET of their values hashes, each blob field once, each followed on
 * its connection by an HGET of the call token of every checkpoint it reads
 * the values of, all sent together (node-redis pipelines them). It sets each
 * read's values, aligned with the "c:" fields of its hash. A value missing, or
 * a checkpoint whose token changed or is gone, throws ValueGone.
 */
export async function readValues(conn: Conn, layout: Layout, reads: CheckpointRead[]): Promise<void> {
  // Per values hash: the blob fields to read, each once, and the checkpoints whose values they are, with the
  // call token ("o") the script read of each: read in the same transaction, a token unchanged tells that the
  // checkpoint still points to those values, which no reclaim then deletes, nor any Put replaces.
  const byKey = new Map<string, { fields: Buffer[]; at: Map<string, number>; cps: string[]; tokens: (string | undefined)[] }>();
  const refs: { key: string; idx: number[] }[] = [];
  reads.forEach((r, i) => {
    if (r.values !== null) return;
    const flat = arr(r.flat);
    if (flat.length % 2 !== 0) throw new CorruptError(`hash reply of ${flat.length} items`);
    const key = layout.blobs(r.thread, r.gen, r.ns);
    let want = byKey.get(key);
    if (!want) {
      want = { fields: [], at: new Map(), cps: [], tokens: [] };
      byKey.set(key, want);
    }
    const idx: number[] = [];
    let token: string | undefined;
    for (let j = 0; j < flat.length; j += 2) {
      const f = buf(flat[j]);
      if (f.length === 1 && f[0] === 0x6f) token = str(flat[j + 1]); // "o"
      if (f.length < 2 || f[0] !== 0x63 || f[1] !== 0x3a) continue; // "c:"
      const ch = f.subarray(2);
      const field = Buffer.concat([Buffer.from(`${ch.length}:`, "latin1"), ch, buf(flat[j + 1])]);
      const name = field.toString("latin1");
      let k = want.at.get(name);
      if (k === undefined) {
        k = want.fields.length;
        want.at.set(name, k);
        want.fields.push(field);
      }
      idx.push(k);
    }
    want.cps.push(layout.checkpoint(r.thread, r.gen, r.ns, r.id));
    want.tokens.push(token);
    refs[i] = { key, idx };
  });
  if (byKey.size === 0) return;
  // A hash with no value to read (its checkpoints name no channel) is not read: HMGET needs a field.
  const keys = [...byKey.keys()].filter((k) => byKey.get(k)!.fields.length > 0);
  const got = new Map<string, Reply[]>();
  for (const [k, want] of byKey) if (want.fields.length === 0) got.set(k, []);
  // Each HMGET, then the HGETs of the tokens, sent on one connection in that order (the keys share a slot): a
  // token unchanged after the HMGET names the checkpoint the script read, whose values the HMGET read (only
  // the same Put call, sent again, puts a checkpoint with the same token, and the same values). Not in a
  // transaction, as the Go client sends them: node-redis maps no reply of EXEC to Buffers, and values are bytes.
  const replies = await Promise.all(keys.map((k) => {
    const want = byKey.get(k)!;
    return Promise.all([conn.send(k, ["HMGET", k, ...want.fields]), ...want.cps.map((cp) => conn.send(cp, ["HGET", cp, "o"]))]);
  }));
  keys.forEach((k, i) => {
    const [values, ...tokens] = replies[i]!;
    // A checkpoint deleted or put again since the script read it: its values may have been deleted, and their
    // fields written again (another value, the empty marker) by later Puts.
    const want = byKey.get(k)!;
    tokens.forEach((t, j) => {
      if (t === null || t === undefined || want.tokens[j] === undefined || str(t) !== want.tokens[j]) throw new ValueGone();
    });
    got.set(k, arr(values));
  });
  reads.forEach((r, i) => {
    const ref = refs[i];
    if (!ref) return;
    const vals = got.get(ref.key)!;
    if (vals.length !== byKey.get(ref.key)!.fields.length) throw new CorruptError(`${vals.length} values read for ${byKey.get(ref.key)!.fields.length} asked`);
    r.values = ref.idx.map((k) => {
      const v = vals[k];
      if (v === null || v === undefined) throw new ValueGone();
      return v;
    });
  });
}

/** valuesBytes is the bytes of a reply's values. */
export function valuesBytes(values: Reply): number {
  let n = 0;
  for (const v of arr(values)) if (Buffer.isBuffer(v)) n += v.length;
  return n;
}
