// The official validation suite again, with encryption at rest on (every
// value sealed, AES-256-GCM, bound to its place) and compression under it
// (threshold 1 byte: encryption comes after compression).
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { randomBytes } from "node:crypto";
import { createClient } from "redis";
import { inject } from "vitest";
import { Keyring } from "../src/index.js";
import { initializer } from "./validation-init.js";

const encryption = Keyring.fromKeys("test-key", { "test-key": randomBytes(32) });
const init = initializer("@graphstate/redcheck (encryption on)", createClient({ url: inject("redisUrl") }), { encryption, compression: { threshold: 1 } });
validate(init);
deltaChannelHistoryTests(init);
