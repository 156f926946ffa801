// The official LangGraph.js checkpointer validation suite, in full (every
// default case, plus the opt-in delta-channel cases), against RedcheckSaver
// on a real redis-server.
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { createClient } from "redis";
import { inject } from "vitest";
import { initializer } from "./validation-init.js";

const init = initializer("@graphstate/redcheck", createClient({ url: inject("redisUrl") }));
validate(init);
deltaChannelHistoryTests(init);
