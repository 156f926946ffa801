// The keys of encryption at rest (Go: checkpoint.Keyring; docs/typescript.md,
// "Encryption at rest"): keys named by key ids, one of them current. A saver
// seals every value it writes with the current key and stores its id with the
// ciphertext; it opens a value with whichever key of the ring its id names, so
// a ring that keeps the old key while a new one is current reads both
// (rotation).
import { createSecretKey, type KeyObject } from "node:crypto";
import { inspect } from "node:util";
import { DecryptError, InvalidConfigError } from "./errors.js";
import { KEY_SIZE, MAX_KEY_ID_LEN, validKeyID } from "./seal.js";

/**
 * KeyFunction serves the keys of a Keyring (Keyring.fromFunction), so that a key management service can hold
 * them: it answers the 32-byte key of keyId, or undefined (or throws a DecryptError) for an id it does not
 * know; any other error is passed on to the read or write that asked, and the key is asked for again next time.
 */
export type KeyFunction = (keyId: string) => Promise<Uint8Array | undefined> | Uint8Array | undefined;

/**
 * A Keyring holds the keys of encryption at rest: AES-256 keys (32 bytes) named by key ids (1 to 64
 * characters of printable ASCII without space, stored in the clear with every value), one of them current.
 * It never shows its keys: not in toString, toJSON or util.inspect, not in an error. Build it once and share
 * it between savers.
 */
export class Keyring {
  /** The id of the key new values are sealed with. */
  readonly currentKeyId: string;
  readonly #keys = new Map<string, KeyObject>();
  readonly #fetch: KeyFunction | undefined;
  readonly #pending = new Map<string, Promise<KeyObject>>();

  private constructor(current: string, fetch: KeyFunction | undefined) {
    this.currentKeyId = current;
    this.#fetch = fetch;
  }

  /**
   * fromKeys returns the keyring of keys (key id -> 32-byte key: a Uint8Array or Buffer), with currentKeyId the
   * id of the key new values are sealed with. It refuses (InvalidConfigError) a current id that names no key,
   * a malformed key id and a key that is not 32 bytes. It copies the keys: the caller may zero its buffers.
   */
  static fromKeys(currentKeyId: string, keys: Record<string, Uint8Array> | Map<string, Uint8Array>): Keyring {
    const entries = keys instanceof Map ? [...keys.entries()] : Object.entries(keys ?? {});
    if (!entries.some(([id]) => id === currentKeyId)) throw keyringError(`the current key id ${quote(currentKeyId)} names no key of the ring`);
    const ring = new Keyring(currentKeyId, undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)); // the first invalid key is the same every time
    for (const [id, key] of entries) ring.#keys.set(id, secretKey(id, key));
    return ring;
  }

  /**
   * fromFunction returns a keyring whose keys fetch serves, with currentKeyId the id of the key new values are
   * sealed with. It fetches the current key once, to check it, and keeps every key fetch returns for the life
   * of the keyring: fetch is called once per key id (concurrent reads share the call), and again only for an
   * id it failed to serve.
   */
  static async fromFunction(currentKeyId: string, fetch: KeyFunction): Promise<Keyring> {
    if (typeof fetch !== "function") throw keyringError("no key function");
    if (!validKeyID(currentKeyId)) throw keyringError(`key id ${quote(currentKeyId)}: want 1 to ${MAX_KEY_ID_LEN} characters of printable ASCII without space`);
    const ring = new Keyring(currentKeyId, fetch);
    await ring.key(currentKeyId);
    return ring;
  }

  /** cachedKey is the key of keyId when the ring holds it already (no call to a key function). */
  cachedKey(keyId: string): KeyObject | undefined {
    return this.#keys.get(keyId);
  }

  /**
   * key returns the key keyId names. An id the ring does not hold (or that its key function does not know) is a
   * DecryptError: a value sealed with it cannot be opened.
   */
  async key(keyId: string): Promise<KeyObject> {
    const k = this.#keys.get(keyId);
    if (k) return k;
    if (!this.#fetch || !validKeyID(keyId)) throw new DecryptError(`no key ${quote(keyId)} in the keyring`);
    let p = this.#pending.get(keyId);
    if (!p) {
      p = this.#load(keyId, this.#fetch);
      this.#pending.set(keyId, p);
      p.then(() => this.#pending.delete(keyId), () => this.#pending.delete(keyId));
    }
    return p;
  }

  async #load(keyId: string, fetch: KeyFunction): Promise<KeyObject> {
    let key: Uint8Array | undefined;
    try {
      key = await fetch(keyId);
    } catch (e) {
      if (e instanceof DecryptError) throw new DecryptError(`the key function knows no key ${quote(keyId)}`);
      throw new Error(`redcheck: keyring: fetching key ${quote(keyId)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    if (key === undefined || key === null) throw new DecryptError(`the key function knows no key ${quote(keyId)}`);
    const k = secretKey(keyId, key);
    const had = this.#keys.get(keyId);
    if (had) return had;
    this.#keys.set(keyId, k);
    return k;
  }

  /** toString names the current key id only. */
  toString(): string {
    return `Keyring{current: ${quote(this.currentKeyId)}}`;
  }

  toJSON(): { currentKeyId: string } {
    return { currentKeyId: this.currentKeyId };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

function secretKey(id: string, key: Uint8Array): KeyObject {
  if (!validKeyID(id)) throw keyringError(`key id ${quote(id)}: want 1 to ${MAX_KEY_ID_LEN} characters of printable ASCII without space`);
  if (!(key instanceof Uint8Array)) throw keyringError(`key ${quote(id)} is not a Uint8Array`);
  if (key.length !== KEY_SIZE) throw keyringError(`key ${quote(id)} is ${key.length} bytes, want ${KEY_SIZE}`);
  return createSecretKey(key);
}

function quote(id: unknown): string {
  return JSON.stringify(String(id)).slice(0, 80);
}

function keyringError(message: string): InvalidConfigError {
  return new InvalidConfigError(`keyring: ${message}`);
}
