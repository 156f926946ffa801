// Put: a checkpoint, its new channel values and its event, in one atomic
// unit and one round trip (docs/storage-format.md, "Writing a checkpoint";
// Go: redissaver's put.go).
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ChannelVersions, Checkpoint, CheckpointMetadata, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { validateAddress, nsOf } from "./address.js";
import { canonicalJSON, goMarshal } from "./canonjson.js";
import { blobField } from "./codec.js";
import type { CompressionOptions } from "./compress.js";
import { arr, num, str, type Arg, type Conn, type Reply } from "./conn.js";
import { CorruptError, InvalidCheckpointError, InvalidConfigError, scriptError } from "./errors.js";
import { checkpointEvent, eventSpec } from "./events.js";
import { Layout, SEP, encode, newGen, validateID, validateRunID } from "./keys.js";
import type { EventOptions } from "./options.js";
import { scripts } from "./scripts.js";
import { encodeValue } from "./values.js";
import { versionToStore } from "./version.js";
import { byteOrder } from "./walk.js";

/** PUT_STALE: put.lua's status for staged values written to a generation that is not the thread's live one. */
const PUT_STALE = 3;
/** STAGE_TTL_MS bounds a stage key whose script never ran; put.lua renames or deletes it in its transaction. */
const STAGE_TTL_MS = 600_000;

/** PutOps: what a Put uses of its RedcheckSaver. */
export interface PutOps {
  conn: Conn;
  layout: Layout;
  serde: SerializerProtocol;
  /** The thread's lease in milliseconds (0: none). */
  ttl: number;
  events: Required<EventOptions>;
  compression: Required<CompressionOptions> | undefined;
  setup(): Promise<void>;
  /** The thread's live generation as last learnt, a hint put.lua checks. */
  generation(thread: string): string | undefined;
  rememberGen(thread: string, gen: string): void;
}

/**
 * putCheckpoint validates a Put, then sends it: its values staged by plain HSETs in the script's
 * transaction where it can, else through put.lua's arguments.
 */
