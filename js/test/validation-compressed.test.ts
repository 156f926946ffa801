// The official validation suite again, with every value that gains from it
// stored compressed (compression threshold 1 byte).
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { createClient } from "redis";
import { inject } from "vitest";
import { initializer } from "./validation-init.js";

const init = initializer("@graphstate/redcheck (compression on)", createClient({ url: inject("redisUrl") }), { compression: { threshold: 1 } });
validate(init);
deltaChannelHistoryTests(init);
