// Encryption at rest on redis-server (docs/storage-format.md, "Encrypted
// values"): every operation round trips with it on and stores no value in the
// clear; a ciphertext moved by hand (HGET/HSET on the real keys) to another
// thread, namespace, channel, version, checkpoint or write index, or with a bit
// flipped, fails with DecryptError; plaintext is refused, and read under
// readPlaintext; keys rotate; a key function serves a ring.
import { BaseCheckpointSaver, DeltaSnapshot, MemorySaver, emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { createSecretKey } from "node:crypto";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { RESP_TYPES, createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { channelAAD, writeAAD } from "../src/aad.js";
import { unpack } from "../src/codec.js";
import { DecryptError, Keyring, RedcheckSaver, type RedcheckSaverOptions } from "../src/index.js";
import { openEnvelope, parseEnvelope } from "../src/seal.js";

const url = inject("redisUrl");
const client = createClient({ url });
const bin = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
const run = Math.random().toString(36).slice(2, 8);
let n = 0;
const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);
const ring1 = Keyring.fromKeys("k1", { k1 });
const md = (step: number, extra: Record<string, unknown> = {}) => ({ source: "loop" as const, step, parents: {}, ...extra });
/** MARK is in every value written: found in the clear anywhere in Redis, a value was stored unencrypted. */
const MARK = "plain-text-marker-7f3a";

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.close();
});

function saver(o: RedcheckSaverOptions = {}, prefix = `enc-${run}-${n++}`): RedcheckSaver {
  return new RedcheckSaver(client, { prefix, ...o });
}

/** put writes the checkpoint of step i of a thread, channels a (every step), b (step 0) and big (> 32 KiB, step 1). */
async function put(s: BaseCheckpointSaver, thread: string, id: string, i: number, parent: Checkpoint | undefined, ns = ""): Promise<Checkpoint> {
  const values: Record<string, unknown> = { ...(parent?.channel_values ?? {}), a: `${MARK} a${i}` };
  const versions: Record<string, string | number> = { ...(parent?.channel_versions ?? {}), a: s.getNextVersion(parent?.channel_versions.a as number | undefined) };
  const fresh: Record<string, string | number> = { a: versions.a! };
  if (i === 0) {
    values.b = { note: `${MARK} b`, n: [1, 2, 3] };
    values.msgs = new DeltaSnapshot([`${MARK} seed`]);
    versions.b = fresh.b = versions.msgs = fresh.msgs = s.getNextVersion(undefined);
  } else {
    versions.msgs = fresh.msgs = s.getNextVersion(versions.msgs as number);
    delete values.msgs;
  }
  if (i === 1) {
    values.big = `${MARK} ` + "x".repeat(40 << 10);
    versions.big = fresh.big = s.getNextVersion(undefined);
  }
  const cp: Checkpoint = { ...emptyCheckpoint(), id, channel_values: values, channel_versions: versions };
  const cfg = { configurable: { thread_id: thread, checkpoint_ns: ns, ...(parent ? { checkpoint_id: parent.id } : {}) } };
  await s.put(cfg, cp, md(i, { run_id: `run-${thread}-${i}` }), fresh);
  return cp;
}

const IDS = Array.from({ length: 8 }, (_, i) => uuid6(i));

/** chain puts count checkpoints (ids IDS), each with pending writes (the first sent before its checkpoint's put). */
async function chain(s: BaseCheckpointSaver, thread: string, count: number, ns = ""): Promise<string[]> {
  let prev: Checkpoint | undefined;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = IDS[i]!;
    const cfg = { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id } };
    const early = i === 0 ? s.putWrites(cfg, [["msgs", `${MARK} early`]], "task-early") : Promise.resolve();
    prev = await put(s, thread, id, i, prev, ns);
    await early;
    await s.putWrites(cfg, [["msgs", `${MARK} w${i}`], ["a", `${MARK} wa${i}`], ["__error__", { message: `${MARK} boom` }]], `task-${i}`, "~path");
    ids.push(id);
  }
  return ids;
}

