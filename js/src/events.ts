// The events the scripts append (docs/storage-format.md, "Events"): each
// script takes an event spec, and a Put's "checkpoint" event is built here
// (Go: redissaver's events.go).
import type { Checkpoint } from "@langchain/langgraph-checkpoint";
import { canonicalJSON } from "./canonjson.js";
import { joinNames } from "./codec.js";
import { str, type Arg } from "./conn.js";
import { encode } from "./keys.js";
import type { EventOptions } from "./options.js";
import { blobChannel } from "./stored.js";
import { traceFields } from "./telemetry.js";
import { byteOrder } from "./walk.js";

/** MAX_EVENT_VALUES: the values one event carries at most (Go: the same bound). */
export const MAX_EVENT_VALUES = 256;

/** eventBounds is the start of a script's event spec: stream maxlen ("0": no event) and feed maxlen (Go: eventBounds). */
export function eventBounds(e: Required<EventOptions>): [string, string] {
  return e.disabled ? ["0", "0"] : [String(e.maxLen), String(e.feedMaxLen)];
}

/**
 * eventSpec is a script's event spec: the bounds, then the count and the event's field/value pairs:
 * fields, and the trace context of the current call's span when it has a valid one (traceFields).
 */
export function eventSpec(e: Required<EventOptions>, fields: Arg[]): Arg[] {
  const [maxLen, feedMaxLen] = eventBounds(e);
  if (maxLen === "0") return ["0", "0", "0"];
  const trace = traceFields();
  return [maxLen, feedMaxLen, String((fields.length + trace.length) / 2), ...fields, ...trace];
}

/**
 * traceArgs is the trace context part of the arguments of put_writes.lua and delete_runs.lua, which
 * build their events: the number of pairs, then the pairs (Go: traceArgs).
 */
export function traceArgs(e: Required<EventOptions>): Arg[] {
  if (e.disabled) return ["0"];
  const trace = traceFields();
  return [String(trace.length / 2), ...trace];
}

/**
 * checkpointEvent is the fields of a Put's "checkpoint" event (none when events are off): with
 * includeValues, the values of blobs (blob field/value pairs) within the bounds, else references; sealed (encryption
 * at rest), each value comes with its version, "vv:<channel>", which a consumer needs for its AAD.
 */
export function checkpointEvent(e: Required<EventOptions>, thread: string, ns: string, parent: string, cp: Checkpoint, md: Record<string, unknown>,
  fresh: Record<string, string>, versions: Record<string, string>, blobs: Buffer[], sealed = false): Arg[] {
  if (e.disabled) return [];
  const ev: Arg[] = ["t", "checkpoint", "th", encode(thread), "ns", encode(ns), "id", cp.id, "ts", str(cp.ts ?? "")];
  if (parent !== "") ev.push("p", parent);
  if ("step" in md && md.step !== undefined) ev.push("step", canonicalJSON(md.step));
  if (typeof md.source === "string") ev.push("src", md.source);
  if (typeof md.run_id === "string") ev.push("run", md.run_id);
  ev.push("ch", joinNames(Object.keys(fresh).sort(byteOrder)));
  if (e.includeValues) {
    let budget = e.maxEventBytes;
    let left = MAX_EVENT_VALUES;
    for (let i = 0; i + 1 < blobs.length && left > 0; i += 2) {
      const val = blobs[i + 1]!;
      const channel = blobChannel(blobs[i]!);
      if (val.length <= e.maxValueBytes && val.length <= budget) {
        ev.push("v:" + channel, val);
        if (sealed && val.length > 0) ev.push("vv:" + channel, versions[channel] ?? ""); // the version, for a consumer's AAD
        budget -= val.length;
      } else {
        ev.push("vref:" + channel, versions[channel] ?? "");
      }
      left--;
    }
  }
  return ev;
}
