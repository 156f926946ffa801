// RedcheckSaver beyond the validation suite, on redis-server: errors and
// their codes, options, TTL, the multi-step operations (deleteThread's
// reclaim, deleteForRuns, prune, copyThread, delta history past 250
// ancestors) and their bound on Redis (a concurrent PING loop and SLOWLOG).
import { DeltaSnapshot, emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { RESP_TYPES, createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DataLossError, InvalidCheckpointError, InvalidConfigError, PrefixResetError, RedcheckSaver } from "../src/index.js";
import { INLINE_BYTES } from "../src/outoflua.js";

const url = inject("redisUrl");
const client = createClient({ url });
const run = Math.random().toString(36).slice(2, 8);
let n = 0;
const fresh = (o: ConstructorParameters<typeof RedcheckSaver>[1] = {}) => new RedcheckSaver(client, { prefix: `t-${run}-${n++}`, ...o });
const md = (step: number, extra: Record<string, unknown> = {}) => ({ source: "loop" as const, step, parents: {}, ...extra });

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.close();
});

/** chain puts count checkpoints on a thread, each writing "count" and one pending write to "messages". */
async function chain(s: RedcheckSaver, thread: string, count: number, opts: { ns?: string; run?: (i: number) => string } = {}) {
  let cfg: any = { configurable: { thread_id: thread, checkpoint_ns: opts.ns ?? "" } };
  let prev: Checkpoint = emptyCheckpoint();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const version = s.getNextVersion(prev.channel_versions.count as number | undefined);
    const values: Record<string, unknown> = { ...prev.channel_values, count: i };
    // "messages" is a delta channel: a new version every step, a value (its seed) in the first checkpoint only.
    const mv = s.getNextVersion(prev.channel_versions.messages as number | undefined);
    const versions: Record<string, string | number> = { ...prev.channel_versions, count: version, messages: mv };
    const newVersions: Record<string, string | number> = { count: version, messages: mv };
    if (i === 0) values.messages = new DeltaSnapshot(["seed"]);
    const cp: Checkpoint = { ...emptyCheckpoint(), id: uuid6(i), channel_values: values, channel_versions: versions };
    cfg = await s.put(cfg, cp, md(i, opts.run ? { run_id: opts.run(i) } : {}), newVersions);
    await s.putWrites(cfg, [["messages", `w${i}`]], `task-${i}`);
    ids.push(cp.id);
    prev = { ...cp, channel_values: { count: i } };
  }
  return ids;
}

async function scanKeys(pattern: string): Promise<string[]> {
  let cursor = "0";
  const keys: string[] = [];
  do {
    const r = await client.scan(cursor, { MATCH: pattern, COUNT: 1000 });
    cursor = String(r.cursor);
    keys.push(...r.keys);
  } while (cursor !== "0");
  return keys;
}

async function countKeys(pattern: string): Promise<number> {
  return (await scanKeys(pattern)).length;
}

