// OpenTelemetry spans and metrics of RedcheckSaver (src/telemetry.ts), on
// redis-server, with the SDK's in-memory exporter and a metric reader
// collected by hand: every public operation's span and its attributes (the
// Go saver's names, docs/observability.md), a lost key as data_loss, a
// duration point per operation, no value, metadata value or pending write in
// any span, event or metric, and a saver with no providers at all.
import { JsonPlusSerializer, emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { SpanKind, SpanStatusCode, createTraceState, metrics, trace } from "@opentelemetry/api";
import { DataPointType, MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { AbortError, ErrorReply, SocketClosedUnexpectedlyError, TimeoutError, createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CorruptError, DataLossError, InvalidCheckpointError, InvalidConfigError, NotFoundError, PrefixResetError, RedcheckSaver,
  type RedcheckSaverOptions } from "../src/index.js";
import { scriptError } from "../src/errors.js";
import { errorType, redisStatus } from "../src/telemetry.js";

const url = inject("redisUrl");
const client = createClient({ url });
const run = Math.random().toString(36).slice(2, 8);
let n = 0;
const MARKER = "m4rk3r-0f-s3cr3t-data";

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.close();
});

class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** rig: a saver on a fresh prefix reporting to an in-memory span exporter and a metric reader. */
function rig(o: RedcheckSaverOptions = {}) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const saver = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}`, tracerProvider, meterProvider, ...o });
  return {
    saver,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    metrics: async (): Promise<ResourceMetrics> => {
      const { resourceMetrics, errors } = await reader.collect();
      expect(errors).toEqual([]);
      return resourceMetrics;
    },
  };
}

const md = (step: number, extra: Record<string, unknown> = {}) => ({ source: "loop" as const, step, parents: {}, ...extra });

/** putOne puts a checkpoint of step on cfg's thread, with value "v" in channel a. */
async function putOne(s: RedcheckSaver, cfg: any, step: number, value: unknown = step, extra: Record<string, unknown> = {}) {
  const version = s.getNextVersion(step === 0 ? undefined : step);
  const cp: Checkpoint = { ...emptyCheckpoint(), id: uuid6(step), channel_values: { a: value }, channel_versions: { a: version } };
  return s.put(cfg, cp, md(step, extra), { a: version });
}

function byName(spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

function one(spans: ReadableSpan[], name: string): ReadableSpan {
  const got = byName(spans, name);
  expect(got, `spans named ${name}`).toHaveLength(1);
  return got[0]!;
}

interface Point {
  metric: string;
  unit: string;
  attributes: Record<string, unknown>;
  value: unknown;
}

function points(rm: ResourceMetrics): Point[] {
  const out: Point[] = [];
  for (const sm of rm.scopeMetrics) {
    expect(sm.scope.name).toBe("github.com/graphstate/redcheck/redissaver");
    for (const m of sm.metrics) {
      for (const dp of m.dataPoints) {
        out.push({ metric: m.descriptor.name, unit: m.descriptor.unit, attributes: dp.attributes as Record<string, unknown>, value: dp.value });
      }
      if (m.descriptor.name === "db.client.operation.duration") expect(m.dataPointType).toBe(DataPointType.HISTOGRAM);
    }
  }
  return out;
}

describe("spans", () => {
  it("every public operation has its span, kind client, with the Go saver's name and attributes", async () => {
    const r = rig();
    const s = r.saver;
    const base = { configurable: { thread_id: "th-1", checkpoint_ns: "" } };
    const c0 = await putOne(s, base, 0);
    await s.putWrites(c0, [["a", "w"]], "task-1");
    const c1 = await putOne(s, c0, 1, 1, { run_id: "run-1" });
    expect(await s.getTuple(base)).toBeDefined();
    expect(await s.getTuple({ configurable: { thread_id: "nobody" } })).toBeUndefined();
    const listed = [];
    for await (const t of s.list(base)) listed.push(t);
    expect(listed).toHaveLength(2);
    for await (const _ of s.list({ configurable: { thread_id: "th-1" } })) break; // the caller's break ends the span too
    await s.getDeltaChannelHistory({ config: c1, channels: ["a"] });
    await s.copyThread("th-1", "th-copy");
    await s.prune(["th-copy"], "keep_latest");
    await s.deleteForRuns(["run-1"]);
    await s.deleteThread("th-copy");
    await s.sweep();
    expect(await s.reinitialize()).toBe(false);

    const spans = r.spans();
    for (const sp of spans) {
      expect(sp.kind).toBe(SpanKind.CLIENT);
      expect(sp.instrumentationScope.name).toBe("github.com/graphstate/redcheck/redissaver");
      expect(sp.attributes["db.system.name"]).toBe("redis");
      expect(sp.attributes["db.operation.name"]).toBe(sp.name);
      expect(sp.attributes["redcheck.prefix"]).toBe(s.layout.prefix);
      expect(sp.attributes["server.address"]).toBe("127.0.0.1");
      expect(sp.attributes["server.port"]).toBe(Number(new URL(url).port));
      expect(typeof sp.attributes["redcheck.round_trips"]).toBe("number");
      expect(typeof sp.attributes["redcheck.steps"]).toBe("number");
      expect(sp.status.code, sp.name).not.toBe(SpanStatusCode.ERROR);
      expect(sp.attributes["error.type"]).toBeUndefined();
    }
    expect(new Set(spans.map((sp) => sp.name))).toEqual(new Set(["Put", "PutWrites", "GetTuple", "List", "DeltaChannelHistory", "CopyThread", "Prune",
      "DeleteForRuns", "DeleteThread", "Sweep", "Reinitialize"]));

    const puts = byName(spans, "Put");
    expect(puts).toHaveLength(2);
    expect(puts[1]!.attributes).toMatchObject({
      "db.stored_procedure.name": "put.lua", "redcheck.thread_id": "th-1", "gen_ai.conversation.id": "th-1", "redcheck.checkpoint_ns": "",
      "redcheck.checkpoint_id": c1.configurable!.checkpoint_id, "redcheck.step": 1, "redcheck.round_trips": 1, "redcheck.steps": 1,
    });
    expect(one(spans, "PutWrites").attributes).toMatchObject({
      "db.stored_procedure.name": "put_writes.lua", "redcheck.thread_id": "th-1", "redcheck.checkpoint_id": c0.configurable!.checkpoint_id,
    });
    const gets = byName(spans, "GetTuple");
    expect(gets).toHaveLength(2);
    expect(gets[0]!.attributes).toMatchObject({
      "db.stored_procedure.name": "get_tuple.lua", "redcheck.thread_id": "th-1", "redcheck.checkpoint_id": c1.configurable!.checkpoint_id,
      "redcheck.step": 1, "redcheck.found": true,
    });
    expect(gets[1]!.attributes).toMatchObject({ "redcheck.found": false });
    const lists = byName(spans, "List");
    expect(lists).toHaveLength(2);
    expect(lists[0]!.attributes).toMatchObject({ "db.stored_procedure.name": "list.lua", "redcheck.thread_id": "th-1", "redcheck.tuples": 2, "redcheck.pages": 1 });
    expect(lists[1]!.attributes).toMatchObject({ "redcheck.tuples": 1 });
    expect(one(spans, "DeltaChannelHistory").attributes).toMatchObject({
      "db.stored_procedure.name": "delta_history.lua", "redcheck.thread_id": "th-1", "redcheck.checkpoint_id": c1.configurable!.checkpoint_id,
      "redcheck.channel_count": 1,
    });
    const copy = one(spans, "CopyThread");
    expect(copy.attributes).toMatchObject({ "redcheck.thread_id": "th-1", "redcheck.target_thread_id": "th-copy" });
    expect(copy.attributes["db.stored_procedure.name"]).toBeUndefined();
    expect(one(spans, "Prune").attributes).toMatchObject({
      "db.stored_procedure.name": "prune.lua", "redcheck.thread_id": "th-copy", "redcheck.thread_count": 1, "redcheck.prune_strategy": "keep_latest",
    });
    expect(one(spans, "DeleteForRuns").attributes).toMatchObject({ "db.stored_procedure.name": "delete_runs.lua", "redcheck.run_count": 1 });
    expect(one(spans, "DeleteThread").attributes).toMatchObject({ "db.stored_procedure.name": "delete_thread.lua", "redcheck.thread_id": "th-copy" });
    const sweep = one(spans, "Sweep");
    expect(sweep.attributes).toMatchObject({ "db.stored_procedure.name": "sweep.lua" });
    expect(typeof sweep.attributes["redcheck.units"]).toBe("number");
    expect(one(spans, "Reinitialize").attributes).toMatchObject({ "redcheck.reset": false });
    // No nested spans: prune's and copyThread's inner deletes and reads are theirs.
    expect(spans.every((sp) => sp.parentSpanContext === undefined)).toBe(true);
  });

  it("a lost checkpoint hash is data_loss: status ERROR, error.type, its message (keys and ids) kept, and counted", async () => {
    const r = rig();
    const s = r.saver;
    const cfg = await putOne(s, { configurable: { thread_id: "lost" } }, 0);
    const id = String(cfg.configurable!.checkpoint_id);
    const keys = [];
    for await (const k of client.scanIterator({ MATCH: `${s.layout.prefix}:*:cp:${id}`, COUNT: 1000 })) keys.push(...k);
    expect(keys).toHaveLength(1);
    await client.del(keys[0]!);
    r.reset();
    const err = await s.getTuple({ configurable: { thread_id: "lost" } }).catch((e) => e);
    expect(err).toBeInstanceOf(DataLossError);
    const sp = one(r.spans(), "GetTuple");
    expect(sp.status.code).toBe(SpanStatusCode.ERROR);
    expect(sp.status.message).toBe(err.message);
    expect(sp.attributes["error.type"]).toBe("data_loss");
    expect(sp.attributes["redcheck.found"]).toBeUndefined();
    expect(sp.events.map((e) => e.name)).toEqual(["exception"]);
    expect(sp.events[0]!.attributes!["exception.message"]).toBe(err.message);

    const pts = points(await r.metrics());
    const loss = pts.filter((p) => p.metric === "redcheck.client.data_loss");
    expect(loss).toHaveLength(1);
    expect(loss[0]!.unit).toBe("{detection}");
    expect(loss[0]!.value).toBe(1);
    expect(loss[0]!.attributes).toEqual({
      "db.system.name": "redis", "db.operation.name": "GetTuple", "redcheck.prefix": s.layout.prefix, "error.type": "data_loss",
      "server.address": "127.0.0.1", "server.port": Number(new URL(url).port),
    });
    const failed = pts.filter((p) => p.metric === "db.client.operation.duration" && p.attributes["error.type"] === "data_loss");
    expect(failed).toHaveLength(1);
  });

  it("a prefix found emptied is prefix_reset: one span (no nested Reinitialize), counted as data loss and a refused write", async () => {
    const r = rig();
    const s = r.saver;
    await putOne(s, { configurable: { thread_id: "before" } }, 0);
    const keys = [];
    for await (const k of client.scanIterator({ MATCH: `${s.layout.prefix}:*`, COUNT: 1000 })) keys.push(...k);
    await client.del(keys);
    r.reset();
    const err = await putOne(s, { configurable: { thread_id: "after" } }, 0).catch((e) => e);
    expect(err).toBeInstanceOf(PrefixResetError);
    const spans = r.spans();
    expect(spans.map((sp) => sp.name)).toEqual(["Put"]);
    expect(spans[0]!.attributes["error.type"]).toBe("prefix_reset");
    expect(spans[0]!.attributes["db.response.status_code"]).toBeUndefined();
    expect(spans[0]!.status.code).toBe(SpanStatusCode.ERROR);
    const pts = points(await r.metrics());
    for (const m of ["redcheck.client.data_loss", "redcheck.client.refused_writes"]) {
      const got = pts.filter((p) => p.metric === m);
      expect(got, m).toHaveLength(1);
      expect(got[0]!.attributes).toMatchObject({ "db.operation.name": "Put", "error.type": "prefix_reset" });
    }
  });

  it("a refused put is invalid_checkpoint, its message withheld, and a refused write", async () => {
    const r = rig();
    const s = r.saver;
    const cp = { ...emptyCheckpoint(), id: uuid6(0) };
    const err = await s.put({ configurable: { thread_id: "bad" } }, cp, { source: "loop", step: "x" as unknown as number, parents: {} }, {}).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidCheckpointError);
    const sp = one(r.spans(), "Put");
    expect(sp.status.code).toBe(SpanStatusCode.ERROR);
    expect(sp.attributes["error.type"]).toBe("invalid_checkpoint");
    expect(sp.status.message).toContain("withheld");
    expect(sp.events[0]!.attributes!["exception.message"]).toContain("withheld");
    const refused = points(await r.metrics()).filter((p) => p.metric === "redcheck.client.refused_writes");
    expect(refused).toHaveLength(1);
    expect(refused[0]!.unit).toBe("{call}");
    expect(refused[0]!.attributes).toMatchObject({ "db.operation.name": "Put", "error.type": "invalid_checkpoint" });
  });
});

describe("error kinds", () => {
  it("map the client's errors as the Go saver maps its own", () => {
    const cases: [unknown, string, string][] = [
      [new PrefixResetError("x"), "prefix_reset", ""],
      [scriptError("get tuple", new ErrorReply("DATALOSS checkpoint k")), "data_loss", ""],
      [new InvalidCheckpointError("x"), "invalid_checkpoint", ""],
      [new InvalidConfigError("x"), "invalid_config", ""],
      [new NotFoundError("x"), "not_found", ""],
      [new CorruptError("x"), "corrupt", ""],
      [scriptError("put", new ErrorReply("OOM command not allowed when used memory > 'maxmemory'.")), "OOM", "OOM"],
      [new ErrorReply("READONLY You can't write against a read only replica."), "READONLY", "READONLY"],
      [scriptError("put", new ErrorReply("user_script:1: oops")), "ERR", "ERR"],
      [scriptError("put", new SocketClosedUnexpectedlyError()), "network", ""],
      [Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }), "network", ""],
      [new TimeoutError("Command timeout"), "deadline_exceeded", ""],
      [new AbortError(), "canceled", ""],
      [new Error("anything"), "_OTHER", ""],
      ["a string", "_OTHER", ""],
    ];
    for (const [err, kind, status] of cases) {
      expect(errorType(err), String(err)).toBe(kind);
      expect(redisStatus(err), String(err)).toBe(status);
    }
  });
});

describe("metrics", () => {
  it("one duration point (seconds) per operation, by db.operation.name, no thread", async () => {
    const r = rig();
    const s = r.saver;
    const base = { configurable: { thread_id: "m-1" } };
    const c0 = await putOne(s, base, 0);
    await s.putWrites(c0, [["a", 1]], "t");
    await s.getTuple(base);
    await s.getTuple({ configurable: { thread_id: "m-none" } });
    for await (const _ of s.list(base));
    await s.getDeltaChannelHistory({ config: c0, channels: ["a"] });
    await s.copyThread("m-1", "m-2");
    await s.prune(["m-2"], "delete");
    await s.deleteForRuns(["r"]);
    await s.deleteThread("m-1");
    await s.sweep();
    await s.reinitialize();
    const pts = points(await r.metrics()).filter((p) => p.metric === "db.client.operation.duration");
    const count = (op: string) => pts.filter((p) => p.attributes["db.operation.name"] === op).reduce((a, p) => a + (p.value as { count: number }).count, 0);
    for (const [op, want] of Object.entries({ Put: 1, PutWrites: 1, GetTuple: 2, List: 1, DeltaChannelHistory: 1, CopyThread: 1, Prune: 1, DeleteForRuns: 1,
      DeleteThread: 1, Sweep: 1, Reinitialize: 1 })) {
      expect(count(op), op).toBe(want);
    }
    for (const p of pts) {
      expect(p.unit).toBe("s");
      expect(p.attributes["error.type"]).toBeUndefined();
      expect(Object.keys(p.attributes).sort()).toEqual(["db.operation.name", "db.system.name", "redcheck.prefix", "server.address", "server.port"]);
      expect((p.value as { sum: number }).sum).toBeLessThan(10);
    }
    // Prune with "delete" deletes in its own span, not in DeleteThread spans.
    expect(byName(r.spans(), "DeleteThread")).toHaveLength(1);
  });

  for (const size of [1 << 10, 64 << 10]) {
    it(`a put of a ${size}-byte value: bytes sent and received on the spans, written/read counters and round trips by operation, no thread (Go: TestTelemetryTraffic)`, async () => {
      const r = rig();
      const s = r.saver;
      const base = { configurable: { thread_id: `bytes-${size}` } };
      const value = "v".repeat(size);
      // The saver's first call prepares the prefix (more round trips): not the put measured.
      await s.deleteThread(`warm-${size}`);
      r.reset();
      const cfg = await putOne(s, base, 1, value);
      const put = one(r.spans(), "Put");
      expect(put.attributes["redcheck.round_trips"]).toBe(1);
      const sent = put.attributes["redcheck.bytes.sent"] as number;
      expect(sent).toBeGreaterThanOrEqual(size);
      expect(sent).toBeLessThanOrEqual(3 * size + 4096);
      r.reset();
      const got = await s.getTuple(cfg);
      expect(got?.checkpoint.channel_values.a).toBe(value);
      const get = one(r.spans(), "GetTuple");
      const received = get.attributes["redcheck.bytes.received"] as number;
      expect(received).toBeGreaterThanOrEqual(size);
      expect(received).toBeLessThanOrEqual(3 * size + 4096);
      const getSent = get.attributes["redcheck.bytes.sent"] as number;
      expect(getSent).toBeGreaterThan(0);
      expect(getSent).toBeLessThan(size);

      const pts = points(await r.metrics());
      const sum = (metric: string, op: string) => pts.filter((p) => p.metric === metric && p.attributes["db.operation.name"] === op)
        .reduce((a, p) => a + (p.value as number), 0);
      expect(sum("redcheck.client.written", "Put")).toBe(sent);
      expect(sum("redcheck.client.read", "GetTuple")).toBe(received);
      for (const m of ["redcheck.client.written", "redcheck.client.read"]) {
        const ps = pts.filter((p) => p.metric === m);
        expect(ps.length, m).toBeGreaterThan(0);
        for (const p of ps) expect(p.unit).toBe("By");
      }
      const trips = pts.filter((p) => p.metric === "redcheck.client.round_trips");
      for (const [op, want] of Object.entries({ Put: 1, GetTuple: get.attributes["redcheck.round_trips"] as number })) {
        const ps = trips.filter((p) => p.attributes["db.operation.name"] === op);
        expect(ps, op).toHaveLength(1);
        expect(ps[0]!.unit).toBe("{round_trip}");
        expect(ps[0]!.value as { count: number; sum: number }).toMatchObject({ count: 1, sum: want });
      }
      for (const p of pts) {
        expect(p.attributes["redcheck.thread_id"], p.metric).toBeUndefined();
        expect(p.attributes["gen_ai.conversation.id"], p.metric).toBeUndefined();
      }
    });
  }
});

describe("privacy", () => {
  it("a marker written as a value, as metadata and as a pending write, and in refused calls, is in no span, event, metric or log record, whatever the operation", async () => {
    // A serializer that refuses one value, quoting it, as a serializer's complaint may.
    const json = new JsonPlusSerializer();
    const serde = {
      dumpsTyped: async (v: unknown) => {
        if (typeof v === "object" && v !== null && (v as { refuse?: unknown }).refuse !== undefined) throw new Error(`cannot serialize ${JSON.stringify(v)}`);
        return json.dumpsTyped(v);
      },
      loadsTyped: (t: string, d: Uint8Array | string) => json.loadsTyped(t, d),
    };
    const logs: unknown[] = [];
    const logger = { warn: (...a: unknown[]) => logs.push(a), error: (...a: unknown[]) => logs.push(a) };
    const r = rig({ serde, logger, events: { includeValues: true } });
    const s = r.saver;
    const gauges = await s.registerGauges();
    const base = { configurable: { thread_id: "th-data" } };
    const c0 = await putOne(s, base, 0, MARKER, { note: MARKER, nested: { k: MARKER }, run_id: "run-m" });
    await s.putWrites(c0, [["msgs", MARKER], ["x", { k: MARKER }]], "task");
    const c1 = await putOne(s, c0, 1, { deep: [MARKER] });
    const got = await s.getTuple(base);
    expect(JSON.stringify(got?.checkpoint.channel_values)).toContain(MARKER);
    await s.getTuple(c0);
    for await (const _ of s.list(base, { filter: { note: MARKER } }));
    await s.getDeltaChannelHistory({ config: c1, channels: ["a", "msgs"] });
    // Refused: a step that quotes the marker, a value the serializer refuses quoting it, a filter not JSON.
    const bad = { ...emptyCheckpoint(), id: uuid6(5) };
    const e1 = await s.put(c1, bad, { source: "loop", step: MARKER as unknown as number, parents: {} }, {}).catch((e) => e);
    expect(String(e1)).toContain(MARKER);
    const e2 = await s.putWrites(c1, [["c", { refuse: MARKER }]], "t2").catch((e) => e);
    expect(String(e2)).toContain(MARKER);
    const e3 = await putOne(s, c1, 2, { refuse: MARKER }).catch((e) => e);
    expect(String(e3)).toContain(MARKER);
    // Every other operation, on the marked thread: its events carry the marker (includeValues), no span does.
    const feed = await client.xRange(s.layout.feed(s.layout.shard("th-data")), "-", "+");
    expect(JSON.stringify(feed)).toContain(MARKER);
    await s.copyThread("th-data", "th-data-copy");
    await s.prune(["th-data-copy"], "keep_latest");
    await s.deleteForRuns(["run-m"]);
    await s.deleteThread("th-data-copy");
    await s.sweep();
    await s.reinitialize();
    // A data loss, for a log record: the marked checkpoint's hash deleted.
    const lost = await putOne(s, { configurable: { thread_id: "th-lost" } }, 0, MARKER, { note: MARKER });
    for await (const k of client.scanIterator({ MATCH: `${s.layout.prefix}:*:cp:${lost.configurable!.checkpoint_id}`, COUNT: 1000 })) {
      if (k.length) await client.del(k);
    }
    expect(await s.getTuple(lost).catch((e) => e)).toBeInstanceOf(DataLossError);
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain(MARKER);
    gauges.unregister();

    const spans = r.spans();
    expect(spans.length).toBeGreaterThanOrEqual(17);
    expect(spans.filter((sp) => sp.status.code === SpanStatusCode.ERROR)).toHaveLength(4);
    for (const sp of spans) {
      const text = JSON.stringify({ name: sp.name, status: sp.status, attributes: sp.attributes, events: sp.events, links: sp.links });
      expect(text, `span ${sp.name}`).not.toContain(MARKER);
    }
    const rm = await r.metrics();
    const text = JSON.stringify(rm.scopeMetrics.map((sm) => sm.metrics.map((m) => ({ d: m.descriptor, p: m.dataPoints.map((dp) => dp.attributes) }))));
    expect(text).not.toContain(MARKER);
    const refused = points(rm).filter((p) => p.metric === "redcheck.client.refused_writes");
    expect(refused.reduce((a, p) => a + (p.value as number), 0)).toBe(3);
  });
});

describe("logs", () => {
  /** logged: a logger that keeps what it is told. */
  function logged() {
    const records: { level: string; message: string; attributes: Record<string, string> }[] = [];
    return {
      records,
      logger: {
        warn: (message: string, attributes: Record<string, string>) => records.push({ level: "warn", message, attributes }),
        error: (message: string, attributes: Record<string, string>) => records.push({ level: "error", message, attributes }),
      },
    };
  }

  it("a data loss is logged at warn with the span's attributes and trace, as Go's Logger says it", async () => {
    const l = logged();
    const r = rig({ logger: l.logger });
    const s = r.saver;
    const cfg = await putOne(s, { configurable: { thread_id: "lost-log" } }, 0);
    const id = String(cfg.configurable!.checkpoint_id);
    for await (const k of client.scanIterator({ MATCH: `${s.layout.prefix}:*:cp:${id}`, COUNT: 1000 })) if (k.length) await client.del(k);
    r.reset();
    const err = await s.getTuple(cfg).catch((e) => e);
    expect(err).toBeInstanceOf(DataLossError);
    const sp = one(r.spans(), "GetTuple");
    expect(l.records).toEqual([{ level: "warn", message: "redcheck: data loss detected", attributes: {
      "db.operation.name": "GetTuple", "redcheck.prefix": s.layout.prefix, "redcheck.thread_id": "lost-log", "redcheck.checkpoint_ns": "",
      "redcheck.checkpoint_id": id, "trace_id": sp.spanContext().traceId, "span_id": sp.spanContext().spanId, "error.type": "data_loss",
      "error": err.message } }]);
  });

  it("a prefix found emptied, and a reinitialize that creates it again, are logged at error; with no OpenTelemetry at all too", async () => {
    const l = logged();
    // No providers given and no SDK registered: the logger alone.
    const s = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}`, logger: l.logger });
    await putOne(s, { configurable: { thread_id: "before" } }, 0);
    const wipe = async () => {
      const keys = [];
      for await (const k of client.scanIterator({ MATCH: `${s.layout.prefix}:*`, COUNT: 1000 })) keys.push(...k);
      await client.del(keys);
    };
    await wipe();
    expect(await putOne(s, { configurable: { thread_id: "after" } }, 0).catch((e) => e)).toBeInstanceOf(PrefixResetError);
    await wipe();
    expect(await s.reinitialize()).toBe(true);
    expect(l.records.map((r) => [r.level, r.message, r.attributes["db.operation.name"], r.attributes["error.type"]])).toEqual([
      ["error", "redcheck: the prefix was emptied (every checkpoint lost) and created again", "Put", "prefix_reset"],
      ["error", "redcheck: the prefix was emptied (every checkpoint lost) and created again", "Reinitialize", "prefix_reset"],
    ]);
    expect(l.records[0]!.attributes.trace_id).toBeUndefined();
  });
});

