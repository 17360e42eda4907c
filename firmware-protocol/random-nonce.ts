// Fresh 12-byte nonces (docs/protocol.md, Command frame: "random for every frame
// sealed" / "signed"). One randomBytes call costs about 4 µs, a tenth of an
// ECDSA signature, so nonces are cut from a pool filled by the CSPRNG 64 at a
// time. Each byte is handed out once; a refill makes a new pool, so a nonce
// already handed out is never overwritten.
import { randomFillSync } from 'node:crypto';
import { NONCE_LENGTH } from './constants.js';

const NONCES_PER_POOL = 64;
let pool = Buffer.alloc(0);
let next = 0;

export function randomNonce(): Buffer {
  if (next + NONCE_LENGTH > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(NONCE_LENGTH * NONCES_PER_POOL));
    next = 0;
  }
  const nonce = pool.subarray(next, next + NONCE_LENGTH);
  next += NONCE_LENGTH;
  return nonce;
}
