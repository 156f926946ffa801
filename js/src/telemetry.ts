// OpenTelemetry spans and metrics of the saver's public operations, the same
// names and attributes as the Go saver's (redissaver/telemetry.go,
// docs/observability.md). @opentelemetry/api is an optional peer dependency:
// providers come from the options or, when absent, from the global API,
// loaded by a guarded dynamic import; without either the saver reports
// nothing and builds nothing. No span, event or metric ever holds a value, a
// pending write or a metadata value (the metadata step excepted).
import { AsyncLocalStorage } from "node:async_hooks";

/** The instrumentation scope (tracer and meter name), the Go saver's. */
export const INSTRUMENTATION_NAME = "github.com/graphstate/redcheck/redissaver";

// ---- the parts of @opentelemetry/api used, structurally (the package is optional) ----

type AttrValue = string | number | boolean;
type Attrs = Record<string, AttrValue>;

/** A span, as @opentelemetry/api's Span. */
export interface SpanLike {
  setAttribute(key: string, value: AttrValue): unknown;
  setAttributes(attrs: Attrs): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: { name: string; message: string }): unknown;
  isRecording(): boolean;
  end(): void;
  /** The span's context (@opentelemetry/api's SpanContext): what an event carries as its writer's trace context. */
  spanContext?(): SpanContextLike;
}
/** A span context, as @opentelemetry/api's SpanContext. */
export interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: { serialize(): string };
}
/** A tracer, as @opentelemetry/api's Tracer. */
export interface TracerLike {
  startSpan(name: string, options?: { kind?: number; attributes?: Attrs }): SpanLike;
}
/** A tracer provider, as @opentelemetry/api's TracerProvider (an SDK's BasicTracerProvider or NodeTracerProvider). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): TracerLike;
}
interface HistogramLike {
  record(value: number, attributes?: Attrs): void;
}
interface CounterLike {
  add(value: number, attributes?: Attrs): void;
}
/** An observable gauge, as @opentelemetry/api's ObservableGauge. */
export type ObservableLike = object;
/** What a batch observable callback is handed, as @opentelemetry/api's BatchObservableResult. */
export interface BatchObservableResultLike {
  observe(observable: ObservableLike, value: number, attributes?: Attrs): void;
}
type BatchCallback = (result: BatchObservableResultLike) => Promise<void> | void;
/** A meter, as @opentelemetry/api's Meter. */
export interface MeterLike {
  createHistogram(name: string, options?: { unit?: string; description?: string; advice?: { explicitBucketBoundaries?: number[] } }): HistogramLike;
  createCounter(name: string, options?: { unit?: string; description?: string }): CounterLike;
  createObservableGauge?(name: string, options?: { unit?: string; description?: string }): ObservableLike;
  addBatchObservableCallback?(callback: BatchCallback, observables: ObservableLike[]): void;
  removeBatchObservableCallback?(callback: BatchCallback, observables: ObservableLike[]): void;
}
/** A meter provider, as @opentelemetry/api's MeterProvider (an SDK's MeterProvider). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): MeterLike;
}

/**
 * A logger the saver tells what an operator must know and the caller may not see (Go: Options.Logger):
 * `console` fits, and so does any object with these two methods (wrap pino's or winston's).
 */
export interface LoggerLike {
  warn(message: string, attributes: Record<string, string>): void;
  error(message: string, attributes: Record<string, string>): void;
}

/** The telemetry options of a RedcheckSaver. */
export interface TelemetryOptions {
  /** Where the saver's spans go (default: the global provider of @opentelemetry/api, when installed). */
  tracerProvider?: TracerProviderLike;
  /** Where the saver's metrics go (default: the global provider of @opentelemetry/api, when installed). */
  meterProvider?: MeterProviderLike;
  /**
   * Receives, with the Go saver's messages and attributes, each data loss a call meets (warn) and each
   * prefix found emptied and created again (error). Absent: no logs.
   */
  logger?: LoggerLike;
}

interface ApiLike {
  trace: { getTracerProvider(): TracerProviderLike };
  metrics: { getMeterProvider(): MeterProviderLike };
}

