export { RedcheckSaver, type RedcheckSaverOptions, type EventOptions } from "./saver.js";
export { type CompressionOptions } from "./compress.js";
export { CopyConflictError, type CopyFromOptions, type CopyReport, type ThreadCopy, type ThreadCopyStatus } from "./copyfrom.js";
export { type LoggerLike } from "./telemetry.js";
export { RedcheckError, DataLossError, PrefixResetError, NotFoundError, InvalidCheckpointError, InvalidConfigError, CorruptError, DecryptError } from "./errors.js";
export { Keyring, type KeyFunction } from "./keyring.js";
export { Layout, encode, decode, FORMAT_VERSION } from "./keys.js";
export { nextVersion } from "./version.js";
export { scripts } from "./scripts.js";