export async function putCheckpoint(o: PutOps, thread: string, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
  newVersions: ChannelVersions): Promise<RunnableConfig> {
  const ns = nsOf(config);
  const parent = str(config.configurable?.checkpoint_id ?? "");
  validateAddress(thread, ns);
  if (parent !== "") {
    const bad = validateID(parent);
    if (bad) throw new InvalidConfigError(`parent ${bad}`);
  }
  const bad = validateID(checkpoint.id ?? "");
  if (bad) throw new InvalidCheckpointError(bad);
  if (parent === checkpoint.id) throw new InvalidCheckpointError(`checkpoint ${JSON.stringify(checkpoint.id)} cannot be its own parent`);
  const versions: Record<string, string> = {};
  for (const [ch, v] of Object.entries(checkpoint.channel_versions ?? {})) {
    versions[ch] = versionToStore(v);
    if (versions[ch].includes("\0")) throw new InvalidCheckpointError(`channel ${JSON.stringify(ch)}: version ${JSON.stringify(versions[ch])} holds the byte 0`);
  }
  const fresh: Record<string, string> = {};
  for (const [ch, v] of Object.entries(newVersions ?? {})) {
    const ver = versionToStore(v);
    if (!Object.prototype.hasOwnProperty.call(versions, ch)) throw new InvalidCheckpointError(`newVersions names channel ${JSON.stringify(ch)}, which has no version in the checkpoint`);
    if (versions[ch] !== ver) throw new InvalidCheckpointError(`newVersions gives channel ${JSON.stringify(ch)} version ${ver}, the checkpoint ${versions[ch]}`);
    if (ver === "") throw new InvalidCheckpointError(`channel ${JSON.stringify(ch)} has an empty version`);
    fresh[ch] = ver;
  }
  const md = (metadata ?? {}) as Record<string, unknown>;
  const step = md.step;
  if (step !== undefined && step !== null && !(typeof step === "number" && Number.isSafeInteger(step)) && typeof step !== "bigint") {
    throw new InvalidCheckpointError(`metadata step must be an integer, not ${JSON.stringify(step)}`);
  }
  await o.setup();

  // Checkpoint hash fields (docs/storage-format.md).
  const fields: Arg[] = ["v", String(checkpoint.v ?? 0), "ts", str(checkpoint.ts ?? "")];
  if (parent !== "") fields.push("p", parent);
  const seen: Record<string, Record<string, string>> = {};
  for (const [node, chans] of Object.entries(checkpoint.versions_seen ?? {})) {
    seen[node] = {};
    for (const [ch, v] of Object.entries(chans ?? {})) seen[node]![ch] = versionToStore(v as string | number);
  }
  fields.push("s", goMarshal(seen));
  const updated = (checkpoint as Checkpoint & { updated_channels?: string[] | null }).updated_channels;
  if (updated !== undefined && updated !== null) fields.push("u", goMarshal(updated));
  for (const [ch, v] of Object.entries(versions)) fields.push("c:" + ch, v);
  let runID = "";
  for (const [k, v] of Object.entries(md)) {
    if (v === undefined) continue;
    fields.push("m:" + k, canonicalJSON(v));
    if (k === "run_id" && typeof v === "string" && !validateRunID(v)) runID = v;
  }

  // Values of the channels in newVersions, in channel order (events are deterministic).
  const values = checkpoint.channel_values ?? {};
  const blobs: Buffer[] = [];
  for (const ch of Object.keys(fresh).sort(byteOrder)) {
    const stored = Object.prototype.hasOwnProperty.call(values, ch) ? await encodeValue(o.serde, (values as Record<string, unknown>)[ch], o.compression) : Buffer.alloc(0);
    blobs.push(blobField(ch, fresh[ch]!), stored);
  }

  const shard = o.layout.shard(thread);
  const keys = [
    o.layout.head(thread),
    o.layout.threads(shard),
    o.layout.all(shard),
    o.layout.gc(shard),
    o.layout.events(thread),
    o.layout.feed(shard),
  ];
  if (runID !== "") {
    const runKey = o.layout.run(shard, runID);
    keys.push(runKey);
    fields.push("r", runKey);
  }
  const out = { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  const head = (token: string): Arg[] =>
    [o.layout.shardBase(shard), encode(thread), encode(ns), checkpoint.id, parent, newGen(), token, String(o.ttl)];
  // Staged: the values go by a plain HSET in the same transaction as the script, so that no value byte
  // enters Lua (docs/storage-format.md, "Writing a checkpoint"): to the values hash of the generation the
  // saver knows (from its last put or getTuple of the thread), or, for a root checkpoint of a thread it
  // does not know (a new thread, most likely), to a stage key. A stale generation (status 3: nothing
  // written) is tried once more knowing the live one; a discarded transaction goes through the script.
  for (let attempt = 0; attempt < 2 && blobs.length > 0; attempt++) {
    const gen = o.generation(thread);
    if (gen === undefined && parent !== "") break;
    const token = newGen();
    const target = gen === undefined ? o.layout.stage(shard, token) : o.layout.blobs(thread, gen, ns);
    let status: number | undefined;
    try {
      status = await putStaged(o, target, gen === undefined, token, head(token), keys, fields, fresh, versions, blobs, thread, ns, parent, checkpoint, md);
    } catch (e) {
      throw scriptError("put", e);
    }
    if (status === undefined) break;
    if (status !== PUT_STALE) return out;
  }
  const token = newGen();
  const event = eventSpec(o.events, checkpointEvent(o.events, thread, ns, parent, checkpoint, md, fresh, versions, blobs));
  const args: Arg[] = [...head(token), String(fields.length / 2), String(blobs.length / 2), ...event, ...fields, ...blobs];
  try {
    putReply(o, thread, await o.conn.run(scripts.put, keys, args));
  } catch (e) {
    throw scriptError("put", e);
  }
  return out;
}

/**
 * putStaged sends a Put with its values staged to target: the values hash of the generation the saver
 * knows, or (stage) the stage key of its call token, with a TTL. The "c:" fields of the values it writes,
 * and their blob fields, carry \0 and the token; the hash pairs go in put.lua's staged order (those "c:"
 * pairs in channel order, then the other "c:" pairs, valued with their plain version, which put.lua
 * resolves against the parent, then the rest). It answers put.lua's status, or undefined when Redis
 * discarded the transaction (nothing ran): the caller sends the Put through the script.
 */
async function putStaged(o: PutOps, target: string, stage: boolean, token: string, head: Arg[], keys: Arg[], fields: Arg[], fresh: Record<string, string>,
  versions: Record<string, string>, blobs: Buffer[], thread: string, ns: string, parent: string, cp: Checkpoint,
  md: Record<string, unknown>): Promise<number | undefined> {
  const suffix = SEP + token;
  const own: Arg[] = [];
  const inherited: Arg[] = [];
  const rest: Arg[] = [];
  const staged: Buffer[] = [];
  const names: Buffer[] = [];
  for (const ch of Object.keys(fresh).sort(byteOrder)) {
    own.push("c:" + ch, fresh[ch]! + suffix);
  }
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const f = str(fields[i] as Arg);
    if (!f.startsWith("c:")) rest.push(fields[i]!, fields[i + 1]!);
    else if (!Object.prototype.hasOwnProperty.call(fresh, f.slice(2))) inherited.push(fields[i]!, fields[i + 1]!);
  }
  for (let i = 0; i + 1 < blobs.length; i += 2) {
    const name = Buffer.concat([blobs[i]!, Buffer.from(suffix, "utf8")]);
    names.push(name);
    staged.push(name, blobs[i + 1]!);
  }
  const pairs = [...own, ...inherited, ...rest];
  const event = eventSpec(o.events, checkpointEvent(o.events, thread, ns, parent, cp, md, fresh, versions, staged));
  const args: Arg[] = [...head, String(pairs.length / 2), String(-names.length), ...event, ...pairs, ...names, String(inherited.length / 2)];
  const before: Arg[][] = [["HSET", target, ...staged]];
  if (stage) before.push(["PEXPIRE", target, String(STAGE_TTL_MS)]);
  try {
    return putReply(o, thread, await o.conn.runTx(scripts.put, before, [...keys, target], args));
  } catch (e) {
    if (e instanceof Error && e.message.startsWith("EXECABORT")) return undefined;
    throw e;
  }
}

/**
 * putReply decodes put.lua's reply, {status, the thread's generation[, exact]}, remembers the generation
 * (a staged Put writes to it next) and answers the status.
 */
function putReply(o: PutOps, thread: string, reply: Reply): number {
  const r = arr(reply);
  const status = num(r[0]);
  if ((r.length !== 2 && r.length !== 3) || !Number.isInteger(status) || status < 0 || status > PUT_STALE) {
    throw new CorruptError(`put reply ${JSON.stringify(reply)}`);
  }
  o.rememberGen(thread, str(r[1]));
  return status;
}