describe("gauges", () => {
  it("registerGauges reports the reclaim backlog and the expired threads, with redcheck.prefix (Go: RegisterGauges)", async () => {
    const r = rig({ ttl: 50, shards: 2 });
    const s = r.saver;
    const reg = await s.registerGauges();
    const gauge = async (name: string) => {
      const ps = points(await r.metrics()).filter((p) => p.metric === name);
      expect(ps, name).toHaveLength(1);
      expect(ps[0]!.attributes).toEqual({ "redcheck.prefix": s.layout.prefix });
      return ps[0]!.value;
    };
    await putOne(s, { configurable: { thread_id: "lease" } }, 0);
    expect(await gauge("redcheck.threads.expired")).toBe(0);
    expect(await gauge("redcheck.reclaim.backlog")).toBe(0);
    await new Promise((ok) => setTimeout(ok, 120));
    expect(await gauge("redcheck.threads.expired")).toBe(1);
    // The backlog is every shard's reclaim queue: one entry queued by hand in each shard.
    for (let i = 0; i < 2; i++) await client.zAdd(s.layout.gc(i), { score: Date.now() + 3_600_000, value: `by-hand-${i}` });
    expect(await gauge("redcheck.reclaim.backlog")).toBe(2);
    for (let i = 0; i < 2; i++) await client.zRem(s.layout.gc(i), `by-hand-${i}`);
    await s.sweep();
    expect(await gauge("redcheck.threads.expired")).toBe(0);
    expect(await gauge("redcheck.reclaim.backlog")).toBe(0);
    // Unregistered, the callback reads Redis no more: a backlog queued now is not observed.
    reg.unregister();
    await client.zAdd(s.layout.gc(0), { score: Date.now() + 3_600_000, value: "after" });
    const after = points(await r.metrics()).filter((p) => p.metric === "redcheck.reclaim.backlog");
    await client.zRem(s.layout.gc(0), "after");
    expect(after.every((p) => p.value === 0)).toBe(true);
  });

  it("registers nothing without a meter provider", async () => {
    const s = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}` });
    const reg = await s.registerGauges();
    reg.unregister();
  });
});

describe("trace context in events", () => {
  /** feedEntries reads every entry of every shard's feed of s, as field -> value. */
  async function feedEntries(s: RedcheckSaver): Promise<Record<string, string>[]> {
    const out: Record<string, string>[] = [];
    for (let n = 0; n < s.layout.shards; n++) {
      for (const e of await client.xRange(s.layout.feed(n), "-", "+")) out.push(e.message as Record<string, string>);
    }
    return out;
  }
  const writerOf: Record<string, string> = { checkpoint: "Put", writes: "PutWrites", thread_copied: "CopyThread", pruned: "Prune",
    runs_deleted: "DeleteForRuns", thread_deleted: "DeleteThread" };

  it("each event carries the traceparent of the span that wrote it, for a consumer's span to link to", async () => {
    const r = rig();
    const s = r.saver;
    const base = { configurable: { thread_id: "tc" } };
    const c0 = await putOne(s, base, 0, "v", { run_id: "run-1" });
    await s.putWrites(c0, [["a", "w"]], "task");
    await s.copyThread("tc", "tc-copy");
    await putOne(s, c0, 1, "v1", { run_id: "run-1" });
    await s.prune(["tc"], "keep_latest");
    await s.deleteThread("tc-copy");
    await s.deleteForRuns(["run-1"]);
    const spans = new Map(r.spans().map((sp) => [sp.spanContext().spanId, sp]));
    const entries = await feedEntries(s);
    expect(new Set(entries.map((e) => e.t))).toEqual(new Set(Object.keys(writerOf)));
    for (const e of entries) {
      const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(e.traceparent ?? "");
      expect(m, `${e.t} event's traceparent ${e.traceparent}`).not.toBeNull();
      const writer = spans.get(m![2]!);
      expect(writer?.name, `the span ${e.t} names`).toBe(writerOf[e.t!]);
      expect(writer!.spanContext().traceId).toBe(m![1]);
      expect(e.tracestate).toBeUndefined();
    }
  });

  it("carries the tracestate, and nothing without a valid span context", async () => {
    const sc = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 0, isRemote: true,
      traceState: createTraceState("vendor=opaque,rojo=1") };
    const carried = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}`, tracerProvider: { getTracer: () => ({ startSpan: () => trace.wrapSpanContext(sc) }) } });
    await putOne(carried, { configurable: { thread_id: "ts" } }, 0);
    expect((await feedEntries(carried)).map((e) => [e.traceparent, e.tracestate])).toEqual([
      ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "vendor=opaque,rojo=1"]]);
    // No provider given, the global API's no-op (no SDK registered in this file), no active span.
    const plain = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}` });
    const c0 = await putOne(plain, { configurable: { thread_id: "plain" } }, 0);
    await plain.putWrites(c0, [["a", "w"]], "task");
    const entries = await feedEntries(plain);
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(Object.keys(e).filter((f) => f.startsWith("trace"))).toEqual([]);
  });
});

