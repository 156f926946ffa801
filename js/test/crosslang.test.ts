// Cross-language tests with the Go side, on one redis-server:
//   - the scripts the build copied are byte for byte the Go package's (scripts.Source);
//   - JS writes -> the Go saver's GetTuple, List and DeltaChannelHistory return equal data,
//     each JS checkpoint appears exactly once in stream.Subscribe and in `redcheck tail`,
//     and Check / `redcheck check` find no violation;
//   - Go writes -> RedcheckSaver reads equal data, with their JS types;
//   - a Go consumer's span links to the span of a JS put that wrote its event (trace context in events).
// The Go half is redissaver/crosslang_test.go, run here with `go test`.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { DeltaSnapshot, JsonPlusSerializer, emptyCheckpoint, isDeltaSnapshot, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RedcheckSaver } from "../src/index.js";
import { unpack } from "../src/codec.js";
import { versionToStore } from "../src/version.js";
import { goView as goViewOf, goViewMap as goViewMapOf, typedOfJSON } from "./goview.js";
import { toJS, type Typed } from "./typed.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const haveGo = spawnSync("go", ["version"]).status === 0;
if (!haveGo && process.env.CI) throw new Error("go is not on PATH: the cross-language tests need it");

const url = inject("redisUrl");
const client = createClient({ url });
const serde = new JsonPlusSerializer();
const dir = mkdtempSync(join(tmpdir(), "redcheck-crosslang-"));
const prefix = `xl-${Math.random().toString(36).slice(2, 10)}`;
const shards = 4;

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const goView = (v: unknown) => goViewOf(serde, v);
const goViewMap = (m: Record<string, unknown>) => goViewMapOf(serde, m);

const md = (step: number) => ({ source: "loop" as const, step, parents: {}, writer: "js", score: 0.25 });

