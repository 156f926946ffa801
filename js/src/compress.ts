// Compressed stored values (docs/storage-format.md, "Stored values"): a
// stored value is "" (a version without a value), pack(type, bytes), whose
// first byte is a digit 1-9, or "z" len(plain) ":" rawDEFLATE(plain) of such
// a pack. The Go side is internal/codec (compress.go); both read any valid
// DEFLATE stream and refuse the same malformed values.
//
// node:zlib has raw DEFLATE in every Node.js this package supports (20 and
// later); zstd, which compresses faster at a better ratio, reached node:zlib
// only in Node.js 22.15 / 23.8 (experimental), so the format uses DEFLATE.
import { promisify } from "node:util";
import zlib from "node:zlib";
import { CorruptError, InvalidConfigError } from "./errors.js";

/** The first byte of a compressed stored value ("z"). */
export const COMPRESSED_TAG = 0x7a;
/** The largest plain form a compressed value may have (512 MiB): writers leave larger values plain. */
export const MAX_PLAIN_BYTES = 512 * 1024 * 1024;
/** DEFLATE's largest expansion (a 258-byte match in 2 bits): no valid stream claims more per byte. */
const MAX_RATIO = 1032;
/** From this size on, (de)compression runs on libuv's thread pool instead of blocking the event loop. */
const ASYNC_FROM = 64 * 1024;

/** Compression of stored values on put and putWrites (Go: redissaver.Compression). */
export interface CompressionOptions {
  /** The size of the stored form from which a value is compressed, in bytes (default 1024). */
  threshold?: number;
  /** The DEFLATE level, 1 (fastest) to 9 (smallest) (default 6). */
  level?: number;
}

export const COMPRESSION_DEFAULTS: Required<CompressionOptions> = { threshold: 1024, level: 6 };

/** compressionOptions validates the option, with its defaults; undefined when compression is off. */
export function compressionOptions(c: CompressionOptions | undefined): Required<CompressionOptions> | undefined {
  if (c === undefined) return undefined;
  const o = { threshold: c.threshold ?? COMPRESSION_DEFAULTS.threshold, level: c.level ?? COMPRESSION_DEFAULTS.level };
  if (!Number.isInteger(o.threshold) || o.threshold < 0 || !Number.isInteger(o.level) || o.level < 1 || o.level > 9) {
    throw new InvalidConfigError("compression: threshold must be a whole number of bytes, level 1 to 9");
  }
  return o;
}

const deflateRaw = promisify(zlib.deflateRaw);
/** What inflateRaw gives with { info: true }: the output and the engine, whose bytesWritten is the input it consumed. */
type Inflated = { buffer: Buffer; engine: { bytesWritten: number } };
const inflateRaw = promisify(zlib.inflateRaw) as unknown as (b: Buffer, o: zlib.ZlibOptions & { info: true }) => Promise<Inflated>;

export function isCompressed(stored: Buffer): boolean {
  return stored.length > 0 && stored[0] === COMPRESSED_TAG;
}

/**
 * compressStored returns the stored form of plain (a pack(type, bytes)):
 * "z" len ":" rawDEFLATE(plain) when plain is at least threshold bytes (and
 * at most MAX_PLAIN_BYTES) and that is shorter, else plain itself.
 */
export async function compressStored(plain: Buffer, c: Required<CompressionOptions> | undefined): Promise<Buffer> {
  if (c === undefined || plain.length === 0 || plain.length < c.threshold || plain.length > MAX_PLAIN_BYTES) return plain;
  const data = plain.length >= ASYNC_FROM ? await deflateRaw(plain, { level: c.level }) : zlib.deflateRawSync(plain, { level: c.level });
  const head = Buffer.from(`z${plain.length}:`, "latin1");
  if (head.length + data.length >= plain.length) return plain;
  return Buffer.concat([head, data]);
}

/**
 * decompressStored returns the plain form of a stored value: stored itself
 * when it is not compressed. It throws CorruptError for a malformed length,
 * one over MAX_PLAIN_BYTES or over what the data could hold (before
 * inflating), data that is not raw DEFLATE, does not inflate to exactly the
 * length, or has bytes after its end, and a plain form that is not a typed
 * value.
 */
export async function decompressStored(stored: Buffer): Promise<Buffer> {
  if (!isCompressed(stored)) return stored;
  const colon = stored.indexOf(0x3a, 1);
  const len = stored.subarray(1, colon).toString("latin1");
  if (colon < 0 || !/^[1-9][0-9]{0,9}$/.test(len)) throw new CorruptError("compressed value: malformed length");
  const n = Number(len);
  const data = stored.subarray(colon + 1);
  if (n > MAX_PLAIN_BYTES || n > MAX_RATIO * data.length) {
    throw new CorruptError(`compressed value: ${data.length} bytes of data cannot hold ${n} bytes`);
  }
  let out: Inflated;
  try {
    const opts = { info: true as const, maxOutputLength: n };
    out = n >= ASYNC_FROM ? await inflateRaw(data, opts) : (zlib.inflateRawSync(data, opts) as unknown as Inflated);
  } catch (e) {
    throw new CorruptError(`compressed value: ${(e as Error).message}`, { cause: e });
  }
  if (out.buffer.length !== n) throw new CorruptError(`compressed value: inflates to ${out.buffer.length} bytes, not ${n}`);
  if (out.engine.bytesWritten !== data.length) throw new CorruptError(`compressed value: ${data.length - out.engine.bytesWritten} bytes after the end of the data`);
  if (out.buffer[0]! < 0x31 || out.buffer[0]! > 0x39) throw new CorruptError("compressed value: the plain form is not a typed value");
  return out.buffer;
}
