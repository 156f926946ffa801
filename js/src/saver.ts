// RedcheckSaver: a LangGraph.js checkpointer on plain Redis that runs
// redcheck's Lua scripts and writes its storage format (docs/storage-format.md),
// so that the Go saver, Subscribe, `redcheck tail`, `redcheck check` and the
// dashboard work on what it writes. Each operation drives its scripts as the
// Go saver (redissaver/) does.
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  JsonPlusSerializer,
  TASKS,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { createClient, createCluster } from "redis";
import { canonicalJSON } from "./canonjson.js";
import { pack, parseWriteField, unpack, writeField, writeIndex } from "./codec.js";
import { Conn, arr, buf, num, str, type Arg, type RedisConnection, type Reply } from "./conn.js";
import {
  CorruptError,
  DataLossError,
  InvalidConfigError,
  PrefixResetError,
  RedcheckError,
  scriptError,
} from "./errors.js";
import { FORMAT_VERSION, Layout, encode, newGen, validateID, validateNamespace, validateThreadID } from "./keys.js";
import { copyThread, deleteForRuns, prune, type Ops } from "./extended.js";
import { copyFrom, type CopyFromOptions, type CopyReport } from "./copyfrom.js";
import { scripts } from "./scripts.js";
import { readValues, ValueGone, type CheckpointRead } from "./outoflua.js";
import { compressionOptions, type CompressionOptions } from "./compress.js";
import { decodeValue, dumpsTyped, storedValue } from "./values.js";
import { Encryption, channelPlace, writePlace } from "./encryption.js";
import { nextVersion, storedVersion, versionFromStore, versionToStore } from "./version.js";
import { DEFAULTS, type EventOptions, type RedcheckSaverOptions } from "./options.js";
import { nsOf, threadOf, validateAddress, type Address } from "./address.js";
import { SCAN_BUDGET, byteOrder, type Query } from "./walk.js";
import { flatHash, parseJSONField, sortWrites, type StoredWrite } from "./stored.js";
import { listMerged, listOne } from "./list.js";
import { deltaChannelHistory } from "./delta.js";
import type { ReadOps } from "./readops.js";
import { MAX_EVENT_VALUES, eventBounds, eventSpec, traceArgs } from "./events.js";
import { putCheckpoint, type PutOps } from "./put.js";
import { Telemetry, serverAttrs, type Call, type OpName } from "./telemetry.js";

export type { EventOptions, RedcheckSaverOptions };

const RECLAIM_BUDGET = 64;
/** The member every shard's thread registry holds from the prefix's creation on (Go: meta.RegistryMarker). */
const REGISTRY_MARKER = "";
/** The version a migrated pending-sends channel gets in a checkpoint with no versions (Go: checkpoint.MigratedTasksVersion). */
const MIGRATED_TASKS_VERSION = "000000000001.00000000";

/** RedcheckSaver is a LangGraph.js checkpointer on plain Redis 7+ or Valkey, standalone or Cluster. */
export class RedcheckSaver extends BaseCheckpointSaver {
  readonly layout: Layout;
  readonly #conn: Conn;
  readonly #opts: Required<Omit<RedcheckSaverOptions, "serde" | "events" | "shards" | "prefix" | "compression" | "tracerProvider" | "meterProvider" | "logger" | "encryption" | "readPlaintext">> & { events: Required<EventOptions> };
  readonly #compression: Required<CompressionOptions> | undefined;
  readonly #enc: Encryption;
  #ready: Promise<void> | undefined;
  #owned: { close(): Promise<unknown> } | undefined;
  readonly #tel: Telemetry;

