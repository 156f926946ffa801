// Stored values: pack(type, bytes), or its compressed form (compress.ts;
// docs/storage-format.md, "Stored values"). The mapping
// between JS values and the type tags the Go serializers read and write:
//
//   JS writes                              stored as              Go reads
//   null                                   "null", no bytes        nil
//   Uint8Array                             "bytes", the bytes      []byte
//   DeltaSnapshot(v)                       "delta/" + tag of v     checkpoint.DeltaSnapshot
//   anything else: the saver's serde       its tag, e.g. "json"    JSON as plain data: a
//   (JsonPlusSerializer by default)                                LangChain message is its
//                                                                  {lc, type, id, kwargs} map
//
//   Go writes (MsgpackSerializer)          JS reads
//   "msgpack"                              decoded with @msgpack/msgpack: int64 as number (BigInt
//                                          beyond 2^53), []byte as Uint8Array, time.Time as Date,
//                                          maps as objects; a map that is a serialized LangChain
//                                          object ({lc: 1, type: "constructor", ...}) is revived
//                                          by the serde, as JsonPlusSerializer revives its own
//   "json" (JSONSerializer)                the serde's "json" reader (integers beyond 2^53 lose
//                                          precision, as JSON.parse reads them)
//   "null", "bytes", "delta/..."           null, Uint8Array, DeltaSnapshot
import { DeltaSnapshot, isDeltaSnapshot, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { Decoder } from "@msgpack/msgpack";
import { pack, unpack } from "./codec.js";
import { compressStored, decompressStored, type CompressionOptions } from "./compress.js";
import { CorruptError, InvalidCheckpointError } from "./errors.js";

export const TAG_NULL = "null";
export const TAG_BYTES = "bytes";
export const TAG_MSGPACK = "msgpack";
export const TAG_JSON = "json";
export const TAG_DELTA = "delta/";

// Strings are decoded as Go writes them: each invalid UTF-8 byte becomes
// U+FFFD (@msgpack/msgpack's own decoder for short strings does not).
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
class GoMsgpackDecoder extends Decoder {
  constructor() {
    super({ useBigInt64: true });
    const self = this as unknown as { pos: number; bytes: Uint8Array; decodeUtf8String: (n: number, h: number) => string };
    self.decodeUtf8String = (byteLength: number, headerOffset: number): string => {
      const from = self.pos + headerOffset;
      if (self.bytes.byteLength < from + byteLength) throw new RangeError("msgpack: string past the end of the data");
      self.pos += headerOffset + byteLength;
      return utf8.decode(self.bytes.subarray(from, from + byteLength));
    };
  }
}
const msgpack = new GoMsgpackDecoder();

/** dumpsTyped returns the tag and bytes of a value (see the table above). */
export async function dumpsTyped(serde: SerializerProtocol, v: unknown): Promise<[string, Uint8Array]> {
  if (isDeltaSnapshot(v)) {
    const inner = (v as DeltaSnapshot<unknown>).value;
    if (isDeltaSnapshot(inner)) throw new InvalidCheckpointError("a DeltaSnapshot cannot hold another");
    const [t, d] = await dumpsPlain(serde, inner);
    return [TAG_DELTA + t, d];
  }
  return dumpsPlain(serde, v);
}

async function dumpsPlain(serde: SerializerProtocol, v: unknown): Promise<[string, Uint8Array]> {
  if (v === null) return [TAG_NULL, new Uint8Array()];
  if (v instanceof Uint8Array) return [TAG_BYTES, v];
  let out: [string, Uint8Array];
  try {
    out = await serde.dumpsTyped(v);
  } catch (e) {
    throw new InvalidCheckpointError(`cannot serialize a value: ${(e as Error).message}`, { cause: e });
  }
  if (!/^[a-z0-9_./-]{1,64}$/.test(out[0]) || out[0].startsWith(TAG_DELTA)) {
    throw new InvalidCheckpointError(`serializer returned the type tag ${JSON.stringify(out[0])}`);
  }
  return out;
}

/**
 * encodeValue returns a stored value: pack(type, bytes), compressed when
 * compression is set and it saves bytes (storedValue).
 */
export async function encodeValue(serde: SerializerProtocol, v: unknown, compression?: Required<CompressionOptions>): Promise<Buffer> {
  const [t, d] = await dumpsTyped(serde, v);
  return storedValue(t, d, compression);
}

/** storedValue is the one place a stored value is made, for channel values and pending writes alike. */
export function storedValue(type: string, data: Uint8Array, compression?: Required<CompressionOptions>): Promise<Buffer> {
  return compressStored(pack(type, data), compression);
}

/** decodeValue reverses encodeValue, compressed or not, and reads what the Go serializers write. */
export async function decodeValue(serde: SerializerProtocol, stored: Buffer): Promise<unknown> {
  const parts = unpack(await decompressStored(stored), 2);
  if (!parts) throw new CorruptError("stored value without a type");
  return loadsTyped(serde, parts[0]!.toString("utf8"), parts[1]!);
}

export async function loadsTyped(serde: SerializerProtocol, type: string, data: Buffer): Promise<unknown> {
  if (type.startsWith(TAG_DELTA)) {
    const inner = type.slice(TAG_DELTA.length);
    if (inner.startsWith(TAG_DELTA)) throw new CorruptError(`nested delta type ${JSON.stringify(type)}`);
    return new DeltaSnapshot(await loadsTyped(serde, inner, data));
  }
  try {
    switch (type) {
      case TAG_NULL:
        return null;
      case TAG_BYTES:
        return new Uint8Array(data);
      case TAG_MSGPACK:
        return await revive(serde, normalize(msgpack.decode(data)));
      default:
        return await serde.loadsTyped(type, new Uint8Array(data));
    }
  } catch (e) {
    if (e instanceof CorruptError) throw e;
    throw new CorruptError(`value of type ${JSON.stringify(type)}: ${(e as Error).message}`, { cause: e });
  }
}

/** normalize turns the BigInts msgpack gives for 64-bit integers into numbers when they are exact. */
function normalize(v: unknown): unknown {
  if (typeof v === "bigint") return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(normalize);
  if (v instanceof Uint8Array) return new Uint8Array(v); // a plain Uint8Array, not a view of the reply's Buffer
  if (v !== null && typeof v === "object" && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) out[k] = normalize(e);
    return out;
  }
  return v;
}

/** revive hands a value holding serialized LangChain objects to the serde's JSON reader. */
async function revive(serde: SerializerProtocol, v: unknown): Promise<unknown> {
  if (!holdsLC(v, 0) || !jsonSafe(v, 0)) return v;
  return serde.loadsTyped(TAG_JSON, new TextEncoder().encode(JSON.stringify(v)));
}

function holdsLC(v: unknown, depth: number): boolean {
  if (depth > 100 || v === null || typeof v !== "object" || v instanceof Uint8Array || v instanceof Date) return false;
  if (Array.isArray(v)) return v.some((e) => holdsLC(e, depth + 1));
  const o = v as Record<string, unknown>;
  if ((o.lc === 1 || o.lc === 2) && typeof o.type === "string") return true;
  return Object.values(o).some((e) => holdsLC(e, depth + 1));
}

function jsonSafe(v: unknown, depth: number): boolean {
  if (depth > 100) return false;
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || v instanceof Uint8Array || v instanceof Date) return false;
  return Object.values(v as object).every((e) => jsonSafe(e, depth + 1));
}
