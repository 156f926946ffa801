// The peers of redcheck's benchmark (issue 6): the same agent workload as
// bench/ (see workload.mjs), run against LangGraph.js's own checkpoint
// savers and against redcheck's TypeScript client (redcheck-js), so that
// redcheck is compared with them in the same Node process. bench/ runs it and merges its rows; it can also run alone:
//
//   node bench.mjs --redis-url redis://127.0.0.1:6379 --pg-url postgresql://postgres@127.0.0.1:5432/test
//
// Output, on stdout, one JSON object per line:
//   a row           {"impl","op","concurrency","n","ops_per_s","p50_us","p99_us",
//                    "roundtrips_per_op","bytes_per_op","allocs_per_op","ratio_to_limit"}
//   {"bytes": {...}} bytes sent and received per operation of a row
//   {"meta": {...}}  package and server versions
//   {"ran": impl}    a saver that ran through
//   {"skip": {"impl","reason"}} a saver that could not run, with the error
//   {"note": "..."}
// Progress goes to stderr. Every pass is bounded by --ops and --time-ms, and
// the script only connects to the loopback servers it is given.

import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { RedisSaver } from "@langchain/langgraph-checkpoint-redis";
import pg from "pg";
import { agentTable, channels, fixedTable, message, taskIDs, text, version } from "./workload.mjs";

const args = parseArgs(process.argv.slice(2), {
  "redis-url": "", "pg-url": "", "pg-skip-reason": "", threads: "20", steps: "100", ops: "2000",
  "time-ms": "1000", rounds: "5", concurrency: "1,64", "state-sizes": "1024,16384,131072,1048576",
  history: "10,100,1000", "delta-steps": "1000", only: "",
});
const cfg = {
  threads: +args.threads, steps: +args.steps, ops: +args.ops, budgetMs: +args["time-ms"], rounds: +args.rounds,
  concurrency: ints(args.concurrency), stateSizes: ints(args["state-sizes"]), history: ints(args.history),
  deltaSteps: +args["delta-steps"],
};
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

function ints(s) {
  return s.split(",").filter(Boolean).map(Number).sort((a, b) => a - b);
}

const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const log = (m) => process.stderr.write(`peers: ${m}\n`);

function assertLoopback(raw, what) {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  if (!(host === "localhost" || host === "::1" || /^127\./.test(host))) {
    throw new Error(`${what} host ${host} is not loopback; the benchmark only talks to this machine`);
  }
}

// ---- measurement ---------------------------------------------------------

// A Pass runs fn(w, i) on conc concurrent async workers; like bench/'s pass,
// it can run in chunks interleaved with other passes.
class Pass {
  constructor({ impl, op, conc, maxOps, warmup, meter, fn }) {
    Object.assign(this, { impl, op, conc, maxOps, warmup, meter, fn });
    this.next = 0;
    this.warmed = false;
    this.lats = [];
    this.elapsedMs = 0;
    this.use = { trips: 0, sent: 0, recv: 0 };
    this.err = null;
  }

  async warm() {
    if (this.warmed || this.err) return;
    this.warmed = true;
    if (this.warmup > 0) {
      try {
        await runWorkers(this.conc, this.next, this.warmup, Date.now() + Math.max(cfg.budgetMs, 1000), this.fn);
        this.next += this.warmup;
      } catch (e) {
        this.err = e;
      }
    }
  }

  async chunk(ops, budgetMs) {
    await this.warm();
    if (this.err) return;
    const u0 = this.meter ? this.meter.load() : null;
    const t0 = performance.now();
    try {
      const lats = await runWorkers(this.conc, this.next, ops, Date.now() + budgetMs, this.fn);
      this.elapsedMs += performance.now() - t0;
      this.next += lats.length;
      for (const l of lats) this.lats.push(l);
      if (this.meter) {
        const u1 = this.meter.load();
        this.use.trips += u1.trips - u0.trips;
        this.use.sent += u1.sent - u0.sent;
        this.use.recv += u1.recv - u0.recv;
      }
    } catch (e) {
      this.err = e;
    }
  }

