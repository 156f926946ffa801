// The official LangGraph.js checkpointer validation suite, in full (every
// default case, plus the opt-in delta-channel cases), against RedcheckSaver
// on a real redis-server.
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { createClient } from "redis";
import { inject } from "vitest";
import { RedcheckSaver } from "../src/index.js";

const client = createClient({ url: inject("redisUrl") });
let n = 0;
const run = Math.random().toString(36).slice(2, 8);

const initializer = {
  checkpointerName: "@graphstate/redcheck",
  async beforeAll() {
    await client.connect();
  },
  async afterAll() {
    await client.close();
  },
  // Each checkpointer gets a prefix of its own: instances are isolated.
  createCheckpointer: () => new RedcheckSaver(client, { prefix: `val-${run}-${n++}`, missingValues: "absent" }),
};

validate(initializer);
deltaChannelHistoryTests(initializer);
