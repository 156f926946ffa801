// The official LangGraph.js checkpointer validation suite, in full (every
// default case, plus the delta-channel cases), against RedcheckSaver on a
// local 3-master 3-replica Redis Cluster (REDCHECK_CLUSTER=1; see
// test/global-setup.ts). Without a cluster it is skipped.
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { createCluster } from "redis";
import { inject } from "vitest";
import { RedcheckSaver } from "../src/index.js";

const url = inject("clusterUrl");

if (url) {
  const cluster = createCluster({ rootNodes: [{ url }] });
  let n = 0;
  const run = Math.random().toString(36).slice(2, 8);
  const initializer = {
    checkpointerName: "@graphstate/redcheck (Redis Cluster)",
    async beforeAll() {
      await cluster.connect();
    },
    async afterAll() {
      await cluster.close();
    },
    createCheckpointer: () => new RedcheckSaver(cluster, { prefix: `valc-${run}-${n++}`, missingValues: "absent" }),
  };
  validate(initializer);
  deltaChannelHistoryTests(initializer);
} else {
  it.skip("needs REDCHECK_CLUSTER=1 (a local 3+3 Redis Cluster)", () => {});
}