// The global API, loaded once, at the first saver that needs it; undefined when the package is not installed.
let api: ApiLike | undefined;
let apiLoading: Promise<void> | undefined;
let apiLoaded = false;
function loadApi(): Promise<void> {
  apiLoading ??= import("@opentelemetry/api").then(
    (m) => {
      api = ((m as { default?: ApiLike }).default ?? m) as ApiLike;
      apiLoaded = true;
    },
    () => {
      api = undefined;
      apiLoaded = true;
    },
  );
  return apiLoading;
}

const SPAN_KIND_CLIENT = 2; // SpanKind.CLIENT
const STATUS_ERROR = 2; // SpanStatusCode.ERROR

// ---- operations ------------------------------------------------------------------

/** The public operations, each call one span named so (db.operation.name), with its main script (db.stored_procedure.name). */
export const OPERATIONS = {
  Put: "put.lua",
  PutWrites: "put_writes.lua",
  GetTuple: "get_tuple.lua",
  List: "list.lua",
  DeleteThread: "delete_thread.lua",
  DeleteForRuns: "delete_runs.lua",
  CopyThread: "",
  Prune: "prune.lua",
  DeltaChannelHistory: "delta_history.lua",
  Sweep: "sweep.lua",
  Reinitialize: "",
} as const;
export type OpName = keyof typeof OPERATIONS;

export const METRIC_DURATION = "db.client.operation.duration";
export const METRIC_DATA_LOSS = "redcheck.client.data_loss";
export const METRIC_REFUSED = "redcheck.client.refused_writes";
export const METRIC_WRITTEN = "redcheck.client.written";
export const METRIC_READ = "redcheck.client.read";
export const METRIC_ROUND_TRIPS = "redcheck.client.round_trips";
export const METRIC_BACKLOG = "redcheck.reclaim.backlog";
export const METRIC_EXPIRED = "redcheck.threads.expired";
/** The bucket bounds, in seconds, the database conventions advise for db.client.operation.duration. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];
/** The bucket bounds of redcheck.client.round_trips, Go's (tripBuckets). */
const TRIP_BUCKETS = [1, 2, 3, 4, 6, 8, 16, 32, 64];

// ---- error kinds ---------------------------------------------------------------

const KIND = {
  prefixReset: "prefix_reset",
  dataLoss: "data_loss",
  invalidCheckpoint: "invalid_checkpoint",
  invalidConfig: "invalid_config",
  notFound: "not_found",
  corrupt: "corrupt",
  serialization: "serialization",
  canceled: "canceled",
  deadline: "deadline_exceeded",
  network: "network",
  other: "_OTHER",
} as const;

const NETWORK_ERRORS = new Set(["SocketClosedUnexpectedlyError", "ClientClosedError", "ClientOfflineError", "ConnectionTimeoutError",
  "SocketTimeoutError", "ReconnectStrategyError", "DisconnectsClientError", "RootNodesUnavailableError"]);
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const ERROR_CODES = new Set(["DATALOSS", "NOTFOUND", "INVALID_CHECKPOINT", "INVALID_CONFIG", "CORRUPT", "DECRYPT"]);
const REDIS_REPLIES = new Set(["ErrorReply", "SimpleError", "BlobError", "MultiErrorReply"]);

function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}
const ctorName = (e: unknown) => (typeof e === "object" && e !== null ? (e as object).constructor?.name ?? "" : "");

/** redisStatus is the prefix of the error Redis answered ("ERR", "OOM", "READONLY"...), "" when err holds none (Go: redisStatus). */
export function redisStatus(err: unknown): string {
  for (const e of chain(err)) {
    // A saver's error of its own kind (DataLossError...) holds the script's reply it came from: no Redis failure.
    const own = (e as { code?: unknown }).code;
    if (e instanceof Error && typeof own === "string" && ERROR_CODES.has(own)) return "";
    if (!REDIS_REPLIES.has(ctorName(e))) continue;
    const msg = String((e as Error).message ?? "");
    const sp = msg.indexOf(" ");
    const code = sp >= 0 ? msg.slice(0, sp) : msg;
    return code === "" || code.length > 32 || !/^[A-Z_]+$/.test(code) ? "ERR" : code;
  }
  return "";
}