  row() {
    const n = this.lats.length;
    const sorted = Float64Array.from(this.lats).sort();
    const pct = (p) => (n ? sorted[Math.min(Math.max(Math.ceil((p / 100) * n), 1), n) - 1] : null);
    const per = (x) => (this.meter && n ? x / n : null);
    return {
      impl: this.impl, op: this.op, concurrency: this.conc, n,
      ops_per_s: n ? n / (this.elapsedMs / 1000) : null, p50_us: pct(50), p99_us: pct(99),
      roundtrips_per_op: per(this.use.trips), bytes_per_op: per(this.use.sent + this.use.recv),
      allocs_per_op: null, ratio_to_limit: null,
    };
  }
}

// runWorkers runs operations from..from+count-1 on conc async workers until
// done or past deadline, and returns each operation's latency in µs.
async function runWorkers(conc, from, count, deadline, fn) {
  let next = from;
  const end = from + count;
  const lats = [];
  let failed = null;
  const worker = async (w) => {
    while (!failed && Date.now() < deadline) {
      const i = next++;
      if (i >= end) return;
      const t0 = process.hrtime.bigint();
      try {
        await fn(w, i);
      } catch (e) {
        failed ??= e;
        return;
      }
      lats.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  };
  await Promise.all(Array.from({ length: conc }, (_, w) => worker(w)));
  if (failed) throw failed;
  return lats;
}

async function interleave(passes, rounds = Math.max(1, cfg.rounds)) {
  for (const p of passes) await p.warm();
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < passes.length; k++) {
      const p = passes[(k + r) % passes.length];
      if (p.err) continue;
      const ops = Math.ceil((p.maxOps - p.lats.length) / (rounds - r));
      if (ops > 0) await p.chunk(ops, cfg.budgetMs / rounds);
    }
  }
}

function report(passes) {
  for (const p of passes) {
    if (p.err) {
      emit({ note: `${p.impl} ${p.op} (concurrency ${p.conc}) failed: ${p.err.message ?? p.err}` });
      continue;
    }
    const row = p.row();
    emit(row);
    if (p.meter && row.n) emit({ bytes: { impl: p.impl, op: p.op, concurrency: p.conc, sent: p.use.sent / row.n, recv: p.use.recv / row.n } });
  }
}

// pgMeter counts what node-postgres sends: a round trip per query (each
// client.query waits for its reply) and the bytes through its sockets.
const pgMeter = (() => {
  const sockets = new Set();
  let trips = 0;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (...a) {
    trips++;
    if (this.connection?.stream) sockets.add(this.connection.stream);
    return query.apply(this, a);
  };
  return {
    load() {
      let sent = 0;
      let recv = 0;
      for (const s of sockets) {
        sent += s.bytesWritten ?? 0;
        recv += s.bytesRead ?? 0;
      }
      return { trips, sent, recv };
    },
  };
})();

// ---- the workload --------------------------------------------------------

const conf = (thread_id, checkpoint_id) => ({ configurable: checkpoint_id ? { thread_id, checkpoint_ns: "", checkpoint_id } : { thread_id, checkpoint_ns: "" } });

function checkpointOf(st, ts) {
  return { v: 4, id: uuid6(0), ts, channel_values: st.values, channel_versions: st.versions, versions_seen: st.seen };
}

async function agentThread(saver, thread, tab) {
  let cfgNow = conf(thread);
  const ids = [];
  const ts = new Date().toISOString();
  for (let i = 0; i < tab.length; i++) {
    const st = tab[i];
    cfgNow = await saver.put(cfgNow, checkpointOf(st, ts), { source: "loop", step: i, run_id: thread, parents: {} }, i === 0 ? st.all : st.changed);
    for (let t = 0; t < 2; t++) await saver.putWrites(cfgNow, st.writes[t], taskIDs[t]);
    ids.push(cfgNow.configurable.checkpoint_id);
  }
  return ids;
}

