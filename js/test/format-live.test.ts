// testdata/format/checkpoint.json through the real scripts on redis-server:
// RedcheckSaver's put and putWrites must leave exactly the keys, fields,
// members and events the vectors pin (the Go saver's TestFormatVectorsLive
// checks the same files). Values are serialized by a serde that returns the
// bytes the vector names for each value (the vectors were made with the Go
// serializers); the generation and call token are random, as the vectors say. A root checkpoint's
// values are staged: their fields carry the call token too.
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { INVALID_SPAN_CONTEXT, createTraceState, trace } from "@opentelemetry/api";
import { RESP_TYPES, createClient } from "redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { unpack } from "../src/codec.js";
import { RedcheckSaver } from "../src/index.js";
import { loadVectors, toJS, type Typed } from "./typed.js";

const vec: { cases: any[] } = loadVectors("checkpoint.json");
const db = 9; // the vectors pin the prefix "vec": a database of their own, flushed per case
const client = createClient({ url: inject("redisUrl"), database: db }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });

beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.flushDb();
  await client.close();
});

type Pair = { field: string; field_hex: string; value?: string; value_hex: string };
const hexPairs = (ps: Pair[]) => ps.map((p) => [p.field_hex, p.value_hex]).sort((a, b) => a[0]!.localeCompare(b[0]!));

/** A serde that answers, for each value of the case, the (type, bytes) the vector stored for it. */
class VectorSerde implements SerializerProtocol {
  readonly byValue = new Map<unknown, [string, Uint8Array]>();
  async dumpsTyped(v: unknown): Promise<[string, Uint8Array]> {
    const got = this.byValue.get(v);
    if (!got) throw new Error(`no vector bytes for ${JSON.stringify(v)}`);
    return got;
  }
  async loadsTyped(): Promise<unknown> {
    throw new Error("not used");
  }
}

function fromPack(stored: Buffer, n: number): [string, Uint8Array] {
  const parts = unpack(stored, n)!;
  return [parts[n - 2]!.toString("utf8"), parts[n - 1]!];
}

/** A tracer provider whose spans do not record and carry the span context traceparent names ("" or absent: none). */
function contextOnly(traceparent: string | undefined, tracestate: string | undefined) {
  const [, traceId, spanId, flags] = (traceparent ?? "").split("-");
  const span = traceId
    ? trace.wrapSpanContext({ traceId, spanId: spanId!, traceFlags: parseInt(flags!, 16), isRemote: true, ...(tracestate ? { traceState: createTraceState(tracestate) } : {}) })
    : trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  return { getTracer: () => ({ startSpan: () => span }) };
}

