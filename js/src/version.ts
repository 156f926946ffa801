// Channel versions. The format stores a version as a string (the "c:"
// fields and the versions seen); LangGraph.js versions are numbers or
// strings. A number is stored as its decimal integer, and a stored version
// that is a plain decimal integer (no leading zero, at most 15 digits) reads
// back as a number; any other version stays a string, such as the ones
// nextVersion (and the Go saver's checkpoint.NextVersion) makes.
import { randomBytesFromPool } from "./random.js";
import { InvalidCheckpointError } from "./errors.js";

const WIDTH = 12;

export function versionToStore(v: string | number): string {
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new InvalidCheckpointError(`channel version ${v} is not an integer`);
    return String(v);
  }
  return String(v);
}

/**
 * storedVersion is the version a checkpoint's "c:" field names: its value up
 * to the first byte 0 (versions hold none; a field written by a format-2
 * staged Put carried a call token after it).
 */
export function storedVersion(field: Buffer): string {
  const zero = field.indexOf(0);
  return (zero >= 0 ? field.subarray(0, zero) : field).toString("utf8");
}

export function versionFromStore(s: string): string | number {
  return /^(0|-?[1-9][0-9]{0,14})$/.test(s) ? Number(s) : s;
}

/** nextVersion is the Go saver's checkpoint.NextVersion: 12+ zero-padded digits, ".", 8 random hex digits. */
export function nextVersion(current: string | number | undefined): string {
  const cur = current === undefined ? "" : String(current);
  if (cur === "") return format("1", WIDTH);
  const intPart = cur.split(".")[0]!;
  if (/^[0-9]+$/.test(intPart)) return format(increment(intPart), Math.max(WIDTH, intPart.length));
  const tilde = cur.lastIndexOf("~");
  if (tilde >= 0 && isOwn(cur.slice(tilde + 1))) return cur.slice(0, tilde + 1) + nextVersion(cur.slice(tilde + 1));
  return cur + "~" + nextVersion("");
}

function format(digits: string, width: number): string {
  return "0".repeat(Math.max(0, width - digits.length)) + digits + "." + randomBytesFromPool(4).toString("hex");
}

function increment(s: string): string {
  const b = s.split("");
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < "9") {
      b[i] = String.fromCharCode(b[i]!.charCodeAt(0) + 1);
      return b.join("");
    }
    b[i] = "0";
  }
  return "1" + b.join("");
}

function isOwn(s: string): boolean {
  return /^[0-9]{12,}\.[0-9a-f]{8}$/.test(s);
}
