// The official LangGraph.js checkpointer validation suite, in full (every
// default case, plus the delta-channel cases), against RedcheckSaver on a
// local 3-master 3-replica Redis Cluster (REDCHECK_CLUSTER=1; see
// test/global-setup.ts). Without a cluster it is skipped.
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { createCluster } from "redis";
import { inject } from "vitest";
import { initializer } from "./validation-init.js";

const url = inject("clusterUrl");

if (url) {
  const init = initializer("@graphstate/redcheck (Redis Cluster)", createCluster({ rootNodes: [{ url }] }));
  validate(init);
  deltaChannelHistoryTests(init);
} else {
  it.skip("needs REDCHECK_CLUSTER=1 (a local 3+3 Redis Cluster)", () => {});
}