describe("checkpoint.json on redis-server", () => {
  it.each(vec.cases.map((c: any) => [c.name, c] as [unknown, any]))("%s", async (_name, c: any) => {
    await client.flushDb();
    const i = c.input;
    const e = c.expect;
    const serde = new VectorSerde();
    const values: Record<string, unknown> = {};
    const byField = new Map<string, string>(e.blobs.map((b: Pair) => [b.field_hex, b.value_hex]));
    for (const [ch, t] of Object.entries(i.checkpoint.channel_values as Record<string, Typed>)) {
      values[ch] = toJS(t);
      const ver = i.checkpoint.channel_versions[ch];
      const field = Buffer.concat([Buffer.from(`${Buffer.byteLength(ch)}:${ch}`), Buffer.from(ver)]).toString("hex");
      serde.byValue.set(values[ch], fromPack(Buffer.from(byField.get(field)!, "hex"), 2));
    }
    const writes = i.writes.writes.map((w: { channel: string; value: Typed }) => [w.channel, toJS(w.value)] as [string, unknown]);
    const byWrite = new Map<string, string>(e.writes.map((w: Pair) => [w.field, w.value_hex]));
    writes.forEach(([ch, v]: [string, unknown], pos: number) => {
      const idx = ({ __error__: -1, __scheduled__: -2, __interrupt__: -3, __resume__: -4 } as Record<string, number>)[ch] ?? pos;
      const stored = byWrite.get(`w:${Buffer.byteLength(i.writes.task_id)}:${i.writes.task_id}:${idx}`)!;
      if (v !== null && !(v instanceof Uint8Array)) serde.byValue.set(v, fromPack(Buffer.from(stored, "hex"), 4));
    });
    const metadata = Object.fromEntries(Object.entries(i.metadata as Record<string, Typed>).map(([k, t]) => [k, toJS(t)]));
    const cp = { ...i.checkpoint, channel_values: values };
    if (cp.updated_channels === null) delete cp.updated_channels;
    const saver = new RedcheckSaver(client, {
      prefix: i.prefix, shards: i.shards, serde,
      events: { includeValues: i.include_values, ...(i.max_value_bytes ? { maxValueBytes: i.max_value_bytes } : {}) },
      // Spans that do not record and carry the input's trace context (none without one), as Go's test does.
      tracerProvider: contextOnly(i.traceparent, i.tracestate),
    });
    const cfg = { configurable: { thread_id: i.thread_id, checkpoint_ns: i.namespace, ...(i.parent_id ? { checkpoint_id: i.parent_id } : {}) } };
    const stored = await saver.put(cfg, cp, metadata as any, i.new_versions);
    await saver.putWrites(stored, writes, i.writes.task_id, i.writes.task_path);

    const gen = (await client.hGet(e.keys.head, "g"))!.toString();
    const sub = (s: string) => s.split(i.generation).join(gen);
    const k = Object.fromEntries(Object.entries(e.keys as Record<string, string>).map(([n, key]) => [n, sub(key)]));
    const allKeys: string[] = [];
    let cursor = "0";
    do {
      const r = await client.scan(cursor, { COUNT: 100 });
      cursor = r.cursor.toString();
      allKeys.push(...r.keys.map((b: Buffer | string) => b.toString()));
    } while (cursor !== "0");
    // Every shard registry holds the marker member "" from the prefix's creation on; those of the other
    // shards hold only it.
    const others = allKeys.filter((key) => key.endsWith("}:threads") && key !== k.threads);
    expect(others).toHaveLength(i.shards - 1);
    for (const key of others) expect((await client.zRange(key, 0, -1)).map(String)).toEqual([""]);
    expect(allKeys.sort()).toEqual([...Object.values(k), ...others].sort());

    const hash = async (key: string) => {
      const h = await client.hGetAll(key) as unknown as Record<string, Buffer>;
      return Object.entries(h).map(([f, v]) => [Buffer.from(f).toString("hex"), Buffer.from(v).toString("hex")]).sort((a, b) => a[0]!.localeCompare(b[0]!));
    };
    expect(await hash(k.meta!)).toEqual(hexPairs(e.meta));
    expect((await hash(k.head!))).toEqual(hexPairs(e.head.map((p: Pair) => p.field === "g" ? { ...p, value_hex: Buffer.from(gen).toString("hex") } : p)));
    // The call tokens of the Put (o) and of the last PutWrites (ow) are random: their form is checked.
    const tokens = ["o", "ow"].map((f) => Buffer.from(f).toString("hex"));
    const cpFields = (await hash(k.checkpoint!)).filter(([f]) => !tokens.includes(f!));
    for (const f of ["o", "ow"]) expect((await client.hGet(k.checkpoint!, f))!.toString()).toMatch(/^[a-z2-7]{13}$/);
    const cpPairs = hexPairs(e.checkpoint);
    const blobPairs = hexPairs(e.blobs);
    const wantCp = [...cpPairs, ...hexPairs(e.writes)].sort((a, b) => a[0]!.localeCompare(b[0]!));
    expect(cpFields).toEqual(wantCp);
    expect(await hash(k.blobs!)).toEqual(blobPairs);

    const zset = async (key: string) => (await client.zRangeWithScores(key, 0, -1)).map((m: any) => [Buffer.from(m.value).toString("hex"), m.score]);
    expect((await zset(k.threads!)).filter((m) => m[0] !== "")).toEqual(e.threads.map((m: any) => [Buffer.from(m.member).toString("hex"), m.score]));
    expect(await client.zScore(k.threads!, "")).toBe(0);
    const members = (ms: any[]) => ms.map((m) => (typeof m === "string" ? Buffer.from(m) : Buffer.from(m.hex, "hex")).toString("hex"));
    const subHex = (h: string) => Buffer.from(sub(Buffer.from(h, "hex").toString("latin1")), "latin1").toString("hex");
    expect((await zset(k.all!)).map((m) => m[0])).toEqual(members(e.all).map(subHex));
    expect((await zset(k.thread_index!)).map((m) => m[0])).toEqual(members(e.thread_index));
    expect((await zset(k.ns_index!)).map((m) => m[0])).toEqual(members(e.ns_index));
    const set = async (key: string) => (await client.sMembers(key)).map((m: any) => Buffer.from(m).toString("hex")).sort();
    expect(await set(k.ns_set!)).toEqual(members(e.ns_set).sort());
    if (k.run) expect(await set(k.run)).toEqual(members(e.run).map(subHex).sort());

    const stream = async (key: string) => (await client.xRange(key, "-", "+")).map((en: any) =>
      Object.entries(en.message as Record<string, Buffer>).map(([f, v]) => [Buffer.from(f).toString("hex"), Buffer.from(v).toString("hex")])
        .sort((a, b) => a[0]!.localeCompare(b[0]!)));
    const want = [hexPairs(e.put_event), hexPairs(e.writes_event)];
    expect(await stream(k.events!)).toEqual(want);
    expect(await stream(k.feed!)).toEqual(want);
  });
});
