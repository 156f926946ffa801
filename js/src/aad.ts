// The associated data (AAD) of an encrypted value (docs/storage-format.md,
// "Encrypted values"; Go: internal/seal's aad.go): the concatenation of
// len(part) ":" part for every part, the last one too (lengths in bytes,
// decimal, no leading zeros: an injective encoding), the parts being the
// format tag, the kind of place, then the place's own parts. IDs, namespaces,
// channels and keys are the caller's bytes (UTF-8 of a JS string), not their
// encoded key form. Every function here is pinned by
// testdata/format/encryption.json.
import { type Bytes, toBytes } from "./keys.js";

/** The first part of every AAD: the envelope's format and version. */
export const AAD_FORMAT_TAG = "redcheck/enc/1";

function build(parts: Bytes[]): Buffer {
  if (parts.every((p) => typeof p === "string")) {
    // One string, encoded once (the usual case: every part a JS string).
    let s = "";
    for (const p of parts as string[]) s += Buffer.byteLength(p, "utf8") + ":" + p;
    return Buffer.from(s, "utf8");
  }
  const bufs: Buffer[] = [];
  for (const p of parts) {
    const b = toBytes(p);
    bufs.push(Buffer.from(`${b.length}:`, "latin1"), Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  }
  return Buffer.concat(bufs);
}

/** channelAAD is the AAD of the value of channel at version, in a thread and namespace of prefix. */
export function channelAAD(prefix: Bytes, thread: Bytes, ns: Bytes, channel: Bytes, version: Bytes): Buffer {
  return build([AAD_FORMAT_TAG, "channel", prefix, thread, ns, channel, version]);
}

/**
 * writeAAD is the AAD of the value of a pending write: the write of task with index idx (writeIndex: negative
 * for the special channels) to channel, against checkpoint checkpointID of a thread and namespace of prefix.
 */
export function writeAAD(prefix: Bytes, thread: Bytes, ns: Bytes, checkpointID: Bytes, task: Bytes, idx: number, channel: Bytes): Buffer {
  return build([AAD_FORMAT_TAG, "write", prefix, thread, ns, checkpointID, task, String(idx), channel]);
}

/** itemAAD is the AAD of the value of a memory-store item: key in the namespace path of the store prefix. */
export function itemAAD(prefix: Bytes, namespace: Bytes[], key: Bytes): Buffer {
  return build([AAD_FORMAT_TAG, "item", prefix, String(namespace.length), ...namespace, key]);
}
