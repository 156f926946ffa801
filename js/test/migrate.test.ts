// Migration across languages, on one redis-server, with the Go CLI built from
// this repository:
//   - a thread copyFrom copied (from LangGraph.js's MemorySaver, written by a
//     StateGraph with a subgraph and an interrupt) goes through `redcheck
//     export`, `redcheck import` into a fresh prefix and `redcheck export`
//     again: both files are the same byte for byte (but exported_at), `redcheck
//     check` finds nothing, and the imported thread reads back equal through
//     this saver's getTuple and list;
//   - examples/migrate/from_python.py, run by python3 on a stand-in Python saver
//     (test/fixtures/fake_saver.py), writes a file `redcheck import` takes, whose
//     checkpoints read back as the Python saver held them.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, MemorySaver, START, StateGraph, interrupt, messagesStateReducer } from "@langchain/langgraph";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RedcheckSaver } from "../src/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const haveGo = spawnSync("go", ["version"]).status === 0;
if (!haveGo && process.env.CI) throw new Error("go is not on PATH: the migration tests need it");
const havePython = spawnSync("python3", ["--version"]).status === 0;

const url = inject("redisUrl");
const client = createClient({ url });
const dir = mkdtempSync(join(tmpdir(), "redcheck-migrate-"));
const bin = join(dir, "redcheck");
const run = Math.random().toString(36).slice(2, 8);
const shards = 4;

beforeAll(async () => {
  await client.connect();
  if (haveGo) {
    const build = spawnSync("go", ["build", "-o", bin, "./cmd/redcheck"], { cwd: repo, encoding: "utf8", timeout: 300_000 });
    if (build.status !== 0) throw new Error(`go build ./cmd/redcheck: ${build.stderr}`);
  }
}, 300_000);
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

