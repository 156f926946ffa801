// The length-prefixed encodings of the format (docs/storage-format.md,
// "Checkpoint hash fields"): pack, blob fields, write fields, joined names.
// Lengths are in bytes, decimal, without leading zeros.
import { type Bytes, toBytes } from "./keys.js";

/**
 * pack writes len(part) ":" part for every part but the last, then the last part as it is. The
 * result is allocated once and each part written into it once (a value is copied once, not three
 * times: it is the bulk of every stored value and pending write).
 */
export function pack(...parts: Bytes[]): Buffer {
  const sizes = parts.map((p) => (typeof p === "string" ? Buffer.byteLength(p, "utf8") : p.length));
  let total = 0;
  for (let i = 0; i < parts.length; i++) total += sizes[i]! + (i < parts.length - 1 ? String(sizes[i]).length + 1 : 0);
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    if (i < parts.length - 1) at += out.write(`${sizes[i]}:`, at, "latin1");
    const p = parts[i]!;
    if (typeof p === "string") {
      at += out.write(p, at, "utf8");
    } else {
      out.set(p, at);
      at += p.length;
    }
  }
  return out;
}

/** cutLen reads a decimal length and its ":" at the start of b. */
export function cutLen(b: Buffer, from = 0): { n: number; rest: number } | undefined {
  let i = from;
  let n = 0;
  while (i < b.length && b[i]! >= 0x30 && b[i]! <= 0x39) {
    if (i > from && b[from] === 0x30) return undefined; // leading zero
    n = n * 10 + (b[i]! - 0x30);
    if (n > b.length) return undefined;
    i++;
  }
  if (i === from || i >= b.length || b[i] !== 0x3a) return undefined;
  return { n, rest: i + 1 };
}

/** unpack reverses pack of n parts; undefined when b is malformed. */
export function unpack(b: Buffer, n: number): Buffer[] | undefined {
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < n - 1; i++) {
    const c = cutLen(b, at);
    if (!c || c.rest + c.n > b.length) return undefined;
    out.push(b.subarray(c.rest, c.rest + c.n));
    at = c.rest + c.n;
  }
  out.push(b.subarray(at));
  return out;
}

/** blobField names a channel version in a namespace's blob hash: len(channel) ":" channel version. */
export function blobField(channel: Bytes, version: string): Buffer {
  const c = Buffer.from(toBytes(channel));
  return Buffer.concat([Buffer.from(`${c.length}:`), c, Buffer.from(version, "utf8")]);
}

/** writeField names a pending write in a checkpoint hash: "w:" len(task) ":" task ":" idx. */
export function writeField(taskID: Bytes, idx: number): Buffer {
  const t = Buffer.from(toBytes(taskID));
  return Buffer.concat([Buffer.from(`w:${t.length}:`), t, Buffer.from(`:${idx}`)]);
}

export function parseWriteField(f: Buffer): { task: Buffer; idx: number } | undefined {
  if (f.length < 2 || f[0] !== 0x77 || f[1] !== 0x3a) return undefined;
  const c = cutLen(f, 2);
  if (!c || c.rest + c.n >= f.length || f[c.rest + c.n] !== 0x3a) return undefined;
  const idxText = f.subarray(c.rest + c.n + 1).toString("latin1");
  if (!/^-?\d+$/.test(idxText)) return undefined;
  return { task: f.subarray(c.rest, c.rest + c.n), idx: Number(idxText) };
}

/** joinNames writes len(name) ":" name for every name (the event field "ch"). */
export function joinNames(names: Bytes[]): Buffer {
  return Buffer.concat(names.map((n) => pack(n, "")));
}

/** WRITES_IDX of the special channels, as LangGraph and checkpoint.WriteIndex define them. */
export const SPECIAL_WRITE_INDEX: Readonly<Record<string, number>> = {
  __error__: -1,
  __scheduled__: -2,
  __interrupt__: -3,
  __resume__: -4,
};

export function writeIndex(channel: string, position: number): number {
  return SPECIAL_WRITE_INDEX[channel] ?? position;
}
