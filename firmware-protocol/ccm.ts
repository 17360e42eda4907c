// AES-128-CCM with an 8-byte tag and a 12-byte nonce (PROTOCOL.md, keys).
// node:crypto does the cipher; this file only fixes the parameters and keeps
// the empty-plaintext trap out of every caller.
import { createCipheriv, createDecipheriv, timingSafeEqual } from 'node:crypto';
import { KEY_LENGTH, NONCE_LENGTH, TAG_LENGTH } from './constants.js';
import { requireLength } from './bytes.js';

const CIPHER = 'aes-128-ccm';
const EMPTY = Buffer.alloc(0);

export interface Sealed {
  ciphertext: Buffer;
  tag: Buffer;
}

/** Encrypts `plaintext` and returns its ciphertext and 8-byte tag. */
export function ccmSeal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Sealed {
  requireLength('key', key, KEY_LENGTH);
  requireLength('nonce', nonce, NONCE_LENGTH);
  const cipher = createCipheriv(CIPHER, key, nonce, { authTagLength: TAG_LENGTH });
  cipher.setAAD(aad, { plaintextLength: plaintext.length });
  // PROTOCOL.md, keys, trap: always call update(), even with an empty buffer.
  const head = cipher.update(plaintext);
  const tail = cipher.final();
  const ciphertext = tail.length === 0 ? head : Buffer.concat([head, tail]);
  return { ciphertext, tag: cipher.getAuthTag() };
}

/** Decrypts and authenticates. Returns the plaintext, or null when the tag
 * does not verify (or the key or nonce has the wrong size). Never throws. */
export function ccmOpen(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, ciphertext: Uint8Array, tag: Uint8Array): Buffer | null {
  if (key.length !== KEY_LENGTH || nonce.length !== NONCE_LENGTH || tag.length !== TAG_LENGTH) return null;
  try {
    const decipher = createDecipheriv(CIPHER, key, nonce, { authTagLength: TAG_LENGTH });
    decipher.setAuthTag(tag);
    decipher.setAAD(aad, { plaintextLength: ciphertext.length });
    // PROTOCOL.md, keys, trap: without update() a CCM decipher accepts any tag.
    const plaintext = decipher.update(ciphertext);
    decipher.final(); // throws when the tag does not verify
    return plaintext;
  } catch {
    return null;
  }
}

/** The tag of an empty plaintext under `aad` (response frames, PROTOCOL.md
 * response frame offset 24). */
export function ccmTagOnly(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array): Buffer {
  return ccmSeal(key, nonce, aad, EMPTY).tag;
}

/** Recomputes the tag and compares it in constant time, as PROTOCOL.md, keys,
 * recommends for response tags. */
export function ccmVerifyTagOnly(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, tag: Uint8Array): boolean {
  if (key.length !== KEY_LENGTH || tag.length !== TAG_LENGTH) return false;
  const expected = ccmTagOnly(key, nonce, aad);
  return timingSafeEqual(expected, tag);
}