  /**
   * @param client a connected node-redis v5 client (createClient) or cluster
   *   (createCluster); the caller owns it and closes it after the saver.
   */
  constructor(client: RedisConnection, options: RedcheckSaverOptions = {}) {
    super(options.serde ?? new JsonPlusSerializer());
    this.#conn = new Conn(client);
    this.#conn.onDataLoss = (e) => this.#recoverEmptied(e);
    this.layout = new Layout(options.prefix ?? DEFAULTS.prefix, options.shards ?? 0);
    this.#tel = new Telemetry(options, this.layout.prefix, serverAttrs(client, this.#conn.cluster));
    const ev = options.events ?? {};
    const o = {
      ttl: options.ttl ?? 0,
      refreshOnRead: options.refreshOnRead ?? false,
      acceptEviction: options.acceptEviction ?? false,
      pageSize: options.pageSize ?? DEFAULTS.pageSize,
      events: {
        disabled: ev.disabled ?? false,
        maxLen: ev.maxLen ?? DEFAULTS.maxLen,
        feedMaxLen: ev.feedMaxLen ?? DEFAULTS.feedMaxLen,
        includeValues: ev.includeValues ?? false,
        maxValueBytes: ev.maxValueBytes ?? DEFAULTS.maxValueBytes,
        maxEventBytes: ev.maxEventBytes ?? DEFAULTS.maxEventBytes,
        streamBytes: ev.streamBytes ?? DEFAULTS.streamBytes,
        feedBytes: ev.feedBytes ?? DEFAULTS.feedBytes,
        retainDeletedMs: ev.retainDeletedMs ?? DEFAULTS.retainDeletedMs,
      },
    };
    if (!Number.isInteger(o.ttl) || o.ttl < 0) throw new InvalidConfigError("ttl must be a whole number of milliseconds, 0 or more");
    if (o.refreshOnRead && o.ttl === 0) throw new InvalidConfigError("refreshOnRead needs a ttl");
    this.#compression = compressionOptions(options.compression);
    this.#enc = new Encryption(this.layout.prefix, options.encryption, options.readPlaintext ?? false);
    if (!Number.isInteger(o.pageSize) || o.pageSize < 1 || o.pageSize > SCAN_BUDGET) throw new InvalidConfigError(`pageSize must be 1 to ${SCAN_BUDGET}`);
    const e = o.events;
    if (!(e.maxLen >= 1 && e.feedMaxLen >= 1 && e.maxValueBytes >= 1 && e.maxEventBytes >= 1 && e.streamBytes >= 1 &&
      e.feedBytes >= 1 && e.retainDeletedMs >= 1)) {
      throw new InvalidConfigError("events: maxLen, feedMaxLen, maxValueBytes, maxEventBytes, streamBytes, feedBytes and retainDeletedMs must be positive");
    }
    if (e.includeValues) {
      const per = e.maxEventBytes + 1024; // values, and the rest of an event
      e.maxLen = Math.max(1, Math.min(e.maxLen, Math.floor(e.streamBytes / per)));
      e.feedMaxLen = Math.max(1, Math.min(e.feedMaxLen, Math.floor(e.feedBytes / per)));
    }
    this.#opts = o;
  }

  /**
   * fromUrl connects a node-redis v5 client to url (a cluster when
   * options.cluster is set: url is then one of its nodes) and returns a
   * saver that owns it: close() closes it.
   */
  static async fromUrl(url: string, options: RedcheckSaverOptions & { cluster?: boolean } = {}): Promise<RedcheckSaver> {
    const { cluster, ...rest } = options;
    const client = cluster ? createCluster({ rootNodes: [{ url }] }) : createClient({ url });
    await client.connect();
    try {
      const saver = new RedcheckSaver(client, rest);
      await saver.setup();
      saver.#owned = client;
      return saver;
    } catch (e) {
      await client.close();
      throw e;
    }
  }

  /** close closes the client when the saver owns it (fromUrl); else it does nothing. */
  async close(): Promise<void> {
    await this.#owned?.close();
  }