describe("errors", () => {
  it("reads back absent a channel version the checkpoint names but neither writes nor finds stored", async () => {
    const s = fresh();
    const cp = { ...emptyCheckpoint(), channel_values: { a: 1 }, channel_versions: { a: 1 } };
    const cfg = await s.put({ configurable: { thread_id: "t" } }, cp, md(0), {});
    expect((await s.getTuple(cfg))!.checkpoint.channel_values).toEqual({});
  });

  it("a fork (a copy of a checkpoint beside it, as update_state with __copy__ puts) reads the copied values", async () => {
    const s = fresh();
    const p = { ...emptyCheckpoint(), id: uuid6(1), channel_values: { a: "a1", b: "b1" }, channel_versions: { a: 1, b: 1 } };
    const pc = await s.put({ configurable: { thread_id: "fork" } }, p, md(0), { a: 1, b: 1 });
    const x = { ...emptyCheckpoint(), id: uuid6(2), channel_values: { a: "a2", b: "b1" }, channel_versions: { a: 2, b: 1 } };
    const xc = await s.put(pc, x, md(1), { a: 2 });
    const saved = (await s.getTuple(xc))!;
    const fc = await s.put(saved.parentConfig!, { ...saved.checkpoint, id: uuid6(3) }, md(2), {});
    expect((await fresh({ prefix: s.layout.prefix }).getTuple(fc))!.checkpoint.channel_values).toEqual({ a: "a2", b: "b1" });
  });

  it("maps the script error codes", async () => {
    const s = fresh();
    const cp = emptyCheckpoint();
    const cfg = await s.put({ configurable: { thread_id: "t" } }, cp, md(0), {});
    // A re-put naming another parent: REPARENT.
    const other = { ...emptyCheckpoint(), id: uuid6(9) };
    await s.put(cfg, other, md(1), {});
    await expect(s.put({ configurable: { thread_id: "t", checkpoint_id: uuid6(8) } }, other, md(1), {})).rejects.toThrow(InvalidCheckpointError);
    await expect(s.putWrites({ configurable: { thread_id: "t" } }, [["a", 1]], "task")).rejects.toThrow(InvalidConfigError);
    // A lost value: DATALOSS, never a tuple with missing values.
    const v = fresh();
    const c2 = await v.put({ configurable: { thread_id: "lost" } }, { ...emptyCheckpoint(), channel_values: { a: 1 }, channel_versions: { a: 1 } }, md(0), { a: 1 });
    const blobKeys: string[] = [];
    let cursor = "0";
    do {
      const r = await client.scan(cursor, { MATCH: `${v.layout.prefix}:*:blobs`, COUNT: 1000 });
      cursor = String(r.cursor);
      blobKeys.push(...r.keys);
    } while (cursor !== "0");
    expect(blobKeys).toHaveLength(1);
    await client.del(blobKeys[0]!);
    await expect(v.getTuple(c2)).rejects.toThrow(DataLossError);
  });

  it("validates options and refuses a prefix written with another shard count", async () => {
    expect(() => fresh({ prefix: "a{b" })).toThrow(InvalidConfigError);
    expect(() => fresh({ refreshOnRead: true })).toThrow(InvalidConfigError);
    expect(() => fresh({ pageSize: 0 })).toThrow(InvalidConfigError);
    const s = fresh({ shards: 4 });
    await s.setup();
    await expect(new RedcheckSaver(client, { prefix: s.layout.prefix, shards: 8 }).setup()).rejects.toThrow(InvalidConfigError);
  });

  it("refuses a prefix that lost its meta key while its registries list threads, and completes one whose creation stopped", async () => {
    const s = fresh({ shards: 4 });
    await s.setup();
    const meta = s.layout.meta();
    await client.del(meta); // markers only: a creation that stopped before the meta key
    await new RedcheckSaver(client, { prefix: s.layout.prefix, shards: 4 }).setup();
    expect(await client.exists(meta)).toBe(1);
    await s.put({ configurable: { thread_id: "t" } }, emptyCheckpoint(), md(0), {});
    await client.del(meta);
    for (const shards of [4, 1]) {
      await expect(new RedcheckSaver(client, { prefix: s.layout.prefix, shards }).setup()).rejects.toThrow(DataLossError);
    }
    expect(await client.exists(meta)).toBe(0);
  });

  it("refuses put without thread_id and a non-integer step", async () => {
    const s = fresh();
    await expect(s.put({ configurable: {} }, emptyCheckpoint(), md(0), {})).rejects.toThrow(InvalidConfigError);
    await expect(s.put({ configurable: { thread_id: "t" } }, emptyCheckpoint(), md(0.5), {})).rejects.toThrow(InvalidCheckpointError);
    await expect(s.put({ configurable: { thread_id: "t" } }, emptyCheckpoint(), { ...md(0), step: null } as any, {})).rejects.toThrow(InvalidCheckpointError);
  });
});

