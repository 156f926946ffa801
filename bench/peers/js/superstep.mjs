// The end-to-end super-step benchmark of issue 38: a ReAct-style agent
// graph run by the real LangGraph.js runtime (@langchain/langgraph's
// StateGraph) on no checkpointer, redcheck's TypeScript client
// (redcheck-js), MemorySaver, the SQLite saver (a WAL file in a temporary
// directory), the Postgres saver, redis-floor (MemorySaver plus one plain
// HSET per call: the least a Redis checkpointer pays, see FloorSaver) and
// redis-floor-script (the same HSET inside a script),
// in this one Node process, their passes
// interleaved, at each --concurrency level and each --durability mode. It
// measures what a checkpointer adds to a super-step. bench/ runs it
// (go run ./bench -only superstep, and every full run), merges its results
// and judges the targets; it can also run alone:
//
//   node superstep.mjs --redis-url redis://127.0.0.1:6379 --pg-url postgresql://postgres@127.0.0.1:5432/test
//
// The graph: an "agent" node (a deterministic fake chat model: an AIMessage
// of ~1 KB with one tool call) and a "tools" node (a ToolMessage of ~1 KB);
// the ninth tool call is return-direct, so the graph ends after it. An
// invoke of a new thread starts from a 10 KB system message and a question,
// and its state grows to ~30 KB of messages. A super-step is a step of the
// runtime's loop that writes a checkpoint (durability "sync"): the input
// step (-1), the start step (0) and 18 node steps, 20 per invoke.
//
// Output, on stdout, one JSON object per line:
//   {"superstep": {...}} one pass: an implementation at a durability and a concurrency (see fields below)
//   {"meta": {...}}      package and server versions
//   {"skip": {"impl","reason"}} an implementation that could not run
//   {"note": "..."}
// Progress goes to stderr. Every pass is bounded by --steps super-steps and
// --time-ms, and the script only connects to the loopback servers it is given.

import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { text } from "./workload.mjs";

const args = parseArgs(process.argv.slice(2), {
  "redis-url": "", "pg-url": "", "pg-skip-reason": "", concurrency: "1,64", durability: "sync,async,exit",
  steps: "1000", "per-worker": "2", "time-ms": "10000", rounds: "4", only: "", "redcheck-deflate": "",
});
const cfg = {
  concurrency: args.concurrency.split(",").filter(Boolean).map(Number),
  durability: args.durability.split(",").filter(Boolean),
  steps: +args.steps, perWorker: +args["per-worker"], budgetMs: +args["time-ms"], rounds: Math.max(1, +args.rounds),
};
for (const d of cfg.durability) if (!["sync", "async", "exit"].includes(d)) throw new Error(`unknown durability ${d}`);
const runID = randomBytes(4).toString("hex");

function parseArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (!(k in defaults)) throw new Error(`unknown flag --${k}`);
    out[k] = argv[i + 1] ?? "";
  }
  return out;
}

const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const log = (m) => process.stderr.write(`superstep: ${m}\n`);
const failMessage = (e) => String(e?.message ?? e).split("\n")[0];

function assertLoopback(raw, what) {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  if (!(host === "localhost" || host === "::1" || /^127\./.test(host))) {
    throw new Error(`${what} host ${host} is not loopback; the benchmark only talks to this machine`);
  }
}

// ---- the graph ----------------------------------------------------------

/** STEPS_PER_INVOKE: checkpoints a "sync" invoke writes (steps -1 .. 18). */
export const STEPS_PER_INVOKE = 20;
const TOOL_CALLS = 9;
const system = text(1, 10_000);

// The fake model: the turn-th AIMessage asks for one tool call; the last one
// calls the return-direct tool. Deterministic content, ~1 KB per message.
function agent(state) {
  let turn = 0;
  for (const m of state.messages) if (m.getType() === "ai") turn++;
  const name = turn + 1 === TOOL_CALLS ? "answer" : "lookup";
  return {
    messages: [new AIMessage({
      id: `ai-${turn}`, content: text(100 + turn, 800),
      tool_calls: [{ id: `call-${turn}`, name, args: { query: text(200 + turn, 150), page: turn } }],
    })],
  };
}