/** errorType is the kind of err (error.type): low-cardinality, a metric attribute (Go: errorType). */
export function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const name = ctorName(err);
  if (name === "PrefixResetError") return KIND.prefixReset;
  switch (code) {
    case "DATALOSS": return KIND.dataLoss;
    case "INVALID_CHECKPOINT": return KIND.invalidCheckpoint;
    case "INVALID_CONFIG": return KIND.invalidConfig;
    case "NOTFOUND": return KIND.notFound;
    case "CORRUPT": return KIND.corrupt;
    case "DECRYPT": return KIND.serialization; // Go: checkpoint.ErrDecrypt wraps ErrSerialization
  }
  const status = redisStatus(err);
  if (status !== "") return status;
  for (const e of chain(err)) {
    const n = ctorName(e);
    if (n === "AbortError" || (e as Error)?.name === "AbortError") return KIND.canceled;
    if (n === "TimeoutError" || n === "CommandTimeoutDuringMaintenanceError" || n === "SocketTimeoutDuringMaintenanceError" || (e as Error)?.name === "TimeoutError") return KIND.deadline;
    if (NETWORK_ERRORS.has(n) || NETWORK_CODES.has(String((e as { code?: unknown })?.code ?? ""))) return KIND.network;
  }
  return KIND.other;
}

/**
 * quotesNoData reports whether the messages of errors of kind quote nothing but keys, ids, channel
 * names and versions, and Redis's or the network's words, so a span may carry them (Go: quotesNoData).
 */
function quotesNoData(kind: string): boolean {
  return !(kind === KIND.invalidCheckpoint || kind === KIND.invalidConfig || kind === KIND.corrupt || kind === KIND.serialization || kind === KIND.other);
}

/** refusal reports whether a Put or PutWrites that failed with err (of kind) wrote nothing (Go: refusal). */
function refusal(err: unknown, kind: string): boolean {
  switch (kind) {
    case KIND.invalidConfig: case KIND.invalidCheckpoint: case KIND.serialization: case KIND.dataLoss: case KIND.prefixReset:
      return true;
    case KIND.corrupt: case KIND.canceled: case KIND.deadline: case KIND.network: case KIND.other: case KIND.notFound:
      return false;
  }
  return redisStatus(err) !== "";
}

// ---- counting round trips, steps and bytes ---------------------------------------------

/**
 * What a call counts, reached by the Redis calls it makes (Conn) through an AsyncLocalStorage. Bytes
 * sent are those of the keys and arguments of its commands (values, fields, ids; a string by its UTF-8
 * length), without the command's name, a script's hash or source, or the protocol's framing; bytes
 * received those of the strings of the replies (Go: opCount).
 */
export interface OpCount {
  trips: number;
  steps: number;
  pages: number;
  sent: number;
  received: number;
  /** Commands of the call in flight: a command sent while others are is in their round trip (a pipeline). */
  inflight: number;
  /** The event fields of the trace context of the call's span (traceContextFields), [] without one. */
  trace: string[];
}

const counting = new AsyncLocalStorage<OpCount>();

/**
 * sending counts a round trip of the current call, unless others of its commands are in flight (sent
 * together, they are one pipeline), and the bytes of the commands' arguments from skip on (past the
 * command's name, and a script's hash or source and key count); call the function it returns when the
 * commands settle, with their reply when they succeeded.
 */
export function sending(commands: readonly (readonly (string | Buffer)[])[], skip: (cmd: readonly (string | Buffer)[]) => number): ((reply?: unknown) => void) | undefined {
  const n = counting.getStore();
  if (n === undefined) return undefined;
  if (n.inflight === 0) n.trips++;
  n.inflight++;
  for (const cmd of commands) {
    for (let i = skip(cmd); i < cmd.length; i++) n.sent += byteLength(cmd[i]!);
  }
  return (reply?: unknown) => {
    n.inflight--;
    n.received += replyBytes(reply);
  };
}

function byteLength(a: string | Buffer): number {
  return typeof a === "string" ? Buffer.byteLength(a, "utf8") : a.length;
}

