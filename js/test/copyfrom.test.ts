// copyFrom: threads written by a real StateGraph (an interrupt() inside a
// subgraph, LangChain messages) on LangGraph.js's MemorySaver, its SQLite saver
// (from npm) and, when REDCHECK_PG_URL names a Postgres, its Postgres saver, are
// copied into redcheck (a real redis-server, and the local Redis Cluster with
// REDCHECK_CLUSTER=1); then the copy's history equals the source's, the run
// resumed on redcheck finishes as it does on the source, a second copy changes
// nothing, a cut-off copy is completed, and a thread redcheck holds with other
// content is refused unless replace.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt, messagesStateReducer } from "@langchain/langgraph";
import { emptyCheckpoint, type BaseCheckpointSaver, type CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createClient, createCluster } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CopyConflictError, InvalidCheckpointError, NotFoundError, RedcheckSaver, type CopyReport } from "../src/index.js";

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
});

/** agent: plan -> review (a subgraph: draft, then ask, which interrupts) -> finish. */
function agent(saver: BaseCheckpointSaver) {
  const review = new StateGraph(State)
    .addNode("draft", (s) => ({ log: ["draft"], messages: [new AIMessage({ content: `draft ${s.messages.length}`, id: `draft-${s.messages.length}` })] }))
    .addNode("ask", () => {
      const answer = interrupt({ question: "approve the draft?" });
      return { log: [`answer=${JSON.stringify(answer)}`] };
    })
    .addEdge(START, "draft").addEdge("draft", "ask").addEdge("ask", END)
    .compile();
  return new StateGraph(State)
    .addNode("plan", () => ({ log: ["plan"], messages: [new AIMessage({ content: "a plan", id: "plan" })] }))
    .addNode("review", review)
    .addNode("finish", (s) => ({ log: [`finish after ${s.log.length}`] }))
    .addEdge(START, "plan").addEdge("plan", "review").addEdge("review", "finish").addEdge("finish", END)
    .compile({ checkpointer: saver });
}

const cfg = (thread: string): RunnableConfig => ({ configurable: { thread_id: thread } });
const input = (who: string) => ({ log: ["in"], messages: [new HumanMessage({ content: `hello from ${who}`, id: `in-${who}` })] });

/**
 * fill runs the agent on source: thread "waiting" stops at the interrupt, thread "done" is resumed and
 * finishes; both have checkpoints in the subgraph's namespace and pending writes.
 */
async function fill(source: BaseCheckpointSaver): Promise<void> {
  const g = agent(source);
  await g.invoke(input("waiting"), cfg("waiting"));
  await g.invoke(input("done"), cfg("done"));
  const r = await g.invoke(new Command({ resume: "ok" }), cfg("done"));
  expect(r.log.at(-1)).toMatch(/^finish/);
}

/** history: every checkpoint of a thread (all namespaces) in a saver-independent order, as plain data. */
async function history(saver: BaseCheckpointSaver, thread: string) {
  const all: CheckpointTuple[] = [];
  for await (const t of saver.list(cfg(thread))) all.push(t);
  const ns = (t: CheckpointTuple) => String(t.config.configurable?.checkpoint_ns ?? "");
  all.sort((a, b) => (ns(a) !== ns(b) ? (ns(a) < ns(b) ? -1 : 1) : a.checkpoint.id < b.checkpoint.id ? 1 : -1));
  const plain = (v: unknown) => JSON.parse(JSON.stringify(v ?? null));
  return all.map((t) => ({
    ns: ns(t),
    id: t.checkpoint.id,
    parent: t.parentConfig?.configurable?.checkpoint_id,
    v: t.checkpoint.v,
    ts: t.checkpoint.ts,
    metadata: plain(t.metadata),
    // LangGraph.js's integer versions are stored in the format's own form (n -> "00000000000n.00000000").
    versions: stored(t.checkpoint.channel_versions),
    seen: Object.fromEntries(Object.entries(t.checkpoint.versions_seen).map(([node, m]) => [node, stored(m)])),
    // The values of the versioned channels: MemorySaver and the SQLite saver keep the checkpoint as
    // given, whose channel_values may also hold channels without a version, which redcheck (storing
    // values by channel version, as the Postgres saver does) does not keep.
    values: plain(Object.fromEntries(Object.entries(t.checkpoint.channel_values).filter(([k]) => k in t.checkpoint.channel_versions))),
    // Per task, in order; the order of the tasks is not part of the contract.
    writes: (t.pendingWrites ?? []).map(([task, ch, v]) => JSON.stringify([task, ch, plain(v)])).sort(),
  }));
}

const stored = (m: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(m).map(([ch, v]) => [ch, typeof v === "number" ? `${String(v).padStart(12, "0")}.00000000` : v]));

async function count(saver: BaseCheckpointSaver, threads: string[]) {
  let checkpoints = 0;
  let writes = 0;
  for (const th of threads) {
    for await (const t of saver.list(cfg(th))) {
      checkpoints++;
      writes += t.pendingWrites?.length ?? 0;
    }
  }
  return { checkpoints, writes };
}