/** readAll reads every tuple of the thread's namespace by list, and each by getTuple, with the delta history of msgs. */
async function readAll(s: BaseCheckpointSaver, thread: string, ns = "") {
  const listed: unknown[] = [];
  for await (const t of s.list({ configurable: { thread_id: thread, checkpoint_ns: ns } })) {
    listed.push([t.checkpoint.channel_values, t.pendingWrites, t.metadata]);
    const one = await s.getTuple(t.config);
    expect([one!.checkpoint.channel_values, one!.pendingWrites, one!.metadata]).toEqual(listed[listed.length - 1]);
  }
  const hist = await s.getDeltaChannelHistory({ config: { configurable: { thread_id: thread, checkpoint_ns: ns } }, channels: ["msgs", "a"] });
  return { listed, hist };
}

/** rawValues is every stored value of the prefix: blob values, and the V of every pending write (checkpoint and early hashes). */
async function rawValues(prefix: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
    for (const k of keys) {
      if ((await client.type(k)) !== "hash") continue;
      const h = await bin.hGetAll(k) as unknown as Record<string, Buffer>;
      for (const [f, v] of Object.entries(h)) {
        if (k.endsWith(":blobs") && f !== "#" && v.length > 0) out.push(v);
        if ((k.includes(":cp:") || k.includes(":early:")) && f.startsWith("w:")) out.push(unpack(v, 3)![2]!);
      }
    }
  }
  return out;
}

/** anyClear reports whether MARK appears in the clear in any key of the prefix (hashes, streams, sets, strings). */
async function anyClear(prefix: string): Promise<boolean> {
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
    for (const k of keys) {
      const dump = await client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).dump(k);
      if (dump && Buffer.from(dump as unknown as Buffer).includes(MARK)) return true;
    }
  }
  return false;
}

async function gen(s: RedcheckSaver, thread: string): Promise<string> {
  return (await client.hGet(s.layout.head(thread), "g"))!;
}

async function refused(p: Promise<unknown> | (() => Promise<unknown>)): Promise<DecryptError> {
  const e = await (typeof p === "function" ? p() : p).then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(DecryptError);
  return e as DecryptError;
}

const tupleOf = (thread: string, id?: string, ns = "") => ({ configurable: { thread_id: thread, checkpoint_ns: ns, ...(id ? { checkpoint_id: id } : {}) } });

