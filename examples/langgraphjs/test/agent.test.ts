// Runs the example agent on a real redis-server with the Go dashboard
// watching: the run pauses at interrupt(), is resumed, and ends with the
// tool's answer; the dashboard's live event stream shows every checkpoint
// as it is written, and its API (the Go saver) reads the thread's state.
import { HumanMessage, ToolMessage, AIMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { RedcheckSaver } from "@graphstate/redcheck";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRedis, type Server } from "../../../js/test/servers.js";
import { buildGraph } from "../src/agent.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dir = mkdtempSync(join(tmpdir(), "redcheck-langgraphjs-"));
const prefix = `lgjs-${Math.random().toString(36).slice(2, 8)}`;
let redis: Server | undefined;
let url = process.env.REDIS_URL ?? "";
let dashboard: ChildProcess | undefined;
let base = "";
const events: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  if (url === "") {
    redis = await startRedis();
    url = redis.url;
  }
  const bin = join(dir, "dashboard");
  const build = spawnSync("go", ["build", "-o", bin, "./examples/dashboard"], { cwd: repo, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`go build ./examples/dashboard: ${build.stderr}`);
  dashboard = spawn(bin, ["-addr", "127.0.0.1:0", "-prefix", prefix, "-demo=false"], { env: { ...process.env, REDIS_URL: url }, stdio: ["ignore", "pipe", "inherit"] });
  base = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the dashboard did not start: ${out}`)), 30_000);
    dashboard!.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (http:\/\/[^/\s]+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
});

afterAll(async () => {
  dashboard?.kill("SIGTERM");
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** watch reads the dashboard's live event stream (Server-Sent Events) into events until the signal aborts. */
async function watch(signal: AbortSignal, ready: () => void): Promise<void> {
  const res = await fetch(`${base}/api/events`, { signal });
  const reader = res.body!.getReader();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += Buffer.from(value).toString();
      let at;
      while ((at = text.indexOf("\n\n")) >= 0) {
        const block = text.slice(0, at);
        text = text.slice(at + 2);
        if (/^event: ready$/m.test(block)) ready();
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data && data !== "{}") events.push(JSON.parse(data));
      }
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  }
}

it("pauses at the approval, resumes, answers; the Go dashboard shows it live", async () => {
  const stop = new AbortController();
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => (markReady = r));
  const watching = watch(stop.signal, markReady);
  await ready; // from here on the dashboard's stream misses no event

  const saver = await RedcheckSaver.fromUrl(url, { prefix });
  const graph = buildGraph(saver);
  const thread = `weather-${Date.now()}`;
  const config = { configurable: { thread_id: thread } };

  await graph.invoke({ messages: [new HumanMessage("What is the weather in Paris?")] }, config);
  const paused = await graph.getState(config);
  expect(paused.next).toEqual(["approve"]);
  expect(paused.tasks[0]!.interrupts[0]!.value).toMatchObject({ question: "May I call this tool?" });

  const done = await graph.invoke(new Command({ resume: "yes" }), config);
  expect(done.approved).toBe(true);
  const kinds = done.messages.map((m: unknown) => (m as { constructor: { name: string } }).constructor.name);
  expect(kinds).toEqual(["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]);
  expect((done.messages[2] as ToolMessage).content).toBe("It is sunny and 24 °C in Paris.");
  expect((done.messages[3] as AIMessage).content).toBe("Here is the weather: It is sunny and 24 °C in Paris.");
  // The resumed state reads back from Redis whole, with its types.
  const state = await graph.getState(config);
  expect(state.next).toEqual([]);
  expect(state.values.messages[3]).toBeInstanceOf(AIMessage);

  const history: string[] = [];
  for await (const s of graph.getStateHistory(config)) history.push(s.config.configurable!.checkpoint_id as string);

  // The Go side: the dashboard lists the thread and its checkpoints (read by the Go saver) ...
  const { threads } = await (await fetch(`${base}/api/threads`)).json() as { threads: Array<{ thread_id: string }> };
  expect(threads.map((t) => t.thread_id)).toContain(thread);
  const page = await (await fetch(`${base}/api/threads/${encodeURIComponent(thread)}/checkpoints?limit=100`)).json() as { checkpoints: Array<{ checkpoint_id: string }> };
  expect(page.checkpoints.map((c) => c.checkpoint_id)).toEqual(history);
  const latest = await (await fetch(`${base}/api/threads/${encodeURIComponent(thread)}/checkpoints/${history[0]}?ns=`)).json() as { channel_values: Record<string, unknown> };
  // ... and reads the LangChain messages as plain data (their serialized form).
  expect(JSON.stringify(latest.channel_values.messages)).toContain("It is sunny and 24 °C in Paris.");
  expect(latest.channel_values.approved).toBe(true);

  // ... and its live stream carried each checkpoint once, as it was written.
  const until = Date.now() + 10_000;
  const seen = () => events.filter((e) => e.type === "checkpoint" && e.thread_id === thread && e.checkpoint_ns === "").map((e) => e.checkpoint_id as string);
  while (seen().length < history.length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  stop.abort();
  await watching;
  expect([...seen()].sort()).toEqual([...history].sort());

  await saver.close();
});