const sources: Array<{ name: string; open: () => Promise<{ saver: BaseCheckpointSaver; close(): Promise<void> }> }> = [
  { name: "MemorySaver", open: async () => ({ saver: new MemorySaver(), close: async () => {} }) },
  {
    name: "SqliteSaver",
    open: async () => {
      const saver = SqliteSaver.fromConnString(":memory:");
      return { saver, close: async () => saver.db.close() };
    },
  },
];
const pgUrl = process.env.REDCHECK_PG_URL ?? "";
if (pgUrl !== "") {
  sources.push({
    name: "PostgresSaver",
    open: async () => {
      const schema = `redcheck_copy_${Math.random().toString(36).slice(2, 10)}`;
      const saver = PostgresSaver.fromConnString(pgUrl, { schema });
      await saver.setup();
      return {
        saver,
        close: async () => {
          await (saver as unknown as { pool: { query(q: string): Promise<unknown> } }).pool.query(`DROP SCHEMA "${schema}" CASCADE`);
          await saver.end();
        },
      };
    },
  });
}
describe.skipIf(pgUrl !== "")("the Postgres saver", () => {
  it.skip("is copied only when REDCHECK_PG_URL names a Postgres (postgres://user:pass@host:5432/db), which this run lacks", () => {});
});

const targets: Array<{ name: string; client: () => ReturnType<typeof createClient> | ReturnType<typeof createCluster> }> = [
  { name: "redis-server", client: () => createClient({ url: inject("redisUrl") }) },
];
const clusterUrl = inject("clusterUrl");
if (clusterUrl) targets.push({ name: "Redis Cluster", client: () => createCluster({ rootNodes: [{ url: clusterUrl }] }) });