describe("encryption at rest", () => {
  it("round trips every operation, stores every value encrypted and nothing in the clear", { timeout: 60_000 }, async () => {
    const plain = saver();
    const enc = saver({ encryption: ring1, compression: { threshold: 64 }, events: { includeValues: true } });
    for (const s of [plain, enc]) {
      await chain(s, "t", 4);
      await chain(s, "t", 2, "sub:1");
    }
    // The same answers as a saver without encryption, for every read.
    for (const ns of ["", "sub:1"]) expect(await readAll(enc, "t", ns)).toEqual(await readAll(plain, "t", ns));
    const big = await enc.getTuple(tupleOf("t", IDS[1]));
    expect(big!.checkpoint.channel_values.big).toBe(`${MARK} ` + "x".repeat(40 << 10));
    const all: string[] = [];
    for await (const t of enc.list({})) all.push(t.checkpoint.id);
    expect(all).toHaveLength(6);
    // Every value, channel and write, early or not, compressed or not, is sealed with k1.
    const stored = await rawValues(enc.layout.prefix);
    expect(stored.length).toBeGreaterThan(20);
    for (const v of stored) expect(parseEnvelope(v).keyID).toBe("k1");
    expect(await anyClear(enc.layout.prefix)).toBe(false);
    expect(await anyClear(plain.layout.prefix)).toBe(true);

    // copyThread re-seals for the target; the copy reads alike, the source stays readable.
    await enc.copyThread("t", "t-copy");
    for (const ns of ["", "sub:1"]) expect(await readAll(enc, "t-copy", ns)).toEqual(await readAll(plain, "t", ns));
    // A fork to another thread: a put of a read checkpoint with its values.
    const head = (await enc.getTuple(tupleOf("t")))!;
    await enc.put(tupleOf("fork"), head.checkpoint, head.metadata!, head.checkpoint.channel_versions);
    expect((await enc.getTuple(tupleOf("fork")))!.checkpoint.channel_values).toEqual(head.checkpoint.channel_values);
    // prune, deleteForRuns, deleteThread keep what stays readable.
    await enc.deleteForRuns(["run-t-copy-3"]);
    await enc.prune(["t-copy"], "keep_latest");
    const kept = await readAll(enc, "t-copy");
    expect(kept.listed.length).toBeGreaterThan(0);
    await enc.deleteThread("t-copy");
    expect(await enc.getTuple(tupleOf("t-copy"))).toBeUndefined();
    expect(await anyClear(enc.layout.prefix)).toBe(false);
  });

  it("events carry the ciphertext, with vv:<channel> the version for its AAD", async () => {
    const s = saver({ encryption: ring1, events: { includeValues: true } });
    await chain(s, "ev", 2);
    const entries = await bin.xRange(s.layout.events("ev"), "-", "+");
    const key = createSecretKey(k1);
    let opened = 0;
    for (const e of entries) {
      const m = e.message as unknown as Record<string, Buffer>;
      const t = m.t!.toString();
      for (const [f, v] of Object.entries(m)) {
        if (!f.startsWith("v:") || v.length === 0) continue;
        if (t === "checkpoint") {
          const ch = f.slice(2);
          expect(m[`vv:${ch}`], f).toBeDefined();
          const plain = openEnvelope(key, parseEnvelope(v), channelAAD(s.layout.prefix, "ev", "", ch, m[`vv:${ch}`]!));
          expect(plain[0]! >= 0x31 && plain[0]! <= 0x39 || plain[0] === 0x7a).toBe(true);
        } else {
          const [channel, , value] = unpack(v, 3)!;
          const pos = Number(f.slice(2));
          const idx = channel!.toString() === "__error__" ? -1 : pos;
          openEnvelope(key, parseEnvelope(value!), writeAAD(s.layout.prefix, "ev", "", m.id!, m.task!, idx, channel!));
        }
        opened++;
      }
    }
    expect(opened).toBeGreaterThanOrEqual(8);
    expect(await anyClear(s.layout.prefix)).toBe(false);
  });

  describe("a ciphertext moved by hand fails with DecryptError", () => {
    /** setup writes threads t and u (the same checkpoint ids and versions) in namespaces "" and n. */
    async function setup() {
      const s = saver({ encryption: ring1 });
      for (const th of ["t", "u"]) {
        for (const ns of ["", "n"]) {
          for (let i = 0; i < 2; i++) {
            const cp: Checkpoint = { ...emptyCheckpoint(), id: IDS[i]!, channel_values: { x: `${MARK} ${th}${ns}${i}`, y: `${MARK} y${i}` },
              channel_versions: { x: `v${i}`, y: `v${i}` } };
            const cfg = { configurable: { thread_id: th, checkpoint_ns: ns, ...(i > 0 ? { checkpoint_id: IDS[i - 1]! } : {}) } };
            await s.put(cfg, cp, md(i), { x: `v${i}`, y: `v${i}` });
            await s.putWrites(tupleOf(th, cp.id, ns), [["x", `${MARK} w0`], ["y", `${MARK} w1`]], "task");
          }
        }
      }
      const blobs = async (th: string, ns = "") => s.layout.blobs(th, await gen(s, th), ns);
      const cpKey = async (th: string, i: number, ns = "") => s.layout.checkpoint(th, await gen(s, th), ns, IDS[i]!);
      return { s, blobs, cpKey };
    }
    const field = (ch: string, ver: string) => `${ch.length}:${ch}${ver}`;

    it.each([
      ["another thread", async (k: Keys) => [await k.blobs("u"), field("x", "v1"), await k.blobs("t"), field("x", "v1")]],
      ["another namespace", async (k: Keys) => [await k.blobs("t", "n"), field("x", "v1"), await k.blobs("t"), field("x", "v1")]],
      ["another channel", async (k: Keys) => [await k.blobs("t"), field("y", "v1"), await k.blobs("t"), field("x", "v1")]],
      ["another version", async (k: Keys) => [await k.blobs("t"), field("x", "v0"), await k.blobs("t"), field("x", "v1")]],
    ] as [string, (k: Keys) => Promise<string[]>][])("channel value from %s", async (_name, where) => {
      const k = await setup();
      const [fromKey, fromField, toKey, toField] = await where(k);
      expect(await k.s.getTuple(tupleOf("t", IDS[1]))).toBeDefined();
      await bin.hSet(toKey!, toField!, (await bin.hGet(fromKey!, fromField!))!);
      const e = await refused(k.s.getTuple(tupleOf("t", IDS[1])));
      expect(e.message).toContain('channel "x" version "v1"');
      expect(e.message).not.toContain(MARK);
      await refused(async () => {
        for await (const _ of k.s.list(tupleOf("t"))) void _;
      });
    });

    it.each([
      ["another write index", async (k: Keys) => [await k.cpKey("t", 1), "w:4:task:1", await k.cpKey("t", 1), "w:4:task:0"]],
      ["another checkpoint", async (k: Keys) => [await k.cpKey("t", 0), "w:4:task:0", await k.cpKey("t", 1), "w:4:task:0"]],
      ["another thread", async (k: Keys) => [await k.cpKey("u", 1), "w:4:task:0", await k.cpKey("t", 1), "w:4:task:0"]],
      ["another namespace", async (k: Keys) => [await k.cpKey("t", 1, "n"), "w:4:task:0", await k.cpKey("t", 1), "w:4:task:0"]],
    ] as [string, (k: Keys) => Promise<string[]>][])("pending write from %s", async (_name, where) => {
      const k = await setup();
      const [fromKey, fromField, toKey, toField] = await where(k);
      // The write's value is pack(channel, path, V): the V moved, the channel kept (else the AAD's channel differs too).
      const from = unpack((await bin.hGet(fromKey!, fromField!))!, 3)!;
      const to = unpack((await bin.hGet(toKey!, toField!))!, 3)!;
      await bin.hSet(toKey!, toField!, Buffer.concat([Buffer.from(`${to[0]!.length}:`), to[0]!, Buffer.from(`${to[1]!.length}:`), to[1]!, from[2]!]));
      const e = await refused(k.s.getTuple(tupleOf("t", IDS[1])));
      expect(e.message).toMatch(/write \d of task "task"/);
    });

    it("a flipped bit, in a value or a write, and a changed key id", async () => {
      const k = await setup();
      const key = await k.blobs("t");
      const good = (await bin.hGet(key, field("x", "v1")))!;
      for (const at of [good.length - 1, good.length - 20, 3 + 2 + 1]) {
        const bad = Buffer.from(good);
        bad[at]! ^= 0x01;
        await bin.hSet(key, field("x", "v1"), bad);
        await refused(k.s.getTuple(tupleOf("t", IDS[1])));
      }
      const renamed = Buffer.from(good);
      renamed[4] = "2".charCodeAt(0); // key id "k1" -> "k2", which the ring lacks
      await bin.hSet(key, field("x", "v1"), renamed);
      expect((await refused(k.s.getTuple(tupleOf("t", IDS[1])))).message).toContain('no key "k2"');
      await bin.hSet(key, field("x", "v1"), good);
      expect((await k.s.getTuple(tupleOf("t", IDS[1])))!.checkpoint.channel_values.x).toBe(`${MARK} t1`);
      const cp = await k.cpKey("t", 1);
      const w = (await bin.hGet(cp, "w:4:task:0"))!;
      const bad = Buffer.from(w);
      bad[bad.length - 5]! ^= 0x80;
      await bin.hSet(cp, "w:4:task:0", bad);
      await refused(k.s.getTuple(tupleOf("t", IDS[1])));
    });
  });

  it("plaintext is refused with encryption on, read under readPlaintext; an encrypted value is refused without a keyring", async () => {
    const prefix = `enc-${run}-${n++}`;
    const before = saver({}, prefix);
    await chain(before, "old", 2);
    const strict = saver({ encryption: ring1 }, prefix);
    const e = await refused(strict.getTuple(tupleOf("old")));
    expect(e.message).toContain("plaintext");
    await refused(strict.getDeltaChannelHistory({ config: tupleOf("old"), channels: ["msgs"] }));
    const migrating = saver({ encryption: ring1, readPlaintext: true }, prefix);
    const want = await readAll(before, "old");
    expect(await readAll(migrating, "old")).toEqual(want);
    // New writes are encrypted: the plain saver refuses them, the strict one reads them; the migrating one both.
    await chain(migrating, "new", 2);
    await refused(before.getTuple(tupleOf("new")));
    await refused(before.getDeltaChannelHistory({ config: tupleOf("new"), channels: ["msgs"] }));
    expect(await readAll(strict, "new")).toEqual(await readAll(migrating, "new"));
    // A copy re-seals plaintext under readPlaintext: the copy reads without it.
    await migrating.copyThread("old", "old-copy");
    expect(await readAll(strict, "old-copy")).toEqual(want);
    // A saver without a keyring refuses to copy encrypted values (moved, they could not be read).
    await refused(before.copyThread("new", "new-copy"));
    expect(await before.getTuple(tupleOf("new-copy"))).toBeUndefined();
  });

  it("rotates keys: k1, then {k2 current, k1}: both read; a ring without k1 refuses the old values only", async () => {
    const prefix = `enc-${run}-${n++}`;
    await chain(saver({ encryption: ring1 }, prefix), "a", 2);
    const rotated = saver({ encryption: Keyring.fromKeys("k2", { k2, k1 }) }, prefix);
    await chain(rotated, "b", 2);
    const ids = async (th: string) => {
      const s = saver({}, prefix);
      const g = await gen(s, th);
      return new Set((await bin.hVals(s.layout.blobs(th, g, ""))).filter((v) => v.length > 1).map((v) => parseEnvelope(v).keyID));
    };
    expect(await ids("a")).toEqual(new Set(["k1"]));
    expect(await ids("b")).toEqual(new Set(["k2"]));
    const a = await readAll(rotated, "a");
    const b = await readAll(rotated, "b");
    expect(a.listed).toHaveLength(2);
    const onlyK2 = saver({ encryption: Keyring.fromKeys("k2", { k2 }) }, prefix);
    expect(await readAll(onlyK2, "b")).toEqual(b);
    expect((await refused(onlyK2.getTuple(tupleOf("a")))).message).toContain('no key "k1"');
    // A copy re-seals with the current key.
    await rotated.copyThread("a", "a2");
    expect(await ids("a2")).toEqual(new Set(["k2"]));
    expect(await readAll(onlyK2, "a2")).toEqual(a);
  });

  it("spans carry no key and no value: a DecryptError is of kind serialization, its message withheld", async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const prefix = `enc-${run}-${n++}`;
    await chain(saver({ encryption: ring1, tracerProvider }, prefix), "t", 2);
    await chain(saver({}, prefix), "plain", 1);
    await refused(saver({ encryption: ring1, tracerProvider }, prefix).getTuple(tupleOf("plain")));
    const spans = exporter.getFinishedSpans();
    const failed = spans.filter((sp) => sp.attributes["error.type"] !== undefined);
    expect(failed.map((sp) => sp.attributes["error.type"])).toEqual(["serialization"]);
    const shown = JSON.stringify(spans.map((sp) => [sp.name, sp.attributes, sp.events, sp.status]));
    expect(shown).toContain("withheld");
    for (const secret of [MARK, k1.toString("hex"), k1.toString("base64"), k1.toString("latin1")]) expect(shown).not.toContain(secret);
  });

  it("copyFrom another saver into an encrypting one stores every value sealed, and a second copy skips", async () => {
    const source = new MemorySaver();
    await chain(source, "m", 3);
    await chain(source, "m", 2, "sub:1");
    const s = saver({ encryption: ring1 });
    expect((await s.copyFrom(source, ["m"])).threadsCopied).toBe(1);
    // The same checkpoints and writes (list() gives no task path, so writes are compared as sets).
    const norm = (listed: unknown[]) => listed.map((t) => {
      const [values, writes, metadata] = t as [unknown, unknown[], unknown];
      return [values, writes.map((w) => JSON.stringify(w)).sort(), metadata];
    });
    for (const ns of ["", "sub:1"]) expect(norm((await readAll(s, "m", ns)).listed)).toEqual(norm((await readAll(source, "m", ns)).listed));
    for (const v of await rawValues(s.layout.prefix)) expect(parseEnvelope(v).keyID).toBe("k1");
    expect(await anyClear(s.layout.prefix)).toBe(false);
    expect((await s.copyFrom(source, ["m"])).threadsSkipped).toBe(1);
  });

  it("a ring a key function serves (a KMS) asks once per key id", async () => {
    const asked: string[] = [];
    const kms = await Keyring.fromFunction("k2", async (id) => {
      asked.push(id);
      return ({ k1, k2 } as Record<string, Buffer>)[id];
    });
    const prefix = `enc-${run}-${n++}`;
    await chain(saver({ encryption: ring1 }, prefix), "a", 2);
    const s = saver({ encryption: kms }, prefix);
    await chain(s, "b", 2);
    await readAll(s, "a");
    await readAll(s, "b");
    expect(asked).toEqual(["k2", "k1"]);
  });
});

type Keys = { s: RedcheckSaver; blobs: (th: string, ns?: string) => Promise<string>; cpKey: (th: string, i: number, ns?: string) => Promise<string> };