/** cli runs the redcheck binary on prefix and answers its exit status and output. */
function cli(prefix: string, ...args: string[]) {
  const r = spawnSync(bin, [...args, "--url", url, "--prefix", prefix, "--shards", String(shards)], { encoding: "utf8", timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const cfg = (thread: string): RunnableConfig => ({ configurable: { thread_id: thread } });

/** tuples: every checkpoint of a thread, all namespaces, sorted by namespace then ID. */
async function tuples(saver: BaseCheckpointSaver, thread: string): Promise<CheckpointTuple[]> {
  const all: CheckpointTuple[] = [];
  for await (const t of saver.list(cfg(thread))) all.push(t);
  const ns = (t: CheckpointTuple) => String(t.config.configurable?.checkpoint_ns ?? "");
  return all.sort((a, b) => (ns(a) !== ns(b) ? (ns(a) < ns(b) ? -1 : 1) : a.checkpoint.id < b.checkpoint.id ? -1 : 1));
}

/** view: a tuple as plain data, its pending writes in a saver-independent order. */
const view = (t: CheckpointTuple | undefined) => t && JSON.parse(JSON.stringify({
  ns: t.config.configurable?.checkpoint_ns, id: t.checkpoint.id, parent: t.parentConfig?.configurable?.checkpoint_id ?? null,
  checkpoint: t.checkpoint, metadata: t.metadata, writes: [...(t.pendingWrites ?? [])].map((w) => JSON.stringify(w)).sort(),
}));

/** body: an export without its header's exported_at. */
const body = (file: string) => readFileSync(file, "utf8").replace(/"exported_at":"[^"]*"/, '"exported_at":""');

describe.skipIf(!haveGo)("copyFrom, then redcheck export and import", () => {
  it("export -> import -> export is byte-identical, check passes, and the import reads back equal", { timeout: 300_000 }, async () => {
    const State = Annotation.Root({
      log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
      messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
    });
    const sub = new StateGraph(State)
      .addNode("draft", () => ({ messages: [new AIMessage({ content: "a draft", id: "draft" })] }))
      .addNode("ask", () => ({ log: [`answer=${interrupt("approve?")}`] }))
      .addEdge(START, "draft").addEdge("draft", "ask").addEdge("ask", END)
      .compile();
    const mem = new MemorySaver();
    const graph = new StateGraph(State)
      .addNode("plan", () => ({ log: ["plan"] }))
      .addNode("review", sub)
      .addEdge(START, "plan").addEdge("plan", "review").addEdge("review", END)
      .compile({ checkpointer: mem });
    await graph.invoke({ log: ["in"], messages: [new HumanMessage({ content: "hi", id: "hi" })] }, cfg("xl"));

    const a = new RedcheckSaver(client, { prefix: `mg-${run}-a`, shards });
    const report = await a.copyFrom(mem, ["xl"]);
    expect(report.writesCopied).toBeGreaterThan(0);
    let r = cli(a.layout.prefix, "check");
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const first = join(dir, "first.jsonl");
    const second = join(dir, "second.jsonl");
    r = cli(a.layout.prefix, "export", "xl");
    expect(r.status, r.stderr).toBe(0);
    writeFileSync(first, r.stdout);
    r = cli(`mg-${run}-b`, "import", first);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`imported 1 threads, ${report.checkpointsCopied} checkpoints, ${report.writesCopied} pending writes`));
    r = cli(`mg-${run}-b`, "export", "xl");
    expect(r.status, r.stderr).toBe(0);
    writeFileSync(second, r.stdout);
    expect(body(second)).toBe(body(first));
    r = cli(`mg-${run}-b`, "check");
    expect(r.status, r.stdout + r.stderr).toBe(0);

    const b = new RedcheckSaver(client, { prefix: `mg-${run}-b`, shards });
    const [ta, tb] = [await tuples(a, "xl"), await tuples(b, "xl")];
    expect(new Set(ta.map((t) => t.config.configurable?.checkpoint_ns)).size).toBe(2);
    expect(tb.map(view)).toEqual(ta.map(view));
    expect(view(await b.getTuple(cfg("xl")))).toEqual(view(await a.getTuple(cfg("xl"))));
    // Importing again is refused (exit 1); a second copyFrom into the imported prefix finds it identical.
    expect(cli(`mg-${run}-b`, "import", first).status).toBe(1);
    expect((await b.copyFrom(mem, ["xl"])).threadsSkipped).toBe(1);
  });
});

describe.skipIf(!haveGo || !havePython)("examples/migrate/from_python.py" + (havePython ? "" : " (python3 is not on PATH)"), () => {
  it("writes a file redcheck import takes; the threads read back as the Python saver held them", { timeout: 300_000 }, async () => {
    const py = spawnSync("python3", [join(repo, "examples", "migrate", "from_python.py"), "--saver", "fake_saver:make_saver", "py-1", "py-2"], {
      encoding: "utf8", timeout: 60_000, env: { ...process.env, PYTHONPATH: join(here, "fixtures") },
    });
    expect(py.status, py.stderr).toBe(0);
    expect(py.stderr).toContain("exported 2 threads, 6 checkpoints");
    const file = join(dir, "python.jsonl");
    writeFileSync(file, py.stdout);
    const prefix = `mg-${run}-py`;
    let r = cli(prefix, "import", file);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("imported 2 threads, 6 checkpoints, 5 pending writes");
    r = cli(prefix, "check");
    expect(r.status, r.stdout + r.stderr).toBe(0);

    const saver = new RedcheckSaver(client, { prefix, shards });
    const V = (n: number) => `${String(n).padStart(32, "0")}.0.${n * 7}`;
    const id = (n: number) => `1f000000-0000-6000-8000-${String(n).padStart(12, "0")}`;
    const all = await tuples(saver, "py-1");
    expect(all.map((t) => [t.config.configurable?.checkpoint_ns, t.checkpoint.id, t.parentConfig?.configurable?.checkpoint_id ?? null])).toEqual([
      ["", id(1), null], ["", id(2), id(1)], ["", id(3), id(2)], ["child:abc", id(4), null], ["child:abc", id(5), id(4)],
    ]);
    const last = all[2]!;
    expect(last.checkpoint.channel_versions).toEqual({ __start__: V(2), messages: V(3), count: V(2), blob: V(3), nothing: V(3) });
    expect(last.checkpoint.versions_seen).toEqual({ agent: { messages: V(2) } });
    expect(last.metadata).toEqual({ source: "loop", step: 1, parents: {}, writes: { agent: { count: 2 } } });
    const v = last.checkpoint.channel_values as Record<string, unknown>;
    // A LangChain message comes back as one: the serialized form is what LangGraph.js's serde revives.
    expect(v.messages).toHaveLength(2);
    expect((v.messages as unknown[])[1]).toBeInstanceOf(AIMessage);
    expect((v.messages as AIMessage[]).map((m) => [m.content, m.id])).toEqual([["hi from python", "m1"], ["hello back", "m2"]]);
    expect(v.count).toBe(1);
    expect(v.blob).toEqual(Uint8Array.from([0, 1, 255]));
    expect(v.nothing).toBeNull();
    expect("__start__" in v).toBe(false); // a version with no value
    const writes = JSON.parse(JSON.stringify(last.pendingWrites));
    expect(writes).toEqual([
      ["task-a", "messages", [JSON.parse(JSON.stringify(new AIMessage({ content: "next", id: "m3" })))]],
      ["task-a", "count", 2],
      ["task-b", "__interrupt__", [{ value: { question: "ok?" }, id: "i-1" }]],
      ["task-b", "opaque", { x: 1 }], // through the saver's serde: MessagePack
    ]);
    expect(all[3]!.checkpoint.channel_values).toEqual({ x: "2025-01-02T03:04:05+00:00" });
    expect(all[4]!.checkpoint.channel_values).toEqual({ x: [1, "two"] });
    expect(all[4]!.pendingWrites).toEqual([["task-c", "x", [3]]]);
    const two = await saver.getTuple(cfg("py-2"));
    expect(two?.checkpoint.channel_versions).toEqual({ count: "000000000003.00000000" });
    expect(two?.checkpoint.versions_seen).toEqual({ agent: { count: "000000000002.00000000" } });
    expect(two?.checkpoint.channel_values).toEqual({ count: 7 });
  });
});
