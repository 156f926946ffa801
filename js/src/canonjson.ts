// JSON as the Go side writes it, byte for byte:
//   - canonical JSON (internal/canonjson): metadata values ("m:" fields) and
//     list filters, compared byte for byte inside Redis;
//   - encoding/json's Marshal of the versions seen ("s") and updated
//     channels ("u"): sorted keys, HTML characters escaped.
// Both are pinned by testdata/format/fields.json and checkpoint.json.
import { InvalidCheckpointError } from "./errors.js";

const MAX_DEPTH = 10000;
const TWO63 = 2 ** 63;
const TWO64 = 2 ** 64;

/** goFloat writes a finite number as Go's strconv.FormatFloat(f, 'g', -1, 64) does. */
export function goFloat(f: number): string {
  if (Object.is(f, -0)) return "-0";
  const [mant, expText] = f.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  const neg = mant.startsWith("-");
  const digits = mant.replace("-", "").replace(".", "");
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    return (neg ? "-" : "") + digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") +
      "e" + (exp < 0 ? "-" : "+") + (e < 10 ? "0" + e : String(e));
  }
  return (neg ? "-" : "") + plainDecimal(digits, exp);
}

function plainDecimal(digits: string, exp: number): string {
  if (exp < 0) return "0." + "0".repeat(-exp - 1) + digits;
  if (digits.length <= exp + 1) return digits + "0".repeat(exp + 1 - digits.length);
  return digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
}

/** canonNumber writes a number the way canonjson does: integral values exactly, others by goFloat. */
export function canonNumber(f: number): string {
  if (!Number.isFinite(f)) throw new InvalidCheckpointError(`number ${f} is not representable in JSON`);
  if (Number.isInteger(f) && f >= -TWO63 && f < TWO64) return BigInt(f).toString();
  return goFloat(f);
}

const HEXL = "0123456789abcdef";

/** goString writes a JSON string as Go does (html: encoding/json's Marshal; else canonjson). */
export function goString(s: string, html = false): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      switch (c) {
        case 0x22: out += '\\"'; break;
        case 0x5c: out += "\\\\"; break;
        case 0x0a: out += "\\n"; break;
        case 0x0d: out += "\\r"; break;
        case 0x09: out += "\\t"; break;
        case 0x08: out += "\\b"; break;
        case 0x0c: out += "\\f"; break;
        default:
          if (c < 0x20 || (html && (c === 0x3c || c === 0x3e || c === 0x26))) {
            out += "\\u00" + HEXL[c >> 4] + HEXL[c & 15];
          } else {
            out += s[i];
          }
      }
      continue;
    }
    if (c === 0x2028 || c === 0x2029) {
      out += "\\u202" + HEXL[c & 15];
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
        continue;
      }
      out += html ? "\\ufffd" : "\ufffd"; // a lone surrogate: invalid UTF-8 once encoded
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      out += html ? "\\ufffd" : "\ufffd";
      continue;
    }
    out += s[i];
  }
  return out + '"';
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * canonicalJSON returns the canonical JSON of a metadata value (Go:
 * checkpoint.EncodeMetadataValue): no whitespace, no HTML escaping, object
 * keys sorted by their UTF-8 bytes, integral numbers as exact integers,
 * others in Go's shortest 'g' form. Keys whose value is undefined are left
 * out (JSON.stringify does the same); a value with a toJSON method is
 * replaced by its result (Date: its ISO string); a Uint8Array is a base64
 * string, as Go writes a []byte.
 */
export function canonicalJSON(v: unknown): string {
  return write(v, 0, false);
}

/** goMarshal is encoding/json's Marshal of strings, arrays and string-keyed objects (fields "s" and "u"). */
export function goMarshal(v: unknown): string {
  return write(v, 0, true);
}

function write(v: unknown, depth: number, html: boolean): string {
  if (depth > MAX_DEPTH) throw new InvalidCheckpointError("JSON nesting deeper than 10000 levels");
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return html ? goMarshalNumber(v) : canonNumber(v);
    case "bigint":
      if (v < -(2n ** 63n) || v >= 2n ** 64n) throw new InvalidCheckpointError(`integer ${v} out of range`);
      return v.toString();
    case "string":
      return goString(v, html);
    case "object":
      break;
    default:
      throw new InvalidCheckpointError(`a ${typeof v} is not representable in JSON`);
  }
  if (v instanceof Uint8Array) return goString(Buffer.from(v).toString("base64"), html);
  if (Array.isArray(v)) return "[" + v.map((e) => write(e === undefined ? null : e, depth + 1, html)).join(",") + "]";
  const withToJSON = v as { toJSON?: () => unknown };
  if (typeof withToJSON.toJSON === "function") return write(withToJSON.toJSON(), depth + 1, html);
  const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort(byteOrder);
  return "{" + keys.map((k) => goString(k, html) + ":" + write((v as Record<string, unknown>)[k], depth + 1, html)).join(",") + "}";
}

function goMarshalNumber(f: number): string {
  if (!Number.isFinite(f)) throw new InvalidCheckpointError(`number ${f} is not representable in JSON`);
  if (Number.isInteger(f) && Math.abs(f) < 1e21) return BigInt(f).toString();
  const abs = Math.abs(f);
  // encoding/json: 'f' format, except 'e' for very small and very large values; e-09 becomes e-9.
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) return goFloat(f).replace(/e([+-])0(\d)$/, "e$1$2");
  return String(f);
}

/** parseJSON reads JSON written by either encoder. */
export function parseJSON(text: string): unknown {
  return JSON.parse(text);
}
