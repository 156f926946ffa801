// Walk: a List's position in one of the lex-ordered checkpoint indexes, and
// the list.lua call of its next page (Go: redissaver's walk).
import type { Address } from "./address.js";
import type { Arg } from "./conn.js";
import { CorruptError } from "./errors.js";
import { SEP, decode, encode, parseMember, validateID } from "./keys.js";

/** SCAN_BUDGET: index members a list.lua call may pass over (Go: the same budget). */
export const SCAN_BUDGET = 1024;

/** Query is a List call, as the walks read it; left counts down its limit (-1: none). */
export interface Query {
  thread: string;
  ns: string | undefined;
  id: string;
  before: string;
  filter: string[];
  left: number;
}

/** Walk is a position in one lex-ordered index (Go: redissaver's walk). */
export class Walk {
  max = "+";
  min = "-";
  gen = "";
  done = false;

  constructor(readonly key: string, readonly mode: "ns" | "thread" | "shard", readonly sb: string,
    readonly enct: string, readonly encn: string, q: Query) {
    if (q.before !== "") this.lower("(" + q.before);
    if (q.id !== "") {
      if (validateID(q.id)) this.done = true; // no stored checkpoint can have that ID
      if (mode === "ns") {
        this.lower("[" + q.id);
        this.min = "[" + q.id;
      } else {
        this.lower("(" + q.id + "\x01");
        this.min = "[" + q.id + SEP;
      }
    }
  }

  lower(b: string): void {
    if (this.max === "+") {
      this.max = b;
      return;
    }
    const c = latinCompare(b.slice(1), this.max.slice(1));
    if (c < 0 || (c === 0 && b[0] === "(")) this.max = b;
  }

  /** call builds the list.lua call of the next page, returning what (ARGV[10]: "0" whole, "1" members, "2" values out of Lua when large). */
  call(q: Query, page: number, what: "0" | "1" | "2", refreshMs: number): { keys: Arg[]; args: Arg[] } {
    const nsOnly = this.mode === "shard" && q.ns !== undefined ? "=" + encode(q.ns) : "";
    return {
      keys: [this.key],
      args: [this.mode, this.sb, this.enct, this.encn, this.gen, Buffer.from(this.max, "latin1"), Buffer.from(this.min, "latin1"),
        String(page), String(Math.max(SCAN_BUDGET, page)), what, nsOnly, String(refreshMs), String(q.filter.length / 2), ...q.filter],
    };
  }

  /** save and restore: the walk's position, to read a page again. */
  save(): { max: string; min: string; gen: string; done: boolean } {
    return { max: this.max, min: this.min, gen: this.gen, done: this.done };
  }

  restore(p: { max: string; min: string; gen: string; done: boolean }): void {
    ({ max: this.max, min: this.min, gen: this.gen, done: this.done } = p);
  }

  advance(next: string, gen: string): void {
    if (this.gen === "") this.gen = gen;
    if (next === "") {
      this.done = true;
      return;
    }
    this.lower("(" + next);
  }
}

/** Members, IDs and encoded names are ASCII: compared as Redis compares bytes. */
export function latinCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * byteOrder compares strings by their UTF-8 bytes, as the Go saver sorts: UTF-8 keeps the order of
 * code points, so it compares code points, without encoding either string (a lone surrogate counts
 * as U+FFFD, which is what encoding it to UTF-8 writes).
 */
export function byteOrder(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = codePointAt(a, i);
    const y = codePointAt(b, j);
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

/** codePointAt is the code point at s[i] as UTF-8 encoding reads it: a lone surrogate is U+FFFD. */
function codePointAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return c;
  if (c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
  }
  return 0xfffd;
}

/** parseListMember is the address of a member of the index a walk of mode reads. */
export function parseListMember(q: Query, mode: string, m: string): Address {
  if (mode === "ns") return { id: m, thread: q.thread, ns: q.ns ?? "" };
  if (mode === "thread") {
    const at = m.indexOf(SEP);
    if (at < 0) throw new CorruptError(`thread index member ${JSON.stringify(m)}`);
    return { id: m.slice(0, at), thread: q.thread, ns: decode(m.slice(at + 1)).toString("utf8") };
  }
  const p = parseMember(m);
  return { id: p.id, thread: p.thread.toString("utf8"), ns: p.ns.toString("utf8") };
}