function tools(state) {
  const call = state.messages.at(-1).tool_calls[0];
  return { messages: [new ToolMessage({ id: `tool-${call.id}`, content: text(300 + call.args.page, 1000), tool_call_id: call.id, name: call.name })] };
}

function buildGraph(checkpointer) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", tools)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => (s.messages.at(-1).tool_calls?.length ? "tools" : END), ["tools", END])
    .addConditionalEdges("tools", (s) => (s.messages.at(-1).name === "answer" ? END : "agent"), ["agent", END])
    .compile(checkpointer ? { checkpointer } : {});
}

const input = () => ({ messages: [new SystemMessage({ id: "system", content: system }), new HumanMessage({ id: "question", content: "What does the agent find?" })] });

// ---- meters -------------------------------------------------------------

// redisMeter counts what a node-redis client sends: a command per
// sendCommand (EVALSHA / EVAL counted as scripts too), a MULTI ... EXEC
// block as one; each is a request and its reply.
function redisMeter(client) {
  const m = { trips: 0, scripts: 0, byCommand: {} };
  const send = client.sendCommand.bind(client);
  client.sendCommand = (cmd, ...rest) => {
    m.trips++;
    const name = String(cmd[0]).toUpperCase();
    if (name === "EVALSHA" || name === "EVAL") m.scripts++;
    m.byCommand[name] = (m.byCommand[name] ?? 0) + 1;
    return send(cmd, ...rest);
  };
  const multi = client.multi.bind(client);
  client.multi = (...a) => {
    const tx = multi(...a);
    const exec = tx.exec.bind(tx);
    tx.exec = (...e) => {
      m.trips++;
      m.byCommand.MULTI = (m.byCommand.MULTI ?? 0) + 1;
      return exec(...e);
    };
    return tx;
  };
  return { load: () => ({ trips: m.trips, scripts: m.scripts, byCommand: { ...m.byCommand } }) };
}

// pgMeter counts node-postgres queries, each a round trip.
const pgMeter = (() => {
  let trips = 0;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (...a) {
    trips++;
    return query.apply(this, a);
  };
  return { load: () => ({ trips, scripts: 0, byCommand: {} }) };
})();

// serverStats reads Redis's main-thread CPU and the usec of the commands
// the measured client sent (INFO commandstats, less the INFO calls).
async function serverStats(ctl) {
  const cpu = String(await ctl.info("cpu"));
  const f = (k) => Number(cpu.match(new RegExp(`${k}:([0-9.]+)`))?.[1] ?? NaN);
  const stats = String(await ctl.info("commandstats"));
  let usec = 0;
  for (const m of stats.matchAll(/cmdstat_([a-z|_-]+):calls=\d+,usec=(\d+)/g)) if (m[1] !== "info") usec += Number(m[2]);
  return { cpuUs: (f("used_cpu_sys_main_thread") + f("used_cpu_user_main_thread")) * 1e6, usec };
}

// countCalls counts the saver methods the runtime calls.
function countCalls(saver) {
  const c = { put: 0, putWrites: 0, getTuple: 0 };
  for (const k of Object.keys(c)) {
    const fn = saver[k].bind(saver);
    saver[k] = (...a) => {
      c[k]++;
      return fn(...a);
    };
  }
  return () => ({ ...c });
}

// FloorSaver is the redis-floor pass: the least any checkpointer that keeps
// a graph's state in Redis pays per super-step. It does MemorySaver's work
// (the runtime's calls, the serialization), then sends, for each put and
// each putWrites, what MemorySaver stored for the call (the serialized
// checkpoint and metadata; the serialized writes) to Redis as one plain
// HSET in one round trip, awaited as a checkpointer's call is: no script,
// no check, no index, no event. Its Redis CPU and the time it adds bound
// from below what a Redis checkpointer of this graph can reach on this
// machine; redcheck-js does the same calls in the same round trips, plus
// every guarantee.
//
// With a script (redis-floor-script), each call is instead one EVALSHA of a
// script that only HSETs its arguments: the least a checkpointer pays that
// checks before it writes, atomically, in one round trip, which takes a
// script on Redis (the bytes then enter Lua as arguments).
class FloorSaver extends MemorySaver {
  constructor(client, prefix, sha = "") {
    super();
    this.client = client;
    this.prefix = prefix;
    this.sha = sha;
  }