describe("lost data", () => {
  it("a prefix emptied (Redis restarted without persistence) is told once with PrefixResetError, then works", async () => {
    const s = fresh();
    const thread = { configurable: { thread_id: "before" } };
    await s.put(thread, { ...emptyCheckpoint(), id: uuid6(1) }, md(0), {});
    await client.del(await scanKeys(`${s.layout.prefix}:*`));
    const after = { configurable: { thread_id: "after" } };
    const err = await s.put(after, { ...emptyCheckpoint(), id: uuid6(2) }, md(0), {}).catch((e) => e);
    expect(err).toBeInstanceOf(PrefixResetError);
    expect(err).toBeInstanceOf(DataLossError);
    const cfg = await s.put(after, { ...emptyCheckpoint(), id: uuid6(3) }, md(0), {});
    expect((await s.getTuple(after))!.checkpoint.id).toBe(cfg.configurable!.checkpoint_id);
    expect(await s.getTuple(thread)).toBeUndefined();
    const feeds = await Promise.all(Array.from({ length: s.layout.shards }, (_, n) => client.xRange(s.layout.feed(n), "-", "+")));
    expect(feeds.every((f) => f.some((e) => e.message.t === "prefix_reset"))).toBe(true);
  });

  it("with acceptEviction, a prefix that looks emptied is only reported, until reinitialize()", async () => {
    const s = fresh({ acceptEviction: true });
    await s.put({ configurable: { thread_id: "before" } }, { ...emptyCheckpoint(), id: uuid6(1) }, md(0), {});
    expect(await s.reinitialize()).toBe(false);
    await client.del(await scanKeys(`${s.layout.prefix}:*`));
    const after = { configurable: { thread_id: "after" } };
    const err = await s.put(after, { ...emptyCheckpoint(), id: uuid6(2) }, md(0), {}).catch((e) => e);
    expect(err).toBeInstanceOf(DataLossError);
    expect(err).not.toBeInstanceOf(PrefixResetError);
    expect(await s.reinitialize()).toBe(true);
    await s.put(after, { ...emptyCheckpoint(), id: uuid6(3) }, md(0), {});
  });

  it("each key of a thread lost in turn: every read, and a copy, answers what it did or DataLossError", async () => {
    const s = fresh();
    const root = await chain(s, "victim", 3, { run: () => "r" });
    await chain(s, "victim", 3, { ns: "sub:1" });
    const latest = { configurable: { thread_id: "victim", checkpoint_ns: "" } };
    const byId = { configurable: { thread_id: "victim", checkpoint_ns: "", checkpoint_id: root[1] } };
    let copies = 0;
    const reads: Record<string, () => Promise<unknown>> = {
      latest: async () => (await s.getTuple(latest))?.checkpoint,
      "latest sub": async () => (await s.getTuple({ configurable: { thread_id: "victim", checkpoint_ns: "sub:1" } }))?.checkpoint,
      "by id": async () => { const t = await s.getTuple(byId); return [t?.checkpoint, t?.pendingWrites]; },
      list: async () => { const ids: string[] = []; for await (const t of s.list({ configurable: { thread_id: "victim" } })) ids.push(t.checkpoint.id); return ids; },
      "list all": async () => { const ids: string[] = []; for await (const t of s.list({})) ids.push(t.checkpoint.id); return ids; },
      delta: async () => s.getDeltaChannelHistory({ config: latest, channels: ["messages"] }),
      copy: async () => {
        const target = `victim-copy-${copies++}`;
        await s.copyThread("victim", target);
        const ids: string[] = [];
        for await (const t of s.list({ configurable: { thread_id: target } })) ids.push(t.checkpoint.id);
        await s.deleteThread(target);
        return ids;
      },
    };
    const readAll = async () => {
      const out: Record<string, string> = {};
      const errs: Record<string, unknown> = {};
      for (const [name, read] of Object.entries(reads)) {
        try {
          out[name] = JSON.stringify(await read());
        } catch (e) {
          errs[name] = e;
        }
      }
      return { out, errs };
    };
    const before = await readAll();
    expect(before.errs).toEqual({});
    const shard = s.layout.shardBase(s.layout.shard("victim"));
    const keys = [...await client.keys(s.layout.head("victim") + "*"), shard + "threads", shard + "all", ...await client.keys(shard + "run:*")]
      .filter((k) => !k.endsWith(":events")).sort();
    expect(keys.length).toBeGreaterThan(10);
    const bin = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    for (const key of keys) {
      const dump = (await bin.dump(key))!;
      await client.del(key);
      const got = await readAll();
      for (const [name, e] of Object.entries(got.errs)) {
        expect(e, `${name} after losing ${key}`).toBeInstanceOf(DataLossError);
      }
      for (const [name, v] of Object.entries(got.out)) {
        expect(v, `${name} after losing ${key}`).toBe(before.out[name]);
      }
      // No read depends on the shard's registry (writes and Go's check see its loss), nor on a run index
      // (only deleteForRuns reads one, and a lost one cannot be told from a run never written).
      if (!key.includes("}:run:") && !key.endsWith("}:threads")) expect(Object.keys(got.errs).length, `a read noticing the loss of ${key}`).toBeGreaterThan(0);
      await client.del(key);
      await client.restore(key, 0, dump);
    }
  });
});

describe("writes sent ahead of their checkpoint", () => {
  // LangGraph.js chains its puts but not its writes: a checkpoint's writes
  // may reach the saver before its put (and the first checkpoint's before
  // the thread exists). They wait for the put by this saver, then go.
  it("sent before the put of their checkpoint are kept for it, in one call each, and shown on no other checkpoint", async () => {
    const s = fresh();
    const c0 = { ...emptyCheckpoint(), id: uuid6(0) };
    const c1 = { ...emptyCheckpoint(), id: uuid6(1) };
    const cfg0 = { configurable: { thread_id: "race", checkpoint_ns: "", checkpoint_id: c0.id } };
    const cfg1 = { configurable: { thread_id: "race", checkpoint_ns: "", checkpoint_id: c1.id } };
    const chain = s.put({ configurable: { thread_id: "race" } }, c0, md(0), {}).then((c) => s.put(c, c1, md(1), {}));
    const w0 = s.putWrites(cfg0, [["a", 0]], "task-0");
    const w1 = s.putWrites(cfg1, [["a", 1]], "task-1");
    await Promise.all([chain, w0, w1]);
    expect((await s.getTuple(cfg0))!.pendingWrites).toEqual([["task-0", "a", 0]]);
    expect((await s.getTuple(cfg1))!.pendingWrites).toEqual([["task-1", "a", 1]]);
    // Writes to a checkpoint never put: not shown until it is.
    const later = { configurable: { thread_id: "race", checkpoint_ns: "", checkpoint_id: uuid6(5) } };
    await s.putWrites(later, [["a", 5]], "task-5");
    expect(await s.getTuple(later)).toBeUndefined();
    expect((await s.getTuple({ configurable: { thread_id: "race" } }))!.pendingWrites).toEqual([["task-1", "a", 1]]);
  });
});

