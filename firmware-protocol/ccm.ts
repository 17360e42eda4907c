// AES-128-CCM with an 8-byte tag and a 12-byte nonce (docs/protocol.md, Keys),
// the CCM of RFC 3610 / NIST SP 800-38C built on node:crypto's AES.
//
// Why not createCipheriv('aes-128-ccm') per frame: creating a cipher object
// costs more than the AES work on a 169-byte frame, and a box answers every
// command with a second CCM operation. Here each key keeps two AES contexts
// (ECB for the counter blocks, CBC for the CBC-MAC) that are created once and
// never finalized, so one CCM operation is two native calls. The results are
// byte for byte those of node's aes-128-ccm: test/protocol/ccm.test.ts checks
// it on random inputs. Tags are compared in constant time; there is no
// "decipher without update()" trap (docs/protocol.md, Keys) on this path.
import { type Cipher, createCipheriv, timingSafeEqual } from 'node:crypto';
import { KEY_LENGTH, NONCE_LENGTH, TAG_LENGTH } from './constants.js';
import { requireLength } from './bytes.js';

const BLOCK = 16;
/** L = 15 − nonce length = 3 bytes of message length (and of counter). */
const LENGTH_BYTES = 15 - NONCE_LENGTH;
/** B0 flags without Adata: ((M − 2) / 2) << 3 | (L − 1). */
const B0_FLAGS = (((TAG_LENGTH - 2) / 2) << 3) | (LENGTH_BYTES - 1);
const ADATA = 0x40;
/** Counter block flags: L − 1. */
const CTR_FLAGS = LENGTH_BYTES - 1;
/** Longest AAD with a 2-byte length prefix (RFC 3610, 2.2). */
const MAX_SHORT_AAD = 0xfeff;
const ZERO_IV = Buffer.alloc(BLOCK);
const EMPTY = Buffer.alloc(0);
/** Scratch space reused by every call (all calls are synchronous): enough
 * for any frame of docs/protocol.md (Sizes); longer inputs get their own buffer. */
const SCRATCH_LENGTH = 512;
const macScratch = Buffer.alloc(SCRATCH_LENGTH);
const counterScratch = Buffer.alloc(SCRATCH_LENGTH);
const tagScratch = Buffer.alloc(TAG_LENGTH);

interface KeyContexts {
  readonly key: Buffer;
  readonly ecb: Cipher;
  readonly cbc: Cipher;
  /** The CBC context's chaining value: its last output block. */
  chain: Buffer;
}

/** Contexts by key object (fast path) and by key bytes (keys read afresh
 * from storage for each frame are new objects with the same bytes). The byte
 * cache is bounded: past MAX_CACHED_KEYS the oldest entry is dropped. */
const byObject = new WeakMap<Uint8Array, KeyContexts>();
const byBytes = new Map<string, KeyContexts>();
const MAX_CACHED_KEYS = 4096;

function contextsFor(key: Uint8Array): KeyContexts {
  const cached = byObject.get(key);
  // The bytes are compared too, in case the caller reused the buffer for another key.
  if (cached !== undefined && cached.key.equals(key)) return cached;
  const id = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
  let contexts = byBytes.get(id);
  if (contexts === undefined) {
    contexts = {
      key: Buffer.from(key),
      ecb: createCipheriv('aes-128-ecb', key, null).setAutoPadding(false),
      cbc: createCipheriv('aes-128-cbc', key, ZERO_IV).setAutoPadding(false),
      chain: Buffer.alloc(BLOCK),
    };
    if (byBytes.size >= MAX_CACHED_KEYS) {
      const oldest = byBytes.keys().next();
      if (oldest.done !== true) byBytes.delete(oldest.value);
    }
    byBytes.set(id, contexts);
  }
  byObject.set(key, contexts);
  return contexts;
}

const padded = (length: number): number => Math.ceil(length / BLOCK) * BLOCK;