  /**
   * setup checks the server and the prefix, once: it refuses a server that
   * may evict keys (unless acceptEviction), writes the prefix's meta key when
   * the prefix is new, and refuses a prefix written with another format or
   * shard count. Every operation calls it first.
   */
  setup(): Promise<void> {
    this.#ready ??= this.#setup().catch((e) => {
      this.#ready = undefined;
      throw e;
    });
    return this.#ready;
  }

  async #setup(): Promise<void> {
    if (!this.#opts.acceptEviction) {
      const info = str(await this.#conn.send(undefined, ["INFO", "memory"]));
      let policy = "";
      let maxmemory = "";
      for (const line of info.split("\n")) {
        const [k, v] = line.trim().split(":");
        if (k === "maxmemory_policy") policy = v ?? "";
        if (k === "maxmemory") maxmemory = v ?? "";
      }
      if (policy === "") throw new InvalidConfigError("the server's eviction policy cannot be read; set acceptEviction to accept a server that may evict keys");
      if (maxmemory !== "" && maxmemory !== "0" && policy.startsWith("allkeys-")) {
        throw new InvalidConfigError(`the server's maxmemory-policy ${JSON.stringify(policy)} may evict the saver's keys; use noeviction or a volatile-* policy, or set acceptEviction`);
      }
    }
    await this.#ensurePrefix();
  }

  /**
   * #ensurePrefix writes the prefix's meta key when the prefix is new, and refuses a prefix written with
   * another format or shard count (Go: meta.Ensure).
   */
  async #ensurePrefix(): Promise<void> {
    // A new prefix (no meta key): every shard's registry gets its marker member "" first (no thread is
    // ""; a registry without it was lost whole: thread_state in lib.lua), then the meta key, in one
    // MULTI, as the Go side's internal/meta does.
    const key = this.layout.meta();
    const hash = (flat: Reply[]) => {
      const got: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) got[str(flat[i])] = str(flat[i + 1]);
      return got;
    };
    let got = hash(arr(await this.#conn.send(key, ["HGETALL", key])));
    if (Object.keys(got).length === 0) {
      await this.#noThreads();
      await Promise.all(Array.from({ length: this.layout.shards }, (_, n) =>
        this.#conn.send(this.layout.threads(n), ["ZADD", this.layout.threads(n), "NX", "0", REGISTRY_MARKER])));
      const replies = await this.#conn.transaction(key, [
        ["HSETNX", key, "format", String(FORMAT_VERSION)],
        ["HSETNX", key, "shards", String(this.layout.shards)],
        ["HGETALL", key],
      ]);
      got = hash(flatHash(replies[2]));
    }
    if (got.format !== String(FORMAT_VERSION)) {
      throw new InvalidConfigError(`prefix ${JSON.stringify(this.layout.prefix)} holds storage format ${JSON.stringify(got.format)} (meta key ${key}); this version reads format ${FORMAT_VERSION}`);
    }
    if (got.shards !== String(this.layout.shards)) {
      throw new InvalidConfigError(`prefix ${JSON.stringify(this.layout.prefix)} was written with ${got.shards} shards (meta key ${key}), not ${this.layout.shards}: set shards to ${got.shards}`);
    }
  }

  /**
   * #recoverEmptied answers for a script's DATALOSS error: when the prefix holds none of its meta key, shard
   * registries and shard indexes (Redis restarted without persistence, FLUSHALL, a failover to an empty
   * replica), it creates the prefix again (reinitialize) and answers PrefixResetError; later calls work on
   * the empty prefix. Any other loss is answered as the script said, and so is every loss with
   * acceptEviction: keys evicted one by one can leave the prefix looking empty while threads' data remain
   * (Go: redissaver's recoverEmptied).
   */
  async #recoverEmptied(err: Error): Promise<Error> {
    if (this.#opts.acceptEviction) return err;
    try {
      if (!(await this.#reinitialize())) return err;
    } catch (e) {
      return new PrefixResetError(`the prefix was emptied (${err.message}); creating it again failed: ${e instanceof Error ? e.message : String(e)}`, { cause: err });
    }
    return new PrefixResetError(`the prefix was emptied and created again (${err.message})`, { cause: err });
  }

  /**
   * reinitialize creates the prefix again when Redis lost it whole (restarted without persistence,
   * FLUSHALL, a failover to an empty replica): its registries' markers and meta key, and a prefix_reset
   * event on every shard's feed. It answers whether it did: a prefix that still holds its meta key, a
   * registry or a shard index is left alone. A saver does this by itself at the first call that meets
   * the loss, unless acceptEviction is set (Go: Saver.Reinitialize).
   */
  async reinitialize(): Promise<boolean> {
    return this.#traced("Reinitialize", async (call) => {
      let reset = false;
      try {
        reset = await this.#reinitialize();
      } finally {
        call.set({ "redcheck.reset": reset });
        if (reset) call.reset();
      }
      return reset;
    });
  }

  async #reinitialize(): Promise<boolean> {
    const l = this.layout;
    const keys = [l.meta()];
    for (let n = 0; n < l.shards; n++) keys.push(l.threads(n), l.all(n));
    const found = await Promise.all(keys.map((k) => this.#conn.send(k, ["EXISTS", k])));
    if (found.some((x) => num(x) !== 0)) return false;
    await this.#ensurePrefix();
    if (!this.#opts.events.disabled) {
      await Promise.all(Array.from({ length: l.shards }, (_, n) =>
        this.#conn.send(l.feed(n), ["XADD", l.feed(n), "MAXLEN", "~", String(this.#opts.events.feedMaxLen), "*", "t", "prefix_reset"])));
    }
    return true;
  }

  /**
   * #noThreads refuses (DataLossError) a prefix without its meta key that was
   * written: a shard registry lists a thread (a member but the marker), or
   * the registry of shard `shards` exists (the prefix has more shards than
   * this saver's). Registries holding only their markers are a creation that
   * stopped before the meta key, which may be completed (Go: meta.NoThreads).
   */
  async #noThreads(): Promise<void> {
    const l = this.layout;
    const firsts = await Promise.all(Array.from({ length: l.shards + 1 }, (_, n) =>
      this.#conn.send(l.threads(n), ["ZRANGE", l.threads(n), "0", "1"])));
    firsts.forEach((reply, n) => {
      for (const m of arr(reply)) {
        if (str(m) !== REGISTRY_MARKER || n === l.shards) {
          throw new DataLossError(`prefix ${JSON.stringify(l.prefix)} has no meta key ${l.meta()}, but its shard registry ${l.threads(n)} exists and is not empty: ` +
            `the prefix was written and its meta key lost (evicted or deleted); write it back (HSET ${l.meta()} format ${FORMAT_VERSION} shards <the prefix's shard count>, docs/storage-format.md) ` +
            "instead of starting a saver on the prefix");
        }
      }
    });
  }

  /**
   * getNextVersion returns the channel version after current as the Go
   * saver's checkpoint.NextVersion does: a string of at least 12 zero-padded
   * digits, ".", 8 random hex digits ("000000000002.5f0c21aa"), so that both
   * languages write one version format and continue each other's threads
   * (LangGraph.js supports string versions: "override this method to use
   * string versions"). It also takes LangGraph.js's integer versions (1 ->
   * "000000000002.…"). It is typed number, the type StateGraph.compile's
   * BaseCheckpointSaver (of number versions) declares. LangGraph.js's loop
   * compares versions with `>` (pregel/algo), so every version of a thread
   * must be of one type: these strings compare in order among themselves,
   * never with numbers (copyFrom turns a source's integer versions into this
   * form for that reason).
   */
  override getNextVersion(current: number | undefined): number {
    return nextVersion(current as string | number | undefined) as unknown as number;
  }

  /**
   * traced runs fn as one call of op: its span (kind client) and its metrics (telemetry.ts,
   * docs/observability.md). miss tells an answer that is no failure (a getTuple that found nothing).
   */
  async #traced<T>(op: OpName, fn: (call: Call) => Promise<T>): Promise<T> {
    const call = await this.#tel.begin(op);
    let out: T;
    try {
      out = await call.run(() => fn(call));
    } catch (e) {
      call.end(e, true);
      throw e;
    }
    call.end();
    return out;
  }

  // ---- put -----------------------------------------------------------------

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    return this.#traced("Put", async (call) => {
      call.address(rawThread(config), nsOf(config), str(checkpoint?.id ?? ""));
      call.step(metadata);
      return putCheckpoint(this.#putOps(), threadOf(config), config, checkpoint, metadata, newVersions);
    });
  }

  /** putOps: what put.ts uses of this saver. */
  #putOps(): PutOps {
    return {
      conn: this.#conn, layout: this.layout, serde: this.serde, ttl: this.#opts.ttl, events: this.#opts.events, compression: this.#compression, enc: this.#enc,
      setup: () => this.setup(),
    };
  }


  // ---- putWrites ---------------------------------------------------------------

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    return this.#traced("PutWrites", async (call) => {
      call.address(rawThread(config), nsOf(config), str(config.configurable?.checkpoint_id ?? ""));
      return this.#putWrites(config, writes, taskId, taskPath);
    });
  }

  async #putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath: string): Promise<void> {
    const thread = threadOf(config);
    const ns = nsOf(config);
    validateAddress(thread, ns);
    const id = str(config.configurable?.checkpoint_id ?? "");
    if (id === "") throw new InvalidConfigError("putWrites: missing checkpoint_id");
    const bad = validateID(id);
    if (bad) throw new InvalidConfigError(`checkpoint ${JSON.stringify(id)}: ${bad}`);
    if (writes.length === 0) return;
    await this.setup();
    const shard = this.layout.shard(thread);
    const bound = this.#opts.events.includeValues ? this.#opts.events.maxValueBytes : -1;
    // The call token: a call sent again (see below) after one that stored the writes changes nothing.
    // put_writes.lua builds the event (t "writes", th, ns, id, task, ch) from its arguments.
    const args: Arg[] = [this.layout.shardBase(shard), encode(thread), encode(ns), id, String(this.#opts.ttl),
      String(bound), String(MAX_EVENT_VALUES), String(this.#opts.events.maxEventBytes), newGen(), ...eventBounds(this.#opts.events), taskId, ...traceArgs(this.#opts.events)];
    for (let i = 0; i < writes.length; i++) {
      const [channel, value] = writes[i]!;
      const [t, d] = await dumpsTyped(this.serde, value);
      const idx = writeIndex(channel, i);
      const stored = await this.#enc.seal(writePlace(thread, ns, id, taskId, idx, channel), await storedValue(t, d, this.#compression));
      args.push(writeField(taskId, idx), pack(channel, taskPath, stored), idx < 0 ? "o" : "n", channel);
    }
    const keys = [this.layout.head(thread), this.layout.threads(shard), this.layout.events(thread), this.layout.feed(shard)];
    // One round trip, whether or not the checkpoint is stored yet: LangGraph.js sends a step's writes
    // while the put of its checkpoint is under way, and put_writes.lua keeps them for that put
    // (docs/storage-format.md, "Pending writes before their checkpoint").
    try {
      await this.#conn.run(scripts.putWrites, keys, args);
    } catch (e) {
      throw scriptError("put writes", e);
    }
  }

  // ---- getTuple --------------------------------------------------------------

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.#traced("GetTuple", async (call) => {
      call.address(rawThread(config), nsOf(config), str(config.configurable?.checkpoint_id ?? ""));
      const t = await this.#getTuple(config);
      if (t) {
        call.address(rawThread(config), nsOf(config), str(t.config.configurable?.checkpoint_id ?? ""));
        call.step(t.metadata);
      }
      call.set({ "redcheck.found": t !== undefined });
      return t;
    });
  }

  async #getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const thread = config.configurable?.thread_id;
    if (thread === undefined || thread === null || thread === "") return undefined;
    const addr: Address = { thread: String(thread), ns: nsOf(config), id: str(config.configurable?.checkpoint_id ?? "") };
    validateAddress(addr.thread, addr.ns);
    if (addr.id !== "" && validateID(addr.id)) return undefined;
    await this.setup();
    return this.#readTuple(addr, false);
  }

  /**
   * readTuple reads a checkpoint by get_tuple.lua: its values whole, or, when
   * they may be large, left out of Lua beyond 32 KiB and read by plain HMGET
   * (a second round trip; a value gone in between: read again whole).
   */
  async #readTuple(addr: Address, whole: boolean): Promise<CheckpointTuple | undefined> {
    const c = this.#getTupleCall(addr, whole);
    let res: Reply;
    try {
      res = await this.#conn.run(scripts.getTuple, c.keys, c.args);
    } catch (e) {
      throw scriptError("get tuple", e);
    }
    if (res === null) return undefined;
    const r = arr(res);
    if (r.length !== 5) throw new CorruptError(`get tuple reply of ${r.length} items`);
    const gen = str(r[4]);
    const read: CheckpointRead = { id: str(r[0]), thread: addr.thread, ns: addr.ns, gen, flat: r[1]!, values: r[2]! };
    try {
      await readValues(this.#conn, this.layout, [read]);
    } catch (e) {
      if (e instanceof ValueGone && !whole) return this.#readTuple(addr, true);
      throw e;
    }
    return this.#decodeTuple(addr.thread, addr.ns, str(r[0]), r[1]!, read.values, r[3]!);
  }

  /** getTupleCall: get_tuple.lua asking for the values whole ("0") or left out when large ("1"). */
  #getTupleCall(a: Address, whole: boolean): { keys: Arg[]; args: Arg[] } {
    const shard = this.layout.shard(a.thread);
    return {
      keys: [this.layout.head(a.thread), this.layout.threads(shard)],
      args: [this.layout.shardBase(shard), encode(a.thread), encode(a.ns), a.id, String(this.#refreshMs()), whole ? "0" : "1"],
    };
  }

  #refreshMs(): number {
    return this.#opts.refreshOnRead ? this.#opts.ttl : 0;
  }

  async #decodeTuple(thread: string, ns: string, id: string, flatR: Reply, blobsR: Reply, extraR: Reply): Promise<CheckpointTuple> {
    const flat = arr(flatR);
    const blobs = arr(blobsR);
    if (flat.length % 2 !== 0) throw new CorruptError(`checkpoint ${id}: hash reply of ${flat.length} items`);
    const cp: Checkpoint & { updated_channels?: string[] } = {
      v: 0, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {},
    };
    const metadata: Record<string, unknown> = {};
    let parent: string | undefined;
    const writes: StoredWrite[] = [];
    let blob = 0;
    for (let i = 0; i < flat.length; i += 2) {
      const f = str(flat[i]);
      const v = buf(flat[i + 1]);
      if (f === "v") {
        cp.v = Number(v.toString());
        if (!Number.isInteger(cp.v)) throw new CorruptError(`checkpoint ${id}: version ${v.toString()}`);
      } else if (f === "ts") {
        cp.ts = v.toString("utf8");
      } else if (f === "p") {
        parent = v.toString("utf8");
      } else if (f === "s") {
        const seen = parseJSONField(id, "versions seen", v) as Record<string, Record<string, string>> | null;
        for (const [node, chans] of Object.entries(seen ?? {})) {
          cp.versions_seen[node] = {};
          for (const [ch, ver] of Object.entries(chans ?? {})) cp.versions_seen[node]![ch] = versionFromStore(String(ver));
        }
      } else if (f === "u") {
        cp.updated_channels = parseJSONField(id, "updated channels", v) as string[];
      } else if (f.startsWith("c:")) {
        const ch = f.slice(2);
        const ver = storedVersion(v);
        cp.channel_versions[ch] = versionFromStore(ver);
        if (blob >= blobs.length) throw new CorruptError(`checkpoint ${id}: values missing`);
        const stored = blobs[blob++];
        if (Buffer.isBuffer(stored) && stored.length > 0) {
          cp.channel_values[ch] = await decodeValue(this.serde, await this.#enc.open(channelPlace(thread, ns, ch, ver), stored));
        }
      } else if (f.startsWith("m:")) {
        metadata[f.slice(2)] = parseJSONField(id, `metadata ${f.slice(2)}`, v);
      } else if (f.startsWith("w:")) {
        writes.push(await this.#decodeWrite(thread, ns, id, buf(flat[i]), v));
      }
    }
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id } },
      checkpoint: cp,
      metadata: metadata as CheckpointMetadata,
      pendingWrites: sortWrites(writes).map((w) => [w.task, w.channel, w.value] as CheckpointPendingWrite),
    };
    if (parent !== undefined) tuple.parentConfig = { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: parent } };
    await this.#migratePendingSends(tuple, arr(extraR));
    return tuple;
  }

  /** decodeWrite decodes the pending write of field, stored against checkpoint id of the thread and namespace. */
  async #decodeWrite(thread: string, ns: string, id: string, field: Buffer, stored: Buffer): Promise<StoredWrite> {
    const f = parseWriteField(field);
    if (!f) throw new CorruptError(`write field ${JSON.stringify(field.toString("utf8"))}`);
    const parts = unpack(stored, 3); // channel, task path, stored value
    if (!parts) throw new CorruptError(`write ${JSON.stringify(field.toString("utf8"))}`);
    const plain = await this.#enc.open(writePlace(thread, ns, id, f.task, f.idx, parts[0]!), parts[2]!);
    return {
      task: f.task.toString("utf8"),
      idx: f.idx,
      channel: parts[0]!.toString("utf8"),
      path: parts[1]!.toString("utf8"),
      value: await decodeValue(this.serde, plain),
    };
  }

  /** Legacy checkpoints (v < 4) read their pending sends from their parent's writes (Go: checkpoint.MigratePendingSends). */
  async #migratePendingSends(t: CheckpointTuple, extra: Reply[]): Promise<void> {
    const cp = t.checkpoint;
    if (cp.v >= 4 || !t.parentConfig || extra.length === 0) return;
    const sends: StoredWrite[] = [];
    for (let i = 0; i + 1 < extra.length; i += 2) {
      const w = await this.#decodeWrite(threadOf(t.config), nsOf(t.config), t.parentConfig.configurable!.checkpoint_id as string, buf(extra[i]), buf(extra[i + 1]));
      if (w.channel === TASKS) sends.push(w);
    }
    if (sends.length === 0) return;
    let version = "";
    for (const v of Object.values(cp.channel_versions)) {
      const s = versionToStore(v);
      if (s > version) version = s;
    }
    cp.channel_values[TASKS] = sortWrites(sends).map((w) => w.value);
    cp.channel_versions[TASKS] = versionFromStore(version === "" ? MIGRATED_TASKS_VERSION : version);
  }

  // ---- list ------------------------------------------------------------------

  /**
   * list lists checkpoints, newest first. Its span covers the whole listing, from the first page to the
   * last tuple or the caller's break; its duration leaves out the time the caller spends between tuples.
   */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const call = await this.#tel.begin("List");
    const c = config?.configurable ?? {};
    const thread = c.thread_id === undefined || c.thread_id === null || c.thread_id === "" ? "" : String(c.thread_id);
    if (thread !== "") {
      call.address(thread, c.checkpoint_ns === undefined || c.checkpoint_ns === null ? "" : String(c.checkpoint_ns),
        c.checkpoint_id === undefined || c.checkpoint_id === null ? "" : String(c.checkpoint_id));
    }
    let tuples = 0;
    let it: AsyncGenerator<CheckpointTuple> | undefined;
    let failed = false;
    let error: unknown;
    try {
      it = this.#list(config, options);
      for (;;) {
        const r = await call.run(() => it!.next());
        if (r.done) break;
        tuples++;
        call.pause();
        yield r.value;
        call.resume();
      }
    } catch (e) {
      failed = true;
      error = e;
      throw e;
    } finally {
      call.resume();
      if (it) {
        try {
          await call.run(() => it!.return(undefined)); // the caller's break: the walk's finally blocks run
        } catch {
          // the listing is over
        }
      }
      call.set({ "redcheck.tuples": tuples });
      call.end(error, failed);
    }
  }

  async *#list(config: RunnableConfig, options: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const c = config.configurable ?? {};
    const thread = c.thread_id === undefined || c.thread_id === null || c.thread_id === "" ? "" : String(c.thread_id);
    const ns = c.checkpoint_ns === undefined || c.checkpoint_ns === null ? undefined : String(c.checkpoint_ns);
    if (thread !== "" && validateThreadID(thread)) throw new InvalidConfigError(validateThreadID(thread)!);
    if (ns !== undefined && validateNamespace(ns)) throw new InvalidConfigError(validateNamespace(ns)!);
    const filter: string[] = [];
    const f = options.filter ?? {};
    for (const k of Object.keys(f).sort(byteOrder)) {
      if (f[k] === undefined) continue;
      filter.push("m:" + k, canonicalJSON(f[k]));
    }
    const q: Query = {
      thread, ns,
      id: c.checkpoint_id === undefined || c.checkpoint_id === null ? "" : String(c.checkpoint_id),
      before: options.before?.configurable?.checkpoint_id ? String(options.before.configurable.checkpoint_id) : "",
      filter,
      left: options.limit !== undefined && options.limit > 0 ? options.limit : -1,
    };
    if (options.limit !== undefined && options.limit <= 0) return;
    await this.setup();
    if (thread === "" && this.layout.shards > 1) {
      yield* listMerged(this.#readOps(), q);
      return;
    }
    yield* listOne(this.#readOps(), q);
  }

  /** readOps: what list.ts and delta.ts use of this saver. */
  #readOps(): ReadOps {
    return {
      conn: this.#conn, layout: this.layout, serde: this.serde, pageSize: this.#opts.pageSize, enc: this.#enc,
      refreshMs: () => this.#refreshMs(),
      getTupleCall: (a, whole) => this.#getTupleCall(a, whole),
      decodeTuple: (thread, ns, id, flat, values, extra) => this.#decodeTuple(thread, ns, id, flat, values, extra),
      decodeWrite: (thread, ns, id, field, stored) => this.#decodeWrite(thread, ns, id, field, stored),
    };
  }

  // ---- delta channel history ----------------------------------------------------

  /**
   * getDeltaChannelHistory walks up the parent chain of the checkpoint
   * config names (the latest when it names none) in steps of at most 250
   * ancestors (delta_history.lua), collecting each channel's writes until
   * the nearest ancestor holding a value for it, whose value is the seed.
   * A checkpoint that does not exist has empty histories (as
   * BaseCheckpointSaver's default walk answers); a thread deleted or
   * replaced during the walk, or a lost ancestor, is a DataLossError. A
   * parent chain that returns to a checkpoint already walked (a cycle, made
   * by putting again the ID of a deleted checkpoint) ends the walk there
   * when one step closes it, as a deleted parent does; a cycle that no
   * step closes alone is a DataLossError.
   */
  override async getDeltaChannelHistory(options: { config: RunnableConfig; channels: string[] }): Promise<Record<string, DeltaChannelHistory>> {
    return this.#traced("DeltaChannelHistory", async (call) => {
      call.address(rawThread(options?.config), nsOf(options?.config), str(options?.config?.configurable?.checkpoint_id ?? ""));
      call.set({ "redcheck.channel_count": options?.channels?.length ?? 0 });
      return this.#deltaChannelHistory(options);
    });
  }

  async #deltaChannelHistory(options: { config: RunnableConfig; channels: string[] }): Promise<Record<string, DeltaChannelHistory>> {
    const out: Record<string, DeltaChannelHistory> = {};
    const channels = options.channels ?? [];
    if (channels.length === 0) return out;
    const thread = threadOf(options.config);
    const ns = nsOf(options.config);
    validateAddress(thread, ns);
    const target0 = str(options.config.configurable?.checkpoint_id ?? "");
    if (target0 !== "" && validateID(target0)) {
      for (const ch of channels) out[ch] = { writes: [] };
      return out;
    }
    await this.setup();
    return deltaChannelHistory(this.#readOps(), thread, ns, target0, channels);
  }

  // ---- deleteThread ----------------------------------------------------------------

  /**
   * deleteThread makes the thread invisible at once (one O(log n) script),
   * then reclaims its keys in steps of at most 128 checkpoints. Cut off, the
   * thread stays deleted and the rest is reclaimed by later writes in its
   * shard or a sweep.
   */
  async deleteThread(threadId: string): Promise<void> {
    return this.#traced("DeleteThread", async (call) => {
      call.address(String(threadId ?? ""), "", "");
      return this.#deleteThread(threadId);
    });
  }

  async #deleteThread(threadId: string): Promise<void> {
    const thread = String(threadId);
    const bad = validateThreadID(thread);
    if (bad) throw new InvalidConfigError(bad);
    await this.setup();
    const shard = this.layout.shard(thread);
    let res: Reply;
    try {
      res = await this.#conn.run(scripts.deleteThread,
        [this.layout.head(thread), this.layout.threads(shard), this.layout.gc(shard), this.layout.events(thread), this.layout.feed(shard)],
        [this.layout.shardBase(shard), encode(thread), String(this.#opts.events.retainDeletedMs), String(RECLAIM_BUDGET),
          ...eventSpec(this.#opts.events, this.#opts.events.disabled ? [] : ["t", "thread_deleted", "th", encode(thread)])]);
    } catch (e) {
      throw scriptError("delete thread", e);
    }
    const r = arr(res);
    if (r.length !== 3) throw new CorruptError(`delete thread reply of ${r.length} items`);
    if (num(r[2]) === 1) return;
    const entry = buf(r[1]);
    for (;;) {
      const { used, more } = await this.#sweepStep(shard, entry);
      if (!more || used === 0) return;
    }
  }

  #ops(): Ops {
    return { conn: this.#conn, layout: this.layout, enc: this.#enc, ttl: this.#opts.ttl, eventSpec: (f) => eventSpec(this.#opts.events, f), eventBounds: () => eventBounds(this.#opts.events), traceArgs: () => traceArgs(this.#opts.events), retainDeletedMs: this.#opts.events.retainDeletedMs, deleteThread: (t) => this.#deleteThread(t) };
  }

  /**
   * deleteForRuns deletes every checkpoint, in every thread and namespace,
   * whose metadata run_id is one of runIds, with its writes and the values
   * no remaining checkpoint points to, in bounded steps (Go: DeleteForRuns).
   * A child whose parent is deleted stays. Idempotent: cut off, repeat it.
   */
  async deleteForRuns(runIds: string[]): Promise<void> {
    return this.#traced("DeleteForRuns", async (call) => {
      call.set({ "redcheck.run_count": Array.isArray(runIds) ? runIds.length : 0 });
      await this.setup();
      await deleteForRuns(this.#ops(), runIds);
    });
  }

  /**
   * copyThread copies every checkpoint of source (all namespaces, with
   * writes and values) to target, which must have none (InvalidConfigError);
   * the copy becomes visible at once when complete (Go: CopyThread).
   */
  async copyThread(sourceThreadId: string, targetThreadId: string): Promise<void> {
    return this.#traced("CopyThread", async (call) => {
      call.address(String(sourceThreadId ?? ""), "", "");
      call.set({ "redcheck.target_thread_id": String(targetThreadId ?? "") });
      await this.setup();
      await copyThread(this.#ops(), String(sourceThreadId), String(targetThreadId));
    });
  }

  /**
   * copyFrom copies threads with their whole history from another LangGraph.js checkpointer (MemorySaver,
   * the SQLite, Postgres or MongoDB savers...): every namespace, every checkpoint with its parent,
   * metadata, channel versions and values, and pending writes, read by async iteration over
   * source.list and written in steps of options.batchSize checkpoints. Idempotent: a thread redcheck
   * holds with the same content is skipped, one cut off in an earlier copy is completed, and one with
   * other content is refused (CopyConflictError, nothing written) unless options.replace. It answers
   * what it copied and skipped (docs/typescript.md, "Migrating from another saver").
   */
  async copyFrom(source: BaseCheckpointSaver, threadIds: string[], options: CopyFromOptions = {}): Promise<CopyReport> {
    return copyFrom(this, source, threadIds, options);
  }

  /**
   * prune keeps only the newest checkpoint of each namespace of each thread
   * (with the ancestors its delta channels need): "keep_latest"; or deletes
   * the threads: "delete" (Go: Prune).
   */
  async prune(threadIds: string[], strategy: "keep_latest" | "delete" = "keep_latest"): Promise<void> {
    return this.#traced("Prune", async (call) => {
      if (Array.isArray(threadIds) && threadIds.length === 1) call.address(String(threadIds[0]), "", "");
      call.set({ "redcheck.thread_count": Array.isArray(threadIds) ? threadIds.length : 0, "redcheck.prune_strategy": String(strategy) });
      await this.setup();
      await prune(this.#ops(), threadIds.map(String), strategy);
    });
  }

  /**
   * registerGauges registers, with the meter provider (options.meterProvider, else the global one of
   * @opentelemetry/api), the gauges of the prefix's garbage, observed at each collection (Go:
   * Saver.RegisterGauges): redcheck.reclaim.backlog ({generation}), the generations queued for reclaim
   * in every shard, and redcheck.threads.expired ({thread}), the threads whose lease ran out that no
   * sweep or write has retired yet; both with redcheck.prefix. A collection costs two O(log n) commands
   * per shard, sent together. Register them in one process of those that share a prefix, and call
   * unregister() when the saver is no longer used. Without a meter provider it registers nothing.
   */
  async registerGauges(): Promise<{ unregister(): void }> {
    const unregister = await this.#tel.gauges(() => this.#garbage(Date.now()));
    return { unregister };
  }

  /**
   * garbage reads the generations queued for reclaim and the threads whose lease ran out by now,
   * over every shard: two O(log n) commands per shard, sent together (Go: Saver.garbage).
   */
  async #garbage(now: number): Promise<[number, number]> {
    await this.setup();
    const n = this.layout.shards;
    const replies = await Promise.all(Array.from({ length: n }, (_, i) => [
      this.#conn.send(this.layout.gc(i), ["ZCARD", this.layout.gc(i)]),
      this.#conn.send(this.layout.threads(i), ["ZCOUNT", this.layout.threads(i), "1", String(now)]),
    ]).flat());
    let queued = 0;
    let lapsed = 0;
    for (let i = 0; i < n; i++) {
      queued += num(replies[2 * i]);
      lapsed += num(replies[2 * i + 1]);
    }
    return [queued, lapsed];
  }

  /**
   * sweep retires the threads whose lease ran out and reclaims retired
   * generations, in every shard, in bounded steps; it returns the units of
   * work done (Go: Saver.Sweep).
   */
  async sweep(): Promise<number> {
    return this.#traced("Sweep", async (call) => {
      let units = 0;
      try {
        units = await this.#sweep();
      } finally {
        call.set({ "redcheck.units": units });
      }
      return units;
    });
  }

  async #sweep(): Promise<number> {
    await this.setup();
    let total = 0;
    for (let n = 0; n < this.layout.shards; n++) {
      for (;;) {
        const { used, more } = await this.#sweepStep(n, Buffer.alloc(0));
        total += used;
        if (!more) break;
      }
    }
    return total;
  }

  async #sweepStep(n: number, entry: Buffer): Promise<{ used: number; more: boolean }> {
    let res: Reply;
    try {
      res = await this.#conn.run(scripts.sweep, [this.layout.threads(n), this.layout.gc(n)], [this.layout.shardBase(n), String(RECLAIM_BUDGET), entry]);
    } catch (e) {
      throw scriptError("sweep", e);
    }
    const r = arr(res);
    if (r.length !== 2) throw new CorruptError(`sweep reply of ${r.length} items`);
    return { used: num(r[0]), more: num(r[1]) === 1 };
  }
}

// ---- helpers -------------------------------------------------------------------

/** rawThread is the config's thread_id as given ("" when absent), for a span before it is validated. */
function rawThread(config: RunnableConfig | undefined): string {
  const t = config?.configurable?.thread_id;
  return t === undefined || t === null ? "" : String(t);
}
export { RedcheckError };