describe("options", () => {
  it("ttl: a thread expires after its lease", async () => {
    const s = fresh({ ttl: 300 });
    const cfg = await s.put({ configurable: { thread_id: "t" } }, emptyCheckpoint(), md(0), {});
    expect(await s.getTuple(cfg)).toBeDefined();
    await new Promise((r) => setTimeout(r, 600));
    expect(await s.getTuple(cfg)).toBeUndefined();
    expect(await s.sweep()).toBeGreaterThan(0);
  });

  it("sends a script's source when Redis lacks it (NOSCRIPT), before it ran", async () => {
    const s = fresh();
    await s.put({ configurable: { thread_id: "t" } }, emptyCheckpoint(), md(0), {});
    await client.sendCommand(["SCRIPT", "FLUSH"]);
    const cfg = await s.put({ configurable: { thread_id: "t" } }, { ...emptyCheckpoint(), id: uuid6(5) }, md(1), {});
    expect((await s.getTuple(cfg))!.checkpoint.id).toBe(cfg.configurable!.checkpoint_id);
  });

  it("reads what a checkpoint names whatever the order of the puts (a child put before its parent)", async () => {
    const s = fresh();
    const thread = { configurable: { thread_id: "ooo" } };
    const [r0, r1, r2] = [uuid6(1), uuid6(2), uuid6(3)];
    const root = await s.put(thread, { ...emptyCheckpoint(), id: r0, channel_values: { a: "A1", b: "B1" }, channel_versions: { a: 1, b: 1 } }, md(-1), { a: 1, b: 1 });
    // Checkpoint 2 names a@3 and b@2 and writes a@3; it is put before checkpoint 1, which writes b@2.
    await s.put({ configurable: { thread_id: "ooo", checkpoint_ns: "", checkpoint_id: r1 } },
      { ...emptyCheckpoint(), id: r2, channel_values: { a: "A3" }, channel_versions: { a: 3, b: 2 } }, md(1), { a: 3 });
    await s.put(root, { ...emptyCheckpoint(), id: r1, channel_values: { b: "B2" }, channel_versions: { a: 1, b: 2 } }, md(0), { b: 2 });
    for (const saver of [s, fresh({ prefix: s.layout.prefix })]) {
      expect((await saver.getTuple(thread))!.checkpoint.channel_values).toEqual({ a: "A3", b: "B2" });
      expect((await saver.getTuple({ configurable: { thread_id: "ooo", checkpoint_id: r2 } }))!.checkpoint.channel_values).toEqual({ a: "A3", b: "B2" });
    }
  });

  it("replaces a checkpoint in place when the config names its own id, keeping its parent and pending writes", async () => {
    const s = fresh();
    const thread = { configurable: { thread_id: "inplace" } };
    const [r0, r1] = [uuid6(1), uuid6(2)];
    const root = await s.put(thread, { ...emptyCheckpoint(), id: r0, channel_values: { a: 1 }, channel_versions: { a: 1 } }, md(-1), { a: 1 });
    const c1 = await s.put(root, { ...emptyCheckpoint(), id: r1, channel_values: { a: 2 }, channel_versions: { a: 2 } }, md(0), { a: 2 });
    await s.putWrites(c1, [["w", "pending"]], "task");
    const loaded = (await s.getTuple(c1))!;
    const again = { ...loaded.checkpoint, versions_seen: { __interrupt__: { a: 2 } } };
    await s.put(c1, again, { ...loaded.metadata!, step: 0 } as any, {});
    const after = (await s.getTuple(c1))!;
    expect(after.parentConfig?.configurable?.checkpoint_id).toBe(r0);
    expect(after.checkpoint.versions_seen).toEqual({ __interrupt__: { a: 2 } });
    expect(after.checkpoint.channel_values).toEqual({ a: 2 });
    expect(after.pendingWrites).toHaveLength(1);
    const listed = [];
    for await (const t of s.list(thread)) listed.push(t.checkpoint.id);
    expect(listed).toEqual([r1, r0]);
    const missing = uuid6(9);
    await expect(s.put({ configurable: { thread_id: "inplace", checkpoint_id: missing } }, { ...emptyCheckpoint(), id: missing }, md(1), {}))
      .rejects.toThrow(InvalidCheckpointError);
  });

  it("fromUrl owns its client", async () => {
    const s = await RedcheckSaver.fromUrl(url, { prefix: `t-${run}-url` });
    const cfg = await s.put({ configurable: { thread_id: "t" } }, emptyCheckpoint(), md(0), {});
    expect(await s.getTuple(cfg)).toBeDefined();
    await s.close();
  });

  it("list across every thread merges the shards newest first, with limit, before and filter", async () => {
    const s = fresh({ shards: 8, pageSize: 3 });
    const all: string[] = [];
    for (let t = 0; t < 6; t++) all.push(...(await chain(s, `thread-${t}`, 4)));
    const ids: string[] = [];
    for await (const tp of s.list({})) ids.push(tp.checkpoint.id);
    expect(ids).toEqual([...all].sort().reverse());
    const limited: string[] = [];
    for await (const tp of s.list({}, { limit: 5, before: { configurable: { checkpoint_id: ids[2] } } })) limited.push(tp.checkpoint.id);
    expect(limited).toEqual(ids.slice(3, 8));
    const step2: string[] = [];
    for await (const tp of s.list({}, { filter: { step: 2 } })) step2.push(tp.checkpoint.id);
    expect(step2).toHaveLength(6);
  });
});