/** CBC-MAC over B0 || encoded AAD || plaintext, padded with zeros; returns T (8 bytes). */
function cbcMac(ctx: KeyContexts, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const aadEncoded = aad.length === 0 ? 0 : padded(2 + aad.length);
  const length = BLOCK + aadEncoded + padded(plaintext.length);
  const input = length <= SCRATCH_LENGTH ? macScratch.subarray(0, length).fill(0) : Buffer.alloc(length);
  input[0] = B0_FLAGS | (aad.length > 0 ? ADATA : 0);
  input.set(nonce, 1);
  input.writeUIntBE(plaintext.length, 1 + NONCE_LENGTH, LENGTH_BYTES);
  if (aad.length > 0) {
    input.writeUInt16BE(aad.length, BLOCK);
    input.set(aad, BLOCK + 2);
  }
  input.set(plaintext, BLOCK + aadEncoded);
  // The CBC context is never reset: XOR-ing its chaining value into the
  // first block makes this message start from a zero IV.
  const chain = ctx.chain;
  for (let i = 0; i < BLOCK; i++) input[i] = (input[i] ?? 0) ^ (chain[i] ?? 0);
  const out = ctx.cbc.update(input);
  ctx.chain = out.subarray(out.length - BLOCK);
  return out.subarray(out.length - BLOCK, out.length - BLOCK + TAG_LENGTH);
}

/** The key stream S0 || S1 || ... for `length` bytes of message. */
function keyStream(ctx: KeyContexts, nonce: Uint8Array, messageLength: number): Buffer {
  const blocks = 1 + Math.ceil(messageLength / BLOCK);
  const length = blocks * BLOCK;
  const counters = length <= SCRATCH_LENGTH ? counterScratch.subarray(0, length) : Buffer.allocUnsafe(length);
  for (let i = 0; i < blocks; i++) {
    const at = i * BLOCK;
    counters[at] = CTR_FLAGS;
    counters.set(nonce, at + 1);
    counters.writeUIntBE(i, at + 1 + NONCE_LENGTH, LENGTH_BYTES);
  }
  return ctx.ecb.update(counters);
}

function xorInto(target: Buffer, a: Uint8Array, b: Uint8Array, bOffset: number, length: number): void {
  for (let i = 0; i < length; i++) target[i] = (a[i] ?? 0) ^ (b[bOffset + i] ?? 0);
}

function checkSizes(aad: Uint8Array, length: number): void {
  if (aad.length > MAX_SHORT_AAD || length >= 2 ** (8 * LENGTH_BYTES))
    throw new RangeError('CCM input too long for this profile');
}

export interface Sealed {
  ciphertext: Buffer;
  tag: Buffer;
}

/** Encrypts `plaintext` and returns its ciphertext and 8-byte tag. */
export function ccmSeal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Sealed {
  requireLength('key', key, KEY_LENGTH);
  requireLength('nonce', nonce, NONCE_LENGTH);
  checkSizes(aad, plaintext.length);
  const ctx = contextsFor(key);
  const mac = cbcMac(ctx, nonce, aad, plaintext);
  const stream = keyStream(ctx, nonce, plaintext.length);
  const tag = Buffer.allocUnsafe(TAG_LENGTH);
  xorInto(tag, mac, stream, 0, TAG_LENGTH);
  const ciphertext = Buffer.allocUnsafe(plaintext.length);
  xorInto(ciphertext, plaintext, stream, BLOCK, plaintext.length);
  return { ciphertext, tag };
}

/** Decrypts and authenticates. Returns the plaintext, or null when the tag
 * does not verify (or a size is wrong). Never throws. */
export function ccmOpen(
  key: Uint8Array,
  nonce: Uint8Array,
  aad: Uint8Array,
  ciphertext: Uint8Array,
  tag: Uint8Array,
): Buffer | null {
  if (key.length !== KEY_LENGTH || nonce.length !== NONCE_LENGTH || tag.length !== TAG_LENGTH) return null;
  if (aad.length > MAX_SHORT_AAD || ciphertext.length >= 2 ** (8 * LENGTH_BYTES)) return null;
  const ctx = contextsFor(key);
  const stream = keyStream(ctx, nonce, ciphertext.length);
  const plaintext = Buffer.allocUnsafe(ciphertext.length);
  xorInto(plaintext, ciphertext, stream, BLOCK, ciphertext.length);
  const mac = cbcMac(ctx, nonce, aad, plaintext);
  xorInto(tagScratch, mac, stream, 0, TAG_LENGTH);
  return timingSafeEqual(tagScratch, tag) ? plaintext : null;
}

/** The tag of an empty plaintext under `aad` (response frames, docs/protocol.md,
 * Response frame, offset 24). */