  hset(key, pairs) {
    if (this.sha === "") return this.client.sendCommand(["HSET", key, ...pairs]);
    return this.client.sendCommand(["EVALSHA", this.sha, "1", key, ...pairs]);
  }

  async put(config, checkpoint, metadata, newVersions) {
    const out = await super.put(config, checkpoint, metadata, newVersions);
    const { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id } = out.configurable;
    const [cp, md] = this.storage[thread][ns][id];
    await this.hset(`${this.prefix}:{${thread}}`, [`cp:${ns}:${id}`, Buffer.from(cp), `md:${ns}:${id}`, Buffer.from(md)]);
    return out;
  }

  async putWrites(config, writes, taskId, taskPath) {
    await super.putWrites(config, writes, taskId, taskPath);
    const { thread_id: thread, checkpoint_ns: ns = "", checkpoint_id: id } = config.configurable;
    const stored = this.writes[JSON.stringify([thread, ns, id])] ?? {};
    const pairs = [];
    for (const [k, w] of Object.entries(stored)) if (w[0] === taskId) pairs.push(`w:${ns}:${id}:${k}`, Buffer.from(w[2]));
    if (pairs.length > 0) await this.hset(`${this.prefix}:{${thread}}`, pairs);
  }
}

// forgetMemory drops what an in-memory saver holds once a chunk of its pass
// has run: its threads are done with, and kept they would grow the heap that
// every later pass's garbage collections walk (the other checkpointers keep
// their data outside this process).
function forgetMemory(saver) {
  saver.storage = {};
  saver.writes = {};
}

// settle ends a chunk of a pass, outside its measured time: the in-memory
// savers forget their threads, so that the heap every later pass's garbage
// collections walk does not grow with them. (A forced full collection here
// made every pass slower, none's included: it is not done.)
function settle(p) {
  p.forget?.();
}

// unlinkPrefix deletes every key of a prefix, SCAN page by page.
async function unlinkPrefix(ctl, prefix) {
  let cursor = "0";
  do {
    const r = await ctl.scan(cursor, { MATCH: `${prefix}*`, COUNT: 1000 });
    cursor = String(r.cursor);
    if (r.keys.length > 0) await ctl.unlink(r.keys);
  } while (cursor !== "0");
}

// ---- passes -------------------------------------------------------------

class Pass {
  constructor({ impl, durability, conc, maxInvokes, graph, meter, calls, ctl, forget }) {
    Object.assign(this, { impl, durability, conc, maxInvokes, graph, meter, calls, ctl, forget });
    this.next = 0;
    this.lats = [];
    this.elapsedMs = 0;
    this.cpuUs = 0;
    this.sysUs = 0;
    this.trips = 0;
    this.scripts = 0;
    this.byCommand = {};
    this.callsDone = { put: 0, putWrites: 0, getTuple: 0 };
    this.serverCpuUs = 0;
    this.serverUs = 0;
    this.err = null;
  }

  invoke(i) {
    const thread = `ss-${runID}-${this.impl}-${this.durability}-c${this.conc}-${i}`;
    const opts = { configurable: { thread_id: thread }, recursionLimit: 100 };
    if (this.impl !== "none") opts.durability = this.durability;
    return this.graph.invoke(input(), opts).then((out) => {
      if (out.messages.length !== 2 + 2 * TOOL_CALLS) throw new Error(`an invoke ended with ${out.messages.length} messages`);
    });
  }