describe("multi-step operations", () => {
  it("deleteThread reclaims a thread of more than one step, keeping other threads", async () => {
    const s = fresh();
    await chain(s, "big", 300);
    await chain(s, "other", 3);
    await s.deleteThread("big");
    expect(await s.getTuple({ configurable: { thread_id: "big" } })).toBeUndefined();
    // Only the thread's event stream remains (it outlives the deletion).
    expect(await countKeys(`${s.layout.prefix}:*:t:big*`)).toBe(1);
    expect(await s.getTuple({ configurable: { thread_id: "other" } })).toBeDefined();
    await s.deleteThread("never-written");
  });

  it("getDeltaChannelHistory walks more than 250 ancestors in steps", async () => {
    const s = fresh();
    const ids = await chain(s, "long", 600);
    const h = await s.getDeltaChannelHistory({ config: { configurable: { thread_id: "long", checkpoint_id: ids[599] } }, channels: ["messages", "missing"] });
    expect(h.messages!.seed).toBeInstanceOf(DeltaSnapshot);
    expect(h.messages!.writes.map((w) => w[2])).toEqual(Array.from({ length: 599 }, (_, i) => `w${i}`));
    expect(h.missing).toEqual({ writes: [] });
    const none = await s.getDeltaChannelHistory({ config: { configurable: { thread_id: "long", checkpoint_id: uuid6(-1) } }, channels: ["messages"] });
    expect(none).toEqual({ messages: { writes: [] } });
  });

  it("deleteForRuns deletes the checkpoints of the runs only", async () => {
    const s = fresh();
    const a = await chain(s, "a", 6, { run: (i) => (i % 2 === 0 ? "r-even" : "r-odd") });
    await chain(s, "b", 3, { run: () => "r-even" });
    await s.deleteForRuns(["r-even", "unknown"]);
    const left: string[] = [];
    for await (const t of s.list({ configurable: { thread_id: "a" } })) left.push(t.checkpoint.id);
    expect(left).toEqual([a[5], a[3], a[1]]);
    const child = await s.getTuple({ configurable: { thread_id: "a", checkpoint_ns: "", checkpoint_id: a[1] } });
    expect(child!.parentConfig?.configurable?.checkpoint_id).toBe(a[0]); // its parent is gone; it stays
    expect(await s.getTuple({ configurable: { thread_id: "b" } })).toBeUndefined();
  });

  it("deleteForRuns in a thread that lost its namespace set refuses with DataLossError, deleting nothing", async () => {
    const s = fresh();
    await chain(s, "t", 2, { run: () => "r-keep" });
    const sub = await chain(s, "t", 2, { ns: "sub:1", run: () => "r-gone" });
    const gen = (await client.hGet(s.layout.head("t"), "g"))!;
    await client.del(s.layout.namespaces("t", gen));
    // Before, the namespace emptied looked like the thread's last: the whole thread was retired.
    await expect(s.deleteForRuns(["r-gone"])).rejects.toBeInstanceOf(DataLossError);
    expect(await client.exists(s.layout.checkpoint("t", gen, "sub:1", sub[1]))).toBe(1);
    expect(await client.hGet(s.layout.head("t"), "g")).toBe(gen);
  });

  it("copyThread copies every namespace; the target must be empty", async () => {
    const s = fresh();
    await chain(s, "src", 150);
    await chain(s, "src", 5, { ns: "sub:1" });
    await s.copyThread("src", "dst");
    for (const ns of ["", "sub:1"]) {
      const a: unknown[] = [];
      const b: unknown[] = [];
      for await (const t of s.list({ configurable: { thread_id: "src", checkpoint_ns: ns } })) a.push([t.checkpoint, t.metadata, t.pendingWrites]);
      for await (const t of s.list({ configurable: { thread_id: "dst", checkpoint_ns: ns } })) b.push([t.checkpoint, t.metadata, t.pendingWrites]);
      expect(b).toEqual(a);
      expect(a.length).toBeGreaterThan(0);
    }
    await expect(s.copyThread("src", "dst")).rejects.toThrow(InvalidConfigError);
  });

  it("copyThread of a source that lost a namespace's index or values hash fails with DataLossError, copying nothing", async () => {
    const s = fresh();
    await chain(s, "lost", 3);
    await chain(s, "lost", 3, { ns: "sub:1" });
    const gen = (await client.hGet(s.layout.head("lost"), "g"))!;
    for (const key of [s.layout.index("lost", gen, "sub:1"), s.layout.blobs("lost", gen, "")]) {
      const dump = await client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).dump(key);
      await client.del(key);
      await expect(s.copyThread("lost", "lost-copy")).rejects.toBeInstanceOf(DataLossError);
      expect(await s.getTuple({ configurable: { thread_id: "lost-copy" } })).toBeUndefined();
      await client.restore(key, 0, dump!);
    }
    await s.copyThread("lost", "lost-copy");
    expect(await s.getTuple({ configurable: { thread_id: "lost-copy", checkpoint_ns: "sub:1" } })).toBeDefined();
    // A values hash lost: a put into its namespace refuses (written anew, the hash would hide the loss),
    // and a copy fails.
    await client.del(s.layout.blobs("lost", gen, "sub:1"));
    await expect(chain(s, "lost", 1, { ns: "sub:1" })).rejects.toBeInstanceOf(DataLossError);
    await expect(s.copyThread("lost", "lost-copy-2")).rejects.toBeInstanceOf(DataLossError);
    expect(await s.getTuple({ configurable: { thread_id: "lost-copy-2" } })).toBeUndefined();
  });

  it("prune keeps the latest checkpoint (and the ancestors its delta channel needs), or deletes", async () => {
    const s = fresh();
    const ids = await chain(s, "p", 10);
    await s.prune(["p"], "keep_latest");
    const left: string[] = [];
    for await (const t of s.list({ configurable: { thread_id: "p" } })) left.push(t.checkpoint.id);
    // "messages" has its value in the first checkpoint only: the chain up to it stays, for the delta history.
    expect(left).toEqual([...ids].reverse());
    const h = await s.getDeltaChannelHistory({ config: { configurable: { thread_id: "p", checkpoint_id: ids[9] } }, channels: ["messages"] });
    expect(h.messages!.seed).toBeInstanceOf(DeltaSnapshot);
    // A thread whose latest checkpoint holds every value keeps that one only, readable whole.
    let cfg: any = { configurable: { thread_id: "plain" } };
    for (let i = 0; i < 5; i++) {
      const v = s.getNextVersion(undefined);
      cfg = await s.put(cfg, { ...emptyCheckpoint(), id: uuid6(i), channel_values: { count: i }, channel_versions: { count: v } }, md(i), { count: v });
    }
    await s.prune(["plain"], "keep_latest");
    const plain: unknown[] = [];
    for await (const t of s.list({ configurable: { thread_id: "plain" } })) plain.push(t.checkpoint.channel_values);
    expect(plain).toEqual([{ count: 4 }]);
    await s.prune(["p"], "delete");
    expect(await s.getTuple({ configurable: { thread_id: "p" } })).toBeUndefined();
  });
});