/** replyBytes is the size of the strings of a reply, its arrays' included; numbers and nils count nothing (Go: replyBytes). */
export function replyBytes(r: unknown): number {
  if (Buffer.isBuffer(r)) return r.length;
  if (typeof r === "string") return Buffer.byteLength(r, "utf8");
  if (Array.isArray(r)) {
    let n = 0;
    for (const e of r) n += replyBytes(e);
    return n;
  }
  return 0;
}

/** scripted counts a script call of the current call: one bounded step. */
export function scripted(): void {
  const n = counting.getStore();
  if (n !== undefined) n.steps++;
}

/**
 * traceFields is the trace context of the current call's span, as the event fields its writes carry
 * (traceparent, and tracestate when it has one: docs/storage-format.md, "Events"); [] outside a call
 * or when its span context is not valid (no tracing).
 */
export function traceFields(): string[] {
  return counting.getStore()?.trace ?? [];
}

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;

/**
 * traceContextFields is the W3C trace context of sc as event fields: traceparent (version 00, the
 * sampled flag alone, as Go's propagator writes it) and tracestate when it is not empty; [] for an
 * invalid span context (Go: internal/tracectx.Fields).
 */
export function traceContextFields(sc: SpanContextLike | undefined): string[] {
  if (!sc || !HEX_TRACE.test(sc.traceId) || !HEX_SPAN.test(sc.spanId) || /^0+$/.test(sc.traceId) || /^0+$/.test(sc.spanId)) return [];
  const out = ["traceparent", `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & 1).toString(16)}`];
  const state = sc.traceState?.serialize() ?? "";
  if (state !== "") out.push("tracestate", state);
  return out;
}

/** paged counts a page of the current List call. */
export function paged(): void {
  const n = counting.getStore();
  if (n !== undefined) n.pages++;
}

// ---- the saver's telemetry ---------------------------------------------------------

interface Instruments {
  provider: MeterProviderLike;
  duration: HistogramLike;
  dataLoss: CounterLike;
  refused: CounterLike;
  written: CounterLike;
  read: CounterLike;
  trips: HistogramLike;
}

/** Telemetry: what a saver reports through, built once per saver. */
export class Telemetry {
  readonly #tracerProvider: TracerProviderLike | undefined;
  readonly #meterProvider: MeterProviderLike | undefined;
  readonly #logger: LoggerLike | undefined;
  #tracer: { provider: TracerProviderLike; tracer: TracerLike } | undefined;
  #instruments: Instruments | undefined;
  /** The attributes every span and metric of the saver carries but the operation's. */
  readonly #base: Attrs;
  #ready: Promise<void> | undefined;

