// Local Redis servers for the tests, on free loopback ports, as the Go tests'
// internal/redistest does: a redis-server (REDIS_URL when set) and, when
// REDCHECK_CLUSTER is set, a 3-master 3-replica Redis Cluster (REDCHECK_CLUSTER_URL
// when set), made with redis-server and redis-cli.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface Server {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function waitPing(port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const r = spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "PING"], { encoding: "utf8" });
    if (r.stdout?.trim() === "PONG") return;
    if (Date.now() > until) throw new Error(`redis-server on port ${port} did not answer: ${r.stderr ?? ""}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

function stopper(p: ChildProcess, dir: string): () => Promise<void> {
  return () => new Promise((resolve) => {
    if (p.exitCode !== null) {
      rmSync(dir, { recursive: true, force: true });
      resolve();
      return;
    }
    p.once("exit", () => {
      rmSync(dir, { recursive: true, force: true });
      resolve();
    });
    p.kill("SIGTERM");
  });
}

/** startRedis starts one redis-server (extra: more arguments, e.g. cluster mode). */
export async function startRedis(extra: string[] = []): Promise<Server> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "redcheck-js-redis-"));
  const p = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
    "--dir", dir, ...extra], { stdio: "ignore" });
  try {
    await waitPing(port, 10_000);
  } catch (e) {
    p.kill("SIGKILL");
    throw e;
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop: stopper(p, dir) };
}

/** startCluster starts 6 redis-servers in cluster mode and joins them: 3 masters, 3 replicas. */
export async function startCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  const nodes: Server[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      nodes.push(await startRedis(["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${i}.conf`, "--cluster-node-timeout", "5000"]));
    }
    const r = spawnSync("redis-cli", ["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-replicas", "1", "--cluster-yes"],
      { encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0) throw new Error(`redis-cli --cluster create: ${r.stdout} ${r.stderr}`);
    const until = Date.now() + 30_000;
    for (;;) {
      const ok = nodes.every((n) => /cluster_state:ok/.test(spawnSync("redis-cli", ["-p", String(n.port), "CLUSTER", "INFO"], { encoding: "utf8" }).stdout ?? ""));
      if (ok) break;
      if (Date.now() > until) throw new Error("cluster did not reach cluster_state:ok");
      await new Promise((res) => setTimeout(res, 100));
    }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw e;
  }
  return { url: nodes[0]!.url, stop: async () => { await Promise.all(nodes.map((n) => n.stop())); } };
}
