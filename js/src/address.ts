// A checkpoint's address (thread, namespace, id), and the thread and
// namespace of a RunnableConfig, validated as the Go saver validates them.
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidConfigError } from "./errors.js";
import { validateNamespace, validateThreadID } from "./keys.js";

/** Address names one checkpoint. */
export interface Address {
  thread: string;
  ns: string;
  id: string;
}

/** threadOf is the config's thread_id; a config without one is an InvalidConfigError. */
export function threadOf(config: RunnableConfig): string {
  const t = config?.configurable?.thread_id;
  if (t === undefined || t === null || t === "") throw new InvalidConfigError("missing thread_id in config.configurable");
  return String(t);
}

/** nsOf is the config's checkpoint_ns, "" when absent. */
export function nsOf(config: RunnableConfig): string {
  const ns = config?.configurable?.checkpoint_ns;
  return ns === undefined || ns === null ? "" : String(ns);
}

/** validateAddress refuses a thread ID or namespace no saver accepts (InvalidConfigError). */
export function validateAddress(thread: string, ns: string): void {
  const bad = validateThreadID(thread) ?? validateNamespace(ns);
  if (bad) throw new InvalidConfigError(bad);
}
