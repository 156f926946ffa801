// Starts the servers the tests share, once: a redis-server on a free
// loopback port (unless REDIS_URL is set) and, with REDCHECK_CLUSTER=1, a
// local 3+3 Redis Cluster (unless REDCHECK_CLUSTER_URL is set).
import type { TestProject } from "vitest/node";
import { startCluster, startRedis } from "./servers.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    clusterUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  let redisUrl = process.env.REDIS_URL ?? "";
  if (redisUrl === "") {
    const s = await startRedis();
    stops.push(s.stop);
    redisUrl = s.url;
  }
  let clusterUrl = process.env.REDCHECK_CLUSTER_URL ?? "";
  if (clusterUrl === "" && process.env.REDCHECK_CLUSTER) {
    const c = await startCluster();
    stops.push(c.stop);
    clusterUrl = c.url;
  }
  project.provide("redisUrl", redisUrl);
  project.provide("clusterUrl", clusterUrl);
  return async () => {
    for (const s of stops) await s();
  };
}
