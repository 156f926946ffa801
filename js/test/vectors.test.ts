// The storage format's test vectors (testdata/format/*.json, the same files
// the Go tests check): keys, fields, stored values and canonical JSON, byte
// for byte, without Redis.
import { JsonPlusSerializer, WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJSON } from "../src/canonjson.js";
import { blobField, joinNames, pack, parseWriteField, unpack, writeField, writeIndex, SPECIAL_WRITE_INDEX } from "../src/codec.js";
import { InvalidConfigError } from "../src/errors.js";
import { Layout, decode, encode, member, validateGen, validateID, validateNamespace, validateRunID, validateThreadID } from "../src/keys.js";
import { compressStored, compressionOptions, decompressStored, isCompressed } from "../src/compress.js";
import { CorruptError } from "../src/errors.js";
import { decodeValue, encodeValue } from "../src/values.js";
import { storedVersion } from "../src/version.js";
import { hexOf, loadVectors, toJS } from "./typed.js";

const keysV: { format: number; encode_bytes: string[]; cases: any[]; invalid: any[] } = loadVectors("keys.json");
const fieldsV: Record<string, any[]> = loadVectors("fields.json");

describe("keys.json", () => {
  it("is format 3", () => expect(keysV.format).toBe(3));

  it("encodes every single byte", () => {
    expect(keysV.encode_bytes).toHaveLength(256);
    keysV.encode_bytes.forEach((want: string, b: number) => {
      expect(encode(Uint8Array.of(b))).toBe(want);
      expect([...decode(want)]).toEqual([b]);
    });
  });

  it.each(keysV.cases.map((c: any) => [c.name, c] as [unknown, any]))("case %s", (_name, c: any) => {
    const i = c.input;
    const l = new Layout(i.prefix, i.shards);
    const th = hexOf(i.thread_id);
    const ns = hexOf(i.namespace);
    const run = hexOf(i.run_id);
    const g = i.generation;
    const id = i.checkpoint_id;
    expect(l.shard(th)).toBe(c.shard);
    expect(encode(th)).toBe(c.encoded.thread_id);
    expect(encode(ns)).toBe(c.encoded.namespace);
    expect(encode(run)).toBe(c.encoded.run_id);
    expect(decode(c.encoded.thread_id).equals(th)).toBe(true);
    const n = c.shard;
    expect({
      meta: l.meta(), threads: l.threads(n), all: l.all(n), run: l.run(n, run), gc: l.gc(n), feed: l.feed(n),
      head: l.head(th), events: l.events(th), ns_set: l.namespaces(th, g), thread_index: l.threadIndex(th, g),
      ns_index: l.index(th, g, ns), blobs: l.blobs(th, g, ns), checkpoint: l.checkpoint(th, g, ns, id),
      early: l.early(th, ns, id), early_index: l.earlyIndex(n),
    }).toEqual(c.keys);
    const m = c.members;
    expect(Buffer.from(member(id, th, ns, g), "latin1").equals(hexOf(m.all_and_run))).toBe(true);
    expect(Buffer.from(id + "\x00" + encode(ns), "latin1").equals(hexOf(m.thread_index))).toBe(true);
    expect(id).toBe(m.ns_index);
    expect(encode(ns)).toBe(m.ns_set);
    expect(encode(th)).toBe(m.threads);
    expect(Buffer.from(encode(th) + "\x00" + g, "latin1").equals(hexOf(m.gc))).toBe(true);
  });

  it.each(keysV.invalid.map((c: any) => [c.what, c.value.text, c] as [unknown, unknown, any]))("refuses %s %j", (_w, _t, c: any) => {
    const v = hexOf(c.value);
    const text = v.toString("utf8");
    switch (c.what) {
      case "prefix":
        expect(() => new Layout(text, 0)).toThrow(InvalidConfigError);
        break;
      case "shards":
        expect(() => new Layout("p", Number(text))).toThrow(InvalidConfigError);
        break;
      case "checkpoint_id":
        expect(validateID(v.toString("latin1"))).toBeDefined();
        break;
      case "thread_id":
        expect(validateThreadID(v)).toBeDefined();
        break;
      case "namespace":
        expect(validateNamespace(v)).toBeDefined();
        break;
      case "generation":
        expect(validateGen(text)).toBeDefined();
        break;
      case "run_id":
        expect(validateRunID(v)).toBeDefined();
        break;
      default:
        throw new Error(`no check for invalid ${c.what}`);
    }
  });
});