describe("bounded work", () => {
  // Each script call does bounded work whatever the thread's size: a second
  // client (redis-cli --latency) never waits more than 50 ms, and SLOWLOG
  // holds no entry over 50 ms (the target is 20 ms; the margin covers a
  // loaded 2-core machine), as redissaver's bounded tests require.
  it("deleteThread, copyThread, prune and delta history on a 1,500-checkpoint thread block Redis <= 50 ms", { timeout: 120_000 }, async () => {
    const s = fresh();
    await chain(s, "huge", 1500);
    await client.sendCommand(["SLOWLOG", "RESET"]);
    const old = await client.sendCommand(["CONFIG", "GET", "slowlog-log-slower-than"]) as string[];
    await client.sendCommand(["CONFIG", "SET", "slowlog-log-slower-than", "50000"]);
    // The latency a second client sees, from redis-cli --latency (a process of its own, as the Go
    // bounded tests measure it, so that this process's own work does not count), one-second samples.
    const { hostname, port } = new URL(url);
    let worst = 0;
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        const out = await new Promise<string>((resolve, reject) => {
          const p = spawn("redis-cli", ["-h", hostname, "-p", port, "--latency", "--raw", "-i", "1"], { stdio: ["ignore", "pipe", "inherit"] });
          let text = "";
          p.stdout.on("data", (d: Buffer) => (text += d.toString()));
          p.on("error", reject);
          p.on("exit", () => resolve(text));
        });
        const hi = Number(out.trim().split(/\s+/)[1]);
        if (!Number.isFinite(hi)) throw new Error(`redis-cli --latency printed ${JSON.stringify(out)}`);
        worst = Math.max(worst, hi);
      }
    })();
    try {
      const ids: string[] = [];
      for await (const t of s.list({ configurable: { thread_id: "huge", checkpoint_ns: "" } }, { limit: 1 })) ids.push(t.checkpoint.id);
      await s.getDeltaChannelHistory({ config: { configurable: { thread_id: "huge", checkpoint_id: ids[0] } }, channels: ["messages"] });
      await s.copyThread("huge", "huge-copy");
      await s.prune(["huge-copy"], "keep_latest");
      await s.deleteThread("huge");
    } finally {
      stop = true;
      await loop;
      await client.sendCommand(["CONFIG", "SET", "slowlog-log-slower-than", old[1]!]);
    }
    const slow = await client.sendCommand(["SLOWLOG", "GET", "10"]) as unknown[][];
    console.log(`bounded work: worst redis-cli --latency ${worst} ms; SLOWLOG entries over 50 ms: ${slow.length}`);
    expect(slow.map((e) => e[3]), "SLOWLOG entries over 50 ms (their commands)").toEqual([]);
    expect(worst, "worst latency of redis-cli --latency, ms").toBeLessThanOrEqual(50);
  });
});

