// RedcheckSaver without @opentelemetry/api (an optional peer dependency): its
// dynamic import fails, as when the package is not installed, and the saver
// works and reports nothing.
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { createClient } from "redis";
import { afterAll, beforeAll, expect, inject, it, vi } from "vitest";
import { InvalidCheckpointError, RedcheckSaver } from "../src/index.js";

vi.mock("@opentelemetry/api", () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

const url = inject("redisUrl");
const client = createClient({ url });

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.close();
});

it("works when @opentelemetry/api cannot be loaded", async () => {
  await expect(import("@opentelemetry/api")).rejects.toThrow();
  const s = new RedcheckSaver(client, { prefix: `tel-noapi-${Math.random().toString(36).slice(2, 8)}` });
  const base = { configurable: { thread_id: "plain" } };
  const cfg = await s.put(base, { ...emptyCheckpoint(), id: uuid6(0), channel_values: { a: "v" }, channel_versions: { a: 1 } },
    { source: "loop", step: 0, parents: {} }, { a: 1 });
  await s.putWrites(cfg, [["a", "w"]], "task");
  expect((await s.getTuple(base))?.checkpoint.channel_values).toEqual({ a: "v" });
  const all = [];
  for await (const t of s.list(base)) all.push(t);
  expect(all).toHaveLength(1);
  await expect(s.put(base, { ...emptyCheckpoint(), id: uuid6(1) }, { source: "loop", step: "x" as unknown as number, parents: {} }, {}))
    .rejects.toThrow(InvalidCheckpointError);
  await s.deleteThread("plain");
  expect(await s.getTuple(base)).toBeUndefined();
  expect(await s.reinitialize()).toBe(false);
});
