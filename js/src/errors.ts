// Errors of the saver. Every error is a RedcheckError whose code matches the
// Go sentinel of the same meaning (docs/storage-format.md, "Script error codes").

export type ErrorCode = "DATALOSS" | "NOTFOUND" | "INVALID_CHECKPOINT" | "INVALID_CONFIG" | "CORRUPT" | "DECRYPT" | "REDIS";

export class RedcheckError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super("redcheck: " + message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Something that should exist in Redis does not (Go: checkpoint.ErrDataLoss). */
export class DataLossError extends RedcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("DATALOSS", message, options);
  }
}

/**
 * The call found the saver's prefix emptied (Redis restarted without persistence, FLUSHALL, a failover
 * to an empty replica): every checkpoint it held is lost, and the saver created the prefix again, so later
 * calls work on an empty prefix (Go: redissaver.ErrPrefixReset).
 */
export class PrefixResetError extends DataLossError {}

/** The thread or checkpoint does not exist (Go: checkpoint.ErrNotFound). */
export class NotFoundError extends RedcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("NOTFOUND", message, options);
  }
}

/** The checkpoint cannot be stored as given (Go: checkpoint.ErrInvalidCheckpoint). */
export class InvalidCheckpointError extends RedcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_CHECKPOINT", message, options);
  }
}

/** A config, option or prefix is invalid (Go: checkpoint.ErrInvalidConfig). */
export class InvalidConfigError extends RedcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("INVALID_CONFIG", message, options);
  }
}

/** Stored data cannot be decoded (Go: redissaver.ErrCorrupt). */
export class CorruptError extends RedcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CORRUPT", message, options);
  }
}

/**
 * A stored value cannot be opened, with encryption at rest (Go: checkpoint.ErrDecrypt; docs/storage-format.md,
 * "Encrypted values"): one altered (a flipped bit), moved from another place (thread, namespace, channel,
 * version, checkpoint, task or write index), sealed with a key id the keyring does not hold, malformed; a
 * plaintext value where encryption is required (without readPlaintext); an encrypted value read with no
 * keyring. Never answered as state. Its message names the place and the key id, never a byte of the value.
 */
export class DecryptError extends RedcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("DECRYPT", message, options);
  }
}

/** scriptError maps a script's error reply to the error of its code. */
export function scriptError(op: string, err: unknown): Error {
  if (err instanceof RedcheckError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  const strip = (p: string) => msg.slice(p.length + 1);
  if (msg.startsWith("DATALOSS ")) return new DataLossError(`${op}: ${strip("DATALOSS")} is missing`, { cause: err });
  if (msg.startsWith("CYCLE ")) return new DataLossError(`${op}: ${strip("CYCLE")}`, { cause: err });
  if (msg.startsWith("CHANGED")) return new DataLossError(`${op}: the thread was deleted or replaced, or a checkpoint of the walk deleted, during the walk (${msg})`, { cause: err });
  if (msg.startsWith("REPARENT ")) return new InvalidCheckpointError(`${op}: ${strip("REPARENT")}`, { cause: err });
  if (msg.startsWith("NOCHECKPOINT ")) return new InvalidCheckpointError(`${op}: ${strip("NOCHECKPOINT")}`, { cause: err });
  if (msg.startsWith("NOTFOUND ")) return new NotFoundError(`${op}: ${strip("NOTFOUND")}`, { cause: err });
  if (msg.startsWith("EXISTS ")) return new InvalidConfigError(`${op}: ${strip("EXISTS")}`, { cause: err });
  return new RedcheckError("REDIS", `${op}: ${msg}`, { cause: err });
}
