// The saver's options and their defaults (Go: redissaver.Options).
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { CompressionOptions } from "./compress.js";
import type { Keyring } from "./keyring.js";
import type { LoggerLike, MeterProviderLike, TracerProviderLike } from "./telemetry.js";

/** Events the scripts append to each thread's stream and its shard's feed (Go: redissaver.Events). */
export interface EventOptions {
  /** No events at all. */
  disabled?: boolean;
  /** Approximate maximum length of a thread's stream (default 10,000). */
  maxLen?: number;
  /** Approximate maximum length of a shard's feed (default 100,000). */
  feedMaxLen?: number;
  /** Copy stored values into the events, within maxValueBytes. */
  includeValues?: boolean;
  /** The largest value copied into an event, in bytes (default 64 KiB). */
  maxValueBytes?: number;
  /** The bytes of values one event carries, all together (default 64 KiB); values past it travel by reference. */
  maxEventBytes?: number;
  /**
   * With includeValues, the bytes of values a thread's stream and a shard's
   * feed hold (defaults 64 MiB and 512 MiB): their lengths are lowered to
   * streamBytes / (maxEventBytes + 1 KiB) and feedBytes / (maxEventBytes + 1 KiB)
   * events when that is below maxLen and feedMaxLen (Go: Events.StreamBytes, FeedBytes).
   */
  streamBytes?: number;
  feedBytes?: number;
  /** How long a deleted thread's stream stays, in milliseconds (default 1 h). */
  retainDeletedMs?: number;
}

/** The options of a RedcheckSaver (Go: redissaver.Options). */
export interface RedcheckSaverOptions {
  /** Key prefix (default "redcheck"): 1–128 bytes, no "{", "}", spaces or control bytes. */
  prefix?: string;
  /** Shard count (default 16); must match what the prefix was written with. */
  shards?: number;
  /** Lease of a thread in milliseconds: it expires that long after its last write (0, the default: never). */
  ttl?: number;
  /** Reads that return a checkpoint renew the lease (needs ttl). */
  refreshOnRead?: boolean;
  /** Accept a server whose maxmemory-policy may evict keys. */
  acceptEviction?: boolean;
  /** Events (see EventOptions). */
  events?: EventOptions;
  /** Checkpoints per List round trip (default 100, at most 1024). */
  pageSize?: number;
  /** The serializer of channel and write values (default JsonPlusSerializer). */
  serde?: SerializerProtocol;
  /**
   * Compress values whose stored form is at least threshold bytes with raw
   * DEFLATE (node:zlib), when that makes them smaller (Go:
   * redissaver.Compression). Off when absent (the default): switch it on
   * once every reader of the prefix reads compressed values. Reads take both
   * forms whatever it says.
   */
  compression?: CompressionOptions;
  /**
   * Encryption at rest (docs/typescript.md, "Encryption at rest"): every value the saver stores (channel
   * values, pending writes, and so the values events carry) is sealed with AES-256-GCM under the keyring's
   * current key, bound to its place; a value altered, moved by hand to another thread, namespace, channel,
   * version, checkpoint, task or write index, or sealed with a key the ring lacks reads as DecryptError, never
   * as state. Reads take any key of the ring. Off when absent; with it on, a value stored in the clear is
   * refused with DecryptError unless readPlaintext (Go: redissaver.Options.Encryption).
   */
  encryption?: Keyring;
  /**
   * With encryption, reads take values stored in the clear (written before encryption was switched on) while
   * new writes are encrypted: the migration option. Leave it off once every value is encrypted, so that a
   * plaintext value planted by hand is refused (Go: redissaver.Options.ReadPlaintext).
   */
  readPlaintext?: boolean;
  /**
   * Where the saver's OpenTelemetry spans go (docs/observability.md, "TypeScript"): a TracerProvider of
   * @opentelemetry/api. Absent: the global provider, when @opentelemetry/api is installed (an optional
   * peer dependency); else no spans.
   */
  tracerProvider?: TracerProviderLike;
  /** Where the saver's metrics go: a MeterProvider of @opentelemetry/api. Absent: the global provider, when installed; else none. */
  meterProvider?: MeterProviderLike;
  /**
   * Told of each data loss a call meets (warn) and each prefix found emptied and created again (error),
   * with the Go saver's messages and attributes (docs/observability.md, "Logs"); `console` fits. Absent:
   * no logs.
   */
  logger?: LoggerLike;
}

/** DEFAULTS are the values of the options left out (the Go saver's defaults). */
export const DEFAULTS = {
  prefix: "redcheck",
  pageSize: 100,
  maxLen: 10_000,
  feedMaxLen: 100_000,
  maxValueBytes: 64 << 10,
  maxEventBytes: 64 << 10,
  streamBytes: 64 << 20,
  feedBytes: 512 << 20,
  retainDeletedMs: 3_600_000,
};
