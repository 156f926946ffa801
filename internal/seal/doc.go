// Package seal holds the encrypted form of a stored value
// (docs/storage-format.md, "Encrypted values"): AES-256-GCM over the stored
// form a value would otherwise have (pack(type, bytes) or its compressed "z"
// form), with a fresh random nonce, the key id stored with the ciphertext,
// and associated data that binds the ciphertext to its place (prefix,
// thread, namespace, channel and version; or the place of a pending write,
// or of a memory-store item).
//
// The package knows the bytes only: Seal and Open take a cipher.AEAD, Parse
// is the pure parser of the envelope, and the AAD builders make the
// associated data. Which key a key id names is the caller's business
// (checkpoint.Keyring); so is the error sentinel (checkpoint.ErrDecrypt),
// wrapped by the caller around the errors this package returns. No error of
// this package holds key bytes, plaintext or ciphertext bytes.
package seal
