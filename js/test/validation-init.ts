// The initializer both validation runs share: each checkpointer gets a
// prefix of its own (instances are isolated), on one connected client.
import type { RedisConnection } from "../src/conn.js";
import { RedcheckSaver, type RedcheckSaverOptions } from "../src/index.js";

export function initializer(name: string, client: RedisConnection & { connect(): Promise<unknown>; close(): Promise<unknown> }, options: RedcheckSaverOptions = {}) {
  let n = 0;
  const run = Math.random().toString(36).slice(2, 8);
  return {
    checkpointerName: name,
    async beforeAll() {
      await client.connect();
    },
    async afterAll() {
      await client.close();
    },
    createCheckpointer: () => new RedcheckSaver(client, { ...options, prefix: `val-${run}-${n++}` }),
  };
}