async function buildFixture(saver, tab) {
  const threads = Array.from({ length: cfg.threads }, (_, t) => `agent-${t}`);
  const ids = new Array(cfg.threads);
  const workers = Math.min(cfg.threads, 8);
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    for (let t = w; t < cfg.threads; t += workers) ids[t] = await agentThread(saver, threads[t], tab);
  }));
  return { threads, ids };
}

function putPass(impl, saver, meter, op, tag, tab, conc, maxOps, warmup) {
  const ws = Array.from({ length: conc }, (_, w) => {
    const thread = `${tag}-w${w}-t0`;
    return { step: Math.floor((w * tab.length) / conc), first: true, thread, threads: [thread], parent: conf(thread), cps: [] };
  });
  const ts = new Date().toISOString();
  const pass = new Pass({
    impl, op, conc, maxOps, warmup, meter,
    fn: async (w) => {
      const wr = ws[w];
      const st = tab[wr.step];
      const c = await saver.put(wr.parent, checkpointOf(st, ts), { source: "loop", step: wr.step, run_id: wr.thread, parents: {} }, wr.first ? st.all : st.changed);
      wr.cps.push({ cfg: c, step: wr.step });
      wr.parent = c;
      wr.first = false;
      if (++wr.step === tab.length) {
        wr.thread = `${tag}-w${w}-t${wr.threads.length}`;
        wr.threads.push(wr.thread);
        wr.parent = conf(wr.thread);
        wr.step = 0;
        wr.first = true;
      }
    },
  });
  return [pass, ws];
}

function putWritesPass(impl, saver, meter, tab, ws, conc, maxOps, warmup) {
  const counts = new Array(conc).fill(0);
  return new Pass({
    impl, op: "PutWrites", conc, maxOps, warmup, meter,
    fn: async (w) => {
      let list = ws[w]?.cps ?? [];
      if (list.length === 0) list = ws.find((x) => x.cps.length > 0)?.cps ?? [];
      if (list.length === 0) throw new Error("the Put pass wrote no checkpoint");
      const j = counts[w]++;
      const target = list[Math.floor(j / 2) % list.length];
      const round = Math.floor(Math.floor(j / 2) / list.length);
      const task = taskIDs[j % 2] + (round > 0 ? `-r${round}` : "");
      await saver.putWrites(target.cfg, tab[target.step].writes[j % 2], task);
    },
  });
}

function readPass(impl, saver, meter, fx, op, conc, maxOps) {
  const nT = fx.threads.length;
  const nS = cfg.steps;
  const fns = {
    "GetTuple.latest": async (_, i) => {
      const t = i % nT;
      const tup = await saver.getTuple(conf(fx.threads[t]));
      if (tup?.checkpoint.id !== fx.ids[t][nS - 1]) throw new Error(`latest of ${fx.threads[t]} is ${tup?.checkpoint.id}`);
    },
    "GetTuple.byid": async (_, i) => {
      const t = i % nT;
      const tup = await saver.getTuple(conf(fx.threads[t], fx.ids[t][(i * 7919) % nS]));
      if ((tup?.pendingWrites?.length ?? 0) !== 6) throw new Error(`by id: ${tup?.pendingWrites?.length} pending writes, want 6`);
    },
    "List.full": async (_, i) => {
      let n = 0;
      for await (const _t of saver.list(conf(fx.threads[i % nT]))) n++;
      if (n !== nS) throw new Error(`listed ${n}, want ${nS}`);
    },
    "List.page10": async (_, i) => {
      const t = i % nT;
      const before = conf(fx.threads[t], fx.ids[t][10 + ((i * 31) % (nS - 10))]);
      let n = 0;
      for await (const _t of saver.list(conf(fx.threads[t]), { limit: 10, before })) n++;
      if (n !== 10) throw new Error(`page of ${n}, want 10`);
    },
  };
  return new Pass({ impl, op, conc, maxOps, warmup: Math.max(conc, 20), meter, fn: fns[op] });
}