describe("fields.json", () => {
  it.each(fieldsV.blob_fields.map((c: any) => [c.field.text, c] as [unknown, any]))("blob field %s", (_n, c: any) => {
    expect(blobField(hexOf(c.channel), c.version).equals(hexOf(c.field))).toBe(true);
    // A "c:" field holding a staged version reads as the version before the byte 0.
    expect(storedVersion(Buffer.from(c.version, "utf8"))).toBe(c.version.split("\0")[0]);
  });

  it.each(fieldsV.write_fields.map((c: any) => [c.field.text, c] as [unknown, any]))("write field %s", (_n, c: any) => {
    expect(writeIndex(c.channel, c.position)).toBe(c.index);
    const f = writeField(hexOf(c.task_id), c.index);
    expect(f.equals(hexOf(c.field))).toBe(true);
    const back = parseWriteField(f)!;
    expect(back.task.equals(hexOf(c.task_id))).toBe(true);
    expect(back.idx).toBe(c.index);
  });

  it("special write indices are LangGraph.js's WRITES_IDX_MAP", () => {
    expect(SPECIAL_WRITE_INDEX).toEqual(WRITES_IDX_MAP);
  });

  it.each(fieldsV.pack.map((c: any, i: number) => [i, c] as [unknown, any]))("pack %i", (_i, c: any) => {
    const parts = c.parts.map((p: any) => hexOf(p));
    const packed = pack(...parts);
    expect(packed.equals(hexOf(c.packed))).toBe(true);
    expect(unpack(packed, parts.length)!.map((b) => b.toString("hex"))).toEqual(parts.map((b: Buffer) => b.toString("hex")));
  });

  it.each(fieldsV.joined_names.map((c: any) => [c.joined.text, c] as [unknown, any]))("joined names %s", (_n, c: any) => {
    expect(joinNames(c.names.map((n: any) => hexOf(n))).equals(hexOf(c.joined))).toBe(true);
  });

  const serde = new JsonPlusSerializer();
  it.each(fieldsV.stored_values.map((c: any) => [c.serializer, c.name, c] as [unknown, unknown, any]))("stored value (%s) %s reads back in JS", async (ser, _n, c: any) => {
    const stored = Buffer.from(c.stored_hex, "hex");
    expect(stored.equals(pack(c.type, Buffer.from(c.data_hex, "hex")))).toBe(true);
    const got = await decodeValue(serde, stored);
    expect(got).toEqual(toJS(c.value, ser === "json" ? "json" : "native"));
  });

  it.each(fieldsV.metadata_values.map((c: any) => [c.name, c] as [unknown, any]))("metadata value %s: canonical JSON", (_n, c: any) => {
    const got = Buffer.from(canonicalJSON(toJS(c.value)), "utf8");
    expect(got.toString("hex")).toBe(hexOf(c.json).toString("hex"));
  });
});

describe("fields.json: compressed values", () => {
  const serde = new JsonPlusSerializer();
  it.each(fieldsV.compressed_values!.map((c: any) => [c.name, c] as [unknown, any]))("%s", async (_n, c: any) => {
    const stored = Buffer.from(c.stored_hex, "hex");
    const plain = Buffer.from(c.plain_hex, "hex");
    expect(isCompressed(stored)).toBe(c.compressed);
    expect((await decompressStored(stored)).equals(plain)).toBe(true);
    expect(await decodeValue(serde, stored)).toEqual(await decodeValue(serde, plain));
    if (c.writer === "go") {
      // The JS writer makes the same choice; its DEFLATE bytes may differ, and read back the same.
      const mine = await compressStored(plain, { threshold: c.min_bytes ?? 0, level: c.level });
      expect(isCompressed(mine)).toBe(c.compressed);
      if (!c.compressed) expect(mine.equals(plain)).toBe(true);
      expect((await decompressStored(mine)).equals(plain)).toBe(true);
    }
  });

  it.each(fieldsV.invalid_compressed_values!.map((c: any) => [c.name, c] as [unknown, any]))("refuses: %s", async (_n, c: any) => {
    await expect(decodeValue(serde, Buffer.from(c.stored_hex, "hex"))).rejects.toThrow(CorruptError);
  });

  it("round trips values past the thread-pool threshold, and leaves incompressible ones plain", async () => {
    const big = "the agent calls a tool and reads its result. ".repeat(4000); // 180 KB
    const z = { threshold: 1024, level: 6 };
    const stored = await encodeValue(serde, big, z);
    expect(isCompressed(stored)).toBe(true);
    expect(stored.length).toBeLessThan(big.length / 20);
    expect(await decodeValue(serde, stored)).toBe(big);
    const noise = new Uint8Array(randomBytes(100_000));
    expect(isCompressed(await encodeValue(serde, noise, z))).toBe(false);
    const truncated = stored.subarray(0, stored.length - 10);
    await expect(decodeValue(serde, truncated)).rejects.toThrow(CorruptError);
  });

  it("validates the option", () => {
    expect(compressionOptions(undefined)).toBeUndefined();
    expect(compressionOptions({})).toEqual({ threshold: 1024, level: 6 });
    for (const bad of [{ level: 0 }, { level: 10 }, { threshold: -1 }, { threshold: 1.5 }]) expect(() => compressionOptions(bad)).toThrow(InvalidConfigError);
  });
});
