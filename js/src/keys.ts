// Keys of the redcheck storage format, version 2 (docs/storage-format.md).
// Every function here is pinned by testdata/format/keys.json.
import { randomBytesFromPool } from "./random.js";
import { InvalidConfigError } from "./errors.js";

export const FORMAT_VERSION = 3;
export const DEFAULT_SHARDS = 16;
export const MAX_SHARDS = 16384;
export const MAX_THREAD_ID_LEN = 4096;
export const MAX_NAMESPACE_LEN = 4096;
export const MAX_CHECKPOINT_ID_LEN = 128;
export const MAX_RUN_ID_LEN = 1024;
export const MAX_GEN_LEN = 16;
export const SEP = "\x00";

/** A byte string: JS strings are taken as their UTF-8 bytes. */
export type Bytes = string | Uint8Array;

export function toBytes(s: Bytes): Uint8Array {
  return typeof s === "string" ? Buffer.from(s, "utf8") : s;
}

const HEX = "0123456789ABCDEF";
const SAFE = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  const ch = String.fromCharCode(c);
  SAFE[c] = /[A-Za-z0-9]/.test(ch) || "-_.~@+=,;!$&'()/|^<>#".includes(ch) ? 1 : 0;
}

/** encode escapes every byte outside [A-Za-z0-9] and -_.~@+=,;!$&'()/|^<># as %XX. Injective. */
export function encode(s: Bytes): string {
  const b = toBytes(s);
  let out = "";
  for (const c of b) out += SAFE[c] ? String.fromCharCode(c) : "%" + HEX[c >> 4] + HEX[c & 15];
  return out;
}

/** decode reverses encode; it refuses what encode cannot have written. */
export function decode(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== 0x25) {
      if (c > 255 || !SAFE[c]) throw new InvalidConfigError(`malformed key: byte ${JSON.stringify(s[i])} must be escaped`);
      out.push(c);
      continue;
    }
    const h = HEX.indexOf(s[i + 1] ?? "x");
    const l = HEX.indexOf(s[i + 2] ?? "x");
    if (i + 2 >= s.length || h < 0 || l < 0) throw new InvalidConfigError(`malformed key: bad escape at ${i} of ${JSON.stringify(s)}`);
    const v = (h << 4) | l;
    if (SAFE[v]) throw new InvalidConfigError(`malformed key: needless escape ${s.slice(i, i + 3)}`);
    out.push(v);
    i += 2;
  }
  return Buffer.from(out);
}

/** FNV-1a, 32 bits. */
export function fnv32a(s: Bytes): number {
  let h = 0x811c9dc5;
  for (const c of toBytes(s)) {
    h ^= c;
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h >>> 0;
}

/** validateID checks a checkpoint ID: 1–128 bytes of printable ASCII without % : { } * ? [ ] \ . */
export function validateID(id: string): string | undefined {
  if (id.length === 0 || id.length > MAX_CHECKPOINT_ID_LEN) return `checkpoint id of ${id.length} bytes (1 to ${MAX_CHECKPOINT_ID_LEN})`;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || "%:{}*?[]\\".includes(id[i]!)) return `checkpoint id ${JSON.stringify(id)} holds ${JSON.stringify(id[i])}`;
  }
  return undefined;
}

export function validateThreadID(t: Bytes): string | undefined {
  const n = toBytes(t).length;
  if (n === 0 || n > MAX_THREAD_ID_LEN) return `thread id of ${n} bytes (1 to ${MAX_THREAD_ID_LEN})`;
  return undefined;
}

export function validateNamespace(ns: Bytes): string | undefined {
  const n = toBytes(ns).length;
  if (n > MAX_NAMESPACE_LEN) return `namespace of ${n} bytes (at most ${MAX_NAMESPACE_LEN})`;
  return undefined;
}

export function validateRunID(r: Bytes): string | undefined {
  const n = toBytes(r).length;
  if (n === 0 || n > MAX_RUN_ID_LEN) return `run id of ${n} bytes (1 to ${MAX_RUN_ID_LEN})`;
  return undefined;
}

export function validateGen(g: string): string | undefined {
  if (g.length === 0 || g.length > MAX_GEN_LEN || !/^[a-z2-7]+$/.test(g)) return `generation ${JSON.stringify(g)}`;
  return undefined;
}

const GEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** newGen returns a fresh generation (or call) token: 13 random characters of [a-z2-7]. */
export function newGen(): string {
  const b = randomBytesFromPool(13);
  let s = "";
  for (const c of b) s += GEN_ALPHABET[c & 31];
  return s;
}

/** member is the entry of a checkpoint in the shard's "all" index and in a run index. */
export function member(id: string, threadID: Bytes, ns: Bytes, gen: string): string {
  return id + SEP + encode(threadID) + SEP + encode(ns) + SEP + gen;
}

export function parseMember(m: string): { id: string; thread: Buffer; ns: Buffer; gen: string } {
  const parts = m.split(SEP);
  if (parts.length !== 4 || validateID(parts[0]!) || validateGen(parts[3]!)) {
    throw new InvalidConfigError(`malformed index member ${JSON.stringify(m)}`);
  }
  return { id: parts[0]!, thread: decode(parts[1]!), ns: decode(parts[2]!), gen: parts[3]! };
}

/** Layout builds the keys of one prefix (docs/storage-format.md, "Keys"). */
export class Layout {
  readonly prefix: string;
  readonly shards: number;

  constructor(prefix: string, shards = 0) {
    const p = Buffer.from(prefix, "utf8");
    if (p.length === 0 || p.length > 128) throw new InvalidConfigError("prefix must be 1 to 128 bytes");
    for (const c of p) {
      if (c === 0x7b || c === 0x7d || c < 0x21 || c === 0x7f) {
        throw new InvalidConfigError(`prefix ${JSON.stringify(prefix)} holds byte ${c}`);
      }
    }
    if (shards === 0) shards = DEFAULT_SHARDS;
    if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
      throw new InvalidConfigError(`shards must be 1 to ${MAX_SHARDS}`);
    }
    this.prefix = prefix;
    this.shards = shards;
  }

  shard(threadID: Bytes): number {
    return fnv32a(threadID) % this.shards;
  }

  shardBase(n: number): string {
    return `${this.prefix}:{${n}}:`;
  }
  meta(): string {
    return this.prefix + ":meta";
  }
  threads(n: number): string {
    return this.shardBase(n) + "threads";
  }
  all(n: number): string {
    return this.shardBase(n) + "all";
  }
  run(n: number, runID: Bytes): string {
    return this.shardBase(n) + "run:" + encode(runID);
  }
  gc(n: number): string {
    return this.shardBase(n) + "gc";
  }
  feed(n: number): string {
    return this.shardBase(n) + "feed";
  }
  /** The pending writes a putWrites stored for a checkpoint before it existed (Go: Layout.Early). */
  early(threadID: Bytes, ns: Bytes, id: string): string {
    return this.head(threadID) + ":early:" + encode(ns) + ":" + id;
  }
  /** The shard's registry of early writes (Go: Layout.EarlyIndex). */
  earlyIndex(n: number): string {
    return this.shardBase(n) + "early";
  }
  head(threadID: Bytes): string {
    return this.shardBase(this.shard(threadID)) + "t:" + encode(threadID);
  }
  events(threadID: Bytes): string {
    return this.head(threadID) + ":events";
  }
  genBase(threadID: Bytes, gen: string): string {
    return this.head(threadID) + ":g:" + gen;
  }
  namespaces(threadID: Bytes, gen: string): string {
    return this.genBase(threadID, gen) + ":ns";
  }
  threadIndex(threadID: Bytes, gen: string): string {
    return this.genBase(threadID, gen) + ":idx";
  }
  nsBase(threadID: Bytes, gen: string, ns: Bytes): string {
    return this.genBase(threadID, gen) + ":n:" + encode(ns);
  }
  index(threadID: Bytes, gen: string, ns: Bytes): string {
    return this.nsBase(threadID, gen, ns) + ":idx";
  }
  blobs(threadID: Bytes, gen: string, ns: Bytes): string {
    return this.nsBase(threadID, gen, ns) + ":blobs";
  }
  checkpoint(threadID: Bytes, gen: string, ns: Bytes, id: string): string {
    return this.nsBase(threadID, gen, ns) + ":cp:" + id;
  }
}
