// The typed notation of testdata/format (internal/formatvec): an object with
// one member (null, bool, int, uint, float, str, str_hex, bytes_hex, list,
// map, delta), turned into the JS value the saver reads or writes for it.
import { DeltaSnapshot } from "@langchain/langgraph-checkpoint";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type Typed = Record<string, unknown>;

export const vectorDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "testdata", "format");

export function loadVectors<T = any>(name: string): T {
  return JSON.parse(readFileSync(join(vectorDir, name), "utf8")) as T;
}

/** How a value reads back: "msgpack" keeps 64-bit integers (BigInt beyond 2^53); "json" reads numbers as JSON.parse does and nested bytes as their base64 string. */
export type View = "native" | "json";

export function toJS(t: Typed, view: View = "native", depth = 0): unknown {
  const [kind, v] = Object.entries(t)[0] as [string, unknown];
  switch (kind) {
    case "null":
      return null;
    case "bool":
      return v as boolean;
    case "int":
    case "uint": {
      const b = BigInt(v as string);
      return view === "json" || (b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER)) ? Number(b) : b;
    }
    case "float":
      return v as number;
    case "str":
      return v as string;
    case "str_hex":
      return Buffer.from(v as string, "hex").toString("utf8");
    case "bytes_hex": {
      const b = Buffer.from(v as string, "hex");
      return view === "json" && depth > 0 ? b.toString("base64") : new Uint8Array(b);
    }
    case "list":
      return (v as Typed[]).map((e) => toJS(e, view, depth + 1));
    case "map":
      return Object.fromEntries(Object.entries(v as Record<string, Typed>).map(([k, e]) => [k, toJS(e, view, depth + 1)]));
    case "delta":
      return new DeltaSnapshot(toJS(v as Typed, view, depth));
  }
  throw new Error(`unknown typed kind ${kind}`);
}

/** bytesOf reads a vector byte string: {text, hex} or {field, field_hex}: the hex wins. */
export function hexOf(o: Record<string, unknown>, key = "hex"): Buffer {
  return Buffer.from(o[key] as string, "hex");
}
