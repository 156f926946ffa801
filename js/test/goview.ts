// What the Go saver reads of a value RedcheckSaver stores (the mapping of
// src/values.ts), in the typed notation of testdata/format: the expectations
// the cross-language tests hand to the Go side.
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { dumpsTyped } from "../src/values.js";
import type { Typed } from "./typed.js";

/** typedOfJSON: a value decoded from JSON, as the Go side holds it (integers int64, other numbers float64). */
export function typedOfJSON(v: unknown): Typed {
  if (v === null) return { null: true };
  if (typeof v === "boolean") return { bool: v };
  if (typeof v === "number") return Number.isInteger(v) ? { int: String(v) } : { float: v };
  if (typeof v === "string") return { str: v };
  if (Array.isArray(v)) return { list: v.map(typedOfJSON) };
  return { map: Object.fromEntries(Object.entries(v as object).map(([k, e]) => [k, typedOfJSON(e)])) };
}

/** goView: what the Go saver reads for a value RedcheckSaver stores with serde. */
export async function goView(serde: SerializerProtocol, v: unknown): Promise<Typed> {
  const [tag, data] = await dumpsTyped(serde, v);
  const of = (t: string): Typed => {
    if (t.startsWith("delta/")) return { delta: of(t.slice(6)) };
    if (t === "null") return { null: true };
    if (t === "bytes") return { bytes_hex: Buffer.from(data).toString("hex") };
    if (t === "json") return typedOfJSON(JSON.parse(Buffer.from(data).toString("utf8")));
    throw new Error(`no Go view of type ${t}`);
  };
  return of(tag);
}

export async function goViewMap(serde: SerializerProtocol, m: Record<string, unknown>): Promise<Record<string, Typed>> {
  const out: Record<string, Typed> = {};
  for (const [k, v] of Object.entries(m)) out[k] = await goView(serde, v);
  return out;
}