describe("no providers", () => {
  it("works with none given and no global SDK: nothing reported, nothing fails", async () => {
    // The global providers are the API's no-ops (no SDK registered in this test file).
    expect(trace.getTracerProvider().getTracer("x").startSpan("y").isRecording()).toBe(false);
    const s = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}` });
    const base = { configurable: { thread_id: "plain" } };
    const c0 = await putOne(s, base, 0, "v");
    await s.putWrites(c0, [["a", "w"]], "task");
    expect((await s.getTuple(base))?.checkpoint.channel_values).toEqual({ a: "v" });
    const all = [];
    for await (const t of s.list(base)) all.push(t);
    expect(all).toHaveLength(1);
    await expect(s.put(base, { ...emptyCheckpoint(), id: uuid6(3) }, { ...md(1), step: "x" as unknown as number }, {})).rejects.toThrow(InvalidCheckpointError);
    await s.deleteThread("plain");
    expect(await s.getTuple(base)).toBeUndefined();
    expect(await s.sweep()).toBeGreaterThanOrEqual(0);
  });

  it("reports to the global providers once an SDK registers them, after the saver was made", async () => {
    const s = new RedcheckSaver(client, { prefix: `tel-${run}-${n++}` });
    await s.setup();
    const exporter = new InMemorySpanExporter();
    const reader = new TestReader();
    const ok = trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const okm = metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      expect(ok && okm).toBe(true);
      await putOne(s, { configurable: { thread_id: "g" } }, 0);
      expect(exporter.getFinishedSpans().map((sp) => sp.name)).toEqual(["Put"]);
      const { resourceMetrics } = await reader.collect();
      expect(points(resourceMetrics).filter((p) => p.metric === "db.client.operation.duration")).toHaveLength(1);
    } finally {
      trace.disable();
      metrics.disable();
    }
  });
});
