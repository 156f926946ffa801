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
import { channelPlace, type Encryption } from "./encryption.js";
import { CorruptError, InvalidCheckpointError, InvalidConfigError, scriptError } from "./errors.js";
import { checkpointEvent, eventSpec } from "./events.js";
import { Layout, encode, newGen, validateID, validateRunID } from "./keys.js";
import type { EventOptions } from "./options.js";
import { scripts } from "./scripts.js";
import { encodeValue } from "./values.js";
import { versionToStore } from "./version.js";
import { byteOrder } from "./walk.js";

/** PUT_RESENT: put.lua's greatest status, a re-sent call that found its checkpoint stored. */
const PUT_RESENT = 2;

/** PutOps: what a Put uses of its RedcheckSaver. */
export interface PutOps {
  conn: Conn;
  layout: Layout;
  serde: SerializerProtocol;
  /** The thread's lease in milliseconds (0: none). */
  ttl: number;
  events: Required<EventOptions>;
  compression: Required<CompressionOptions> | undefined;
  /** Encryption at rest: what seals the values written. */
  enc: Encryption;
  setup(): Promise<void>;
}

/**
 * putCheckpoint validates a Put, then sends it: one call of put.lua with the checkpoint's fields and new
 * values as arguments. A config whose checkpoint_id is the checkpoint's own id replaces that stored
 * checkpoint in place, keeping its parent (LangGraph's runtime puts a loaded checkpoint again so).
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
  if (step !== undefined && !(typeof step === "number" && Number.isSafeInteger(step)) && typeof step !== "bigint") {
    throw new InvalidCheckpointError(`metadata step must be an integer, not ${JSON.stringify(step)}`);
  }
  await o.setup();

  // Checkpoint hash fields (docs/storage-format.md) but the parent and the call token, which put.lua writes.
  const fields: Arg[] = ["v", String(checkpoint.v ?? 0), "ts", str(checkpoint.ts ?? "")];
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
    const stored = Object.prototype.hasOwnProperty.call(values, ch)
      ? await o.enc.seal(channelPlace(thread, ns, ch, fresh[ch]!), await encodeValue(o.serde, (values as Record<string, unknown>)[ch], o.compression))
      : Buffer.alloc(0);
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
  const token = newGen();
  const event = eventSpec(o.events, checkpointEvent(o.events, thread, ns, parent, checkpoint, md, fresh, versions, blobs, o.enc.on));
  const args: Arg[] = [...head(token), String(fields.length / 2), String(blobs.length / 2), ...event, ...fields, ...blobs];
  try {
    putReply(await o.conn.run(scripts.put, keys, args));
  } catch (e) {
    throw scriptError("put", e);
  }
  return out;
}

/** putReply decodes put.lua's reply, {status, the thread's generation}, and answers the status. */
function putReply(reply: Reply): number {
  const r = arr(reply);
  const status = num(r[0]);
  if (r.length !== 2 || !Number.isInteger(status) || status < 0 || status > PUT_RESENT) {
    throw new CorruptError(`put reply ${JSON.stringify(reply)}`);
  }
  str(r[1]);
  return status;
}
