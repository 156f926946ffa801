// Cross-language encryption at rest, on one redis-server and one key (id
// "xl"): a thread RedcheckSaver writes encrypted reads back in the Go saver,
// and one the Go saver writes encrypted reads back here; each side's saver
// without the keyring refuses the other's values (DecryptError, Go's
// checkpoint.ErrDecrypt); the Go stream consumer opens the values JS events
// carry (includeValues: checkpoint events with vv:<channel>, writes
// events). The Go half is redissaver/crosslang_encrypted_test.go, run here
// with `go test`.
import { HumanMessage } from "@langchain/core/messages";
import { DeltaSnapshot, JsonPlusSerializer, emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { unpack } from "../src/codec.js";
import { DecryptError, Keyring, RedcheckSaver } from "../src/index.js";
import { versionToStore } from "../src/version.js";
import { goView, goViewMap, typedOfJSON } from "./goview.js";
import { toJS, type Typed } from "./typed.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const haveGo = spawnSync("go", ["version"]).status === 0;
if (!haveGo && process.env.CI) throw new Error("go is not on PATH: the cross-language tests need it");

const url = inject("redisUrl");
const client = createClient({ url });
const serde = new JsonPlusSerializer();
const dir = mkdtempSync(join(tmpdir(), "redcheck-crosslang-enc-"));
const prefix = `xle-${Math.random().toString(36).slice(2, 10)}`;
const shards = 4;
const key = randomBytes(32);
const encryption = Keyring.fromKeys("xl", { xl: key });

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

/** storedValues is every non-empty stored value of the prefix (blob values, and the V of each pending write). */
async function storedValues(p: string): Promise<string[]> {
  const out: string[] = [];
  for await (const keys of client.scanIterator({ MATCH: `${p}:*`, COUNT: 1000 })) {
    for (const k of keys) {
      if (k.endsWith(":blobs")) out.push(...(await client.hVals(k)).filter((v) => v !== ""));
      if (!k.includes(":cp:")) continue;
      for (const [f, v] of Object.entries(await client.hGetAll(k))) if (f.startsWith("w:")) out.push(unpack(Buffer.from(v, "latin1"), 3)![2]!.toString("latin1"));
    }
  }
  return out;
}

describe.skipIf(!haveGo)("cross-language encryption", () => {
  it("the Go saver reads what JS wrote encrypted; JS reads what Go wrote encrypted; neither reads without the key", { timeout: 600_000 }, async () => {
    const saver = new RedcheckSaver(client, { prefix, shards, encryption, compression: { threshold: 256 }, events: { includeValues: true } });
    const story = "the agent calls a tool and reads its result. ".repeat(40);
    const updates: Record<string, unknown>[] = [
      { messages: new DeltaSnapshot([new HumanMessage({ content: "hi", id: "h0" })]), count: 1, name: "js", blob: Uint8Array.from([0, 1, 255]), nested: { a: [1, "x", true] }, story },
      { count: 2 },
      { count: 3, name: "js again" },
    ];
    const thread = "js-enc";
    const ids: string[] = [];
    for (const ns of ["", "sub:1"]) {
      let cfg = { configurable: { thread_id: thread, checkpoint_ns: ns } } as { configurable: Record<string, string> };
      let prev: Checkpoint = emptyCheckpoint();
      for (let step = 0; step < updates.length; step++) {
        const cp: Checkpoint = { ...prev, id: uuid6(step), ts: new Date().toISOString(), channel_values: { ...prev.channel_values }, channel_versions: { ...prev.channel_versions } };
        const newVersions: Record<string, string | number> = {};
        for (const [ch, v] of Object.entries(updates[step]!)) {
          cp.channel_values[ch] = v;
          cp.channel_versions[ch] = saver.getNextVersion(cp.channel_versions[ch] as number | undefined);
          newVersions[ch] = cp.channel_versions[ch]!;
        }
        cfg = await saver.put(cfg, cp, { source: "loop" as const, step, parents: {}, writer: "js" } as CheckpointMetadata, newVersions) as typeof cfg;
        if (ns === "") ids.push(cp.id);
        await saver.putWrites(cfg, [["messages", [new HumanMessage({ content: `m${step + 1}`, id: `h${step + 1}` })]], ["count", step], ["story", story + step]], `task-${step}`, "~__pregel_pull, agent");
        await saver.putWrites(cfg, [["__interrupt__", { value: "ask", resumable: true }]], "task-b");
        prev = cp;
      }
    }
    const stored = await storedValues(prefix);
    expect(stored.length).toBeGreaterThan(20);
    for (const v of stored) expect(v[0]).toBe("e");

    const tuples: unknown[] = [];
    const lists: unknown[] = [];
    const deltas: unknown[] = [];
    const stringMap = (m: Record<string, string | number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, versionToStore(v)]));
    for (const ns of ["", "sub:1"]) {
      const listed: string[] = [];
      for await (const t of saver.list({ configurable: { thread_id: thread, checkpoint_ns: ns } })) {
        listed.push(t.checkpoint.id);
        tuples.push({
          thread, ns, id: t.checkpoint.id, parent: t.parentConfig?.configurable?.checkpoint_id ?? "", v: t.checkpoint.v, ts: t.checkpoint.ts,
          channel_values: await goViewMap(serde, t.checkpoint.channel_values), channel_versions: stringMap(t.checkpoint.channel_versions),
          versions_seen: Object.fromEntries(Object.entries(t.checkpoint.versions_seen).map(([n, m]) => [n, stringMap(m)])),
          metadata: Object.fromEntries(Object.entries(t.metadata ?? {}).map(([k, v]) => [k, typedOfJSON(v)])),
          pending_writes: await Promise.all((t.pendingWrites ?? []).map(async ([task, channel, value]) => ({ task, channel, value: await goView(serde, value) }))),
        });
      }
      lists.push({ thread, ns, ids: listed });
    }
    const last = ids[ids.length - 1]!;
    const hist = await saver.getDeltaChannelHistory({ config: { configurable: { thread_id: thread, checkpoint_ns: "", checkpoint_id: last } }, channels: ["messages", "count"] });
    for (const ch of ["messages", "count"]) {
      const h = hist[ch]!;
      expect(h.writes.length).toBeGreaterThan(0);
      deltas.push({
        thread, ns: "", id: last, channel: ch, has_seed: "seed" in h, seed: "seed" in h ? await goView(serde, h.seed) : null,
        writes: await Promise.all(h.writes.map(async ([task, channel, value]) => ({ task, channel, value: await goView(serde, value) }))),
      });
    }
    writeFileSync(join(dir, "js_encrypted.json"), JSON.stringify({ prefix, shards, tuples, lists, deltas }, null, 1));
    // Without the keyring, this saver refuses its own encrypted values.
    const plain = new RedcheckSaver(client, { prefix, shards });
    await expect(plain.getTuple({ configurable: { thread_id: thread } })).rejects.toBeInstanceOf(DecryptError);

    const go = spawnSync("go", ["test", "-race", "-count=1", "-run", "^TestCrossLangEncrypted(GoWrites|JSReads)$", "-v", "./redissaver/"], {
      cwd: repo, encoding: "utf8", timeout: 540_000,
      env: { ...process.env, REDIS_URL: url, REDCHECK_CROSSLANG: dir, REDCHECK_CROSSLANG_KEY: key.toString("hex") },
    });
    const goOut = `${go.stdout}\n${go.stderr}`;
    expect(go.status, goOut).toBe(0);
    for (const name of ["TestCrossLangEncryptedGoWrites", "TestCrossLangEncryptedJSReads"]) expect(goOut).toContain(`--- PASS: ${name}`);

    // JS reads what Go wrote encrypted (MsgpackSerializer), with JS types; without the keyring it refuses.
    const doc = JSON.parse(readFileSync(join(dir, "go_encrypted.json"), "utf8"));
    expect(doc.tuples.length).toBeGreaterThan(0);
    const goSaver = new RedcheckSaver(client, { prefix: doc.prefix, shards: doc.shards, encryption });
    const goPlain = new RedcheckSaver(client, { prefix: doc.prefix, shards: doc.shards });
    for (const v of await storedValues(doc.prefix)) expect(v[0]).toBe("e");
    const byTask = (a: { task: string }, b: { task: string }) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0);
    for (const want of doc.tuples) {
      const cfg = { configurable: { thread_id: want.thread, checkpoint_ns: want.ns, checkpoint_id: want.id } };
      const t = await goSaver.getTuple(cfg);
      expect(t, `${want.ns}/${want.id}`).toBeDefined();
      expect(t!.checkpoint.channel_versions).toEqual(want.channel_versions);
      expect(t!.checkpoint.channel_values).toEqual(Object.fromEntries(Object.entries(want.channel_values).map(([k, v]) => [k, toJS(v as Typed)])));
      const writes = (t!.pendingWrites ?? []).map(([task, channel, value]) => ({ task, channel, value })).sort(byTask);
      expect(writes).toEqual(want.pending_writes.map((w: { task: string; channel: string; value: Typed }) => ({ ...w, value: toJS(w.value) })).sort(byTask));
      await expect(goPlain.getTuple(cfg)).rejects.toBeInstanceOf(DecryptError);
    }
    for (const want of doc.deltas) {
      const config = { configurable: { thread_id: want.thread, checkpoint_ns: want.ns, checkpoint_id: want.id } };
      const h = (await goSaver.getDeltaChannelHistory({ config, channels: [want.channel] }))[want.channel]!;
      expect("seed" in h).toBe(want.has_seed);
      if (want.has_seed) expect(h.seed).toEqual(toJS(want.seed));
      expect(h.writes.map(([task, channel, value]) => ({ task, channel, value }))).toEqual(want.writes.map((w: { task: string; channel: string; value: Typed }) => ({ ...w, value: toJS(w.value) })));
      await expect(goPlain.getDeltaChannelHistory({ config, channels: [want.channel] })).rejects.toBeInstanceOf(DecryptError);
    }
  });
});
