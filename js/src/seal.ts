// The encrypted form of a stored value (docs/storage-format.md, "Encrypted
// values"; Go: internal/seal's envelope.go):
//
//   "e" (0x65) | version 0x01 | n (1..64) | key id (n bytes, 0x21-0x7e) | nonce (12 bytes) | AES-256-GCM ciphertext | tag (16 bytes)
//
// The plaintext is the value's stored form as it would otherwise be
// (pack(type, bytes) or its compressed "z" form): encryption comes after
// compression. Errors here say what is wrong with the envelope and never
// quote a byte of it; encryption.ts adds the place and the key id.
import { createCipheriv, createDecipheriv, type KeyObject } from "node:crypto";
import { randomBytesFromPool } from "./random.js";

/** The first byte of an encrypted stored value ("e"). */
export const SEALED_TAG = 0x65;
/** The only version of the envelope. */
export const ENVELOPE_VERSION = 1;
/** The longest key id, in bytes. */
export const MAX_KEY_ID_LEN = 64;
/** The size of an AES-256 key. */
export const KEY_SIZE = 32;
export const NONCE_SIZE = 12;
export const TAG_SIZE = 16;
const HEAD = 3; // tag, version, key id length
/** The shortest envelope: a 1-byte key id and an empty plaintext (which no writer seals). */
export const MIN_SEALED_LEN = HEAD + 1 + NONCE_SIZE + TAG_SIZE;

/** EnvelopeError: what is wrong with an envelope (never a byte of it). */
export class EnvelopeError extends Error {}

/** isSealed reports whether stored is in the encrypted form (its first byte is "e"); it says nothing of its validity. */
export function isSealed(stored: Uint8Array): boolean {
  return stored.length > 0 && stored[0] === SEALED_TAG;
}

/** validKeyID reports whether id can be a key id: 1 to 64 characters of printable ASCII without space. */
export function validKeyID(id: string): boolean {
  return typeof id === "string" && /^[\x21-\x7e]{1,64}$/.test(id);
}

/** Envelope: a parsed encrypted value; its buffers share the stored value's bytes. */
export interface Envelope {
  keyID: string;
  nonce: Buffer;
  /** The ciphertext, without the tag. */
  ciphertext: Buffer;
  tag: Buffer;
}

/** parseEnvelope splits an encrypted value into its parts, checking its layout only (not the tag: openEnvelope's work). */
export function parseEnvelope(stored: Buffer): Envelope {
  if (!isSealed(stored)) throw new EnvelopeError("not an encrypted value");
  if (stored.length < HEAD) throw new EnvelopeError("encrypted value cut short");
  if (stored[1] !== ENVELOPE_VERSION) throw new EnvelopeError("encrypted value of an unknown envelope version");
  const n = stored[2]!;
  if (n === 0 || n > MAX_KEY_ID_LEN) throw new EnvelopeError("encrypted value with a malformed key id");
  if (stored.length < HEAD + n + NONCE_SIZE + TAG_SIZE) throw new EnvelopeError("encrypted value cut short");
  const id = stored.subarray(HEAD, HEAD + n);
  for (const c of id) if (c < 0x21 || c > 0x7e) throw new EnvelopeError("encrypted value with a malformed key id");
  const rest = stored.subarray(HEAD + n);
  return {
    keyID: id.toString("latin1"),
    nonce: rest.subarray(0, NONCE_SIZE),
    ciphertext: rest.subarray(NONCE_SIZE, rest.length - TAG_SIZE),
    tag: rest.subarray(rest.length - TAG_SIZE),
  };
}

/**
 * sealEnvelope encrypts plain (a non-empty stored form) under key, named keyID, with a fresh random nonce (from
 * the pool of random.ts: no other call gets its bytes) and aad.
 */
export function sealEnvelope(key: KeyObject, keyID: string, aad: Uint8Array, plain: Uint8Array): Buffer {
  return sealEnvelopeWithNonce(key, keyID, randomBytesFromPool(NONCE_SIZE), aad, plain);
}

/** sealEnvelopeWithNonce is sealEnvelope with the nonce given: for the test vectors only (a nonce is never used twice with a key). */
export function sealEnvelopeWithNonce(key: KeyObject, keyID: string, nonce: Uint8Array, aad: Uint8Array, plain: Uint8Array): Buffer {
  if (nonce.length !== NONCE_SIZE) throw new EnvelopeError(`a nonce is ${NONCE_SIZE} bytes`);
  if (plain.length === 0) throw new EnvelopeError("nothing to seal");
  const c = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_SIZE });
  c.setAAD(aad);
  const body = c.update(plain);
  const last = c.final();
  return Buffer.concat([header(keyID), nonce, body, last, c.getAuthTag()]);
}

// The header of each key id ("e", version, length, id), made once per id.
const headers = new Map<string, Buffer>();

function header(keyID: string): Buffer {
  let h = headers.get(keyID);
  if (h === undefined) {
    if (!validKeyID(keyID)) throw new EnvelopeError("malformed key id");
    h = Buffer.concat([Buffer.from([SEALED_TAG, ENVELOPE_VERSION, keyID.length]), Buffer.from(keyID, "latin1")]);
    if (headers.size < 1024) headers.set(keyID, h);
  }
  return h;
}

/** openEnvelope authenticates and decrypts env with key (the one its keyID names) and aad, the AAD of the place it was read from. */
export function openEnvelope(key: KeyObject, env: Envelope, aad: Uint8Array): Buffer {
  try {
    const d = createDecipheriv("aes-256-gcm", key, env.nonce, { authTagLength: TAG_SIZE });
    d.setAuthTag(env.tag);
    d.setAAD(aad);
    const body = d.update(env.ciphertext);
    const last = d.final();
    return last.length === 0 ? body : Buffer.concat([body, last]);
  } catch {
    // node:crypto's error says no more ("Unsupported state or unable to authenticate data").
    throw new EnvelopeError("encrypted value fails authentication (altered, or not of this place)");
  }
}
