import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The validation suite of @langchain/langgraph-checkpoint-validation uses vitest's globals.
    globals: true,
    globalSetup: ["./test/global-setup.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