  constructor(opts: TelemetryOptions, prefix: string, server: Attrs) {
    this.#tracerProvider = opts.tracerProvider;
    this.#meterProvider = opts.meterProvider;
    this.#logger = opts.logger;
    this.#base = { "db.system.name": "redis", "redcheck.prefix": prefix, ...server };
    if ((!this.#tracerProvider || !this.#meterProvider) && !apiLoaded) {
      this.#ready = loadApi().then(() => {
        this.#ready = undefined;
      });
    }
  }

  #tracerNow(): TracerLike | undefined {
    const p = this.#tracerProvider ?? api?.trace.getTracerProvider();
    if (!p) return undefined;
    if (this.#tracer?.provider !== p) this.#tracer = { provider: p, tracer: p.getTracer(INSTRUMENTATION_NAME) };
    return this.#tracer.tracer;
  }

  /**
   * instruments answers the meter's instruments: of the provider given, else of the global one at the
   * time (the global metrics API has no proxy: a provider set after the saver was made is used too).
   */
  #instrumentsNow(): Instruments | undefined {
    const p = this.#meterProvider ?? api?.metrics.getMeterProvider();
    if (!p) return undefined;
    if (this.#instruments?.provider === p) return this.#instruments;
    try {
      const meter = p.getMeter(INSTRUMENTATION_NAME);
      this.#instruments = {
        provider: p,
        duration: meter.createHistogram(METRIC_DURATION, {
          unit: "s",
          description: "Duration of redcheck's operations (the saver's and the store's), each call one data point; a List's leaves out the time its caller spends between tuples.",
          advice: { explicitBucketBoundaries: DURATION_BUCKETS },
        }),
        dataLoss: meter.createCounter(METRIC_DATA_LOSS, {
          unit: "{detection}",
          description: "Lost data redcheck detected: calls that failed with checkpoint.ErrDataLoss (ErrPrefixReset included), and violations the saver's Verify found.",
        }),
        refused: meter.createCounter(METRIC_REFUSED, { unit: "{call}", description: "put and putWrites calls refused with nothing written, by error.type." }),
        written: meter.createCounter(METRIC_WRITTEN, { unit: "By",
          description: "Bytes the saver's calls sent: the keys and arguments of their commands (values, fields, ids; a number by its decimal form), no command name, script or framing." }),
        read: meter.createCounter(METRIC_READ, { unit: "By",
          description: "Bytes the saver's calls received: the strings of their commands' replies, no integer or framing." }),
        trips: meter.createHistogram(METRIC_ROUND_TRIPS, { unit: "{round_trip}",
          description: "Round trips to Redis per call of the saver (a pipeline is one).", advice: { explicitBucketBoundaries: TRIP_BUCKETS } }),
      };
    } catch {
      return undefined; // telemetry never fails the saver
    }
    return this.#instruments;
  }

  /**
   * begin starts a call of op. With no provider at all (none given, @opentelemetry/api not installed)
   * it answers NOOP, which does nothing.
   */
  async begin(op: OpName): Promise<Call> {
    if (this.#ready) await this.#ready;
    return this.beginNow(op);
  }

  /**
   * gauges registers the gauges of the prefix's garbage with the meter provider (the one given, else
   * the global one at this time; Go: Saver.RegisterGauges): read answers the generations queued for
   * reclaim and the threads whose lease ran out, observed at each collection, with redcheck.prefix. The
   * function returned unregisters them. Without a meter provider, or with one that has no
   * observable gauges, it registers nothing.
   */
  async gauges(read: () => Promise<[number, number]>): Promise<() => void> {
    if (this.#ready) await this.#ready;
    const p = this.#meterProvider ?? api?.metrics.getMeterProvider();
    const meter = p?.getMeter(INSTRUMENTATION_NAME);
    if (!meter?.createObservableGauge || !meter.addBatchObservableCallback) return () => {};
    const backlog = meter.createObservableGauge(METRIC_BACKLOG, { unit: "{generation}",
      description: "Generations queued for reclaim (deleted, expired or replaced threads whose keys are not reclaimed yet), every shard's." });
    const expired = meter.createObservableGauge(METRIC_EXPIRED, { unit: "{thread}",
      description: "Threads whose lease ran out, not yet retired by Sweep or a write to their shard." });
    const attrs = { "redcheck.prefix": this.#base["redcheck.prefix"]! };
    // A collection that cannot read Redis throws: the SDK reports the error and records no point.
    const callback: BatchCallback = async (result) => {
      const [queued, lapsed] = await read();
      result.observe(backlog, queued, attrs);
      result.observe(expired, lapsed, attrs);
    };
    meter.addBatchObservableCallback(callback, [backlog, expired]);
    return () => meter.removeBatchObservableCallback?.(callback, [backlog, expired]);
  }

  /** beginNow is begin once the API is loaded (or not needed). */
  beginNow(op: OpName): Call {
    const tracer = this.#tracerNow();
    const instruments = this.#instrumentsNow();
    if (!tracer && !instruments && !this.#logger) return NOOP;
    return new OpCall(this.#base, op, tracer, instruments, this.#logger);
  }
}

/** Call is one call of a public operation under way. */
export interface Call {
  /** run runs fn as (a part of) the call: its Redis commands are counted. */
  run<T>(fn: () => T): T;
  /** address records the checkpoint address the call works on (any part may be "": left out). */
  address(thread: string, ns: string, id: string): void;
  /** set adds attributes to the span. */
  set(attrs: Attrs): void;
  /** step records metadata's step, when it is an integer. */
  step(metadata: unknown): void;
  /** pause and resume leave out of the call's duration the time spent in the caller's code (a List's yield). */
  pause(): void;
  resume(): void;
  /** end ends the call, with its error when it failed (miss: a getTuple that found nothing, no failure). */
  end(err?: unknown, failed?: boolean): void;
  /** reset logs that the call found the prefix emptied and created it again (a reinitialize that did). */
  reset(): void;
}

const NOOP: Call = {
  run: (fn) => fn(),
  address() {},
  set() {},
  step() {},
  pause() {},
  resume() {},
  end() {},
  reset() {},
};

const DATA_LOSS_MESSAGE = "redcheck: data loss detected";
const RESET_MESSAGE = "redcheck: the prefix was emptied (every checkpoint lost) and created again";

class OpCall implements Call {
  readonly #op: OpName;
  readonly #span: SpanLike | undefined;
  readonly #instruments: Instruments | undefined;
  readonly #base: Attrs;
  readonly #start = performance.now();
  #paused = 0;
  #pausedAt = 0;
  readonly #n: OpCount | undefined;
  #ended = false;
  readonly #logger: LoggerLike | undefined;
  /** The address the call works on, for its logs. */
  #thread = "";
  #ns = "";
  #id = "";

  constructor(base: Attrs, op: OpName, tracer: TracerLike | undefined, instruments: Instruments | undefined, logger: LoggerLike | undefined) {
    this.#op = op;
    this.#base = base;
    this.#instruments = instruments;
    this.#logger = logger;
    let trace: string[] = [];
    if (tracer) {
      const attrs: Attrs = { ...base, "db.operation.name": op };
      if (OPERATIONS[op] !== "") attrs["db.stored_procedure.name"] = OPERATIONS[op];
      try {
        this.#span = tracer.startSpan(op, { kind: SPAN_KIND_CLIENT, attributes: attrs });
      } catch {
        this.#span = undefined;
      }
      try {
        trace = traceContextFields(this.#span?.spanContext?.());
      } catch {
        trace = [];
      }
      this.#recording = this.#span?.isRecording() ?? false;
    }
    // The store lives while the span records or a meter counts (its counters), or the span has a valid
    // context (the events' trace context: a span that does not record carries its parent's, when there is one).
    if (this.#recording || instruments || trace.length > 0) this.#n = { trips: 0, steps: 0, pages: 0, sent: 0, received: 0, inflight: 0, trace };
  }

  readonly #recording: boolean = false;

  run<T>(fn: () => T): T {
    return this.#n ? counting.run(this.#n, fn) : fn();
  }

  address(thread: string, ns: string, id: string): void {
    this.#thread = thread;
    this.#ns = ns;
    this.#id = id;
    if (!this.#recording) return;
    const attrs: Attrs = {};
    if (thread !== "") {
      attrs["redcheck.thread_id"] = thread;
      attrs["gen_ai.conversation.id"] = thread;
      attrs["redcheck.checkpoint_ns"] = ns;
    }
    if (id !== "") attrs["redcheck.checkpoint_id"] = id;
    this.#span!.setAttributes(attrs);
  }

  set(attrs: Attrs): void {
    if (this.#recording) this.#span!.setAttributes(attrs);
  }

  step(metadata: unknown): void {
    if (!this.#recording || typeof metadata !== "object" || metadata === null) return;
    const s = (metadata as { step?: unknown }).step;
    if (typeof s === "number" && Number.isSafeInteger(s)) this.#span!.setAttribute("redcheck.step", s);
    else if (typeof s === "bigint" && s >= BigInt(Number.MIN_SAFE_INTEGER) && s <= BigInt(Number.MAX_SAFE_INTEGER)) this.#span!.setAttribute("redcheck.step", Number(s));
  }

  pause(): void {
    this.#pausedAt = performance.now();
  }

  resume(): void {
    if (this.#pausedAt !== 0) this.#paused += performance.now() - this.#pausedAt;
    this.#pausedAt = 0;
  }

  end(err?: unknown, failed = err !== undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.resume();
    const elapsed = (performance.now() - this.#start - this.#paused) / 1000;
    let kind = "";
    let status = "";
    if (failed) {
      kind = errorType(err);
      status = redisStatus(err);
    }
    try {
      this.#metrics(err, failed, kind, status, elapsed);
      if (kind === KIND.dataLoss || kind === KIND.prefixReset) this.#log(kind, messageOf(err));
    } catch {
      // telemetry never fails the saver
    }
    const span = this.#span;
    if (!span) return;
    try {
      if (this.#recording && this.#n) {
        const attrs: Attrs = { "redcheck.round_trips": this.#n.trips, "redcheck.steps": this.#n.steps,
          "redcheck.bytes.sent": this.#n.sent, "redcheck.bytes.received": this.#n.received };
        if (this.#op === "List") attrs["redcheck.pages"] = this.#n.pages;
        if (failed) {
          attrs["error.type"] = kind;
          if (status !== "") attrs["db.response.status_code"] = status;
          const message = quotesNoData(kind) ? messageOf(err) : withheld(kind);
          span.recordException({ name: quotesNoData(kind) ? nameOf(err) : "RedcheckError", message });
          span.setStatus({ code: STATUS_ERROR, message });
        }
        span.setAttributes(attrs);
      }
    } finally {
      span.end();
    }
  }

  reset(): void {
    try {
      this.#log(KIND.prefixReset, "redcheck: reinitialize found the prefix emptied and created it again");
    } catch {
      // telemetry never fails the saver
    }
  }

  /** log tells the logger of a data loss (warn) or a prefix reset (error), with the span's attributes (Go: opCall.log). */
  #log(kind: string, message: string): void {
    const logger = this.#logger;
    if (!logger) return;
    const attrs: Record<string, string> = { "db.operation.name": this.#op, "redcheck.prefix": String(this.#base["redcheck.prefix"]) };
    if (this.#thread !== "") {
      attrs["redcheck.thread_id"] = this.#thread;
      attrs["redcheck.checkpoint_ns"] = this.#ns;
    }
    if (this.#id !== "") attrs["redcheck.checkpoint_id"] = this.#id;
    const sc = this.#span?.spanContext?.();
    if (sc && traceContextFields(sc).length > 0) {
      attrs.trace_id = sc.traceId;
      attrs.span_id = sc.spanId;
    }
    attrs["error.type"] = kind;
    attrs.error = message;
    if (kind === KIND.prefixReset) logger.error(RESET_MESSAGE, attrs);
    else logger.warn(DATA_LOSS_MESSAGE, attrs);
  }

  #metrics(err: unknown, failed: boolean, kind: string, status: string, elapsed: number): void {
    const m = this.#instruments;
    if (!m) return;
    const attrs: Attrs = { ...this.#base, "db.operation.name": this.#op };
    const n = this.#n;
    if (n) {
      if (n.trips > 0) m.trips.record(n.trips, attrs);
      if (n.sent > 0) m.written.add(n.sent, attrs);
      if (n.received > 0) m.read.add(n.received, attrs);
    }
    if (!failed) {
      m.duration.record(elapsed, attrs);
      return;
    }
    attrs["error.type"] = kind;
    if (status !== "") attrs["db.response.status_code"] = status;
    m.duration.record(elapsed, attrs);
    if (kind === KIND.dataLoss || kind === KIND.prefixReset) m.dataLoss.add(1, attrs);
    if ((this.#op === "Put" || this.#op === "PutWrites") && refusal(err, kind)) m.refused.add(1, attrs);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
function nameOf(err: unknown): string {
  return err instanceof Error ? err.name : "Error";
}

/** withheld stands, in a span, for the message of an error that may quote a value (Go: redacted). */
function withheld(kind: string): string {
  return `redcheck: ${kind.replaceAll("_", " ").trim()} (the message is withheld: it may quote a value)`;
}

/** serverAttrs are server.address and server.port of a node-redis client with one address; none for a cluster. */
export function serverAttrs(client: unknown, cluster: boolean): Attrs {
  if (cluster) return {};
  const socket = (client as { options?: { socket?: { host?: unknown; port?: unknown; path?: unknown } } } | null)?.options?.socket;
  if (!socket) return {};
  if (typeof socket.path === "string" && socket.path !== "") return { "server.address": socket.path };
  if (typeof socket.host !== "string" || socket.host === "") return {};
  const out: Attrs = { "server.address": socket.host };
  if (typeof socket.port === "number" && Number.isInteger(socket.port)) out["server.port"] = socket.port;
  return out;
}
