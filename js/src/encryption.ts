// Encryption at rest, the saver's policy (docs/storage-format.md, "Encrypted
// values"; Go: internal/codec's encrypt.go and redissaver's encryption.go):
// every stored value is sealed with the AAD of its place at write, and opened
// with the AAD of the place it is read from. With encryption off nothing here
// runs but a test of a value's first byte.
import { channelAAD, writeAAD } from "./aad.js";
import { COMPRESSED_TAG } from "./compress.js";
import { DecryptError, InvalidConfigError } from "./errors.js";
import { Keyring } from "./keyring.js";
import { type Bytes } from "./keys.js";
import { EnvelopeError, isSealed, openEnvelope, parseEnvelope, sealEnvelope } from "./seal.js";

/** Where a stored value belongs: the inputs of its AAD. A channel value has a version; a pending write a checkpoint, task and index. */
export type Place =
  | { write: false; thread: Bytes; ns: Bytes; channel: Bytes; version: Bytes }
  | { write: true; thread: Bytes; ns: Bytes; checkpoint: Bytes; task: Bytes; idx: number; channel: Bytes };

export function channelPlace(thread: Bytes, ns: Bytes, channel: Bytes, version: Bytes): Place {
  return { write: false, thread, ns, channel, version };
}

export function writePlace(thread: Bytes, ns: Bytes, checkpoint: Bytes, task: Bytes, idx: number, channel: Bytes): Place {
  return { write: true, thread, ns, checkpoint, task, idx, channel };
}

/** describe names a place for an error: names and ids only, never a value. */
function describe(p: Place): string {
  const q = (b: Bytes) => JSON.stringify(typeof b === "string" ? b : Buffer.from(b).toString("utf8"));
  return p.write
    ? `thread ${q(p.thread)} namespace ${q(p.ns)} checkpoint ${q(p.checkpoint)}: write ${p.idx} of task ${q(p.task)} to ${q(p.channel)}`
    : `thread ${q(p.thread)} namespace ${q(p.ns)}: channel ${q(p.channel)} version ${q(p.version)}`;
}

/** Encryption: a saver's keyring (none: encryption off), its migration option and its prefix (a part of every AAD). */
export class Encryption {
  readonly ring: Keyring | undefined;
  readonly readPlaintext: boolean;
  readonly prefix: string;

  constructor(prefix: string, ring: Keyring | undefined, readPlaintext: boolean) {
    if (ring !== undefined && !(ring instanceof Keyring)) throw new InvalidConfigError("encryption must be a Keyring (Keyring.fromKeys or Keyring.fromFunction)");
    if (readPlaintext && ring === undefined) throw new InvalidConfigError("readPlaintext needs encryption");
    this.prefix = prefix;
    this.ring = ring;
    this.readPlaintext = readPlaintext;
  }

  get on(): boolean {
    return this.ring !== undefined;
  }

  aad(p: Place): Buffer {
    return p.write ? writeAAD(this.prefix, p.thread, p.ns, p.checkpoint, p.task, p.idx, p.channel) : channelAAD(this.prefix, p.thread, p.ns, p.channel, p.version);
  }

  /**
   * seal returns stored (a plain stored form) as the saver stores it at p: itself with encryption off, else
   * encrypted with the current key. The empty marker (a version without a value) stays as it is: it is no value.
   */
  async seal(p: Place, stored: Buffer): Promise<Buffer> {
    const ring = this.ring;
    if (ring === undefined || stored.length === 0) return stored;
    const id = ring.currentKeyId;
    const key = ring.cachedKey(id) ?? (await ring.key(id));
    return sealEnvelope(key, id, this.aad(p), stored);
  }

  /**
   * open returns the plain stored form of stored, read at p. With encryption off, a plain value is returned as
   * it is and an encrypted one refused; with it on, an encrypted value is opened with the key its id names and
   * a plain one refused unless readPlaintext; the empty marker is returned as it is. What it refuses is a
   * DecryptError naming the place (and the key id), never a byte of the value.
   */
  async open(p: Place, stored: Buffer): Promise<Buffer> {
    const ring = this.ring;
    if (!isSealed(stored)) {
      if (ring === undefined || this.readPlaintext || stored.length === 0) return stored;
      throw new DecryptError(`${describe(p)}: a plaintext value where encryption is required`);
    }
    if (ring === undefined) throw new DecryptError(`${describe(p)}: an encrypted value and no keyring`);
    let env;
    try {
      env = parseEnvelope(stored);
    } catch (e) {
      throw new DecryptError(`${describe(p)}: ${(e as Error).message}`);
    }
    let key;
    try {
      key = ring.cachedKey(env.keyID) ?? (await ring.key(env.keyID));
    } catch (e) {
      if (e instanceof DecryptError) throw new DecryptError(`${describe(p)}: ${e.message.replace(/^redcheck: /, "")}`);
      throw e;
    }
    let plain: Buffer;
    try {
      plain = openEnvelope(key, env, this.aad(p));
    } catch (e) {
      if (!(e instanceof EnvelopeError)) throw e;
      throw new DecryptError(`${describe(p)}, key ${JSON.stringify(env.keyID)}: ${e.message}`);
    }
    if (plain.length === 0 || !((plain[0]! >= 0x31 && plain[0]! <= 0x39) || plain[0] === COMPRESSED_TAG)) {
      throw new DecryptError(`${describe(p)}, key ${JSON.stringify(env.keyID)}: the decrypted value is not a stored form`);
    }
    return plain;
  }
}
