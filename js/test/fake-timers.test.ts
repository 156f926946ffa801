// A RedcheckSaver in a test suite that fakes timers. node-redis writes the
// commands it has queued from a setImmediate callback, and vitest's
// vi.useFakeTimers() fakes setImmediate by default (every timer API but
// nextTick and queueMicrotask): a command then waits for the fake clock, and
// an await on the saver never settles. Listing in toFake only what the suite
// needs faked leaves setImmediate (and nextTick) real, and the saver works.
// The README's "Testing with fake timers" shows the same configuration.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, expect, inject, it, vi } from "vitest";
import { RedcheckSaver } from "../src/index.js";

const url = inject("redisUrl");
const client = createClient({ url });
const run = Math.random().toString(36).slice(2, 8);
let n = 0;
const fresh = () => new RedcheckSaver(client, { prefix: `ft-${run}-${n++}` });

/** The timers the suite fakes: setImmediate, clearImmediate and nextTick stay real. */
const TO_FAKE = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] as const;

beforeAll(async () => {
  await client.connect();
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await client.close();
});

it("put and getTuple complete under vi.useFakeTimers({ toFake }) without setImmediate", async () => {
  const saver = fresh();
  vi.useFakeTimers({ toFake: [...TO_FAKE] });
  vi.setSystemTime(new Date("2030-01-02T03:04:05Z"));
  expect(vi.isFakeTimers()).toBe(true);
  expect(new Date().toISOString()).toBe("2030-01-02T03:04:05.000Z"); // Date is faked

  const cp = { ...emptyCheckpoint(), id: uuid6(0), ts: new Date().toISOString(), channel_values: { a: "x" }, channel_versions: { a: 1 } };
  const cfg = await saver.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, cp, { source: "input", step: -1, parents: {} }, { a: 1 });
  await saver.putWrites(cfg, [["a", "w"]], "task-1");
  const got = await saver.getTuple({ configurable: { thread_id: "t" } });
  expect(got?.checkpoint.id).toBe(cp.id);
  expect(got?.checkpoint.ts).toBe("2030-01-02T03:04:05.000Z");
  expect(got?.checkpoint.channel_values).toEqual({ a: "x" });
  expect(got?.pendingWrites).toEqual([["task-1", "a", "w"]]);

  // The faked setTimeout is still the suite's to drive.
  let fired = false;
  setTimeout(() => { fired = true; }, 60_000);
  vi.advanceTimersByTime(60_000);
  expect(fired).toBe(true);
}, 10_000);

it("a LangGraph.js graph interrupts and resumes on a RedcheckSaver under the same fake timers", async () => {
  const saver = fresh();
  vi.useFakeTimers({ toFake: [...TO_FAKE] });
  const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  const graph = new StateGraph(State)
    .addNode("ask", () => ({ log: [`answer=${interrupt("?")}`] }))
    .addEdge(START, "ask").addEdge("ask", END)
    .compile({ checkpointer: saver });
  const cfg = { configurable: { thread_id: "g" } };
  await graph.invoke({ log: ["in"] }, cfg);
  expect((await graph.getState(cfg)).next).toEqual(["ask"]);
  expect(await graph.invoke(new Command({ resume: 42 }), cfg)).toEqual({ log: ["in", "answer=42"] });
}, 10_000);

it("with vitest's default toFake (setImmediate faked) a command waits until the fake clock runs", async () => {
  // A client of its own: one whose write was scheduled on the fake clock.
  const own = createClient({ url });
  await own.connect();
  const realSetTimeout = globalThis.setTimeout;
  vi.useFakeTimers();
  try {
    const saver = new RedcheckSaver(own, { prefix: `ft-${run}-${n++}` });
    const pending = saver.getTuple({ configurable: { thread_id: "t" } }).then(() => "done");
    const first = await Promise.race([pending, new Promise((r) => realSetTimeout(() => r("stuck"), 300))]);
    expect(first).toBe("stuck");
    // Running the fake clock runs node-redis's setImmediate: the command is written and answered.
    let settled: unknown;
    void pending.then((v) => { settled = v; });
    for (let i = 0; i < 100 && settled === undefined; i++) {
      await vi.advanceTimersToNextTimerAsync();
      await new Promise((r) => realSetTimeout(r, 5));
    }
    expect(settled).toBe("done");
  } finally {
    vi.useRealTimers();
    await own.close();
  }
}, 10_000);