describe.skipIf(!haveGo)("cross-language", () => {
  it("the Go saver, Subscribe, redcheck tail and redcheck check read what JS wrote; JS reads what Go wrote", { timeout: 600_000 }, async () => {
    // Compression on: "story" and its writes are stored compressed, the small values plain.
    const saver = new RedcheckSaver(client, { prefix, shards, compression: { threshold: 256 } });
    const story = "the agent calls a tool and reads its result. ".repeat(40);
    const updates: Record<string, unknown>[] = [
      { messages: new DeltaSnapshot([new HumanMessage({ content: "hi", id: "h0" })]), count: 1, ratio: 0.5, name: "js",
        blob: Uint8Array.from([0, 1, 255]), nothing: null, nested: { a: [1, "x", true], deep: { z: 2.5 } }, story },
      { count: 2, last: new AIMessage({ content: "hello from JS", id: "a1" }) },
      { count: 3 },
    ];
    const thread = `js-thread-${prefix}`;
    const expected: { tuples: unknown[]; lists: unknown[]; deltas: unknown[] } = { tuples: [], lists: [], deltas: [] };
    const rootIDs: string[] = [];
    for (const ns of ["", "sub:1"]) {
      let cfg = { configurable: { thread_id: thread, checkpoint_ns: ns } } as { configurable: Record<string, string> };
      let prev: Checkpoint = emptyCheckpoint();
      for (let step = 0; step < updates.length; step++) {
        const upd = updates[step]!;
        const cp: Checkpoint = { ...prev, id: uuid6(step), ts: new Date().toISOString(), channel_values: { ...prev.channel_values },
          channel_versions: { ...prev.channel_versions }, versions_seen: { agent: { count: prev.channel_versions.count ?? 0 } } };
        const newVersions: Record<string, string | number> = {};
        for (const [ch, v] of Object.entries(upd)) {
          cp.channel_values[ch] = v;
          // Numbers (LangGraph.js's default versions) for the first step, Go-style strings after.
          cp.channel_versions[ch] = step === 0 ? 1 : saver.getNextVersion(cp.channel_versions[ch] as number | undefined);
          newVersions[ch] = cp.channel_versions[ch]!;
        }
        cfg = await saver.put(cfg, cp, md(step), newVersions) as typeof cfg;
        if (ns === "") rootIDs.push(cp.id);
        await saver.putWrites(cfg, [["messages", [new HumanMessage({ content: `m${step + 1}`, id: `h${step + 1}` })]], ["count", step], ["story", story + step]], `task-${step}`, "~__pregel_pull, agent");
        await saver.putWrites(cfg, [["__interrupt__", { value: "ask", resumable: true }]], "task-b");
        prev = cp;
      }
    }
    // What Go must read: every tuple as the JS saver reads it, in the Go view.
    for (const ns of ["", "sub:1"]) {
      for await (const t of saver.list({ configurable: { thread_id: thread, checkpoint_ns: ns } })) {
        const stringMap = (m: Record<string, string | number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, versionToStore(v)]));
        expected.tuples.push({
          thread, ns, id: t.checkpoint.id, parent: t.parentConfig?.configurable?.checkpoint_id ?? "", v: t.checkpoint.v, ts: t.checkpoint.ts,
          channel_values: await goViewMap(t.checkpoint.channel_values), channel_versions: stringMap(t.checkpoint.channel_versions),
          versions_seen: Object.fromEntries(Object.entries(t.checkpoint.versions_seen).map(([n, m]) => [n, stringMap(m)])),
          metadata: Object.fromEntries(Object.entries(t.metadata ?? {}).map(([k, v]) => [k, typedOfJSON(v)])),
          pending_writes: await Promise.all((t.pendingWrites ?? []).map(async ([task, channel, value]) => ({ task, channel, value: await goView(value) }))),
        });
      }
    }
    for (const ns of [undefined, "", "sub:1"]) {
      const ids: string[] = [];
      for await (const t of saver.list({ configurable: { thread_id: thread, ...(ns === undefined ? {} : { checkpoint_ns: ns }) } })) ids.push(t.checkpoint.id);
      expected.lists.push({ thread, ns: ns ?? null, ids });
    }
    const last = rootIDs[rootIDs.length - 1]!;
    const hist = await saver.getDeltaChannelHistory({ config: { configurable: { thread_id: thread, checkpoint_ns: "", checkpoint_id: last } }, channels: ["messages", "count"] });
    expect(isDeltaSnapshot(hist.messages!.seed)).toBe(true);
    // c1 names the version c0 stored for "messages": c1 is the nearest ancestor holding a value.
    expect(hist.messages!.writes.map((w) => w[0])).toEqual(["task-1"]);
    for (const ch of ["messages", "count"]) {
      const h = hist[ch]!;
      expected.deltas.push({
        thread, ns: "", id: last, channel: ch, has_seed: "seed" in h, seed: "seed" in h ? await goView(h.seed) : null,
        writes: await Promise.all(h.writes.map(async ([task, channel, value]) => ({ task, channel, value: await goView(value) }))),
      });
    }
    // Both forms are in Redis: story (once per namespace) and its 6 writes compressed, the rest plain.
    const stored: string[] = [];
    for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
      for (const k of keys) {
        if (k.endsWith(":blobs")) stored.push(...(await client.hVals(k)));
        if (!k.includes(":cp:")) continue;
        for (const [f, v] of Object.entries(await client.hGetAll(k))) {
          if (f.startsWith("w:")) stored.push(unpack(Buffer.from(v), 3)![2]!.toString("latin1")); // pack(channel, task path, value)
        }
      }
    }
    expect(stored.filter((v) => v.startsWith("z"))).toHaveLength(2 + 6);
    expect(stored.filter((v) => /^[1-9]/.test(v)).length).toBeGreaterThan(20);
    // A put under the OpenTelemetry SDK, on a prefix of its own: its event carries the put span's trace
    // context, which a Go consumer's span links to (TestCrossLangTraceLink).
    const spans = new InMemorySpanExporter();
    const traced = new RedcheckSaver(client, { prefix: `${prefix}-tr`, shards, tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }) });
    const tcfg = await traced.put({ configurable: { thread_id: "traced", checkpoint_ns: "" } }, { ...emptyCheckpoint(), id: uuid6(-1) },
      { source: "input", step: -1, parents: {} }, {});
    const putSpan = spans.getFinishedSpans().find((sp) => sp.name === "Put")!;
    const tracedDoc = { prefix: `${prefix}-tr`, shards, thread: "traced", id: tcfg.configurable!.checkpoint_id,
      traceparent: `00-${putSpan.spanContext().traceId}-${putSpan.spanContext().spanId}-01` };
    writeFileSync(join(dir, "js_written.json"), JSON.stringify({ prefix, shards, ...expected, traced: tracedDoc }, null, 1));

    // The Go half: scripts, Go writes, Go reads what JS wrote (GetTuple, List, DeltaChannelHistory, Subscribe, Check).
    const go = spawnSync("go", ["test", "-race", "-count=1", "-run", "^TestCrossLang(Scripts|GoWrites|JSReads|TraceLink)$", "-v", "./redissaver/"], {
      cwd: repo, encoding: "utf8", timeout: 540_000,
      env: { ...process.env, REDIS_URL: url, REDCHECK_CROSSLANG: dir, REDCHECK_JS_LUA: join(here, "..", "lua") },
    });
    const goOut = `${go.stdout}\n${go.stderr}`;
    expect(go.status, goOut).toBe(0);
    for (const name of ["TestCrossLangScripts", "TestCrossLangGoWrites", "TestCrossLangJSReads", "TestCrossLangTraceLink"]) expect(goOut).toContain(`--- PASS: ${name}`);
    console.log(goOut.split("\n").filter((l) => /crosslang_test|--- (PASS|FAIL)/.test(l)).join("\n"));

    // JS reads what Go wrote (MsgpackSerializer), with JS types.
    const doc = JSON.parse(readFileSync(join(dir, "go_written.json"), "utf8"));
    const goSaver = new RedcheckSaver(client, { prefix: doc.prefix, shards: doc.shards });
    const byTask = (a: { task: string }, b: { task: string }) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0);
    for (const want of doc.tuples) {
      const t = await goSaver.getTuple({ configurable: { thread_id: want.thread, checkpoint_ns: want.ns, checkpoint_id: want.id } });
      expect(t, `${want.ns}/${want.id}`).toBeDefined();
      expect(t!.checkpoint.v).toBe(want.v);
      expect(t!.checkpoint.ts).toBe(want.ts);
      expect(t!.parentConfig?.configurable?.checkpoint_id ?? "").toBe(want.parent);
      expect(t!.checkpoint.channel_versions).toEqual(want.channel_versions);
      const values = { ...t!.checkpoint.channel_values };
      if ("last" in want.channel_values) {
        // A LangChain message the Go side stored as its serialized map reads back as the message.
        expect(values.last).toBeInstanceOf(AIMessage);
        expect((values.last as AIMessage).content).toBe("hello from Go");
        delete values.last;
        delete want.channel_values.last;
      }
      expect(values).toEqual(Object.fromEntries(Object.entries(want.channel_values).map(([k, v]) => [k, toJS(v as Typed)])));
      expect(t!.metadata).toEqual(Object.fromEntries(Object.entries(want.metadata).map(([k, v]) => [k, toJS(v as Typed)])));
      const writes = (t!.pendingWrites ?? []).map(([task, channel, value]) => ({ task, channel, value })).sort(byTask);
      expect(writes).toEqual(want.pending_writes.map((w: { task: string; channel: string; value: Typed }) => ({ ...w, value: toJS(w.value) })).sort(byTask));
    }
    for (const want of doc.lists) {
      const ids: string[] = [];
      for await (const t of goSaver.list({ configurable: { thread_id: want.thread } })) ids.push(t.checkpoint.id);
      expect(ids).toEqual(want.ids);
    }
    for (const want of doc.deltas) {
      const h = (await goSaver.getDeltaChannelHistory({ config: { configurable: { thread_id: want.thread, checkpoint_ns: want.ns, checkpoint_id: want.id } }, channels: [want.channel] }))[want.channel]!;
      expect("seed" in h).toBe(want.has_seed);
      if (want.has_seed) expect(h.seed).toEqual(toJS(want.seed));
      expect(h.writes.map(([task, channel, value]) => ({ task, channel, value }))).toEqual(want.writes.map((w: { task: string; channel: string; value: Typed }) => ({ ...w, value: toJS(w.value) })));
    }

    // The CLI: `redcheck check` finds no violation; `redcheck tail` shows every JS checkpoint exactly once.
    const bin = join(dir, "redcheck");
    const build = spawnSync("go", ["build", "-o", bin, "./cmd/redcheck"], { cwd: repo, encoding: "utf8", timeout: 300_000 });
    expect(build.status, build.stderr).toBe(0);
    const target = ["--url", url, "--prefix", prefix, "--shards", String(shards)];
    const check = spawnSync(bin, ["check", ...target], { encoding: "utf8", timeout: 60_000 });
    expect(check.status, `${check.stdout}\n${check.stderr}`).toBe(0);
    const lines = await tail(bin, [...target, "--from", "beginning", "--json"], expected.tuples.length);
    const seen = new Map<string, number>();
    for (const l of lines) {
      const ev = JSON.parse(l);
      if (ev.type === "checkpoint") seen.set(`${ev.checkpoint_ns}/${ev.checkpoint_id}`, (seen.get(`${ev.checkpoint_ns}/${ev.checkpoint_id}`) ?? 0) + 1);
    }
    for (const t of expected.tuples as { ns: string; id: string }[]) expect(seen.get(`${t.ns}/${t.id}`), `${t.ns}/${t.id}`).toBe(1);
    expect(seen.size).toBe(expected.tuples.length);
  });
});

/** tail runs `redcheck tail` until it printed want checkpoint events (or 20 s), then stops it. */
function tail(bin: string, args: string[], want: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, ["tail", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const done = () => p.kill("SIGINT");
    const timer = setTimeout(done, 20_000);
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if ((out.match(/"type":"checkpoint"/g) ?? []).length >= want) setTimeout(done, 500); // and a little longer: no duplicate may follow
    });
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("exit", () => {
      clearTimeout(timer);
      if (err.trim() !== "") console.error(err);
      resolve(out.split("\n").filter((l) => l.trim() !== ""));
    });
  });
}
