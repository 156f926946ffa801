// Random bytes for tokens, generations and version suffixes: taken from a
// pool that one crypto.randomFillSync call refills. A randomBytes call per
// token cost more than the rest of a putWrites's client work (about 14 µs
// each on Node 20 with OpenSSL 3, measured in the super-step profile); the
// pool pays that once per 4 KiB.
import { randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let used = POOL_BYTES;

/** randomBytesFromPool returns n (at most 4096) cryptographically random bytes, a copy no other call gets. */
export function randomBytesFromPool(n: number): Buffer {
  if (!Number.isInteger(n) || n < 0 || n > POOL_BYTES) throw new RangeError(`randomBytesFromPool: ${n} bytes`);
  if (used + n > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.from(pool.subarray(used, used + n));
  used += n;
  return out;
}