  async run(count, deadline) {
    const lats = [];
    let failed = null;
    const end = this.next + count;
    const worker = async () => {
      while (!failed && Date.now() < deadline) {
        const i = this.next++;
        if (i >= end) return;
        const t0 = process.hrtime.bigint();
        try {
          await this.invoke(i);
        } catch (e) {
          failed ??= e;
          return;
        }
        lats.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
    };
    await Promise.all(Array.from({ length: this.conc }, worker));
    if (failed) throw failed;
    return lats;
  }

  async warm(n) {
    try {
      await this.run(n, Date.now() + Math.max(cfg.budgetMs, 5000));
    } catch (e) {
      this.err = e;
    }
  }

  async chunk(count, budgetMs) {
    if (this.err) return;
    const s0 = this.ctl ? await serverStats(this.ctl) : null;
    const m0 = this.meter?.load();
    const c0 = this.calls?.();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    try {
      const lats = await this.run(count, Date.now() + budgetMs);
      this.elapsedMs += performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      this.cpuUs += cpu.user + cpu.system;
      this.sysUs += cpu.system;
      this.lats.push(...lats);
      if (this.meter) {
        const m1 = this.meter.load();
        this.trips += m1.trips - m0.trips;
        this.scripts += m1.scripts - m0.scripts;
        for (const [k, v] of Object.entries(m1.byCommand)) this.byCommand[k] = (this.byCommand[k] ?? 0) + v - (m0.byCommand[k] ?? 0);
      }
      if (this.calls) {
        const c1 = this.calls();
        for (const k of Object.keys(c1)) this.callsDone[k] += c1[k] - c0[k];
      }
      if (this.ctl) {
        const s1 = await serverStats(this.ctl);
        this.serverCpuUs += s1.cpuUs - s0.cpuUs;
        this.serverUs += s1.usec - s0.usec;
      }
    } catch (e) {
      this.err = e;
    }
  }

  result() {
    const n = this.lats.length;
    const steps = n * STEPS_PER_INVOKE;
    const sorted = Float64Array.from(this.lats).sort();
    const pct = (p) => (n ? sorted[Math.min(Math.max(Math.ceil((p / 100) * n), 1), n) - 1] : null);
    const per = (x, ok = true) => (ok && steps ? x / steps : null);
    const calls = this.calls ? Object.fromEntries(Object.entries(this.callsDone).map(([k, v]) => [k, per(v)])) : null;
    const commands = this.meter ? Object.fromEntries(Object.entries(this.byCommand).map(([k, v]) => [k, per(v)])) : null;
    return {
      impl: this.impl, durability: this.impl === "none" ? "" : this.durability, concurrency: this.conc, invokes: n, super_steps: steps,
      super_steps_per_s: steps ? steps / (this.elapsedMs / 1000) : null, us_per_super_step: per(this.elapsedMs * 1000),
      invoke_p50_us: pct(50), invoke_p99_us: pct(99), invoke_mean_us: n ? this.lats.reduce((a, b) => a + b, 0) / n : null,
      node_cpu_us_per_super_step: per(this.cpuUs), node_sys_cpu_us_per_super_step: per(this.sysUs),
      server_cpu_us_per_super_step: per(this.serverCpuUs, !!this.ctl), server_us_per_super_step: per(this.serverUs, !!this.ctl),
      roundtrips_per_super_step: per(this.trips, !!this.meter), scripts_per_super_step: per(this.scripts, !!this.meter && this.impl.startsWith("redcheck-js")),
      commands_per_super_step: commands, calls_per_super_step: calls,
    };
  }
}

// ---- the implementations -------------------------------------------------

function versions() {
  const require = createRequire(import.meta.url);
  const v = { node: process.version };
  for (const p of ["@langchain/langgraph", "@langchain/core", "@langchain/langgraph-checkpoint", "@langchain/langgraph-checkpoint-sqlite",
    "@langchain/langgraph-checkpoint-postgres", "@graphstate/redcheck", "better-sqlite3", "pg", "redis"]) {
    try {
      v[p] = require(`${p}/package.json`).version;
    } catch {
      v[p] = "not installed";
    }
  }
  return v;
}

const only = args.only ? args.only.split(",") : null;
const want = (impl) => impl === "none" || !only || only.includes(impl);
// --redcheck-deflate LEVEL adds redcheck-js+deflateLEVEL: redcheck-js with compression of stored values.

async function openAll(meta) {
  const impls = [];
  const skip = (impl, e) => {
    log(`${impl}: cannot run: ${failMessage(e)}`);
    emit({ skip: { impl, reason: failMessage(e) } });
  };
  impls.push({ impl: "none", saver: null, close: async () => {} });
  if (want("langgraph-js-memory")) {
    const saver = new MemorySaver();
    impls.push({ impl: "langgraph-js-memory", saver, forget: () => forgetMemory(saver), close: async () => {} });
  }
  if (want("langgraph-js-sqlite")) {
    try {
      const dir = mkdtempSync(join(tmpdir(), "rcbench-superstep-sqlite-"));
      const saver = SqliteSaver.fromConnString(join(dir, "checkpoints.sqlite"));
      await saver.getTuple({ configurable: { thread_id: "setup" } }); // runs its setup: WAL journal
      meta.sqlite = saver.db.prepare("select sqlite_version() as v").get().v + ", journal_mode " + saver.db.pragma("journal_mode", { simple: true }) + " (file in a temporary directory)";
      impls.push({ impl: "langgraph-js-sqlite", saver, close: async () => { saver.db.close(); rmSync(dir, { recursive: true, force: true }); } });
    } catch (e) {
      skip("langgraph-js-sqlite", e);
    }
  }
  if (want("langgraph-js-postgres")) {
    try {
      if (!args["pg-url"]) throw new Error(args["pg-skip-reason"] || "no --pg-url");
      assertLoopback(args["pg-url"], "--pg-url");
      const schema = `rcbench_ss_${runID}`;
      const admin = new pg.Pool({ connectionString: args["pg-url"], max: 1, connectionTimeoutMillis: 5000 });
      try {
        await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      } catch (e) {
        await admin.end().catch(() => {});
        throw new Error(`Postgres at ${new URL(args["pg-url"]).host} is unreachable: ${failMessage(e)}`);
      }
      meta.postgres = (await admin.query("SHOW server_version")).rows[0].server_version + ` (schema ${schema}, dropped afterwards)`;
      const saver = PostgresSaver.fromConnString(args["pg-url"], { schema });
      await saver.setup();
      impls.push({
        impl: "langgraph-js-postgres", saver, meter: pgMeter,
        close: async () => {
          await saver.end();
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await admin.end();
        },
      });
    } catch (e) {
      skip("langgraph-js-postgres", e);
    }
  }
  if (want("redcheck-js")) {
    try {
      if (!args["redis-url"]) throw new Error("no --redis-url");
      assertLoopback(args["redis-url"], "--redis-url");
      const mod = await import("@graphstate/redcheck");
      const { createClient } = await import("redis");
      const client = createClient({ url: args["redis-url"] });
      const ctl = createClient({ url: args["redis-url"] });
      await client.connect();
      await ctl.connect();
      meta.redis = (String(await ctl.info("server")).match(/redis_version:(\S+)/)?.[1] ?? "?") + ` at ${new URL(args["redis-url"]).host}`;
      const meter = redisMeter(client);
      const prefix = `rcbench-ss-${runID}`;
      const saver = new mod.RedcheckSaver(client, { prefix });
      await saver.setup();
      const require = createRequire(import.meta.url);
      meta["@graphstate/redcheck"] = require("@graphstate/redcheck/package.json").version + ` (prefix ${prefix}, deleted afterwards)`;
      if (args["redcheck-deflate"]) {
        // A variant with compression of stored values (a DEFLATE level): fewer bytes through Lua, more Node CPU.
        const level = Number(args["redcheck-deflate"]);
        const zsaver = new mod.RedcheckSaver(client, { prefix: `${prefix}-z`, compression: { level } });
        await zsaver.setup();
        impls.push({ impl: `redcheck-js+deflate${level}`, saver: zsaver, meter, ctl, close: async () => {} });
      }
      impls.push({
        impl: "redcheck-js", saver, meter, ctl,
        close: async () => {
          await unlinkPrefix(ctl, prefix);
          await client.close();
          await ctl.close();
        },
      });
    } catch (e) {
      skip("redcheck-js", e);
    }
  }
  for (const [impl, script] of [["redis-floor", false], ["redis-floor-script", true]]) {
    if (!want(impl)) continue;
    try {
      if (!args["redis-url"]) throw new Error("no --redis-url");
      assertLoopback(args["redis-url"], "--redis-url");
      const { createClient } = await import("redis");
      const client = createClient({ url: args["redis-url"] });
      const ctl = createClient({ url: args["redis-url"] });
      await client.connect();
      await ctl.connect();
      const sha = script ? String(await ctl.sendCommand(["SCRIPT", "LOAD", "return redis.call('HSET', KEYS[1], unpack(ARGV))"])) : "";
      const prefix = `rcbench-ss-${runID}-${impl}`;
      const saver = new FloorSaver(client, prefix, sha);
      impls.push({
        impl, saver, meter: redisMeter(client), ctl, forget: () => forgetMemory(saver),
        close: async () => {
          await unlinkPrefix(ctl, prefix);
          await client.close();
          await ctl.close();
        },
      });
    } catch (e) {
      skip(impl, e);
    }
  }
  return impls;
}

// passesAt returns the passes of one concurrency level: none once, every
// checkpointer at every durability; and the invokes of each.
function passesAt(impls, conc) {
  const maxInvokes = Math.max(Math.ceil(cfg.steps / STEPS_PER_INVOKE), cfg.perWorker * conc);
  const out = [];
  for (const im of impls) {
    const calls = im.saver ? countCalls(im.saver) : null;
    const graph = buildGraph(im.saver);
    for (const durability of im.saver ? cfg.durability : ["sync"]) {
      out.push(new Pass({ impl: im.impl, durability, conc, maxInvokes, graph, meter: im.meter, calls, ctl: im.ctl, forget: im.forget }));
    }
  }
  return out;
}

async function main() {
  const meta = versions();
  const impls = await openAll(meta);
  emit({ meta });
  try {
    for (const conc of cfg.concurrency) {
      const passes = passesAt(impls, conc);
      const rounds = Math.max(1, Math.min(cfg.rounds, Math.floor(passes[0].maxInvokes / conc))); // at least an invoke per worker per round
      log(`concurrency ${conc}: ${passes.length} passes of ${passes[0].maxInvokes} invokes (${passes[0].maxInvokes * STEPS_PER_INVOKE} super-steps), ${rounds} rounds`);
      for (const p of passes) {
        await p.warm(Math.max(2, Math.min(conc, 16)));
        settle(p);
      }
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < passes.length; k++) {
          const p = passes[(k + r) % passes.length];
          const count = Math.ceil((p.maxInvokes - p.lats.length) / (rounds - r));
          if (count > 0) await p.chunk(count, cfg.budgetMs / rounds);
          settle(p);
        }
      }
      const none = passes.find((p) => p.impl === "none").result();
      for (const p of passes) {
        if (p.err) {
          emit({ note: `${p.impl} (durability ${p.durability}, concurrency ${conc}) failed: ${failMessage(p.err)}` });
          emit({ skip: { impl: p.impl, reason: `failed at durability ${p.durability}, concurrency ${conc}: ${failMessage(p.err)}` } });
          continue;
        }
        const r = p.result();
        const minus = (a, b) => (a !== null && b !== null ? a - b : null);
        r.added_us_per_super_step = p.impl === "none" ? null : minus(r.us_per_super_step, none.us_per_super_step);
        r.added_node_cpu_us_per_super_step = p.impl === "none" ? null : minus(r.node_cpu_us_per_super_step, none.node_cpu_us_per_super_step);
        emit({ superstep: r });
        log(`${p.impl} ${r.durability || "-"} c=${conc}: ${r.super_steps} steps, ${r.us_per_super_step?.toFixed(0)} µs/step, added ${r.added_us_per_super_step?.toFixed(0) ?? "-"}, cpu ${r.node_cpu_us_per_super_step?.toFixed(0)}, redis cpu ${r.server_cpu_us_per_super_step?.toFixed(0) ?? "-"}, rt ${r.roundtrips_per_super_step?.toFixed(2) ?? "-"}`);
      }
    }
  } finally {
    for (const im of impls) await im.close().catch((e) => emit({ note: `${im.impl}: closing: ${failMessage(e)}` }));
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(e.stack ?? String(e));
    process.exit(1);
  },
);