async function runPeer(impl, saver, meter) {
  const t0 = Date.now();
  const agent = agentTable(cfg.steps);
  log(`${impl}: fixture ${cfg.threads} threads × ${cfg.steps} steps`);
  const fx = await buildFixture(saver, agent);

  for (const conc of cfg.concurrency) {
    log(`${impl}: concurrency ${conc}`);
    const warm = Math.max(conc, 20);
    const [put, ws] = putPass(impl, saver, meter, "Put", `c${conc}`, agent, conc, cfg.ops, warm);
    const passes = [put, putWritesPass(impl, saver, meter, agent, ws, conc, cfg.ops, warm),
      readPass(impl, saver, meter, fx, "GetTuple.latest", conc, cfg.ops), readPass(impl, saver, meter, fx, "GetTuple.byid", conc, cfg.ops)];
    if (conc === 1) passes.push(readPass(impl, saver, meter, fx, "List.full", 1, Math.min(cfg.ops, 1000)), readPass(impl, saver, meter, fx, "List.page10", 1, cfg.ops));
    await interleave(passes);
    report(passes);
  }

  log(`${impl}: delta channel history over ${cfg.deltaSteps} steps`);
  let head = conf("delta");
  for (let step = 0; step < cfg.deltaSteps; step++) {
    const cp = { v: 4, id: uuid6(0), ts: new Date().toISOString(), channel_values: {}, channel_versions: {}, versions_seen: {} };
    let nv = {};
    if (step === 0) {
      cp.channel_values.log = [];
      cp.channel_versions.log = version(1);
      nv = { log: version(1) };
    }
    head = await saver.put(head, cp, { step }, nv);
    await saver.putWrites(head, [["log", message(step)]], "task");
  }
  const delta = new Pass({
    impl, op: `DeltaChannelHistory/steps=${cfg.deltaSteps}`, conc: 1, maxOps: Math.min(cfg.ops, 300), warmup: 1, meter,
    fn: async () => {
      const h = await saver.getDeltaChannelHistory({ config: head, channels: ["log"] });
      if (h.log.writes.length !== cfg.deltaSteps - 1) throw new Error(`${h.log.writes.length} writes, want ${cfg.deltaSteps - 1}`);
    },
  });
  await interleave([delta]);
  report([delta]);

  for (const size of cfg.stateSizes) {
    const label = `state=${byteSize(size)}`;
    log(`${impl}: ${label}`);
    const tab = fixedTable(size > 256 << 10 ? 20 : 100, size);
    const ops = Math.max(10, Math.min(cfg.ops, Math.floor((256 << 20) / size)));
    const [put, ws] = putPass(impl, saver, meter, `Put/${label}`, `state${size}`, tab, 1, ops, 3);
    const get = new Pass({
      impl, op: `GetTuple.latest/${label}`, conc: 1, maxOps: ops, warmup: 3, meter,
      fn: async () => {
        const last = ws[0].cps.at(-1);
        if (!last) throw new Error("nothing written");
        await saver.getTuple(conf(last.cfg.configurable.thread_id));
      },
    });
    await interleave([put, get]);
    report([put, get]);
    for (const th of ws[0].threads) await saver.deleteThread(th);
  }

  const hist = [];
  const values = Object.fromEntries(channels.map((ch, k) => [ch, text(k, 100)]));
  for (const n of cfg.history) {
    log(`${impl}: history ${n}`);
    const thread = `h${n}`;
    const ids = await fillHistory(saver, thread, values, n);
    hist.push(new Pass({ impl, op: `GetTuple.latest/history=${n}`, conc: 1, maxOps: cfg.ops, warmup: 20, meter, fn: async () => { await saver.getTuple(conf(thread)); } }));
    hist.push(new Pass({ impl, op: `GetTuple.byid/history=${n}`, conc: 1, maxOps: cfg.ops, warmup: 20, meter, fn: async (_, i) => { await saver.getTuple(conf(thread, ids[(i * 7919) % ids.length])); } }));
  }
  await interleave(hist, 3 * Math.max(1, cfg.rounds)); // finer, as bench/ does for flatness
  report(hist);
  log(`${impl}: done in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}

async function fillHistory(saver, thread, values, count) {
  const ids = [];
  await Promise.all(Array.from({ length: 4 }, async (_, w) => {
    const versions = {};
    let parent = conf(thread);
    for (let i = w; i < count; i += 4) {
      const n = i + 1;
      const v = version(n);
      const chans = channels;
      const nv = { [chans[0]]: v, [chans[1 + (n % 9)]]: v };
      if (Object.keys(versions).length === 0) for (const ch of chans) { versions[ch] = v; nv[ch] = v; }
      versions[chans[0]] = v;
      versions[chans[1 + (n % 9)]] = v;
      const cp = { v: 4, id: uuid6(0), ts: "ts", channel_values: values, channel_versions: { ...versions }, versions_seen: {} };
      parent = await saver.put(parent, cp, { source: "loop", step: n }, nv);
      ids.push(parent.configurable.checkpoint_id);
    }
  }));
  return ids;
}

function byteSize(n) {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n >> 20}MB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n >> 10}KB`;
  return `${n}B`;
}

// ---- the peers -----------------------------------------------------------

function versions() {
  const require = createRequire(import.meta.url);
  const v = { node: process.version };
  for (const p of ["@langchain/core", "@langchain/langgraph-checkpoint", "@langchain/langgraph-checkpoint-sqlite", "@graphstate/redcheck",
    "@langchain/langgraph-checkpoint-postgres", "@langchain/langgraph-checkpoint-redis", "better-sqlite3", "pg", "redis"]) {
    try {
      v[p] = require(`${p}/package.json`).version;
    } catch {
      v[p] = "not installed";
    }
  }
  return v;
}

const only = args.only ? args.only.split(",") : null;
const want = (impl) => !only || only.includes(impl);
const failMessage = (e) => String(e?.message ?? e).split("\n")[0];

async function main() {
  const meta = versions();
  const impls = [];

  impls.push({
    impl: "langgraph-js-memory",
    open: async () => ({ saver: new MemorySaver(), meter: null, close: async () => {} }),
  });

  impls.push({
    impl: "langgraph-js-sqlite",
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "rcbench-sqlite-"));
      const saver = SqliteSaver.fromConnString(join(dir, "checkpoints.sqlite"));
      meta["sqlite"] = saver.db.prepare("select sqlite_version() as v").get().v + " (file in a temporary directory, better-sqlite3 defaults)";
      return { saver, meter: null, close: async () => { saver.db.close(); rmSync(dir, { recursive: true, force: true }); } };
    },
  });

  impls.push({
    impl: "langgraph-js-postgres",
    open: async () => {
      if (!args["pg-url"]) throw new Error(args["pg-skip-reason"] || "no --pg-url");
      assertLoopback(args["pg-url"], "--pg-url");
      const schema = `rcbench_${runID}`;
      const admin = new pg.Pool({ connectionString: args["pg-url"], max: 1 });
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      meta["postgres"] = (await admin.query("SHOW server_version")).rows[0].server_version + ` (schema ${schema}, dropped afterwards)`;
      const saver = PostgresSaver.fromConnString(args["pg-url"], { schema });
      await saver.setup();
      return {
        saver, meter: pgMeter,
        close: async () => {
          await saver.end();
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await admin.end();
        },
      };
    },
  });

  impls.push({
    impl: "langgraph-js-redis",
    open: async () => {
      if (!args["redis-url"]) throw new Error("no --redis-url");
      assertLoopback(args["redis-url"], "--redis-url");
      // It logs index-creation failures (FT.CREATE) with console.error and
      // goes on; collect them for the reason. A first write shows whether
      // the server has the modules it needs.
      const logged = [];
      const consoleError = console.error;
      console.error = (...a) => logged.push(a.map(String).join(" "));
      const unknown = (m) => m.match(/ERR unknown command '[^']+'/)?.[0] ?? m.slice(0, 160);
      const plain = "cannot run on plain Redis (it needs the RedisJSON and RediSearch modules)";
      let saver;
      try {
        try {
          saver = await RedisSaver.fromUrl(args["redis-url"]);
        } catch (e) {
          throw new Error(`${plain}: RedisSaver.fromUrl failed with ${unknown(failMessage(e))}`);
        }
        const probe = conf(`probe-${runID}`);
        const st = agentTable(1)[0];
        try {
          const c = await saver.put(probe, checkpointOf(st, new Date().toISOString()), { source: "input", step: -1 }, st.all);
          await saver.getTuple(c);
          await saver.deleteThread(`probe-${runID}`);
        } catch (e) {
          await saver.end().catch(() => {});
          const first = logged.length ? `; before that, index creation had logged ${unknown(logged[0])}` : "";
          throw new Error(`${plain}: its first put failed with ${unknown(failMessage(e))}${first}`);
        }
      } finally {
        console.error = consoleError;
        for (const l of logged) log(`langgraph-js-redis logged: ${l.split("\n")[0].slice(0, 200)}`);
      }
      return { saver, meter: null, close: async () => { await saver.end(); } };
    },
  });

  // redcheck's TypeScript client (js/, installed from the repository): the
  // same Lua scripts and storage format as the Go saver, in this process.
  impls.push({
    impl: "redcheck-js",
    open: async () => {
      if (!args["redis-url"]) throw new Error("no --redis-url");
      assertLoopback(args["redis-url"], "--redis-url");
      let mod;
      try {
        mod = await import("@graphstate/redcheck");
      } catch (e) {
        throw new Error(`@graphstate/redcheck is not installed (build js/ with npm ci, then npm ci here): ${failMessage(e)}`);
      }
      const { createClient } = await import("redis");
      const client = createClient({ url: args["redis-url"] });
      await client.connect();
      const prefix = `rcbench-js-${runID}`;
      const saver = new mod.RedcheckSaver(client, { prefix });
      await saver.setup();
      const require = createRequire(import.meta.url);
      meta["@graphstate/redcheck"] = require("@graphstate/redcheck/package.json").version + ` (prefix ${prefix}, deleted afterwards)`;
      return {
        saver, meter: null,
        close: async () => {
          // The run's keys, found by SCAN on this loopback server and unlinked in batches.
          let cursor = "0";
          do {
            const r = await client.scan(cursor, { MATCH: `${prefix}:*`, COUNT: 1000 });
            cursor = String(r.cursor);
            if (r.keys.length > 0) await client.unlink(r.keys);
          } while (cursor !== "0");
          await client.close();
        },
      };
    },
  });

  emit({ meta });
  for (const { impl, open } of impls) {
    if (!want(impl)) continue;
    let h;
    try {
      h = await open();
    } catch (e) {
      log(`${impl}: cannot run: ${failMessage(e)}`);
      emit({ skip: { impl, reason: failMessage(e) } });
      continue;
    }
    try {
      await runPeer(impl, h.saver, h.meter);
      emit({ ran: impl });
    } catch (e) {
      log(`${impl}: failed: ${e.stack ?? e}`);
      emit({ skip: { impl, reason: `failed during the run: ${failMessage(e)}` } });
    } finally {
      await h.close().catch((e) => emit({ note: `${impl}: closing: ${failMessage(e)}` }));
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(e.stack ?? String(e));
    process.exit(1);
  },
);