describe("values out of Lua", () => {
  const doc = "d".repeat(40 << 10); // over the scripts' 32 KiB
  it("judges a read small by the limit the scripts apply (lib.lua's inline_bytes)", () => {
    const lib = readFileSync(new URL("../lua/get_tuple.lua", import.meta.url), "utf8"); // with the lib.lua helpers it uses
    expect(lib).toContain(`local function inline_bytes()\n  return ${INLINE_BYTES}\nend`);
  });
  /**
   * recording wraps the client: it records every command sent, and runs before (once) ahead of the first HMGET,
   * holding the commands sent after it until before ends (so that they keep their order).
   */
  function recording() {
    const sent: string[][] = [];
    let held: Promise<void> | undefined;
    const rec = {
      sent,
      before: undefined as undefined | (() => Promise<void>),
      sendCommand: async (args: (string | Buffer)[], opts?: unknown) => {
        const cmd = args.map((a) => (Buffer.isBuffer(a) ? a.toString("latin1") : a));
        if (cmd[0] === "HMGET" && rec.before) {
          const b = rec.before;
          rec.before = undefined;
          held = b();
        }
        if (held) await held;
        sent.push(cmd);
        return (client.sendCommand as any)(args, opts);
      },
      multi: () => client.multi(),
    };
    return rec;
  }
  async function docChain(s: RedcheckSaver, thread: string, count: number) {
    let cfg: any = { configurable: { thread_id: thread, checkpoint_ns: "" } };
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const cp: Checkpoint = { ...emptyCheckpoint(), id: uuid6(i), channel_values: { doc, step: i }, channel_versions: { doc: 1, step: i + 1 } };
      cfg = await s.put(cfg, cp, md(i), i === 0 ? { doc: 1, step: 1 } : { step: i + 1 });
      ids.push(cp.id);
    }
    return { cfg, ids };
  }
  const hmgets = (sent: string[][]) => sent.filter((c) => c[0] === "HMGET");
  const argv = (sent: string[][], i: number) => sent.filter((c) => c[0] === "EVALSHA").map((c) => c[3 + Number(c[2]) + i - 1]);

  it("getTuple and list read values of over 32 KiB by a plain HMGET, each once; small ones come from the script", async () => {
    const s = fresh();
    const { cfg, ids } = await docChain(s, "big", 3);
    const rec = recording();
    const r = new RedcheckSaver(rec as any, { prefix: s.layout.prefix });
    await r.setup();
    rec.sent.length = 0;
    const tup = (await r.getTuple({ configurable: { thread_id: "big", checkpoint_id: ids[1] } }))!;
    expect(tup.checkpoint.channel_values).toEqual({ doc, step: 1 });
    expect(hmgets(rec.sent).map((c) => c.length - 2)).toEqual([2]);
    rec.sent.length = 0;
    const listed = [];
    for await (const t of r.list({ configurable: { thread_id: "big", checkpoint_ns: "" } })) listed.push(t);
    expect(listed.map((t) => t.checkpoint.id)).toEqual([...ids].reverse());
    for (const t of listed) expect(t.checkpoint.channel_values.doc).toBe(doc);
    expect(hmgets(rec.sent).map((c) => c.length - 2)).toEqual([1 + 3]); // doc once, three steps
    expect(argv(rec.sent, 10)).toEqual(["2"]);
    // A small thread: asked for values left out when large, then whole.
    const small = await s.put({ configurable: { thread_id: "small" } }, { ...emptyCheckpoint(), id: uuid6(9), channel_values: { a: 1 }, channel_versions: { a: 1 } }, md(0), { a: 1 });
    rec.sent.length = 0;
    await r.getTuple(small);
    await r.getTuple(small);
    expect(argv(rec.sent, 6)).toEqual(["1", "1"]);
    expect(hmgets(rec.sent)).toEqual([]);
    void cfg;
  });

  it("a page of large values with a checkpoint that names no channel reads no HMGET of its namespace", async () => {
    const s = fresh();
    const { ids } = await docChain(s, "big", 2);
    const bare = uuid6(5);
    await s.put({ configurable: { thread_id: "big", checkpoint_ns: "bare" } }, { ...emptyCheckpoint(), id: bare }, md(0), {});
    const rec = recording();
    const r = new RedcheckSaver(rec as any, { prefix: s.layout.prefix });
    await r.setup();
    rec.sent.length = 0;
    const listed = [];
    for await (const t of r.list({ configurable: { thread_id: "big" } })) listed.push(t);
    expect(listed.map((t) => t.checkpoint.id).sort()).toEqual([...ids, bare].sort());
    expect(listed.find((t) => t.checkpoint.id === bare)!.checkpoint.channel_values).toEqual({});
    expect(hmgets(rec.sent).map((c) => c.length - 2)).toEqual([1 + 2]); // the namespace "" only
  });

  it("a checkpoint deleted between the two reads, whose value's field a later put wrote again, is not answered", async () => {
    const s = fresh();
    const { ids } = await docChain(s, "big", 2);
    // A saver that knows no generation of the thread puts its child through the script: the value goes under the plain version.
    const other = new RedcheckSaver(client, { prefix: s.layout.prefix });
    await other.setup();
    const x = uuid6(7);
    await other.put({ configurable: { thread_id: "big", checkpoint_ns: "", checkpoint_id: ids[0] } },
      { ...emptyCheckpoint(), id: x, channel_values: { step: "nine" }, channel_versions: { doc: 1, step: 9 } },
      md(5, { run_id: "doomed" }), { step: 9 });
    const rec = recording();
    const r = new RedcheckSaver(rec as any, { prefix: s.layout.prefix });
    await r.setup();
    const z = uuid6(8);
    rec.before = async () => {
      await s.deleteForRuns(["doomed"]);
      await s.put({ configurable: { thread_id: "big", checkpoint_ns: "" } },
        { ...emptyCheckpoint(), id: z, channel_values: { step: "nine again" }, channel_versions: { step: 9 } }, md(6), { step: 9 });
    };
    const listed = [];
    for await (const t of r.list({ configurable: { thread_id: "big", checkpoint_ns: "" } })) listed.push(t.checkpoint.id);
    expect(rec.before).toBeUndefined(); // it ran
    expect(listed).toEqual([z, ids[1], ids[0]]);
  });

  it("a value gone between the two reads sends the read back to the script: lost data, or a thread deleted", async () => {
    const s = fresh();
    await docChain(s, "big", 2);
    await docChain(s, "gone", 2);
    const rec = recording();
    const r = new RedcheckSaver(rec as any, { prefix: s.layout.prefix });
    await r.setup();
    rec.before = async () => {
      const gen = await client.hGet(`${s.layout.head("big")}`, "g");
      const blobs = s.layout.blobs("big", gen!, "");
      for (const f of await client.hKeys(blobs)) if (f.startsWith("3:doc1")) await client.hDel(blobs, f);
    };
    await expect(r.getTuple({ configurable: { thread_id: "big" } })).rejects.toBeInstanceOf(DataLossError);
    rec.before = () => s.deleteThread("gone");
    expect(await r.getTuple({ configurable: { thread_id: "gone" } })).toBeUndefined();
  });
});