export function ccmTagOnly(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array): Buffer {
  return ccmSeal(key, nonce, aad, EMPTY).tag;
}

/** One message of ccmTagsOnly: a nonce and the AAD, with an empty plaintext. */
export interface TagOnlyInput {
  readonly nonce: Uint8Array;
  readonly aad: Uint8Array;
}

/**
 * ccmTagOnly for many messages under one key, the same tags byte for byte.
 * Why: a batch of box logs is 50 responses of one box, and ccmTagOnly costs
 * two native calls each, which dominate verification. Here the CBC-MACs run
 * in lockstep: round r encrypts block r of every message still going in one
 * ECB call (block r XOR the message's previous output: CBC done by hand),
 * then one ECB call makes every S0. A response (36 bytes of AAD) takes four
 * rounds, so a batch is five native calls instead of a hundred.
 */
export function ccmTagsOnly(key: Uint8Array, inputs: readonly TagOnlyInput[]): Buffer[] {
  requireLength('key', key, KEY_LENGTH);
  const ctx = contextsFor(key);
  const count = inputs.length;
  // Every message's blocks, B0 then the encoded AAD (no payload), back to back.
  const blockCounts = inputs.map(({ nonce, aad }) => {
    requireLength('nonce', nonce, NONCE_LENGTH);
    checkSizes(aad, 0);
    return 1 + (aad.length === 0 ? 0 : padded(2 + aad.length) / BLOCK);
  });
  const firstBlock: number[] = [];
  let total = 0;
  for (const blocks of blockCounts) {
    firstBlock.push(total);
    total += blocks;
  }
  const blocks = Buffer.alloc(total * BLOCK);
  const counters = Buffer.alloc(count * BLOCK);
  inputs.forEach(({ nonce, aad }, i) => {
    const at = (firstBlock[i] ?? 0) * BLOCK;
    blocks[at] = B0_FLAGS | (aad.length > 0 ? ADATA : 0);
    blocks.set(nonce, at + 1); // the message length (L bytes) stays 0
    if (aad.length > 0) {
      blocks.writeUInt16BE(aad.length, at + BLOCK);
      blocks.set(aad, at + BLOCK + 2);
    }
    counters[i * BLOCK] = CTR_FLAGS;
    counters.set(nonce, i * BLOCK + 1); // counter 0: A0
  });
  // chains[i]: the last CBC output of message i (a zero IV to start).
  const chains = Buffer.alloc(count * BLOCK);
  const rounds = Math.max(0, ...blockCounts);
  const active: number[] = [];
  const input = Buffer.allocUnsafe(count * BLOCK);
  for (let round = 0; round < rounds; round++) {
    active.length = 0;
    for (let i = 0; i < count; i++) if ((blockCounts[i] ?? 0) > round) active.push(i);
    active.forEach((message, slot) => {
      const from = ((firstBlock[message] ?? 0) + round) * BLOCK;
      const chain = message * BLOCK;
      const to = slot * BLOCK;
      for (let j = 0; j < BLOCK; j++) input[to + j] = (blocks[from + j] ?? 0) ^ (chains[chain + j] ?? 0);
    });
    const out = ctx.ecb.update(input.subarray(0, active.length * BLOCK));
    active.forEach((message, slot) => out.copy(chains, message * BLOCK, slot * BLOCK, slot * BLOCK + BLOCK));
  }
  const s0 = count === 0 ? counters : ctx.ecb.update(counters);
  return inputs.map((_, i) => {
    const tag = Buffer.allocUnsafe(TAG_LENGTH);
    for (let j = 0; j < TAG_LENGTH; j++) tag[j] = (chains[i * BLOCK + j] ?? 0) ^ (s0[i * BLOCK + j] ?? 0);
    return tag;
  });
}

/** Recomputes the tag and compares it in constant time, as docs/protocol.md, Keys,
 * recommends for response tags. Never throws. */
export function ccmVerifyTagOnly(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, tag: Uint8Array): boolean {
  if (
    key.length !== KEY_LENGTH ||
    nonce.length !== NONCE_LENGTH ||
    tag.length !== TAG_LENGTH ||
    aad.length > MAX_SHORT_AAD
  )
    return false;
  return timingSafeEqual(ccmTagOnly(key, nonce, aad), tag);
}