describe.each(targets)("copyFrom into $name", ({ client: makeClient }) => {
  const client = makeClient();
  const run = Math.random().toString(36).slice(2, 8);
  let n = 0;
  const fresh = (options: ConstructorParameters<typeof RedcheckSaver>[1] = {}) => new RedcheckSaver(client, { prefix: `cf-${run}-${n++}`, shards: 4, ...options });

  beforeAll(async () => {
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
  });

  describe.each(sources)("from $name", ({ open }) => {
    let source: BaseCheckpointSaver;
    let close: () => Promise<void>;
    const threads = ["waiting", "done"];
    let total: { checkpoints: number; writes: number };

    beforeAll(async () => {
      ({ saver: source, close } = await open());
      await fill(source);
      total = await count(source, threads);
    });
    afterAll(async () => {
      await close();
    });

    it("copies every namespace, checkpoint and pending write; the history reads the same; a second copy changes nothing", async () => {
      expect(total.writes).toBeGreaterThan(0);
      const red = fresh();
      const r1 = await red.copyFrom(source, threads, { batchSize: 3 });
      expect(r1).toMatchObject({ threadsCopied: 2, threadsSkipped: 0, checkpointsCopied: total.checkpoints, checkpointsSkipped: 0, writesCopied: total.writes, writesSkipped: 0 });
      expect(r1.threads.map((t) => [t.threadId, t.status])).toEqual([["waiting", "copied"], ["done", "copied"]]);
      for (const th of threads) {
        const want = await history(source, th);
        expect(new Set(want.map((c) => c.ns)).size).toBeGreaterThan(1); // the subgraph's namespace is there
        expect(await history(red, th)).toEqual(want);
        // getTuple of the latest root checkpoint too.
        const [a, b] = [await source.getTuple(cfg(th)), await red.getTuple(cfg(th))];
        expect(b?.checkpoint.id).toBe(a?.checkpoint.id);
      }
      const before = await history(red, "waiting");
      const r2 = await red.copyFrom(source, threads);
      expect(r2).toMatchObject({ threadsCopied: 0, threadsSkipped: 2, checkpointsCopied: 0, checkpointsSkipped: total.checkpoints, writesCopied: 0, writesSkipped: total.writes });
      expect(r2.threads.every((t) => t.status === "skipped")).toBe(true);
      expect(await history(red, "waiting")).toEqual(before);
    });

    it("refuses a thread redcheck holds with other content, writing nothing, unless replace", async () => {
      const red = fresh();
      await agent(red).invoke(input("someone else"), cfg("waiting")); // another run under the same thread ID
      const mine = await history(red, "waiting");
      const err = await red.copyFrom(source, ["done", "waiting"]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CopyConflictError);
      expect((err as CopyConflictError).conflicts).toEqual([{ threadId: "waiting", reason: expect.any(String) }]);
      expect(await history(red, "waiting")).toEqual(mine);
      expect(await red.getTuple(cfg("done"))).toBeUndefined(); // the other thread was not copied either
      const r = await red.copyFrom(source, ["done", "waiting"], { replace: true });
      expect(r.threads.map((t) => t.status)).toEqual(["copied", "replaced"]);
      for (const th of threads) expect(await history(red, th)).toEqual(await history(source, th));
    });

    it("completes a copy cut off between checkpoints or before their writes", async () => {
      for (const cut of ["put", "putWrites"] as const) {
        const red = fresh();
        const real = red[cut].bind(red) as (...a: unknown[]) => Promise<unknown>;
        let left = 4;
        (red as unknown as Record<string, unknown>)[cut] = async (...a: unknown[]) => {
          if (left-- <= 0) throw new Error("cut off");
          return real(...a);
        };
        await expect(red.copyFrom(source, threads, { batchSize: 1 })).rejects.toThrow("cut off");
        delete (red as unknown as Record<string, unknown>)[cut];
        const r: CopyReport = await red.copyFrom(source, threads);
        expect(r.threads[0]!.status).toBe("completed");
        expect(r.checkpointsCopied + r.checkpointsSkipped).toBe(total.checkpoints);
        expect(r.writesCopied + r.writesSkipped).toBe(total.writes);
        expect(r.writesCopied).toBeGreaterThan(0);
        for (const th of threads) expect(await history(red, th)).toEqual(await history(source, th));
        expect((await red.copyFrom(source, threads)).threadsSkipped).toBe(2);
      }
    });
    it("the run waiting on interrupt() resumes on redcheck with Command({resume}) and ends as on the source", async () => {
      const red = fresh();
      await red.copyFrom(source, ["waiting"]);
      // The source resumes too (so this test comes last: the source's thread moves on).
      const onRed = agent(red);
      const onSrc = agent(source);
      const pending = await onRed.getState(cfg("waiting"), { subgraphs: true });
      expect(pending.tasks.flatMap((t: { interrupts: unknown[] }) => t.interrupts)).toHaveLength(1);
      const want = await onSrc.invoke(new Command({ resume: { approved: true } }), cfg("waiting"));
      const got = await onRed.invoke(new Command({ resume: { approved: true } }), cfg("waiting"));
      expect(got.log.at(-1)).toMatch(/^finish/);
      expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse(JSON.stringify(want)));
      expect(JSON.parse(JSON.stringify((await onRed.getState(cfg("waiting"))).values))).toEqual(JSON.parse(JSON.stringify((await onSrc.getState(cfg("waiting"))).values)));
      // The thread moved on in redcheck: copying the source again is refused, and replace copies it anew.
      const err = await red.copyFrom(source, ["waiting"]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CopyConflictError);
      expect((err as CopyConflictError).code).toBe("INVALID_CONFIG");
      expect((err as CopyConflictError).conflicts.map((c) => c.threadId)).toEqual(["waiting"]);
      const r = await red.copyFrom(source, ["waiting"], { replace: true });
      expect(r.threads[0]).toMatchObject({ threadId: "waiting", status: "replaced" });
      expect(await history(red, "waiting")).toEqual(await history(source, "waiting"));
    });
  });

  it("refuses a thread the source does not have, and bad arguments, before writing anything", async () => {
    const red = fresh();
    const mem = new MemorySaver();
    await fill(mem);
    await expect(red.copyFrom(mem, ["done", "nobody"])).rejects.toBeInstanceOf(NotFoundError);
    expect(await red.getTuple(cfg("done"))).toBeUndefined();
    // A checkpoint ID redcheck cannot store: refused before the thread's first write.
    const odd = { ...emptyCheckpoint(), id: "odd:id" };
    await mem.put({ configurable: { thread_id: "odd", checkpoint_ns: "" } }, odd, { source: "input", step: -1, parents: {} });
    await expect(red.copyFrom(mem, ["done", "odd"])).rejects.toThrow(InvalidCheckpointError);
    expect(await red.getTuple(cfg("done"))).toBeUndefined();
    await expect(red.copyFrom(mem, ["done"], { batchSize: 0 })).rejects.toThrow(/batchSize/);
    await expect(red.copyFrom(mem, [""])).rejects.toThrow(/thread/);
    await expect(red.copyFrom(mem, "done" as unknown as string[])).rejects.toThrow(/array/);
  });

  it("refuses a forked history whose branches give one channel version two values, writing nothing", async () => {
    // LangGraph.js numbers channel versions 1, 2, 3...: a fork from an older checkpoint writes, under
    // the version its sibling wrote, another value; redcheck keeps one value per channel version.
    const mem = new MemorySaver();
    const g = agent(mem);
    await g.invoke(input("fork"), cfg("fork"));
    await g.invoke(new Command({ resume: "ok" }), cfg("fork"));
    const states = [];
    for await (const s of g.getStateHistory(cfg("fork"))) states.push(s);
    const first = states.find((s) => s.next.includes("review"))!;
    await g.updateState(first.config, { log: ["forked"], messages: [new AIMessage({ content: "another plan", id: "plan" })] }, "plan");
    const red = fresh();
    const err = await red.copyFrom(mem, ["fork"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidCheckpointError);
    expect(String((err as Error).message)).toMatch(/holds different values/);
    expect(await red.getTuple(cfg("fork"))).toBeUndefined();
  });
});
